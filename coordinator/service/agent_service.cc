#include "coordinator/service/agent_service.h"

#include <algorithm>
#include <map>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "coordinator/service/hello_check.h"
#include "coordinator/service/revocation.h"
#include "coordinator/service/secrets.h"
#include "coordinator/store/store.h"
#include "engine/common/log.h"
#include "engine/common/message_text.h"

namespace fleetmark::service {
namespace {

const char* MessageKind(const v1::AgentMessage& m) {
  switch (m.msg_case()) {
    case v1::AgentMessage::kHello:
      return "hello";
    case v1::AgentMessage::kHeartbeat:
      return "heartbeat";
    case v1::AgentMessage::kJobAccepted:
      return "job_accepted";
    case v1::AgentMessage::kJobProgress:
      return "job_progress";
    case v1::AgentMessage::kJobFinished:
      return "job_finished";
    case v1::AgentMessage::kResult:
      return "result";
    case v1::AgentMessage::MSG_NOT_SET:
      return "empty";
  }
  return "unknown";
}

}  // namespace

AgentServiceImpl::AgentServiceImpl(AgentServiceStores stores, Executor& executor, AgentRegistry& registry,
                                   Dispatcher& dispatcher, ResultIngestor& ingestor, JobUpdateQueue& job_updates,
                                   JobEndQueue& job_ends, AgentServiceOptions options, const Clock& clock)
    : stores_(stores),
      executor_(executor),
      registry_(registry),
      dispatcher_(dispatcher),
      ingestor_(ingestor),
      job_updates_(job_updates),
      job_ends_(job_ends),
      options_(options),
      clock_(clock) {}

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* AgentServiceImpl::Connect(
    grpc::CallbackServerContext* context) {
  auto session = std::make_shared<AgentSession>(sessions_.NewId(), context->peer());
  sessions_.Opened(session);
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
  if (options_.metrics != nullptr) options_.metrics->agent_streams_open.Add(1);
  handlers.on_done = [this](SessionPtr s) {
    if (options_.metrics != nullptr) options_.metrics->agent_streams_open.Add(-1);
    sessions_.Done(s->session_id());
    // The slot frees at once (on the gRPC thread), so a waiting agent's retry gets it.
    s->UpdateState([this](AgentSession::AgentState& state) {
      state.stream_done = true;
      if (state.holds_stream_slot) options_.stream_slots->Release();
      state.holds_stream_slot = false;
    });
    executor_.Post([this, s = std::move(s)] { OnStreamDone(s); });
  };
  return new AgentStream(std::move(session), std::move(handlers));
}

void AgentServiceImpl::Refuse(const SessionPtr& session, grpc::StatusCode code, const std::string& reason,
                              bool retryable) {
  session->Refuse(code, reason, retryable);
}

void AgentServiceImpl::Handle(const SessionPtr& session, v1::AgentMessage message) {
  const AgentSession::AgentState state = session->state();
  const bool welcomed = !state.agent_id.empty();
  if (!welcomed) {
    if (message.msg_case() != v1::AgentMessage::kHello) {
      Refuse(session, grpc::StatusCode::FAILED_PRECONDITION,
             absl::StrCat("malformed stream: the first message must be hello, got ", MessageKind(message)), false);
      return;
    }
    HandleHello(session, message.hello());
    return;
  }
  const std::string& agent_id = state.agent_id;
  // Any message shows the agent is alive.
  session->UpdateState([this](AgentSession::AgentState& s) { s.last_heard = clock_.SteadyNow(); });
  auto continue_or_close = [this, session](const absl::Status& status) {
    session->UpdateState([](AgentSession::AgentState& s) { s.awaiting_store = false; });
    if (absl::IsInvalidArgument(status) || absl::IsNotFound(status)) {
      Refuse(session, grpc::StatusCode::INVALID_ARGUMENT, absl::StrCat("malformed message: ", status.message()), false);
    } else if (!status.ok()) {
      Refuse(session, grpc::StatusCode::UNAVAILABLE,
             absl::StrCat("coordinator database unavailable: ", status.message()), true);
    } else {
      session->ReadNext();
    }
  };
  // Every message but a heartbeat (read on at once) or a result (pending_acks covers
  // those) waits for a store call before the stream is read on.
  if (message.msg_case() != v1::AgentMessage::kHeartbeat && message.msg_case() != v1::AgentMessage::kResult) {
    session->UpdateState([](AgentSession::AgentState& s) { s.awaiting_store = true; });
  }
  switch (message.msg_case()) {
    case v1::AgentMessage::kHeartbeat: {
      const v1::Heartbeat& hb = message.heartbeat();
      session->UpdateState([&](AgentSession::AgentState& s) {
        s.last_heard = clock_.SteadyNow();
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
      session->UpdateState([&](AgentSession::AgentState& s) {
        if (s.running_job == p.job_id()) s.current_case = p.current_case_id();
      });
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
      store::JobOutcome outcome{f.ok(), f.cancelled(), f.message(), f.deferred() && !f.ok() && !f.cancelled()};
      // The job ends only after every result sent before this message is committed,
      // so a finished run has all its rows. Group-committed with other agents' ends
      // (job_updates.h); the queue retries while the database is away.
      AfterAcks(session, [=, this] {
        job_ends_.Submit({.job_id = f.job_id(), .agent_id = agent_id, .outcome = outcome},
                         [=, this](const absl::Status& status) {
                           session->UpdateState([&](AgentSession::AgentState& s) {
                             if (s.running_job == f.job_id()) s.running_job.clear();
                           });
                           if (status.ok()) {
                             // Recorded (or stale: FinishJobs changed nothing): the agent may
                             // drop its spooled report. Sent before Wake, so it precedes a
                             // new assignment.
                             v1::CoordinatorMessage ack;
                             ack.mutable_job_finished_ack()->set_job_id(f.job_id());
                             session->Send(std::move(ack));
                           }
                           continue_or_close(status);
                           if (status.ok()) dispatcher_.Wake({agent_id});
                         });
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

bool AgentServiceImpl::TakeStreamSlot(AgentSession& session) {
  if (options_.stream_slots == nullptr) return true;
  bool admitted = false;
  session.UpdateState([&](AgentSession::AgentState& s) {
    // Under the session's lock, so an end of stream racing this hello gives the slot back.
    if (!s.stream_done && !s.holds_stream_slot) s.holds_stream_slot = options_.stream_slots->TryAcquire();
    admitted = s.holds_stream_slot || s.stream_done;
  });
  return admitted;
}

void AgentServiceImpl::HandleHello(const SessionPtr& session, const v1::Hello& hello) {
  // Before any database work: a coordinator at its descriptor budget turns agents away
  // (they back off and retry) instead of failing accepts at RLIMIT_NOFILE.
  if (!TakeStreamSlot(*session)) {
    if (options_.metrics != nullptr) options_.metrics->agent_streams_refused.Add(1);
    Refuse(session, grpc::StatusCode::RESOURCE_EXHAUSTED, options_.stream_slots->RefusalReason(), true);
    return;
  }
  absl::Status refusal = CheckHello(hello);
  absl::StatusOr<HelloIdentity> identity = refusal.ok() ? Authenticate(hello) : refusal;
  absl::StatusOr<std::string> agent_id = identity.ok() ? Register(*session, hello, *identity) : identity.status();
  absl::StatusOr<Resumption> resumption =
      agent_id.ok() ? ResumeJobs(*agent_id, hello) : absl::StatusOr<Resumption>(agent_id.status());
  if (!resumption.ok()) {
    // Only a database outage (Unavailable) is worth retrying unchanged, and a live
    // session of this identity elsewhere (it may end): the agent backs off meanwhile.
    const std::string reason(resumption.status().message());
    const bool in_use =
        absl::IsFailedPrecondition(resumption.status()) && absl::StartsWith(reason, store::kIdentityInUsePrefix);
    if (in_use) {
      ::fleetmark::Log(::fleetmark::LogLevel::kWarning, absl::StrCat("hello of agent ", hello.agent_name(), " from ",
                                                                     session->peer(), " refused: ", reason));
    }
    session->Refuse(static_cast<grpc::StatusCode>(resumption.status().code()), reason,
                    absl::IsUnavailable(resumption.status()) || in_use, in_use);
    return;
  }
  Welcome(session, hello, *agent_id, identity->credential, *resumption);
}

absl::Status AgentServiceImpl::DatabaseRefusal(const v1::Hello& hello, const absl::Status& status) {
  // Only an outage is described; anything else is logged here, never sent (it may quote SQL).
  if (absl::IsUnavailable(status) || absl::IsAborted(status) || absl::IsDeadlineExceeded(status) ||
      absl::IsResourceExhausted(status)) {
    return absl::UnavailableError(absl::StrCat("coordinator database unavailable, retry later: ", status.message()));
  }
  ::fleetmark::Log(::fleetmark::LogLevel::kError,
                   absl::StrCat("hello of agent ", hello.agent_name(), ": ", status.ToString()));
  return absl::UnavailableError(
      "coordinator error while registering the agent (details in the coordinator's log), retry later");
}

absl::StatusOr<AgentServiceImpl::HelloIdentity> AgentServiceImpl::Authenticate(const v1::Hello& hello) {
  // A credential issued earlier, else an enrollment token.
  HelloIdentity identity;
  if (!hello.agent_credential().empty()) {
    absl::StatusOr<store::AgentIdentity> known = stores_.agents.FindAgentByName(hello.agent_name());
    if (!known.ok() && !absl::IsNotFound(known.status())) return DatabaseRefusal(hello, known.status());
    if (known.ok() && ConstantTimeEquals(known->credential_sha256, Sha256Hex(hello.agent_credential()))) {
      if (known->token_revoked) {
        return absl::PermissionDeniedError(
            "agent credential refused: the enrollment token it was issued under is revoked");
      }
      identity.credential = hello.agent_credential();
      identity.agent_id = known->agent_id;
      return identity;
    }
    if (hello.enrollment_token().empty()) {
      return absl::UnauthenticatedError(
          absl::StrCat("agent credential refused for agent \"", hello.agent_name(), "\""));
    }
  }
  if (hello.enrollment_token().empty()) {
    return absl::UnauthenticatedError("hello needs an enrollment_token (first contact) or an agent_credential");
  }
  absl::StatusOr<std::string> token = stores_.tokens.FindEnrollmentToken(Sha256Hex(hello.enrollment_token()));
  if (absl::IsNotFound(token.status())) return absl::UnauthenticatedError("enrollment token unknown");
  if (absl::IsPermissionDenied(token.status())) return absl::PermissionDeniedError("enrollment token revoked");
  if (!token.ok()) return DatabaseRefusal(hello, token.status());
  // A name belongs to its credential: an enrollment under the name of an agent that
  // exists, online or not, on any coordinator, is refused by RegisterAgent.
  identity.token_id = *token;
  identity.credential = RandomToken();
  identity.credential_sha256 = Sha256Hex(identity.credential);
  return identity;
}

absl::StatusOr<std::string> AgentServiceImpl::Register(const AgentSession& session, const v1::Hello& hello,
                                                       const HelloIdentity& identity) {
  store::AgentRegistration reg;
  reg.agent_id = identity.agent_id;
  reg.name = hello.agent_name();
  reg.credential_sha256 = identity.credential_sha256;
  reg.token_id = identity.token_id;
  reg.host = hello.host();
  reg.labels = std::map<std::string, std::string>(hello.labels().begin(), hello.labels().end());
  reg.engine_version = hello.engine_version();
  reg.strategies.assign(hello.strategies().begin(), hello.strategies().end());
  reg.workloads.assign(hello.workloads().begin(), hello.workloads().end());
  reg.scenarios.assign(hello.scenarios().begin(), hello.scenarios().end());
  reg.session_id = session.session_id();
  reg.instance_id = hello.instance_id();
  reg.machine_id = hello.machine_id();
  reg.boot_id = hello.boot_id();
  reg.exclusive_cpus = hello.exclusive_cpus();
  reg.session_ended_here = [this](const std::string& id) { return sessions_.EndedHere(id); };
  absl::StatusOr<std::string> agent_id = stores_.agents.RegisterAgent(reg);
  if (absl::IsAlreadyExists(agent_id.status())) return agent_id.status();
  if (absl::IsFailedPrecondition(agent_id.status())) return agent_id.status();  // identity in use
  if (absl::IsNotFound(agent_id.status())) {  // removed between the credential check and now
    return absl::PermissionDeniedError(store::kAgentRemovedReason);
  }
  if (!agent_id.ok()) return DatabaseRefusal(hello, agent_id.status());
  return agent_id;
}

absl::StatusOr<AgentServiceImpl::Resumption> AgentServiceImpl::ResumeJobs(const std::string& agent_id,
                                                                          const v1::Hello& hello) {
  // Resume a job the agent still runs; any other job it held is released at once.
  Resumption resumption;
  if (!hello.running_job_id().empty()) {  // a UUID (CheckHello)
    absl::StatusOr<bool> resumed = stores_.runs.ResumeJob(hello.running_job_id(), agent_id, options_.job_lease);
    if (!resumed.ok()) return DatabaseRefusal(hello, resumed.status());
    if (*resumed) {
      resumption.running_job = hello.running_job_id();
    } else {
      // Ended (cancelled, failed, re-queued) while the agent was away, which may still
      // be running it: it stays busy (no other job is pushed onto it) until it reports
      // the job finished, as after any cancellation.
      resumption.ended_job = hello.running_job_id();
    }
  }
  if (absl::StatusOr<std::vector<store::ExpiredJob>> released =
          stores_.runs.ReleaseAgentJobs(agent_id, resumption.running_job);
      !released.ok()) {
    return DatabaseRefusal(hello, released.status());
  }
  return resumption;
}

void AgentServiceImpl::Welcome(const SessionPtr& session, const v1::Hello& hello, const std::string& agent_id,
                               const std::string& credential, const Resumption& resumption) {
  session->UpdateState([&](AgentSession::AgentState& s) {
    s.agent_id = agent_id;
    s.name = hello.agent_name();
    s.instance_id = hello.instance_id();
    s.running_job = resumption.running_job.empty() ? resumption.ended_job : resumption.running_job;
    s.cancel_sent = resumption.ended_job;
    s.last_heard = clock_.SteadyNow();
    s.batched_acks = std::find(hello.capabilities().begin(), hello.capabilities().end(), v1::CAPABILITY_RESULT_ACKS) !=
                     hello.capabilities().end();
  });
  if (SessionPtr previous = registry_.Add(agent_id, session); previous != nullptr && previous != session) {
    const std::string previous_instance = previous->state().instance_id;
    if (!previous_instance.empty() && previous_instance == hello.instance_id()) {
      // The same process reconnected: its old stream is stale.
      previous->Close(grpc::Status(grpc::StatusCode::ABORTED, "replaced by a newer connection of this agent"));
    } else {
      // Another process took the session over (the old one had fallen silent, or its
      // stream was ending): the old one is told, and stops its job.
      previous->Refuse(grpc::StatusCode::ABORTED,
                       absl::StrCat(store::kIdentityInUsePrefix, "another process with the credential of agent \"",
                                    hello.agent_name(), "\" took its session over after this one fell silent; ",
                                    "this process stops its job and retries"),
                       true, true);
    }
  }
  // Revoked or removed between its registration and the Add above: the notification
  // found no stream here, so this is the one check that sees it.
  if (absl::StatusOr<bool> refused = EndStreamIfRevoked(stores_.tokens, agent_id, session); refused.ok() && *refused)
    return;
  v1::CoordinatorMessage welcome;
  welcome.mutable_welcome()->set_agent_id(agent_id);
  welcome.mutable_welcome()->set_agent_credential(credential);
  welcome.mutable_welcome()->set_heartbeat_interval_ms(
      static_cast<uint32_t>(absl::ToInt64Milliseconds(options_.heartbeat_interval)));
  welcome.mutable_welcome()->set_protocol_version(kMaxProtocolVersion);
  session->Send(std::move(welcome));
  // After the Welcome, which makes the agent replay its spooled reports first: a job
  // that finished here unconfirmed is then reported (clearing it) before the
  // cancellation makes the agent drop that report.
  if (!resumption.ended_job.empty()) {
    v1::CoordinatorMessage cancel;
    cancel.mutable_cancellation()->set_job_id(resumption.ended_job);
    cancel.mutable_cancellation()->set_reason("the job is no longer assigned to this agent");
    session->Send(std::move(cancel));
  }
  session->ReadNext();
  if (resumption.running_job.empty() && resumption.ended_job.empty()) dispatcher_.Wake({agent_id});
}

void AgentServiceImpl::HandleResult(const SessionPtr& session, v1::CaseResult result) {
  const std::string agent_id = session->state().agent_id;
  bool pause = false, batched = false;
  session->UpdateState([&](AgentSession::AgentState& s) {
    batched = s.batched_acks;
    ++s.pending_acks;
    pause = s.pending_acks >= options_.max_pending_acks;
    s.read_paused = pause;
  });
  const uint32_t resume_below = options_.max_pending_acks / 2;
  ingestor_.Submit(agent_id, std::move(result), [session, resume_below, batched](const store::ResultOutcome& outcome) {
    v1::ResultAck ack;
    ack.set_result_id(outcome.result_id);
    ack.set_duplicate(outcome.duplicate);
    ack.set_rejected(outcome.rejected);
    ack.set_message(outcome.message);
    session->SendResultAck(std::move(ack), batched);
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
  absl::Status status = stores_.agents.SetAgentOffline(state.agent_id, session->session_id());
  if (!status.ok() && !absl::IsUnavailable(status)) {
    ::fleetmark::Log(::fleetmark::LogLevel::kWarning,
                     absl::StrCat("agent ", state.name, " offline: ", status.message()));
  }
}

}  // namespace fleetmark::service
