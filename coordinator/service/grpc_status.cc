#include "coordinator/service/grpc_status.h"

#include <string>

#include "engine/common/text.h"

namespace fleetmark::service {

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  // What the caller sent and the message echoes is cut (a 6 MB plan field was sent back whole).
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), CutLongEchoes(std::string(status.message())));
}

}  // namespace fleetmark::service
