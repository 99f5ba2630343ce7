#include "agent/session.h"

#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "agent/credential_store.h"
#include "agent/log.h"
#include "agent/uuid.h"
#include "engine/common/message_limits.h"
#include "engine/topology/fingerprint.h"

namespace fleetmark::agent {
namespace {

using fleetmark::v1::AgentMessage;
using fleetmark::v1::CoordinatorMessage;

// Status codes (gRPC's, by number) with which a coordinator can refuse a hello
// outright; retrying them unchanged cannot succeed.
bool IsRefusalCode(absl::StatusCode code) {
  return code == absl::StatusCode::kUnauthenticated || code == absl::StatusCode::kPermissionDenied ||
         code == absl::StatusCode::kAlreadyExists || code == absl::StatusCode::kFailedPrecondition ||
         code == absl::StatusCode::kInvalidArgument;
}

// "gRPC status N message", with the message limit when the coordinator's message was
// too large for us.
std::string StreamStatusText(const absl::Status& status) {
  std::string text = absl::StrCat("gRPC status ", static_cast<int>(status.code()), " ", status.message());
  if (status.code() == absl::StatusCode::kResourceExhausted) {
    absl::StrAppend(&text, " (this agent sends and receives messages of at most ",
                    FormatMessageLimit(kAgentMaxMessageBytes), ")");
  }
  return text;
}

}  // namespace

Session::Session(const AgentOptions& options, const AgentIdentity& identity, JobExecutor* executor, Spool* spool,
                 const Clock& clock)
    : options_(options), identity_(identity), spool_(spool), clock_(clock) {
  JobEvents events;
  events.on_result = [this](const fleetmark::v1::JobAssignment& job, const fleetmark::v1::CaseResult& result) {
    OnJobResult(job, result);
  };
  events.on_progress = [this](const fleetmark::v1::JobProgress& p) { OnJobProgress(p); };
  events.on_finished = [this](const fleetmark::v1::JobFinished& f) { OnJobFinished(f); };
  runner_ = std::make_unique<JobRunner>(executor, std::move(events));
  // An unconfirmed report from before a restart: the newest names the job in the hello.
  std::vector<fleetmark::v1::JobFinished> spooled = spool_->PendingFinished();
  absl::MutexLock lock(&mu_);
  if (!spooled.empty()) pending_finish_ = spooled.back();
}

Session::~Session() { StopAndWait(); }

AgentStats Session::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

void Session::Stop() {
  stopping_.store(true);
  {
    absl::MutexLock lock(&mu_);
    if (serving_ != nullptr) serving_->Cancel();
  }
  const std::string running = runner_->running_job_id();
  if (!running.empty()) runner_->Cancel(running);
}

void Session::StopAndWait() {
  stopping_.store(true);  // the job cancelled below is not reported (OnJobFinished)
  Stop();
  runner_->CancelAndWait();
}

std::string Session::OpenJobId() const {
  std::string open_job = runner_->running_job_id();
  if (!open_job.empty()) return open_job;
  absl::MutexLock lock(&mu_);
  return pending_finish_.has_value() ? pending_finish_->job_id() : "";
}

SessionOutcome Session::Serve(SessionStream& stream, const AgentMessage& hello) {
  SessionOutcome outcome;
  SessionWriter writer(&stream, spool_, clock_, clock_.SteadyNow() + options_.welcome_timeout, [this] {
    absl::MutexLock lock(&mu_);
    ++stats_.results_sent;
  });
  {
    absl::MutexLock lock(&mu_);
    if (stopping_.load()) {
      outcome.status = absl::CancelledError("shutting down");
      return outcome;
    }
    serving_ = &stream;
    ++stats_.sessions;
  }
  std::string refusal;
  // The hello goes first, from this thread; only then may the writer thread write.
  const bool hello_sent = stream.Write(hello);
  if (hello_sent) writer.Start();
  {
    // Read to the end even when the hello could not be written: a coordinator that
    // refused the stream before reading it (one at its stream limit) has sent its
    // Refusal and status, and Finish() before Read() returned false may block for ever
    // (SessionStream's contract). Only a Refusal means anything then.
    CoordinatorMessage message;
    while (stream.Read(&message)) {
      if (!hello_sent && !message.has_refusal()) continue;
      if (message.has_welcome()) {
        if (!outcome.welcomed) {
          outcome.welcomed = true;
          OnWelcome(&writer, message.welcome());
        }
      } else if (message.has_refusal()) {
        refusal = message.refusal().reason();
        // Refused after a Welcome means the coordinator found a message of ours
        // malformed: log it and reconnect (with backoff) rather than leave the fleet.
        outcome.refused = !message.refusal().retryable() && !outcome.welcomed;
        if (message.refusal().identity_in_use()) {
          outcome.identity_in_use = true;
          OnIdentityInUse(refusal);
        } else if (outcome.welcomed) {
          Log(LogLevel::kError, absl::StrCat("coordinator closed the session: ", refusal));
        }
        stream.Cancel();
      } else if (message.has_assignment()) {
        OnAssignment(&writer, message.assignment());
      } else if (message.has_cancellation()) {
        OnCancellation(message.cancellation());
      } else if (message.has_ack()) {
        OnAck(message.ack());
      } else if (message.has_acks()) {
        for (const fleetmark::v1::ResultAck& ack : message.acks().acks()) OnAck(ack);
      } else if (message.has_job_finished_ack()) {
        OnFinishedAck(message.job_finished_ack());
      }
    }
  }
  {
    absl::MutexLock lock(&mu_);
    writer_ = nullptr;
    serving_ = nullptr;
  }
  writer.Close();
  writer.Join();
  const absl::Status status = stream.Finish();
  if (!refusal.empty()) {
    outcome.status = absl::UnavailableError(refusal);
  } else if (!outcome.welcomed && IsRefusalCode(status.code())) {
    outcome.refused = true;
    outcome.status = absl::UnavailableError(status.message());
  } else {
    outcome.status = absl::UnavailableError(StreamStatusText(status));
    outcome.never_connected = !outcome.welcomed && status.code() == absl::StatusCode::kUnavailable;
  }
  return outcome;
}

void Session::OnWelcome(SessionWriter* writer, const fleetmark::v1::Welcome& welcome) {
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
  Log(LogLevel::kInfo,
      absl::StrCat("welcomed as agent ", welcome.agent_id(), " (", options_.name, "), heartbeat every ",
                   absl::FormatDuration(interval), ", replaying ", pending.size(), " spooled results",
                   unspooled_.empty() ? "" : absl::StrCat(", ", unspooled_.size(), " results held in memory"), " and ",
                   reports.size(), " job reports"));
  ++stats_.welcomes;
  writer->SetWelcomed(interval);
  for (std::string& id : pending) writer->Enqueue(std::move(id));
  for (const fleetmark::v1::CaseResult& held : unspooled_) {
    AgentMessage message;
    *message.mutable_result() = held;
    writer->Enqueue(std::move(message));
  }
  const std::string running = runner_->running_job_id();
  for (fleetmark::v1::JobFinished& report : reports) {
    if (report.job_id() == running) continue;  // never report a job that runs here
    AgentMessage message;
    *message.mutable_job_finished() = std::move(report);
    writer->Enqueue(std::move(message));
  }
  writer_ = writer;
}

void Session::OnAssignment(SessionWriter* writer, const fleetmark::v1::JobAssignment& job) {
  AgentMessage accepted;
  accepted.mutable_job_accepted()->set_job_id(job.job_id());
  if (runner_->running_job_id() == job.job_id()) {
    writer->Enqueue(std::move(accepted));  // re-sent after a reconnect: still running
    return;
  }
  {
    absl::MutexLock lock(&mu_);
    if (pending_finish_.has_value() && pending_finish_->job_id() == job.job_id()) {
      // Finished here already; the coordinator missed our report.
      AgentMessage finished;
      *finished.mutable_job_finished() = *pending_finish_;
      writer->Enqueue(std::move(finished));
      return;
    }
    // This session holds the identity now: the end of any job it is given is reported,
    // a job stopped earlier because another session held the identity included.
    displaced_job_.clear();
    // The coordinator assigns a job only to an agent with no live job: the reported
    // job has ended or was re-queued, and its report is stale.
    if (pending_finish_.has_value()) {
      const std::string stale = pending_finish_->job_id();
      DropFinishReport(stale);
      Log(LogLevel::kInfo, absl::StrCat("dropped the unconfirmed report of job ", stale,
                                        ": the coordinator assigned job ", job.job_id()));
    }
  }
  {
    absl::MutexLock lock(&mu_);
    std::string full;
    if (!SpoolHeldResults(&full)) {
      // The spool still cannot hold results: measuring more would only add results
      // that could be lost. Reported deferred (infrastructure), not run.
      const std::string reason =
          absl::StrCat("deferred: the agent's spool cannot hold results (", full, "); ", unspooled_.size(),
                       " results wait in memory for the coordinator; no new cases until the spool can hold them");
      Log(LogLevel::kWarning, absl::StrCat("job ", job.job_id(), " not started: ", reason));
      writer->Enqueue(std::move(accepted));
      AgentMessage finished;
      fleetmark::v1::JobFinished* report = finished.mutable_job_finished();
      report->set_job_id(job.job_id());
      report->set_deferred(true);
      report->set_message(reason);
      writer->Enqueue(std::move(finished));
      return;
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
  writer->Enqueue(std::move(accepted));
  absl::Status started = runner_->Start(std::move(to_run));
  if (!started.ok()) {
    Log(LogLevel::kWarning, std::string(started.message()));
    AgentMessage finished;
    fleetmark::v1::JobFinished* report = finished.mutable_job_finished();
    report->set_job_id(job.job_id());
    report->set_ok(false);
    report->set_message(absl::StrCat("infrastructure: ", started.message()));
    writer->Enqueue(std::move(finished));
    return;
  }
  absl::MutexLock lock(&mu_);
  ++stats_.jobs_started;
}

int Session::AddSpooledCases(fleetmark::v1::JobAssignment& job) {
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
  absl::MutexLock lock(&mu_);
  for (const fleetmark::v1::CaseResult& held : unspooled_) {
    if (held.job_id() != job.job_id() || held.status() == fleetmark::v1::CASE_STATUS_CANCELLED) continue;
    if (skip.insert(held.spec().case_id()).second) {
      job.add_stored_case_ids(held.spec().case_id());
      ++added;
    }
  }
  return added;
}

void Session::OnCancellation(const fleetmark::v1::JobCancellation& cancellation) {
  const std::string& job_id = cancellation.job_id();
  const bool was_running = runner_->Cancel(job_id);
  bool was_unconfirmed = false;
  if (!was_running) {
    // Finished here before the cancellation came: the coordinator has ended the job, so
    // its unconfirmed report is moot. A job that was running reports its cancellation
    // (possibly already, from the runner's thread) and that report waits for its ack.
    absl::MutexLock lock(&mu_);
    was_unconfirmed = DropFinishReport(job_id);
  }
  Log(LogLevel::kInfo,
      absl::StrCat("cancellation of job ", job_id, " (", cancellation.reason(), ")",
                   was_running ? "" : (was_unconfirmed ? ": already finished here" : ": not running here")));
}

void Session::OnIdentityInUse(const std::string& reason) {
  const std::string running = runner_->running_job_id();
  if (running.empty()) return;
  {
    absl::MutexLock lock(&mu_);
    displaced_job_ = running;
  }
  Log(LogLevel::kWarning, absl::StrCat("stopping job ", running, ": ", reason));
  // Waited for, so no later hello names it as running (the live session owns it).
  runner_->CancelAndWait();
}

void Session::OnAck(const fleetmark::v1::ResultAck& ack) {
  if (ack.rejected()) {
    Log(LogLevel::kError, absl::StrCat("coordinator rejected result ", ack.result_id(), ": ", ack.message(),
                                       " (dropped from the spool)"));
  }
  absl::Status status = spool_->Ack(ack.result_id());
  if (!status.ok()) Log(LogLevel::kError, absl::StrCat("spool: ", status.message()));
  absl::MutexLock lock(&mu_);
  std::erase_if(unspooled_, [&](const fleetmark::v1::CaseResult& held) { return held.result_id() == ack.result_id(); });
  ++stats_.acks;
}

void Session::OnFinishedAck(const fleetmark::v1::JobFinishedAck& ack) {
  absl::MutexLock lock(&mu_);
  if (DropFinishReport(ack.job_id())) {
    ++stats_.finishes_confirmed;
    Log(LogLevel::kInfo, absl::StrCat("coordinator confirmed the report of job ", ack.job_id()));
  }
}

bool Session::DropFinishReport(const std::string& job_id) {
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

bool Session::SpoolHeldResults(std::string* error) {
  while (!unspooled_.empty()) {
    absl::Status appended = spool_->Append(unspooled_.front());
    if (!appended.ok() && !absl::IsAlreadyExists(appended)) {
      *error = std::string(appended.message());
      return false;
    }
    unspooled_.erase(unspooled_.begin());
  }
  return true;
}

void Session::OnJobResult(const fleetmark::v1::JobAssignment& job, const fleetmark::v1::CaseResult& result) {
  fleetmark::v1::CaseResult spooled = result;
  absl::StatusOr<std::string> id = NewUuidV4();
  if (!id.ok()) {
    const std::string reason = absl::StrCat("infrastructure: the result of case ", result.spec().case_id(),
                                            " was lost: no result id: ", id.status().message());
    Log(LogLevel::kError, reason);
    runner_->Defer(job.job_id(), reason);  // never reported done with a result missing
    return;
  }
  spooled.set_result_id(*id);
  spooled.set_run_id(job.run_id());
  spooled.set_job_id(job.job_id());
  if (spooled.engine_version().empty()) spooled.set_engine_version(identity_.engine_version);
  if (!spooled.has_fingerprint()) *spooled.mutable_fingerprint() = engine::DeviceFingerprintOf(identity_.host, spooled);

  absl::MutexLock lock(&mu_);
  // Results held in memory go first (keeps their order, and the spool may have room
  // again); this one joins them if they still cannot be spooled.
  std::string full;
  absl::Status appended = SpoolHeldResults(&full) ? spool_->Append(spooled) : absl::ResourceExhaustedError(full);
  if (appended.ok()) {
    ++stats_.results_spooled;
    if (writer_ != nullptr) writer_->Enqueue(*id);
    return;
  }
  // Kept in memory until the coordinator acks it (replayed after each Welcome), and
  // the job stops: it is reported deferred, never done, and takes no new case.
  ++stats_.results_unspooled;
  unspooled_.push_back(spooled);
  const std::string reason =
      absl::StrCat("deferred: the agent's spool cannot hold results (", appended.message(),
                   "); the job stopped, its unspooled results wait in memory for the coordinator");
  Log(LogLevel::kError, absl::StrCat("spool append failed (", appended.message(), "): result ", *id,
                                     " held in memory until acked; stopping job ", job.job_id()));
  runner_->Defer(job.job_id(), reason);
  if (writer_ != nullptr) {
    AgentMessage message;
    *message.mutable_result() = std::move(spooled);
    writer_->Enqueue(std::move(message));
  }
}

void Session::OnJobProgress(const fleetmark::v1::JobProgress& progress) {
  AgentMessage message;
  *message.mutable_job_progress() = progress;
  absl::MutexLock lock(&mu_);
  if (writer_ != nullptr) writer_->Enqueue(std::move(message));
}

void Session::OnJobFinished(const fleetmark::v1::JobFinished& finished) {
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
  absl::MutexLock lock(&mu_);
  if (finished.cancelled() && finished.job_id() == displaced_job_) {
    // Another session holds this agent's identity and owns its jobs: a report from here
    // could end the job it runs.
    Log(LogLevel::kInfo,
        absl::StrCat("job ", finished.job_id(), " stopped: another session holds this agent's identity; not reported"));
    return;
  }
  // Durable before it is sent, like a result (results of this job were spooled first).
  if (absl::Status spooled = spool_->AppendFinished(finished); !spooled.ok()) {
    Log(LogLevel::kError, absl::StrCat("spool append failed (", spooled.message(), "); the report of job ",
                                       finished.job_id(), " is held in memory only"));
  }
  pending_finish_ = finished;
  ++stats_.jobs_finished;
  if (writer_ != nullptr) writer_->Enqueue(std::move(message));
}

}  // namespace fleetmark::agent
