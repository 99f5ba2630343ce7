// AgentService: the agents' side of the coordinator. Each Connect stream gets an
// AgentStream reactor; its messages are handled on the coordinator's executor, one at
// a time per stream:
//   hello         protocol version check, enrollment token or credential check, agent
//                 registration, Welcome (with a new credential after token enrollment),
//                 resumption of a job still running across a reconnect, dispatch;
//   heartbeat     liveness (flushed to the database in batches by the sweeper);
//   job_accepted, job_progress  group-committed job state (JobUpdateQueue, leases renewed);
//   job_finished  ends the job once its results are committed;
//   result        handed to the ResultIngestor; acked after commit.
// A refusal (bad version, bad token, malformed or out-of-order message) is sent as a
// Refusal and the stream is finished; other agents are unaffected.
//
// Thread-safety: gRPC calls Connect on its threads; everything else is internal.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "absl/time/time.h"
#include "coordinator/service/agent_registry.h"
#include "coordinator/service/dispatcher.h"
#include "coordinator/service/executor.h"
#include "coordinator/service/job_updates.h"
#include "coordinator/service/result_ingestor.h"
#include "coordinator/store/store.h"
#include "fleetmark/v1/agent.grpc.pb.h"

namespace fleetmark::service {

// Protocol versions this coordinator speaks (agent.proto, ProtocolVersion).
inline constexpr uint32_t kMinProtocolVersion = 1;
inline constexpr uint32_t kMaxProtocolVersion = 1;

struct AgentServiceOptions {
  absl::Duration heartbeat_interval = absl::Seconds(5);
  absl::Duration job_lease = absl::Seconds(30);
  // Database retries of one message give up after this (the stream is then closed
  // with UNAVAILABLE; the agent reconnects and replays).
  absl::Duration db_retry_limit = absl::Seconds(120);
  // Results awaiting an ack per stream before reading pauses (back-pressure).
  uint32_t max_pending_acks = 1024;
};

class AgentServiceImpl final : public v1::AgentService::CallbackService {
 public:
  // All references must outlive the service (and the gRPC server using it).
  AgentServiceImpl(store::Store& store, Executor& executor, AgentRegistry& registry,
                   Dispatcher& dispatcher, ResultIngestor& ingestor, JobUpdateQueue& job_updates,
                   AgentServiceOptions options);

  grpc::ServerBidiReactor<v1::AgentMessage, v1::CoordinatorMessage>* Connect(
      grpc::CallbackServerContext* context) override;

 private:
  using SessionPtr = std::shared_ptr<AgentSession>;
  void Handle(const SessionPtr& session, v1::AgentMessage message);
  void HandleHello(const SessionPtr& session, const v1::Hello& hello);
  void HandleResult(const SessionPtr& session, v1::CaseResult result);
  void OnStreamDone(const SessionPtr& session);
  // Runs `then` once the session has no result waiting for its commit (polling on the
  // executor); dropped if the stream closes meanwhile (the agent resends on reconnect).
  void AfterAcks(const SessionPtr& session, std::function<void()> then);
  // Refuses the agent: sends a Refusal, then finishes the stream with `code`.
  void Refuse(const SessionPtr& session, grpc::StatusCode code, const std::string& reason, bool retryable);
  // Runs `op` (a database call) now, and again after a backoff while it returns
  // Unavailable, then `then(status)`; the session's next read waits for it.
  void WithRetry(const SessionPtr& session, std::function<absl::Status()> op,
                 std::function<void(const absl::Status&)> then, absl::Time deadline,
                 absl::Duration backoff = absl::Milliseconds(100));

  store::Store& store_;
  Executor& executor_;
  AgentRegistry& registry_;
  Dispatcher& dispatcher_;
  ResultIngestor& ingestor_;
  JobUpdateQueue& job_updates_;
  const AgentServiceOptions options_;
  std::atomic<uint64_t> next_session_{1};
};

}  // namespace fleetmark::service
