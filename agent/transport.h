// The narrow seam between the agent's protocol state machine (agent/session.h) and
// the network: a Transport opens one SessionStream (an AgentService.Connect stream)
// per session. MakeGrpcTransport is the production one (a fresh gRPC channel per
// session, TLS, keepalive, message limits); unit tests pass a fake.
//
//   FLEETMARK_ASSIGN_OR_RETURN(std::unique_ptr<Transport> transport, MakeGrpcTransport(options));
//   FLEETMARK_ASSIGN_OR_RETURN(std::unique_ptr<SessionStream> stream, transport->Open());
//   stream->Write(hello);  while (stream->Read(&message)) ...;  absl::Status end = stream->Finish();
#pragma once

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/options.h"
#include "fleetmark/v1/agent.pb.h"

namespace fleetmark::agent {

// One bidirectional stream. Thread-safety: one thread may Read while one other thread
// Writes; Cancel may be called from any thread at any time; Finish once, after Read
// returned false and no Write is in progress.
class SessionStream {
 public:
  virtual ~SessionStream() = default;
  // Sends `message`, blocking; false once the stream is broken or cancelled. The first
  // Write starts the call (so a Cancel before it makes the stream fail at once).
  virtual bool Write(const fleetmark::v1::AgentMessage& message) = 0;
  // Blocks for the next message; false at the end of the stream (closed, broken,
  // cancelled).
  virtual bool Read(fleetmark::v1::CoordinatorMessage* message) = 0;
  // Ends the stream soon: pending and later Read/Write return false.
  virtual void Cancel() = 0;
  // How the stream ended: the gRPC status, its code as the absl::StatusCode of the
  // same number, its message as gRPC gave it.
  virtual absl::Status Finish() = 0;
};

class Transport {
 public:
  virtual ~Transport() = default;
  // A new, not yet started stream. Errors are local configuration errors the agent
  // exits on (InvalidArgument for TLS files that are not PEM or a key that does not
  // belong to its certificate; NotFound/PermissionDenied for unreadable files).
  // Called from the agent's Run() thread only.
  virtual absl::StatusOr<std::unique_ptr<SessionStream>> Open() = 0;
  // After a session that never reached the coordinator: a TLS configuration problem
  // to report (e.g. the coordinator speaks plaintext), or "" when none is found.
  // May block for a short probe. Run() thread only.
  virtual std::string DiagnoseConnectFailure() = 0;
};

// The production transport: options.coordinator over gRPC with options.tls and the
// keepalive options; messages of at most kAgentMaxMessageBytes
// (engine/common/message_limits.h). `options` must pass ValidateAgentOptions; InvalidArgument
// for a bad target. The returned transport is thread-compatible (see Transport).
absl::StatusOr<std::unique_ptr<Transport>> MakeGrpcTransport(const AgentOptions& options);

}  // namespace fleetmark::agent
