// The CLI's connection to a coordinator's ControlService: channel (plaintext or TLS,
// optional client certificate), the admin token as "authorization: Bearer" metadata,
// and the mapping of gRPC errors to messages and exit codes.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include <grpcpp/grpcpp.h>

#include "coordinator/cli/remote_flags.h"
#include "fleetmark/v1/control.grpc.pb.h"

namespace fleetmark::cli {

class ControlClient {
 public:
  explicit ControlClient(const RemoteOptions& options);

  v1::ControlService::Stub& stub() { return *stub_; }
  // A context carrying the admin token, with a deadline `timeout` from now (0 = none).
  std::unique_ptr<grpc::ClientContext> Context(std::chrono::seconds timeout = std::chrono::seconds(60)) const;

  // Prints "fleetmark: <what>: <message>" (with a hint for unreachable coordinators and
  // auth failures) and returns the exit code: 2 for InvalidArgument/NotFound/
  // FailedPrecondition/Unauthenticated (bad input), 1 otherwise.
  int Fail(const std::string& what, const grpc::Status& status) const;

 private:
  RemoteOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::ControlService::Stub> stub_;
};

// The client configured by the connection flags, or nullopt after printing the flag
// error (then `*exit_code` is 2).
std::optional<ControlClient> ClientFromFlags(int* exit_code);

// Prints "fleetmark: <message>" and the usage line; returns 2.
int RemoteUsageError(const std::string& usage, const std::string& message);

}  // namespace fleetmark::cli
