#include "agent/agent.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "agent/backoff.h"
#include "agent/credential_store.h"
#include "agent/file_util.h"
#include "agent/log.h"
#include "agent/uuid.h"
#include "engine/common/status_macros.h"

namespace fleetmark::agent {

absl::StatusOr<std::unique_ptr<Agent>> Agent::Create(AgentOptions options, AgentIdentity identity,
                                                     std::unique_ptr<JobExecutor> executor,
                                                     AgentEnvironment environment) {
  FLEETMARK_RETURN_IF_ERROR(ValidateAgentOptions(options));
  if (executor == nullptr) return absl::InvalidArgumentError("executor: null");
  if (identity.instance_id.empty()) {
    FLEETMARK_ASSIGN_OR_RETURN(identity.instance_id, NewUuidV4());
  }
  if (environment.transport == nullptr) {
    FLEETMARK_ASSIGN_OR_RETURN(environment.transport, MakeGrpcTransport(options));
  }
  const Clock& clock = environment.clock != nullptr ? *environment.clock : SystemClock();
  FLEETMARK_RETURN_IF_ERROR(MakeDirectories(options.spool_dir));
  FLEETMARK_ASSIGN_OR_RETURN(std::unique_ptr<SpoolLock> spool_lock, SpoolLock::Acquire(options.spool_dir));
  FLEETMARK_ASSIGN_OR_RETURN(std::unique_ptr<Spool> spool, Spool::Open(options.spool_dir, options.spool));
  const SpoolRecovery& recovery = spool->recovery();
  if (const std::string warning = RecoveryWarning(spool->path(), recovery); !warning.empty()) {
    Log(LogLevel::kWarning, warning);
  }
  if (recovery.pending > 0 || recovery.pending_finished > 0) {
    Log(LogLevel::kInfo, absl::StrCat("spool ", spool->path(), ": ", recovery.pending, " results and ",
                                      recovery.pending_finished, " job reports to replay"));
  }
  return std::unique_ptr<Agent>(new Agent(std::move(options), std::move(identity), std::move(executor),
                                          std::move(spool_lock), std::move(spool), clock,
                                          std::move(environment.transport)));
}

Agent::Agent(AgentOptions options, AgentIdentity identity, std::unique_ptr<JobExecutor> executor,
             std::unique_ptr<SpoolLock> spool_lock, std::unique_ptr<Spool> spool, const Clock& clock,
             std::unique_ptr<Transport> transport)
    : options_(std::move(options)),
      identity_(std::move(identity)),
      clock_(clock),
      executor_(std::move(executor)),
      spool_lock_(std::move(spool_lock)),
      spool_(std::move(spool)),
      transport_(std::move(transport)),
      session_(std::make_unique<Session>(options_, identity_, executor_.get(), spool_.get(), clock_)) {}

Agent::~Agent() {
  Shutdown();
  session_->StopAndWait();
}

void Agent::Shutdown() {
  // The session first: Run's loop tests session_->stopping() once the backoff wait
  // below ends, and must not find it still false and open one more session.
  session_->Stop();
  absl::MutexLock lock(&wait_mu_);
  stop_requested_ = true;
}

absl::Status Agent::Run() {
  Backoff backoff(options_.backoff, gen_);
  bool token_retry_used = false;
  absl::Status result = absl::OkStatus();
  while (!session_->stopping()) {
    bool used_credential = false;
    SessionOutcome outcome = RunSession(&used_credential);
    if (session_->stopping()) break;
    if (outcome.welcomed) {
      backoff.Reset();
      token_retry_used = false;
    }
    if (outcome.refused) {
      if (used_credential && !options_.token_file.empty() && !token_retry_used) {
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
    const std::string tls_problem = outcome.never_connected ? transport_->DiagnoseConnectFailure() : "";
    if (outcome.identity_in_use) {
      // Another process holds this agent's identity (a copy of the credential file?):
      // waiting at backoff pace, never in a loop of taking it from each other.
      Log(LogLevel::kWarning, absl::StrCat("refused by the coordinator: ", outcome.status.message(), "; retrying in ",
                                           absl::FormatDuration(delay), " (attempt ", backoff.attempt(), ")"));
    } else if (!tls_problem.empty()) {
      Log(LogLevel::kError, absl::StrCat("configuration error: TLS: ", tls_problem, "; reconnecting in ",
                                         absl::FormatDuration(delay), " (attempt ", backoff.attempt(), ")"));
    } else {
      Log(LogLevel::kInfo, absl::StrCat("session ended (", outcome.status.message(), "); reconnecting in ",
                                        absl::FormatDuration(delay), " (attempt ", backoff.attempt(), ")"));
    }
    absl::MutexLock lock(&wait_mu_);
    if (clock_.AwaitWithDeadline(wait_mu_, absl::Condition(&stop_requested_), clock_.SteadyNow() + delay)) break;
  }
  session_->StopAndWait();  // the job cancelled here is not reported (Session::OnJobFinished)
  return result;
}

SessionOutcome Agent::RunSession(bool* used_credential) {
  SessionOutcome outcome;
  absl::StatusOr<fleetmark::v1::AgentMessage> hello =
      MakeHello(options_, identity_, session_->OpenJobId(), used_credential);
  if (!hello.ok()) {
    outcome.status = hello.status();
    return outcome;
  }
  absl::StatusOr<std::unique_ptr<SessionStream>> stream = transport_->Open();
  if (!stream.ok()) {
    outcome.status = stream.status();
    return outcome;
  }
  return session_->Serve(**stream, *hello);
}

}  // namespace fleetmark::agent
