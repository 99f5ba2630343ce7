// How a control call ends: absl::Status → grpc::Status, and a server stream refused
// before it starts. Shared by the control adapters (control_*.cc), the run watcher
// and the result streamer.
//
// Thread-safety: ToGrpcStatus is a pure function; a RefusedWriter belongs to gRPC
// from its construction (it deletes itself in OnDone).
#pragma once

#include <grpcpp/grpcpp.h>

#include "absl/status/status.h"

namespace fleetmark::service {

// absl::Status → grpc::Status (same numeric codes); the message through CutLongEchoes
// (engine/common/text.h: echoed values cut at 200 bytes, the whole at 4 KiB).
grpc::Status ToGrpcStatus(const absl::Status& status);

// A server stream ended at once with `status` (a refused token).
template <typename Message>
class RefusedWriter : public grpc::ServerWriteReactor<Message> {
 public:
  explicit RefusedWriter(grpc::Status status) { this->Finish(status); }
  void OnDone() override { delete this; }
};

}  // namespace fleetmark::service
