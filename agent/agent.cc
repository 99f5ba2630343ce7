#include "agent/agent.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <deque>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/credential_store.h"
#include "agent/file_util.h"
#include "agent/log.h"
#include "agent/target.h"
#include "agent/uuid.h"
#include "engine/common/message_limits.h"
#include "engine/common/message_text.h"
#include "engine/common/name_rule.h"
#include "engine/common/secret_file.h"
#include "engine/common/status_macros.h"
#include "engine/common/text.h"
#include "engine/common/tls_probe.h"
#include "engine/measure/process_stats.h"
#include "engine/common/registry.h"
#include "engine/strategies/registry.h"
#include "fleetmark/v1/agent.grpc.pb.h"

namespace fleetmark::agent {
namespace {

using fleetmark::v1::AgentMessage;
using fleetmark::v1::CoordinatorMessage;

// gRPC codes with which a coordinator can refuse a hello outright; retrying them
// unchanged cannot succeed.
bool IsRefusalCode(grpc::StatusCode code) {
  return code == grpc::StatusCode::UNAUTHENTICATED || code == grpc::StatusCode::PERMISSION_DENIED ||
         code == grpc::StatusCode::ALREADY_EXISTS || code == grpc::StatusCode::FAILED_PRECONDITION ||
         code == grpc::StatusCode::INVALID_ARGUMENT;
}

std::string GrpcStatusText(const grpc::Status& status) {
  std::string text = absl::StrCat("gRPC status ", static_cast<int>(status.error_code()), " ", status.error_message());
  if (status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
    absl::StrAppend(&text, " (this agent sends and receives messages of at most ",
                    FormatMessageLimit(kAgentMaxMessageBytes), ")");
  }
  return text;
}

// The agent's TLS flags, as tls_probe.h names them in messages.
const TlsFlagNames kAgentTlsFlags{"--tls_ca_file", "--tls_cert_file", "--tls_key_file"};

// The PEM text of the TLS files ("" where none is configured).
absl::StatusOr<TlsClientFiles> ReadTlsFiles(const TlsOptions& tls) {
  TlsClientFiles files;
  files.server_name = tls.server_name_override;
  if (tls.ca_file.empty()) return files;
  FLEETMARK_ASSIGN_OR_RETURN(files.ca_pem, ReadWholeFile(tls.ca_file, 1 << 20));
  if (!tls.cert_file.empty()) {
    FLEETMARK_ASSIGN_OR_RETURN(files.cert_pem, ReadWholeFile(tls.cert_file, 1 << 20));
    FLEETMARK_ASSIGN_OR_RETURN(files.key_pem, ReadWholeFile(tls.key_file, 1 << 20));
  }
  return files;
}

// InvalidArgument (a configuration error: the agent exits) for TLS files that are not
// PEM or a key that does not belong to its certificate.
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeCredentials(const TlsOptions& tls) {
  if (tls.ca_file.empty()) return grpc::InsecureChannelCredentials();
  FLEETMARK_ASSIGN_OR_RETURN(TlsClientFiles files, ReadTlsFiles(tls));
  FLEETMARK_RETURN_IF_ERROR(CheckTlsClientFiles(files, kAgentTlsFlags));
  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = files.ca_pem;
  ssl.pem_cert_chain = files.cert_pem;
  ssl.pem_private_key = files.key_pem;
  return grpc::SslCredentials(ssl);
}

}  // namespace

// One AgentService.Connect stream. The session thread (Agent::RunSession) reads; the
// writer thread drains the outbound queue, sends heartbeats once welcomed, and abandons
// the stream if no Welcome arrives in time.
class Agent::Session {
 public:
  // A queued message, or the id of a spooled result (read back from the spool when it
  // is written, so a long replay does not hold every result in memory).
  using Outbound = std::variant<AgentMessage, std::string>;

  Session(Agent* agent, absl::Time welcome_deadline) : agent_(agent), welcome_deadline_(welcome_deadline) {}

  grpc::ClientContext& context() { return context_; }
  void set_stream(std::unique_ptr<grpc::ClientReaderWriter<AgentMessage, CoordinatorMessage>> stream) {
    stream_ = std::move(stream);
  }
  grpc::ClientReaderWriter<AgentMessage, CoordinatorMessage>* stream() { return stream_.get(); }

  void Enqueue(Outbound item) {
    absl::MutexLock lock(&mu_);
    if (!closed_) queue_.push_back(std::move(item));
  }

  void SetWelcomed(absl::Duration heartbeat_interval) {
    absl::MutexLock lock(&mu_);
    welcomed_ = true;
    heartbeat_interval_ = heartbeat_interval;
    next_heartbeat_ = absl::Now();  // first heartbeat at once: fresh RSS/CPU/spool figures
  }

  void Close() {
    absl::MutexLock lock(&mu_);
    closed_ = true;
    queue_.clear();
  }

  void StartWriter() {
    writer_ = std::thread([this] { WriterLoop(); });
  }
  void JoinWriter() {
    if (writer_.joinable()) writer_.join();
  }

 private:
  void WriterLoop();
  AgentMessage MakeHeartbeat() const;

  Agent* const agent_;
  const absl::Time welcome_deadline_;
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReaderWriter<AgentMessage, CoordinatorMessage>> stream_;
  std::thread writer_;

  absl::Mutex mu_;
  std::deque<Outbound> queue_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  bool welcomed_ ABSL_GUARDED_BY(mu_) = false;
  absl::Duration heartbeat_interval_ ABSL_GUARDED_BY(mu_);
  absl::Time next_heartbeat_ ABSL_GUARDED_BY(mu_);
};

AgentMessage Agent::Session::MakeHeartbeat() const {
  AgentMessage message;
  fleetmark::v1::Heartbeat* heartbeat = message.mutable_heartbeat();
  heartbeat->set_unix_time_ns(absl::ToUnixNanos(absl::Now()));
  if (absl::StatusOr<uint64_t> rss = engine::ReadRssBytes(); rss.ok()) {
    heartbeat->set_rss_bytes(*rss);
  }
  if (absl::StatusOr<engine::ResourceUsage> usage = engine::ReadResourceUsage(); usage.ok()) {
    heartbeat->set_cpu_seconds(absl::ToDoubleSeconds(usage->user_cpu + usage->system_cpu));
  }
  heartbeat->set_spooled_results(static_cast<uint32_t>(agent_->spool_->pending()));
  return message;
}

void Agent::Session::WriterLoop() {
  while (true) {
    Outbound item;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return closed_ || (!queue_.empty() && !welcomed_) ||
               (welcomed_ && (!queue_.empty() || absl::Now() >= next_heartbeat_));
      };
      while (!ready()) {
        const absl::Time deadline = welcomed_ ? next_heartbeat_ : welcome_deadline_;
        if (absl::Now() >= deadline) break;
        mu_.AwaitWithDeadline(absl::Condition(&ready), deadline);
      }
      if (closed_) return;
      if (!welcomed_ && queue_.empty()) {
        Log(LogLevel::kWarning, "no Welcome from the coordinator in time; abandoning the session");
        context_.TryCancel();
        return;
      }
      if (welcomed_ && absl::Now() >= next_heartbeat_) {
        item = MakeHeartbeat();
        next_heartbeat_ = absl::Now() + heartbeat_interval_;
      } else {
        item = std::move(queue_.front());
        queue_.pop_front();
      }
    }
    AgentMessage message;
    bool is_result = false;
    if (auto* id = std::get_if<std::string>(&item)) {
      absl::StatusOr<fleetmark::v1::CaseResult> result = agent_->spool_->Read(*id);
      if (absl::IsNotFound(result.status())) continue;  // acked meanwhile
      if (!result.ok()) {
        Log(LogLevel::kError, absl::StrCat("spool: ", result.status().ToString()));
        continue;
      }
      *message.mutable_result() = *std::move(result);
      is_result = true;
    } else {
      message = std::move(std::get<AgentMessage>(item));
    }
    if (!stream_->Write(message)) return;  // the stream broke; the reader sees it too
    if (is_result) {
      absl::MutexLock lock(&agent_->mu_);
      ++agent_->stats_.results_sent;
    }
  }
}

absl::Status ValidateAgentOptions(const AgentOptions& options) {
  FLEETMARK_RETURN_IF_ERROR(CoordinatorTarget(options.coordinator).status());
  if (!IsName(options.name)) {
    return absl::InvalidArgumentError(
        absl::StrCat("name: 1 to 64 characters of [A-Za-z0-9._-], got \"", EscapeForTerminal(options.name, 80), "\""));
  }
  if (options.spool_dir.empty()) return absl::InvalidArgumentError("spool_dir: empty");
  if (options.tls.cert_file.empty() != options.tls.key_file.empty()) {
    return absl::InvalidArgumentError("--tls_cert_file and --tls_key_file: give both (mutual TLS) or neither");
  }
  if (!options.tls.cert_file.empty() && options.tls.ca_file.empty()) {
    return absl::InvalidArgumentError("--tls_cert_file: mutual TLS needs --tls_ca_file too");
  }
  FLEETMARK_RETURN_IF_ERROR(ValidateBackoffOptions(options.backoff));
  for (const auto& [field, value] :
       {std::pair<absl::string_view, absl::Duration>("welcome_timeout", options.welcome_timeout),
        {"default_heartbeat_interval", options.default_heartbeat_interval},
        {"keepalive_time", options.keepalive_time},
        {"keepalive_timeout", options.keepalive_timeout}}) {
    if (value < absl::Milliseconds(10) || value > absl::Hours(1)) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ": 10ms <= ", field, " <= 1h, got ", absl::FormatDuration(value)));
    }
  }
  if (options.finish_send_delay < absl::ZeroDuration() || options.finish_send_delay > absl::Hours(1)) {
    return absl::InvalidArgumentError(absl::StrCat("finish_send_delay: 0 <= finish_send_delay <= 1h, got ",
                                                   absl::FormatDuration(options.finish_send_delay)));
  }
  return absl::OkStatus();
}

AgentIdentity BuildIdentity(fleetmark::v1::HostInfo host) {
  AgentIdentity identity;
  identity.engine_version = FLEETMARK_ENGINE_VERSION;
  if (host.engine_version().empty()) host.set_engine_version(identity.engine_version);
  // Detected text the coordinator would refuse (a control character in a device-tree
  // string, an over-long CPU model) is escaped and cut rather than stop the agent.
  if (const int changed = SanitizeMessageText(&host, HelloTextRules()); changed > 0) {
    host.add_notes(absl::StrCat(changed,
                                " detected host strings were not printable UTF-8 within their limits "
                                "and were escaped or cut"));
  }
  identity.host = std::move(host);
  for (const auto& strategy : engine::kStrategies) {
    identity.strategies.emplace_back(strategy.name);
  }
  for (const auto& workload : engine::kWorkloads) identity.workloads.emplace_back(workload.name);
  for (const auto& scenario : engine::kScenarios) identity.scenarios.emplace_back(scenario.name);
  return identity;
}

absl::StatusOr<std::unique_ptr<Agent>> Agent::Create(AgentOptions options, AgentIdentity identity,
                                                     std::unique_ptr<JobExecutor> executor) {
  FLEETMARK_RETURN_IF_ERROR(ValidateAgentOptions(options));
  if (executor == nullptr) return absl::InvalidArgumentError("executor: null");
  FLEETMARK_RETURN_IF_ERROR(MakeDirectories(options.spool_dir));
  FLEETMARK_ASSIGN_OR_RETURN(std::unique_ptr<SpoolLock> spool_lock, SpoolLock::Acquire(options.spool_dir));
  FLEETMARK_ASSIGN_OR_RETURN(std::unique_ptr<Spool> spool, Spool::Open(options.spool_dir, options.spool));
  const SpoolRecovery& recovery = spool->recovery();
  if (recovery.truncated_bytes > 0) {
    Log(LogLevel::kWarning, absl::StrCat("spool ", spool->path(), ": cut ", recovery.truncated_bytes,
                                         " bytes of an interrupted append (", recovery.tail_error, ")"));
  }
  if (recovery.pending > 0 || recovery.pending_finished > 0) {
    Log(LogLevel::kInfo, absl::StrCat("spool ", spool->path(), ": ", recovery.pending, " results and ",
                                      recovery.pending_finished, " job reports to replay"));
  }
  return std::unique_ptr<Agent>(
      new Agent(std::move(options), std::move(identity), std::move(executor), std::move(spool_lock), std::move(spool)));
}

Agent::Agent(AgentOptions options, AgentIdentity identity, std::unique_ptr<JobExecutor> executor,
             std::unique_ptr<SpoolLock> spool_lock, std::unique_ptr<Spool> spool)
    : options_(std::move(options)),
      identity_(std::move(identity)),
      executor_(std::move(executor)),
      spool_lock_(std::move(spool_lock)),
      spool_(std::move(spool)) {
  JobEvents events;
  events.on_result = [this](const fleetmark::v1::JobAssignment& job, const fleetmark::v1::CaseResult& result) {
    OnJobResult(job, result);
  };
  events.on_progress = [this](const fleetmark::v1::JobProgress& p) { OnJobProgress(p); };
  events.on_finished = [this](const fleetmark::v1::JobFinished& f) { OnJobFinished(f); };
  runner_ = std::make_unique<JobRunner>(executor_.get(), std::move(events));
  // An unconfirmed report from before a restart: the newest names the job in the hello.
  std::vector<fleetmark::v1::JobFinished> spooled = spool_->PendingFinished();
  absl::MutexLock lock(&mu_);
  if (!spooled.empty()) pending_finish_ = spooled.back();
}

Agent::~Agent() {
  Shutdown();
  runner_->CancelAndWait();
}

AgentStats Agent::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

void Agent::Shutdown() {
  stopping_.store(true);
  {
    absl::MutexLock lock(&wait_mu_);
    stop_requested_ = true;
  }
  {
    absl::MutexLock lock(&mu_);
    if (dialing_ != nullptr) dialing_->context().TryCancel();
  }
  const std::string running = runner_->running_job_id();
  if (!running.empty()) runner_->Cancel(running);
}

absl::Status Agent::Run() {
  Backoff backoff(options_.backoff, gen_);
  bool token_retry_used = false;
  absl::Status result = absl::OkStatus();
  while (!stopping_.load()) {
    SessionOutcome outcome = RunSession();
    if (stopping_.load()) break;
    if (outcome.welcomed) {
      backoff.Reset();
      token_retry_used = false;
    }
    if (outcome.refused) {
      if (outcome.used_credential && !options_.token_file.empty() && !token_retry_used) {
        Log(LogLevel::kWarning, absl::StrCat("coordinator refused the stored credential (", outcome.status.message(),
                                             "); forgetting it and presenting the enrollment token"));
        if (absl::Status forgot = ForgetCredential(options_.spool_dir); !forgot.ok()) {
          result = forgot;
          break;
        }
        token_retry_used = true;
        continue;
      }
      Log(LogLevel::kError, absl::StrCat("refused by the coordinator: ", outcome.status.message()));
      result = absl::UnauthenticatedError(absl::StrCat("refused by the coordinator: ", outcome.status.message()));
      break;
    }
    if (absl::IsNotFound(outcome.status) || absl::IsFailedPrecondition(outcome.status) ||
        absl::IsPermissionDenied(outcome.status) || absl::IsInvalidArgument(outcome.status)) {
      // Local configuration errors (token file, TLS files): retrying will not help.
      // The caller reports them.
      result = outcome.status;
      break;
    }
    const absl::Duration delay = backoff.NextDelay();
    // A TLS mismatch looks like any transport failure to gRPC. It is a configuration
    // error, but one the coordinator's side may fix (a renewed certificate, a CA
    // bundle), so the agent keeps retrying at backoff pace, saying so on every attempt.
    std::string tls_problem;
    if (outcome.never_connected) {
      absl::StatusOr<TlsClientFiles> files = ReadTlsFiles(options_.tls);
      if (files.ok()) tls_problem = DiagnoseTlsConnection(options_.coordinator, *files, kAgentTlsFlags);
    }
    if (!tls_problem.empty()) {
      Log(LogLevel::kError, absl::StrCat("configuration error: TLS: ", tls_problem, "; reconnecting in ",
                                         absl::FormatDuration(delay), " (attempt ", backoff.attempt(), ")"));
    } else {
      Log(LogLevel::kInfo, absl::StrCat("session ended (", outcome.status.message(), "); reconnecting in ",
                                        absl::FormatDuration(delay), " (attempt ", backoff.attempt(), ")"));
    }
    absl::MutexLock lock(&wait_mu_);
    wait_mu_.AwaitWithTimeout(absl::Condition(&stop_requested_), delay);
  }
  stopping_.store(true);  // the job cancelled below is not reported (OnJobFinished)
  runner_->CancelAndWait();
  return result;
}

absl::StatusOr<AgentMessage> Agent::MakeHello(bool* used_credential) {
  AgentMessage message;
  fleetmark::v1::Hello* hello = message.mutable_hello();
  hello->set_protocol_version(fleetmark::v1::PROTOCOL_VERSION_1);
  hello->set_agent_name(options_.name);
  *hello->mutable_host() = identity_.host;
  hello->set_engine_version(identity_.engine_version);
  for (const std::string& s : identity_.strategies) hello->add_strategies(s);
  for (const std::string& w : identity_.workloads) hello->add_workloads(w);
  for (const std::string& s : identity_.scenarios) hello->add_scenarios(s);
  for (const auto& [key, value] : options_.labels) (*hello->mutable_labels())[key] = value;
  // The running job, or else a finished job whose JobFinished may not have been
  // received: the coordinator keeps it ours (ResumeJob) so the resent JobFinished below
  // can close it, or answers with a cancellation if it has ended meanwhile.
  std::string open_job = runner_->running_job_id();
  if (open_job.empty()) {
    absl::MutexLock lock(&mu_);
    if (pending_finish_.has_value()) open_job = pending_finish_->job_id();
  }
  hello->set_running_job_id(open_job);

  absl::StatusOr<std::optional<StoredCredential>> stored = LoadCredential(options_.spool_dir);
  if (!stored.ok()) {
    Log(LogLevel::kWarning, absl::StrCat("ignoring the stored credential: ", stored.status().message()));
  } else if (stored->has_value()) {
    hello->set_agent_credential((*stored)->credential);
    *used_credential = true;
    FLEETMARK_RETURN_IF_ERROR(CheckHello(*hello));
    return message;
  }
  *used_credential = false;
  if (options_.token_file.empty()) {
    return absl::FailedPreconditionError(absl::StrCat("token_file: no stored credential in ", options_.spool_dir,
                                                      " and no --token_file to enroll with"));
  }
  FLEETMARK_ASSIGN_OR_RETURN(std::string token, ReadSecretFile("token_file", options_.token_file));
  hello->set_enrollment_token(std::move(token));
  FLEETMARK_RETURN_IF_ERROR(CheckHello(*hello));
  return message;
}

absl::Status Agent::CheckHello(const fleetmark::v1::Hello& hello) {
  // The coordinator's own rules: a hello it would refuse is a local configuration
  // error (InvalidArgument: exit 2), not something to retry.
  absl::Status text = CheckMessageText(hello, "hello", HelloTextRules());
  if (text.ok()) return text;
  return absl::InvalidArgumentError(absl::StrCat(text.message(), " (the coordinator would refuse this hello)"));
}

Agent::SessionOutcome Agent::RunSession() {
  SessionOutcome outcome;
  absl::StatusOr<AgentMessage> hello = MakeHello(&outcome.used_credential);
  if (!hello.ok()) {
    outcome.status = hello.status();
    return outcome;
  }
  absl::StatusOr<std::string> target = CoordinatorTarget(options_.coordinator);
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials = MakeCredentials(options_.tls);
  if (!target.ok() || !credentials.ok()) {
    outcome.status = target.ok() ? credentials.status() : target.status();
    return outcome;
  }
  // A fresh channel per session: our backoff, not the channel's, paces reconnects.
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, static_cast<int>(absl::ToInt64Milliseconds(options_.keepalive_time)));
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, static_cast<int>(absl::ToInt64Milliseconds(options_.keepalive_timeout)));
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  args.SetInt(GRPC_ARG_ENABLE_RETRIES, 0);
  // A job assignment carries its whole plan: gRPC's 4 MiB receive default is too small
  // for plans the coordinator accepts (engine/common/message_limits.h).
  args.SetMaxReceiveMessageSize(kAgentMaxMessageBytes);
  args.SetMaxSendMessageSize(kAgentMaxMessageBytes);
  if (!options_.tls.server_name_override.empty()) {
    args.SetSslTargetNameOverride(options_.tls.server_name_override);
  }
  std::shared_ptr<grpc::Channel> channel = grpc::CreateCustomChannel(*target, *credentials, args);
  auto stub = fleetmark::v1::AgentService::NewStub(channel);

  auto session = std::make_unique<Session>(this, absl::Now() + options_.welcome_timeout);
  {
    absl::MutexLock lock(&mu_);
    if (stopping_.load()) {
      outcome.status = absl::CancelledError("shutting down");
      return outcome;
    }
    dialing_ = session.get();
    ++stats_.sessions;
  }
  session->set_stream(stub->Connect(&session->context()));
  auto* stream = session->stream();
  std::string refusal;
  // The hello goes first, from this thread; only then may the writer thread write.
  if (stream->Write(*hello)) {
    session->StartWriter();
    CoordinatorMessage message;
    while (stream->Read(&message)) {
      if (message.has_welcome()) {
        if (!outcome.welcomed) {
          outcome.welcomed = true;
          OnWelcome(session.get(), message.welcome());
        }
      } else if (message.has_refusal()) {
        refusal = message.refusal().reason();
        // Refused after a Welcome means the coordinator found a message of ours
        // malformed: log it and reconnect (with backoff) rather than leave the fleet.
        outcome.refused = !message.refusal().retryable() && !outcome.welcomed;
        if (outcome.welcomed) {
          Log(LogLevel::kError, absl::StrCat("coordinator closed the session: ", refusal));
        }
        session->context().TryCancel();
      } else if (message.has_assignment()) {
        OnAssignment(session.get(), message.assignment());
      } else if (message.has_cancellation()) {
        OnCancellation(message.cancellation());
      } else if (message.has_ack()) {
        OnAck(message.ack());
      } else if (message.has_job_finished_ack()) {
        OnFinishedAck(message.job_finished_ack());
      }
    }
  }
  {
    absl::MutexLock lock(&mu_);
    session_ = nullptr;
    dialing_ = nullptr;
  }
  session->Close();
  session->JoinWriter();
  const grpc::Status status = stream->Finish();
  if (!refusal.empty()) {
    outcome.status = absl::UnavailableError(refusal);
  } else if (outcome.status.ok()) {
    if (!outcome.welcomed && IsRefusalCode(status.error_code())) {
      outcome.refused = true;
      outcome.status = absl::UnavailableError(status.error_message());
    } else {
      outcome.status = absl::UnavailableError(GrpcStatusText(status));
      outcome.never_connected = !outcome.welcomed && status.error_code() == grpc::StatusCode::UNAVAILABLE;
    }
  }
  return outcome;
}

void Agent::OnWelcome(Session* session, const fleetmark::v1::Welcome& welcome) {
  if (!welcome.agent_credential().empty()) {
    absl::Status saved = SaveCredential(options_.spool_dir, {welcome.agent_id(), welcome.agent_credential()});
    if (!saved.ok()) {
      Log(LogLevel::kError, absl::StrCat("could not store the agent credential: ", saved.message()));
    }
  }
  const absl::Duration interval = welcome.heartbeat_interval_ms() > 0
                                      ? absl::Milliseconds(welcome.heartbeat_interval_ms())
                                      : options_.default_heartbeat_interval;
  std::vector<std::string> pending = spool_->PendingIds();
  absl::MutexLock lock(&mu_);
  // Results first, then the job reports (the coordinator ends a job only after the
  // results sent before its report are committed). Spooled reports are re-read under
  // mu_, so a report spooled concurrently is sent once, here or by OnJobFinished.
  std::vector<fleetmark::v1::JobFinished> reports = spool_->PendingFinished();
  if (pending_finish_.has_value() &&
      std::none_of(reports.begin(), reports.end(),
                   [&](const fleetmark::v1::JobFinished& r) { return r.job_id() == pending_finish_->job_id(); })) {
    reports.push_back(*pending_finish_);  // the spool failed: held in memory only
  }
  Log(LogLevel::kInfo, absl::StrCat("welcomed as agent ", welcome.agent_id(), " (", options_.name,
                                    "), heartbeat every ", absl::FormatDuration(interval), ", replaying ",
                                    pending.size(), " spooled results and ", reports.size(), " job reports"));
  ++stats_.welcomes;
  session->SetWelcomed(interval);
  for (std::string& id : pending) session->Enqueue(std::move(id));
  const std::string running = runner_->running_job_id();
  for (fleetmark::v1::JobFinished& report : reports) {
    if (report.job_id() == running) continue;              // never report a job that runs here
    if (report.job_id() == held_finish_job_id_) continue;  // test hook: sent after the hold
    AgentMessage message;
    *message.mutable_job_finished() = std::move(report);
    session->Enqueue(std::move(message));
  }
  session_ = session;
}

void Agent::OnAssignment(Session* session, const fleetmark::v1::JobAssignment& job) {
  AgentMessage accepted;
  accepted.mutable_job_accepted()->set_job_id(job.job_id());
  if (runner_->running_job_id() == job.job_id()) {
    session->Enqueue(std::move(accepted));  // re-sent after a reconnect: still running
    return;
  }
  {
    absl::MutexLock lock(&mu_);
    if (pending_finish_.has_value() && pending_finish_->job_id() == job.job_id()) {
      // Finished here already; the coordinator missed our report.
      AgentMessage finished;
      *finished.mutable_job_finished() = *pending_finish_;
      session->Enqueue(std::move(finished));
      return;
    }
    // The coordinator assigns a job only to an agent with no live job: the reported
    // job has ended or was re-queued, and its report is stale.
    if (pending_finish_.has_value()) {
      const std::string stale = pending_finish_->job_id();
      DropFinishReport(stale);
      Log(LogLevel::kInfo, absl::StrCat("dropped the unconfirmed report of job ", stale,
                                        ": the coordinator assigned job ", job.job_id()));
    }
  }
  fleetmark::v1::JobAssignment to_run = job;
  const int stored = to_run.stored_case_ids_size();
  const int spooled = AddSpooledCases(to_run);
  Log(LogLevel::kInfo, absl::StrCat("job ", job.job_id(), " (run ", job.run_id(), ", plan \"", job.plan().name(),
                                    "\", attempt ", job.attempt(), job.quick() ? ", quick" : "", ") assigned",
                                    stored + spooled == 0 ? ""
                                                          : absl::StrCat("; skipping ", stored, " stored and ", spooled,
                                                                         " spooled cases of an earlier attempt")));
  session->Enqueue(std::move(accepted));
  absl::Status started = runner_->Start(std::move(to_run));
  if (!started.ok()) {
    Log(LogLevel::kWarning, std::string(started.message()));
    AgentMessage finished;
    fleetmark::v1::JobFinished* report = finished.mutable_job_finished();
    report->set_job_id(job.job_id());
    report->set_ok(false);
    report->set_message(absl::StrCat("infrastructure: ", started.message()));
    session->Enqueue(std::move(finished));
    return;
  }
  absl::MutexLock lock(&mu_);
  ++stats_.jobs_started;
}

int Agent::AddSpooledCases(fleetmark::v1::JobAssignment& job) {
  if (job.attempt() <= 1) return 0;  // a first attempt has no earlier results
  std::set<std::string> skip(job.stored_case_ids().begin(), job.stored_case_ids().end());
  int added = 0;
  for (const std::string& id : spool_->PendingIds()) {
    absl::StatusOr<fleetmark::v1::CaseResult> result = spool_->Read(id);
    if (!result.ok() || result->job_id() != job.job_id()) continue;
    if (result->status() == fleetmark::v1::CASE_STATUS_CANCELLED) continue;  // a placeholder
    if (skip.insert(result->spec().case_id()).second) {
      job.add_stored_case_ids(result->spec().case_id());
      ++added;
    }
  }
  return added;
}

void Agent::OnCancellation(const fleetmark::v1::JobCancellation& cancellation) {
  const std::string& job_id = cancellation.job_id();
  const bool was_running = runner_->Cancel(job_id);
  bool was_unconfirmed = false;
  {
    absl::MutexLock lock(&mu_);
    was_unconfirmed = DropFinishReport(job_id);  // ended on the coordinator's side already
  }
  Log(LogLevel::kInfo,
      absl::StrCat("cancellation of job ", job_id, " (", cancellation.reason(), ")",
                   was_running ? "" : (was_unconfirmed ? ": already finished here" : ": not running here")));
}

void Agent::OnAck(const fleetmark::v1::ResultAck& ack) {
  if (ack.rejected()) {
    Log(LogLevel::kError, absl::StrCat("coordinator rejected result ", ack.result_id(), ": ", ack.message(),
                                       " (dropped from the spool)"));
  }
  absl::Status status = spool_->Ack(ack.result_id());
  if (!status.ok()) Log(LogLevel::kError, absl::StrCat("spool: ", status.message()));
  absl::MutexLock lock(&mu_);
  ++stats_.acks;
}

void Agent::OnFinishedAck(const fleetmark::v1::JobFinishedAck& ack) {
  absl::MutexLock lock(&mu_);
  if (DropFinishReport(ack.job_id())) {
    ++stats_.finishes_confirmed;
    Log(LogLevel::kInfo, absl::StrCat("coordinator confirmed the report of job ", ack.job_id()));
  }
}

bool Agent::DropFinishReport(const std::string& job_id) {
  bool had = false;
  if (pending_finish_.has_value() && pending_finish_->job_id() == job_id) {
    pending_finish_.reset();
    had = true;
  }
  for (const fleetmark::v1::JobFinished& report : spool_->PendingFinished()) {
    if (report.job_id() != job_id) continue;
    had = true;
    if (absl::Status status = spool_->AckFinished(job_id); !status.ok()) {
      Log(LogLevel::kError, absl::StrCat("spool: ", status.message()));
    }
  }
  return had;
}

void Agent::OnJobResult(const fleetmark::v1::JobAssignment& job, const fleetmark::v1::CaseResult& result) {
  fleetmark::v1::CaseResult spooled = result;
  absl::StatusOr<std::string> id = NewUuidV4();
  if (!id.ok()) {
    Log(LogLevel::kError,
        absl::StrCat("result of case ", result.spec().case_id(), " lost: no result id: ", id.status().message()));
    return;
  }
  spooled.set_result_id(*id);
  spooled.set_run_id(job.run_id());
  spooled.set_job_id(job.job_id());
  if (spooled.engine_version().empty()) spooled.set_engine_version(identity_.engine_version);

  absl::MutexLock lock(&mu_);
  absl::Status appended = spool_->Append(spooled);
  if (!appended.ok()) {
    // Better delivered without the crash guarantee than not at all.
    Log(LogLevel::kError,
        absl::StrCat("spool append failed (", appended.message(), "); sending result ", *id, " unspooled"));
    if (session_ != nullptr) {
      AgentMessage message;
      *message.mutable_result() = std::move(spooled);
      session_->Enqueue(std::move(message));
    }
    return;
  }
  ++stats_.results_spooled;
  if (session_ != nullptr) session_->Enqueue(*id);
}

void Agent::OnJobProgress(const fleetmark::v1::JobProgress& progress) {
  AgentMessage message;
  *message.mutable_job_progress() = progress;
  SendIfConnected(std::move(message));
}

void Agent::OnJobFinished(const fleetmark::v1::JobFinished& finished) {
  if (finished.cancelled() && stopping_.load()) {
    // Stopped by this agent's own shutdown, not by the coordinator: reporting it would
    // cancel the job for good. Unreported, the coordinator re-queues it when this agent
    // comes back (or its lease expires).
    Log(LogLevel::kInfo, absl::StrCat("job ", finished.job_id(), " interrupted by the shutdown; not reported"));
    return;
  }
  Log(LogLevel::kInfo, absl::StrCat("job ", finished.job_id(),
                                    finished.cancelled() ? " cancelled" : (finished.ok() ? " done" : " failed"),
                                    finished.message().empty() ? "" : ": ", finished.message()));
  AgentMessage message;
  *message.mutable_job_finished() = finished;
  {
    absl::MutexLock lock(&mu_);
    // Durable before it is sent, like a result (results of this job were spooled first).
    if (absl::Status spooled = spool_->AppendFinished(finished); !spooled.ok()) {
      Log(LogLevel::kError, absl::StrCat("spool append failed (", spooled.message(), "); the report of job ",
                                         finished.job_id(), " is held in memory only"));
    }
    pending_finish_ = finished;
    ++stats_.jobs_finished;
    if (options_.finish_send_delay == absl::ZeroDuration()) {
      if (session_ != nullptr) session_->Enqueue(std::move(message));
      return;
    }
    held_finish_job_id_ = finished.job_id();  // not replayed by a reconnect meanwhile
  }
  Log(LogLevel::kWarning, absl::StrCat("test hook: report of job ", finished.job_id(), " spooled; holding it for ",
                                       absl::FormatDuration(options_.finish_send_delay), " before sending"));
  {
    absl::MutexLock lock(&wait_mu_);
    wait_mu_.AwaitWithTimeout(absl::Condition(&stop_requested_), options_.finish_send_delay);
  }
  absl::MutexLock lock(&mu_);
  held_finish_job_id_.clear();
  // Not if dropped meanwhile (a cancellation of the job).
  if (session_ != nullptr && pending_finish_.has_value() && pending_finish_->job_id() == finished.job_id()) {
    session_->Enqueue(std::move(message));
  }
}

void Agent::SendIfConnected(AgentMessage message) {
  absl::MutexLock lock(&mu_);
  if (session_ != nullptr) session_->Enqueue(std::move(message));
}

}  // namespace fleetmark::agent
