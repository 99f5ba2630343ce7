#include "coordinator/service/control_service.h"

#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "coordinator/service/grpc_status.h"
#include "coordinator/service/secrets.h"

namespace fleetmark::service {

ControlServiceImpl::ControlServiceImpl(store::Store& store, Executor& executor, Dispatcher& dispatcher,
                                       AgentRegistry& registry, const RunBuilder& runs, ControlServiceOptions options)
    : store_(store),
      reads_(store, options.read_replica, options.read_router),
      executor_(executor),
      dispatcher_(dispatcher),
      registry_(registry),
      runs_(runs),
      options_(std::move(options)) {}

grpc::Status ControlServiceImpl::Authorize(const grpc::ServerContextBase& context) const {
  if (options_.admin_token.empty()) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        "control calls are disabled: the coordinator was started without --admin_token_file");
  }
  const auto& metadata = context.client_metadata();
  auto it = metadata.find("authorization");
  if (it == metadata.end()) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        "missing \"authorization: Bearer <admin token>\" metadata (see --admin_token_file)");
  }
  const std::string value(it->second.data(), it->second.size());
  if (!absl::StartsWith(value, "Bearer ") || !ConstantTimeEquals(value.substr(7), options_.admin_token)) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "admin token refused");
  }
  return grpc::Status::OK;
}

grpc::ServerUnaryReactor* ControlServiceImpl::Async(grpc::CallbackServerContext* context,
                                                    std::function<absl::Status()> work) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (grpc::Status auth = Authorize(*context); !auth.ok()) {
    reactor->Finish(auth);
    return reactor;
  }
  executor_.Post([reactor, work = std::move(work)] { reactor->Finish(ToGrpcStatus(work())); });
  return reactor;
}

}  // namespace fleetmark::service
