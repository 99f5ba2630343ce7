#include "coordinator/service/agent_service.h"

#include <iostream>
#include <map>
#include <optional>

#include "absl/strings/str_cat.h"
#include "coordinator/service/secrets.h"
#include "engine/common/message_text.h"
#include "engine/common/name_rule.h"

namespace fleetmark::service {
namespace {

bool ValidAgentName(const std::string& name) { return IsName(name); }

const char* MessageKind(const v1::AgentMessage& m) {
  switch (m.msg_case()) {
    case v1::AgentMessage::kHello: return "hello";
    case v1::AgentMessage::kHeartbeat: return "heartbeat";
    case v1::AgentMessage::kJobAccepted: return "job_accepted";
    case v1::AgentMessage::kJobProgress: return "job_progress";
    case v1::AgentMessage::kJobFinished: return "job_finished";
    case v1::AgentMessage::kResult: return "result";
    case v1::AgentMessage::MSG_NOT_SET: return "empty";
  }
  return "unknown";
}

}  // namespace

AgentServiceImpl::AgentServiceImpl(store::Store& store, Executor& executor, AgentRegistry& registry,
                                   Dispatcher& dispatcher, ResultIngestor& ingestor,
                                   JobUpdateQueue& job_updates, AgentServiceOptions options)
    : store_(store),
      executor_(executor),
      registry_(registry),
      dispatcher_(dispatcher),
      ingestor_(ingestor),
      job_updates_(job_updates),
      options_(options) {}

grpc::ServerBidiReactor<v1::AgentMessage, v1::CoordinatorMessage>* AgentServiceImpl::Connect(
    grpc::CallbackServerContext* context) {
  auto session = std::make_shared<AgentSession>(
      absl::StrCat(RandomToken().substr(0, 16), "-", next_session_.fetch_add(1)), context->peer());
  AgentSession::Handlers handlers;
  handlers.on_message = [this](SessionPtr s, v1::AgentMessage m) {
    // A result of a welcomed agent only queues for the ingestor and reads on: handled
    // here on the gRPC thread (no executor hand-off per result). Everything else may
    // touch the database and goes to the executor.
    if (m.msg_case() == v1::AgentMessage::kResult && !s->state().agent_id.empty()) {
      Handle(s, std::move(m));
      return;
    }
    executor_.Post([this, s = std::move(s), m = std::move(m)]() mutable { Handle(s, std::move(m)); });
  };
  handlers.on_done = [this](SessionPtr s) { executor_.Post([this, s = std::move(s)] { OnStreamDone(s); }); };
  return new AgentStream(std::move(session), std::move(handlers));
}

void AgentServiceImpl::Refuse(const SessionPtr& session, grpc::StatusCode code, const std::string& reason,
                              bool retryable) {
  session->Refuse(code, reason, retryable);
}

void AgentServiceImpl::WithRetry(const SessionPtr& session, std::function<absl::Status()> op,
                                 std::function<void(const absl::Status&)> then, absl::Time deadline,
                                 absl::Duration backoff) {
  absl::Status status = op();
  if ((absl::IsUnavailable(status) || absl::IsDeadlineExceeded(status) || absl::IsAborted(status)) &&
      !session->closing() && absl::Now() + backoff < deadline) {
    executor_.PostAfter(backoff, [this, session, op = std::move(op), then = std::move(then), deadline,
                                  backoff]() mutable {
      WithRetry(session, std::move(op), std::move(then), deadline, std::min(backoff * 2, absl::Seconds(5)));
    });
    return;
  }
  then(status);
}

void AgentServiceImpl::Handle(const SessionPtr& session, v1::AgentMessage message) {
  const AgentSession::AgentState state = session->state();
  const bool welcomed = !state.agent_id.empty();
  if (!welcomed) {
    if (message.msg_case() != v1::AgentMessage::kHello) {
      Refuse(session, grpc::StatusCode::FAILED_PRECONDITION,
             absl::StrCat("malformed stream: the first message must be hello, got ", MessageKind(message)),
             false);
      return;
    }
    HandleHello(session, message.hello());
    return;
  }
  const std::string& agent_id = state.agent_id;
  // Any message shows the agent is alive.
  session->UpdateState([](AgentSession::AgentState& s) { s.last_heartbeat = absl::Now(); });
  auto continue_or_close = [this, session](const absl::Status& status) {
    if (absl::IsInvalidArgument(status) || absl::IsNotFound(status)) {
      Refuse(session, grpc::StatusCode::INVALID_ARGUMENT, absl::StrCat("malformed message: ", status.message()),
             false);
    } else if (!status.ok()) {
      Refuse(session, grpc::StatusCode::UNAVAILABLE,
             absl::StrCat("coordinator database unavailable: ", status.message()), true);
    } else {
      session->ReadNext();
    }
  };
  switch (message.msg_case()) {
    case v1::AgentMessage::kHeartbeat: {
      const v1::Heartbeat& hb = message.heartbeat();
      session->UpdateState([&](AgentSession::AgentState& s) {
        s.last_heartbeat = absl::Now();
        s.rss_bytes = hb.rss_bytes();
        s.cpu_seconds = hb.cpu_seconds();
      });
      session->ReadNext();
      return;
    }
    // Accepted and progress are group-committed with other agents' (job_updates.h);
    // the queue retries while the database is away.
    case v1::AgentMessage::kJobAccepted:
      job_updates_.Submit({.job_id = message.job_accepted().job_id(), .agent_id = agent_id}, continue_or_close);
      return;
    case v1::AgentMessage::kJobProgress: {
      const v1::JobProgress& p = message.job_progress();
      job_updates_.Submit({.job_id = p.job_id(),
                           .agent_id = agent_id,
                           .has_progress = true,
                           .cases_done = p.cases_done(),
                           .cases_total = p.cases_total()},
                          continue_or_close);
      return;
    }
    case v1::AgentMessage::kJobFinished: {
      const v1::JobFinished f = message.job_finished();
      store::JobOutcome outcome{f.ok(), f.cancelled(), f.message()};
      // The job ends only after every result sent before this message is committed,
      // so a finished run has all its rows.
      AfterAcks(session, [=, this] {
        WithRetry(
            session, [=, this] { return store_.FinishJob(f.job_id(), agent_id, outcome); },
            [=, this](const absl::Status& status) {
              session->UpdateState([&](AgentSession::AgentState& s) {
                if (s.running_job == f.job_id()) s.running_job.clear();
              });
              if (status.ok()) {
                // Recorded (or stale: FinishJob changed nothing): the agent may drop
                // its spooled report. Sent before Wake, so it precedes a new assignment.
                v1::CoordinatorMessage ack;
                ack.mutable_job_finished_ack()->set_job_id(f.job_id());
                session->Send(std::move(ack));
              }
              continue_or_close(status);
              if (status.ok()) dispatcher_.Wake({agent_id});
            },
            absl::Now() + options_.db_retry_limit);
      });
      return;
    }
    case v1::AgentMessage::kResult:
      HandleResult(session, std::move(*message.mutable_result()));
      return;
    case v1::AgentMessage::kHello:
      Refuse(session, grpc::StatusCode::FAILED_PRECONDITION, "malformed stream: a second hello", false);
      return;
    case v1::AgentMessage::MSG_NOT_SET:
      Refuse(session, grpc::StatusCode::INVALID_ARGUMENT,
             "malformed message: no field of AgentMessage.msg is set (unknown message type?)", false);
      return;
  }
}

void AgentServiceImpl::AfterAcks(const SessionPtr& session, std::function<void()> then) {
  if (session->closing()) return;
  if (session->state().pending_acks == 0) {
    then();
    return;
  }
  executor_.PostAfter(absl::Milliseconds(20),
                      [this, session, then = std::move(then)]() mutable { AfterAcks(session, std::move(then)); });
}

void AgentServiceImpl::HandleHello(const SessionPtr& session, const v1::Hello& hello) {
  if (hello.protocol_version() < kMinProtocolVersion || hello.protocol_version() > kMaxProtocolVersion) {
    const bool too_old = hello.protocol_version() < kMinProtocolVersion;
    Refuse(session, grpc::StatusCode::FAILED_PRECONDITION,
           absl::StrCat("protocol version ", hello.protocol_version(), " not in [", kMinProtocolVersion, ", ",
                        kMaxProtocolVersion, "]: ", too_old ? "agent too old, upgrade the agent"
                                                            : "agent too new, upgrade the coordinator"),
           false);
    return;
  }
  // Every string of the hello (labels, host fields, ...): UTF-8, length, no control
  // characters. Found by reflection, so fields added later are checked too.
  if (absl::Status text = CheckMessageText(hello, "hello", HelloTextRules()); !text.ok()) {
    Refuse(session, grpc::StatusCode::INVALID_ARGUMENT, absl::StrCat("hello refused: ", text.message()), false);
    return;
  }
  if (!ValidAgentName(hello.agent_name())) {
    Refuse(session, grpc::StatusCode::INVALID_ARGUMENT,
           absl::StrCat("hello.agent_name: must match [A-Za-z0-9._-]{1,64}, got \"",
                        hello.agent_name().substr(0, 80), "\""),
           false);
    return;
  }
  // Authenticate: a credential issued earlier, else an enrollment token.
  std::string credential_sha256;  // new credential's hash, "" = keep
  std::string credential;         // what Welcome carries
  std::string token_id;
  std::string agent_id_known;     // the agent its credential authenticated, "" = new enrollment
  // The database failed: retryable. Only an outage is described; anything else is
  // logged here, never sent (it may quote SQL).
  auto db_refusal = [&](const absl::Status& status) {
    if (absl::IsUnavailable(status) || absl::IsAborted(status) || absl::IsDeadlineExceeded(status) ||
        absl::IsResourceExhausted(status)) {
      Refuse(session, grpc::StatusCode::UNAVAILABLE,
             absl::StrCat("coordinator database unavailable, retry later: ", status.message()), true);
      return;
    }
    std::cerr << "fleetmark-coordinator: hello of agent " << hello.agent_name() << ": " << status << "\n";
    Refuse(session, grpc::StatusCode::UNAVAILABLE,
           "coordinator error while registering the agent (details in the coordinator's log), retry later", true);
  };
  bool authenticated = false;
  if (!hello.agent_credential().empty()) {
    absl::StatusOr<store::AgentIdentity> identity = store_.FindAgentByName(hello.agent_name());
    if (!identity.ok() && !absl::IsNotFound(identity.status())) return db_refusal(identity.status());
    if (identity.ok() && ConstantTimeEquals(identity->credential_sha256, Sha256Hex(hello.agent_credential()))) {
      if (identity->token_revoked) {
        Refuse(session, grpc::StatusCode::PERMISSION_DENIED,
               "agent credential refused: the enrollment token it was issued under is revoked", false);
        return;
      }
      authenticated = true;
      credential = hello.agent_credential();
      agent_id_known = identity->agent_id;
    } else if (hello.enrollment_token().empty()) {
      Refuse(session, grpc::StatusCode::UNAUTHENTICATED,
             absl::StrCat("agent credential refused for agent \"", hello.agent_name(), "\""), false);
      return;
    }
  }
  if (!authenticated) {
    if (hello.enrollment_token().empty()) {
      Refuse(session, grpc::StatusCode::UNAUTHENTICATED,
             "hello needs an enrollment_token (first contact) or an agent_credential", false);
      return;
    }
    absl::StatusOr<std::string> token = store_.FindEnrollmentToken(Sha256Hex(hello.enrollment_token()));
    if (absl::IsNotFound(token.status())) {
      Refuse(session, grpc::StatusCode::UNAUTHENTICATED, "enrollment token unknown", false);
      return;
    }
    if (absl::IsPermissionDenied(token.status())) {
      Refuse(session, grpc::StatusCode::PERMISSION_DENIED, "enrollment token revoked", false);
      return;
    }
    if (!token.ok()) return db_refusal(token.status());
    // A name belongs to its credential: an enrollment under the name of an agent that
    // exists, online or not, on any coordinator, is refused by RegisterAgent.
    token_id = *token;
    credential = RandomToken();
    credential_sha256 = Sha256Hex(credential);
  }

  store::AgentRegistration reg;
  reg.agent_id = agent_id_known;
  reg.name = hello.agent_name();
  reg.credential_sha256 = credential_sha256;
  reg.token_id = token_id;
  reg.host = hello.host();
  reg.labels = std::map<std::string, std::string>(hello.labels().begin(), hello.labels().end());
  reg.engine_version = hello.engine_version();
  reg.strategies.assign(hello.strategies().begin(), hello.strategies().end());
  reg.workloads.assign(hello.workloads().begin(), hello.workloads().end());
  reg.scenarios.assign(hello.scenarios().begin(), hello.scenarios().end());
  reg.session_id = session->session_id();
  absl::StatusOr<std::string> agent_id = store_.RegisterAgent(reg);
  if (absl::IsAlreadyExists(agent_id.status())) {
    Refuse(session, grpc::StatusCode::ALREADY_EXISTS, std::string(agent_id.status().message()), false);
    return;
  }
  if (absl::IsNotFound(agent_id.status())) {  // removed between the credential check and now
    Refuse(session, grpc::StatusCode::PERMISSION_DENIED, store::kAgentRemovedReason, false);
    return;
  }
  if (!agent_id.ok()) return db_refusal(agent_id.status());

  // Resume a job the agent still runs; any other job it held is released at once.
  std::string running_job;  // live job the agent runs or has just finished
  std::string ended_job;    // job that ended here while the agent may still run it
  std::optional<v1::CoordinatorMessage> cancel;
  if (!hello.running_job_id().empty()) {
    absl::StatusOr<bool> resumed = store_.ResumeJob(hello.running_job_id(), *agent_id, options_.job_lease);
    if (resumed.ok() && *resumed) {
      running_job = hello.running_job_id();
    } else if (resumed.ok() || absl::IsInvalidArgument(resumed.status())) {
      // Ended (cancelled, failed, re-queued) while the agent was away, which may still
      // be running it: it stays busy (no other job is pushed onto it) until it reports
      // the job finished, as after any cancellation. A malformed id cannot be reported.
      if (resumed.ok()) ended_job = hello.running_job_id();
      cancel.emplace();
      cancel->mutable_cancellation()->set_job_id(hello.running_job_id());
      cancel->mutable_cancellation()->set_reason("the job is no longer assigned to this agent");
    } else {
      return db_refusal(resumed.status());
    }
  }
  if (absl::StatusOr<std::vector<store::ExpiredJob>> released = store_.ReleaseAgentJobs(*agent_id, running_job);
      !released.ok()) {
    return db_refusal(released.status());
  }

  session->UpdateState([&](AgentSession::AgentState& s) {
    s.agent_id = *agent_id;
    s.name = hello.agent_name();
    s.running_job = running_job.empty() ? ended_job : running_job;
    s.cancel_sent = ended_job;
    s.last_heartbeat = absl::Now();
  });
  if (SessionPtr previous = registry_.Add(*agent_id, session); previous != nullptr && previous != session) {
    previous->Close(grpc::Status(grpc::StatusCode::ABORTED, "replaced by a newer connection of this agent"));
  }
  v1::CoordinatorMessage welcome;
  welcome.mutable_welcome()->set_agent_id(*agent_id);
  welcome.mutable_welcome()->set_agent_credential(credential);
  welcome.mutable_welcome()->set_heartbeat_interval_ms(
      static_cast<uint32_t>(absl::ToInt64Milliseconds(options_.heartbeat_interval)));
  welcome.mutable_welcome()->set_protocol_version(kMaxProtocolVersion);
  session->Send(std::move(welcome));
  // After the Welcome, which makes the agent replay its spooled reports first: a job
  // that finished here unconfirmed is then reported (clearing it) before the
  // cancellation makes the agent drop that report.
  if (cancel.has_value()) session->Send(*std::move(cancel));
  session->ReadNext();
  if (running_job.empty() && ended_job.empty()) dispatcher_.Wake({*agent_id});
}

void AgentServiceImpl::HandleResult(const SessionPtr& session, v1::CaseResult result) {
  const std::string agent_id = session->state().agent_id;
  bool pause = false;
  session->UpdateState([&](AgentSession::AgentState& s) {
    ++s.pending_acks;
    pause = s.pending_acks >= options_.max_pending_acks;
    s.read_paused = pause;
  });
  const uint32_t resume_below = options_.max_pending_acks / 2;
  ingestor_.Submit(agent_id, std::move(result), [session, resume_below](const store::ResultOutcome& outcome) {
    v1::CoordinatorMessage message;
    v1::ResultAck* ack = message.mutable_ack();
    ack->set_result_id(outcome.result_id);
    ack->set_duplicate(outcome.duplicate);
    ack->set_rejected(outcome.rejected);
    ack->set_message(outcome.message);
    session->Send(std::move(message));
    bool resume = false;
    session->UpdateState([&](AgentSession::AgentState& s) {
      if (s.pending_acks > 0) --s.pending_acks;
      if (s.read_paused && s.pending_acks <= resume_below) {
        s.read_paused = false;
        resume = true;
      }
    });
    if (resume) session->ReadNext();
  });
  if (!pause) session->ReadNext();
}

void AgentServiceImpl::OnStreamDone(const SessionPtr& session) {
  const AgentSession::AgentState state = session->state();
  if (state.agent_id.empty()) return;
  if (!registry_.Remove(state.agent_id, session.get())) return;  // replaced by a reconnect
  absl::Status status = store_.SetAgentOffline(state.agent_id, session->session_id());
  if (!status.ok() && !absl::IsUnavailable(status)) {
    std::cerr << "fleetmark-coordinator: agent " << state.name << " offline: " << status.message() << "\n";
  }
}

}  // namespace fleetmark::service
