// The CLI's connection to a coordinator's ControlService: channel (plaintext or TLS,
// optional client certificate), the admin token as "authorization: Bearer" metadata,
// and the mapping of gRPC errors to the CLI's errors (absl::Status, exit_codes.h).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include <grpcpp/grpcpp.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "coordinator/cli/exit_codes.h"  // FleetmarkError, UsageError
#include "coordinator/cli/remote_flags.h"
#include "fleetmark/v1/control.grpc.pb.h"

namespace fleetmark::cli {

class ControlClient {
 public:
  explicit ControlClient(const RemoteOptions& options);

  v1::ControlService::Stub& stub() { return *stub_; }
  const RemoteOptions& options() const { return options_; }
  // A context carrying the admin token, with a deadline `timeout` from now (0 = none).
  std::unique_ptr<grpc::ClientContext> Context(std::chrono::seconds timeout = std::chrono::seconds(60)) const;

  // The results of run `run_id` (a full id or a unique prefix; of agent `agent_name`
  // only, unless ""), read page by page with StreamResults and merged, so a run of any
  // size reads back; from a coordinator without StreamResults (UNIMPLEMENTED), with its
  // unary ExportResults. `timeout` bounds the whole transfer. On error, the call's status.
  // `record_export` (`fleetmark export` of a whole run): the coordinator records the run
  // as exported (`results prune` refuses runs never exported).
  grpc::Status FetchResults(const std::string& run_id, const std::string& agent_name, std::chrono::seconds timeout,
                            v1::ExportResultsResponse* out, bool record_export = false) const;

  // True when a failed call's `status` came from the transport (the coordinator could
  // not be reached, or the connection broke), false when the coordinator itself returned
  // it. gRPC gives both the same codes (UNAVAILABLE, DEADLINE_EXCEEDED), so this looks at
  // the channel: a coordinator that answered leaves it READY. Call right after the call.
  bool IsTransportError(const grpc::Status& status) const;

  // The error of a failed call, for the command to return: a FleetmarkError (written
  // "fleetmark: <what>: <message>" by RunCli) followed by a hint line, with the call's
  // code, so ExitCodeFor gives 2 for bad input, 5 when the coordinator could not be
  // reached, did not answer in time or lost its database, 1 otherwise; a TLS mismatch
  // (the coordinator unreachable with these TLS flags, reachable with others) is bad
  // input (InvalidArgument), 2. Hints: for a transport error, the address, where it came
  // from and how to point the CLI at the local stack (`deploy/stack.sh env`); for
  // UNAVAILABLE returned by the coordinator, that its database is unavailable; for a
  // refused admin token, the file it was read from and where the coordinator's token
  // lives; for a message over a size limit (RESOURCE_EXHAUSTED), the CLI's and the
  // coordinator's limits.
  absl::Status CallError(const std::string& what, const grpc::Status& status) const;

 private:
  RemoteOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::ControlService::Stub> stub_;
};

// Who a request says it comes from (RunInfo.submitted_by after "cli:" or "import:"):
// $USER, else the account's name, else "@HOST", else "unknown".
std::string Submitter();

// The client configured by the connection flags, or their error (a FleetmarkError,
// InvalidArgument: exit 2).
absl::StatusOr<ControlClient> ClientFromFlags();

// One unary ControlService call on the client the connection flags configure (a context
// with the admin token and ControlClient::Context's deadline): OK with `*response`
// filled, else the error: bad connection flags (ClientFromFlags), otherwise
// ControlClient::CallError(what, status). For commands that need the client after the
// call, use ClientFromFlags directly.
template <typename Request, typename Response>
absl::Status CallControl(grpc::Status (v1::ControlService::Stub::*method)(grpc::ClientContext*, const Request&,
                                                                          Response*),
                         const Request& request, Response* response, const std::string& what) {
  absl::StatusOr<ControlClient> client = ClientFromFlags();
  if (!client.ok()) return client.status();
  std::unique_ptr<grpc::ClientContext> context = client->Context();
  grpc::Status status = (client->stub().*method)(context.get(), request, response);
  if (!status.ok()) return client->CallError(what, status);
  return absl::OkStatus();
}

}  // namespace fleetmark::cli
