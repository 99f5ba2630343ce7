#include "coordinator/service/parse_errors.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "google/protobuf/descriptor.h"

namespace fleetmark::service {
namespace {

using grpc::experimental::InterceptionHookPoints;

class ParseErrorInterceptor final : public grpc::experimental::Interceptor {
 public:
  ParseErrorInterceptor(grpc::experimental::ServerRpcInfo* info, const ParseErrorAuthorizer* authorize)
      : info_(info), authorize_(authorize) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS)) {
      const grpc::Status status = methods->GetSendStatus();
      if (status.error_code() == grpc::StatusCode::UNIMPLEMENTED && status.error_message().empty()) {
        const std::string method = info_->method() == nullptr ? "" : info_->method();
        grpc::Status replacement = ParseErrorStatus(method);
        if (!replacement.ok()) {
          if (*authorize_) {
            grpc::Status auth = (*authorize_)(method, *info_->server_context());
            if (!auth.ok()) replacement = std::move(auth);
          }
          methods->ModifySendStatus(replacement);
        }
      }
    }
    methods->Proceed();
  }

 private:
  grpc::experimental::ServerRpcInfo* info_;
  const ParseErrorAuthorizer* authorize_;  // owned by the factory, which outlives calls
};

class ParseErrorInterceptorFactory final : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit ParseErrorInterceptorFactory(ParseErrorAuthorizer authorize) : authorize_(std::move(authorize)) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(grpc::experimental::ServerRpcInfo* info) override {
    return new ParseErrorInterceptor(info, &authorize_);
  }

 private:
  const ParseErrorAuthorizer authorize_;
};

}  // namespace

grpc::Status ParseErrorStatus(const std::string& method) {
  // "/fleetmark.v1.ControlService/SubmitRun" -> "fleetmark.v1.ControlService.SubmitRun".
  absl::string_view name = method;
  if (!absl::ConsumePrefix(&name, "/")) return grpc::Status::OK;
  const google::protobuf::MethodDescriptor* descriptor =
      google::protobuf::DescriptorPool::generated_pool()->FindMethodByName(absl::StrReplaceAll(name, {{"/", "."}}));
  // Only fleetmark's own services: gRPC's (health, reflection) are linked whether or not
  // they are served (reflection with --grpc_reflection=false is UNIMPLEMENTED).
  if (descriptor == nullptr || descriptor->service()->file()->package() != "fleetmark.v1") return grpc::Status::OK;
  return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                      absl::StrCat(method, ": the request is not a valid ", descriptor->input_type()->full_name(),
                                   " (protobuf could not parse it: malformed bytes, a wrong message type, or a string "
                                   "field that is not UTF-8)"));
}

std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> MakeParseErrorInterceptors(
    ParseErrorAuthorizer authorize) {
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> factories;
  factories.push_back(std::make_unique<ParseErrorInterceptorFactory>(std::move(authorize)));
  return factories;
}

}  // namespace fleetmark::service
