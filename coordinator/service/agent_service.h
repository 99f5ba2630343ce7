// AgentService: the agents' side of the coordinator. Each Connect stream gets an
// AgentStream reactor; its messages are handled on the coordinator's executor, one at
// a time per stream:
//   hello         in steps: CheckHello (hello_check.h: version, text, name, labels,
//                 running_job_id, instance_id), Authenticate (credential or enrollment
//                 token), Register (the store: one live session per identity
//                 fleet-wide; a second process presenting the credential of an agent
//                 whose session is live gets a retryable Refusal with
//                 identity_in_use), ResumeJobs (a job still running across a
//                 reconnect is kept, others are released), Welcome (with a new
//                 credential after token enrollment) and dispatch;
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
#include "coordinator/service/coordinator_metrics.h"
#include "coordinator/service/dispatcher.h"
#include "coordinator/service/executor.h"
#include "coordinator/service/hello_check.h"
#include "coordinator/service/job_updates.h"
#include "coordinator/service/local_sessions.h"
#include "coordinator/service/result_ingestor.h"
#include "coordinator/service/stream_budget.h"
#include "coordinator/store/agent_store.h"
#include "coordinator/store/run_store.h"
#include "coordinator/store/token_store.h"
#include "engine/common/clock.h"
#include "fleetmark/v1/agent.grpc.pb.h"

namespace fleetmark::service {

struct AgentServiceOptions {
  absl::Duration heartbeat_interval = absl::Seconds(5);
  absl::Duration job_lease = absl::Seconds(30);
  // Results awaiting an ack per stream before reading pauses (back-pressure).
  uint32_t max_pending_acks = 1024;
  // Counts open streams (agent_streams_open) when not null; not owned, outlives the service.
  CoordinatorMetrics* metrics = nullptr;
  // Admits streams up to the descriptor budget at their hello (stream_budget.h); a hello
  // over it gets a retryable Refusal naming the limit. Null = no limit. Not owned.
  StreamSlots* stream_slots = nullptr;
};

// Connect is registered raw (bytes): AgentStream parses each message itself, so an
// unparseable one gets a Refusal instead of an OK end of stream (agent_stream.h).
// The store's slices the agent service uses (one Store may serve all three); each must
// outlive the service.
struct AgentServiceStores {
  store::TokenStore& tokens;  // enrollment tokens; revoked or removed agents
  store::AgentStore& agents;  // registrations, identities, offline marks
  store::RunStore& runs;      // jobs resumed or released at a hello
};

class AgentServiceImpl final : public v1::AgentService::WithRawCallbackMethod_Connect<v1::AgentService::Service> {
 public:
  // All references must outlive the service (and the gRPC server using it). `clock`
  // times heartbeats (AgentState::last_heard, on its steady time). The group-commit queues retry while
  // the database is away, and the stream waits (it is not silent: awaiting_store).
  AgentServiceImpl(AgentServiceStores stores, Executor& executor, AgentRegistry& registry, Dispatcher& dispatcher,
                   ResultIngestor& ingestor, JobUpdateQueue& job_updates, JobEndQueue& job_ends,
                   AgentServiceOptions options, const Clock& clock = SystemClock());

  grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* Connect(grpc::CallbackServerContext* context) override;

 private:
  using SessionPtr = std::shared_ptr<AgentSession>;
  void Handle(const SessionPtr& session, v1::AgentMessage message);
  void HandleHello(const SessionPtr& session, const v1::Hello& hello);
  // Takes a stream slot for `session` at its hello; false when the budget is full.
  bool TakeStreamSlot(AgentSession& session);
  // The steps of a hello. Each returns the refusal as a status: its code is the
  // stream's, and only Unavailable (a database outage) is retryable.
  struct HelloIdentity {
    std::string agent_id;           // the agent its credential authenticated; "" = new enrollment
    std::string credential;         // what Welcome carries
    std::string credential_sha256;  // of a new credential; "" = keep the stored one
    std::string token_id;           // the enrollment token used (new enrollments)
  };
  struct Resumption {
    std::string running_job;  // live job the agent runs (or has just finished)
    std::string ended_job;    // job that ended here while the agent may still run it
  };
  absl::StatusOr<HelloIdentity> Authenticate(const v1::Hello& hello);
  absl::StatusOr<std::string> Register(const AgentSession& session, const v1::Hello& hello,
                                       const HelloIdentity& identity);
  absl::StatusOr<Resumption> ResumeJobs(const std::string& agent_id, const v1::Hello& hello);
  void Welcome(const SessionPtr& session, const v1::Hello& hello, const std::string& agent_id,
               const std::string& credential, const Resumption& resumption);
  // A database error during a hello as the agent is told it (retryable Unavailable;
  // details other than an outage go to the log only).
  static absl::Status DatabaseRefusal(const v1::Hello& hello, const absl::Status& status);
  void HandleResult(const SessionPtr& session, v1::CaseResult result);
  void OnStreamDone(const SessionPtr& session);
  // Runs `then` once the session has no result waiting for its commit (polling on the
  // executor); dropped if the stream closes meanwhile (the agent resends on reconnect).
  void AfterAcks(const SessionPtr& session, std::function<void()> then);
  // Refuses the agent: sends a Refusal, then finishes the stream with `code`.
  void Refuse(const SessionPtr& session, grpc::StatusCode code, const std::string& reason, bool retryable);

  AgentServiceStores stores_;
  Executor& executor_;
  AgentRegistry& registry_;
  Dispatcher& dispatcher_;
  ResultIngestor& ingestor_;
  JobUpdateQueue& job_updates_;
  JobEndQueue& job_ends_;
  const AgentServiceOptions options_;
  const Clock& clock_;
  // The streams this process opened: whether a session recorded in the database
  // provably ended here (RegisterAgent's session_ended_here).
  LocalSessions sessions_;
};

}  // namespace fleetmark::service
