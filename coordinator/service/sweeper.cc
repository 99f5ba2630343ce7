#include "coordinator/service/sweeper.h"

#include <algorithm>
#include <map>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "coordinator/service/job_stop.h"
#include "coordinator/service/revocation.h"
#include "engine/common/log.h"

namespace fleetmark::service {

Sweeper::Sweeper(const SweeperParts& parts, const SweeperOptions& options, const Clock& clock)
    : parts_(parts), options_(options), clock_(clock) {}

Sweeper::~Sweeper() { Stop(); }

void Sweeper::Start(grpc::HealthCheckServiceInterface* health) {
  health_ = health;
  started_ = clock_.SteadyNow();
  thread_ = std::thread([this] { Loop(); });
}

void Sweeper::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void Sweeper::RequestSweep() {
  absl::MutexLock lock(&mu_);
  sweep_requested_ = true;
}

// Liveness flush + heartbeat timeouts and revoked tokens every heartbeat interval;
// lease expiry, schedules, ended jobs and periodic dispatch every sweep interval (or
// at once when RequestSweep asks).
//
// Every interval and timeout here is steady time (clock_.SteadyNow(); the pause is
// real steady time, as a fake clock moves only when told to), so a wall-clock step
// stalls nothing. A step itself (the wall clock moved more than a second away from
// steady time since the last pass) restarts the lease grace as an outage's end does:
// the database stamps leases with its own now(), and leases renewed on the old clock
// must not expire on the new one before a full lease of renewals on it.
void Sweeper::Loop() {
  absl::Time next_flush = clock_.SteadyNow();
  absl::Time next_sweep = SteadyNow();  // real time, as the pause
  bool flushed = false;
  absl::Time last_db_ok = clock_.SteadyNow();
  // Since when this coordinator has been writing to the database without a failure
  // (its start, the end of its last outage, or its last wall-clock step).
  absl::Time reachable_since = started_;
  bool db_failed = false;  // a flush failed since the last successful one
  absl::Duration wall_offset = clock_.Now() - clock_.SteadyNow();
  absl::Time last_turn = clock_.SteadyNow();
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
    }
    const absl::Time now = clock_.SteadyNow();
    if (const absl::Duration offset = clock_.Now() - now; absl::AbsDuration(offset - wall_offset) > kWallClockStep) {
      ::fleetmark::Log(::fleetmark::LogLevel::kWarning,
                       absl::StrCat("the wall clock stepped by ",
                                    absl::FormatDuration(absl::Trunc(offset - wall_offset, absl::Milliseconds(1))),
                                    ": no job lease expires before a full lease (",
                                    absl::FormatDuration(options_.job_lease), ") of renewals on the new time"));
      wall_offset = offset;
      reachable_since = now;
      flushed = false;  // renew now, on the new time
    }
    // A turn comes at least every heartbeat interval (the longest pause) plus its
    // work. A longer gap means this coordinator was not running (SIGSTOP, a long
    // pause of the process or its machine, a database call that hung): it recorded no
    // renewal meanwhile, and the heartbeats sent meanwhile wait unread. Its own
    // absence must not count against agents that kept working: as after a database
    // outage (Sweep), no lease expires before one full lease from the stall's end, and
    // no stream is silent for the time before it (FlushLiveness).
    if (const absl::Duration gap = now - last_turn; gap > StallLimit()) {
      reachable_since = std::max(reachable_since, now);
      stall_ended_ = now;
      ::fleetmark::Log(::fleetmark::LogLevel::kWarning,
                       absl::StrCat("this coordinator did not run for ", absl::FormatDuration(gap),
                                    " (stopped or paused): expiring no job lease for one lease (",
                                    absl::FormatDuration(options_.job_lease), ") from now"));
    }
    last_turn = now;
    // Flush every heartbeat interval, and at every sweep while the database fails,
    // so leases of connected agents are renewed as soon as it is back.
    if (now >= next_flush || !flushed) {
      flushed = FlushLiveness(now);
      next_flush = now + options_.heartbeat_interval;
      if (!flushed && !db_failed && health_ != nullptr) health_->SetServingStatus(false);  // an outage began
      if (!flushed) db_failed = true;
      if (flushed) {
        if (db_failed) {  // an outage just ended
          reachable_since = now;
          if (health_ != nullptr) health_->SetServingStatus(true);
        }
        db_failed = false;
        last_db_ok = now;
        EndRevokedAgents();
      }
    }
    if (!flushed && now - last_db_ok > options_.db_outage_grace) EndStreamsForOutage(now - last_db_ok);
    bool sweep = SteadyNow() >= next_sweep;
    {
      absl::MutexLock lock(&mu_);
      sweep = sweep || sweep_requested_;
      sweep_requested_ = false;
    }
    if (sweep) {
      Sweep(flushed && now - reachable_since >= options_.job_lease);
      next_sweep = SteadyNow() + options_.sweep_interval;
    }
    // The pause is real time (a fake clock moves only when told to): until the next
    // sweep, at most a heartbeat interval (the next flush), or a requested sweep.
    const absl::Duration pause = std::min(next_sweep - SteadyNow(), options_.heartbeat_interval);
    absl::MutexLock lock(&mu_);
    AwaitSteadyFor(mu_, absl::Condition(this, &Sweeper::Woken), pause);
  }
}

// `expire`: whether leases may be expired now (see below).
void Sweeper::Sweep(bool expire) {
  // Leases do not run out for time this coordinator could not record renewals in:
  // it expires leases only with fresh renewals in the database, and after a (re)start,
  // a stall of its own (Loop) or a database outage only once every job had a full
  // lease of reachable database time (the renewals that failed meanwhile were recorded by the first flush after
  // it: FlushLiveness), so agents whose streams the outage ended can reconnect and
  // resume their jobs. An agent really lost is found one lease later at most. Other
  // coordinators on the same database had the same outage and hold off likewise.
  if (expire) ExpireLeases();
  if (clock_.SteadyNow() >= next_partitions_check_) EnsurePartitions().IgnoreError();  // logged
  if (auto fired = parts_.schedules->Tick(); fired.ok()) {
    for (const v1::RunInfo& run : *fired) {
      ::fleetmark::Log(::fleetmark::LogLevel::kInfo,
                       absl::StrCat("schedule fired run ", run.run_id(), " (", run.submitted_by(), ")"));
    }
  }
  StopEndedJobs();
  parts_.dispatcher->WakeAllIdle();
  parts_.changes->Tick();
}

// The case_results partitions of this month and --partitions_ahead more; checked
// again a day later (a minute later after an error, which is logged). `now`: steady.
absl::Status Sweeper::EnsurePartitions() {
  const absl::Time now = clock_.SteadyNow();
  absl::StatusOr<int> created = parts_.retention->EnsureResultPartitions(options_.partitions_ahead);
  if (!created.ok()) {
    next_partitions_check_ = now + absl::Minutes(1);
    ::fleetmark::Log(::fleetmark::LogLevel::kWarning, absl::StrCat("result partitions: ", created.status().message()));
    return created.status();
  }
  next_partitions_check_ = now + absl::Hours(24);
  if (*created > 0) {
    ::fleetmark::Log(::fleetmark::LogLevel::kInfo, absl::StrCat("result partitions: created ", *created, " (",
                                                                options_.partitions_ahead, " months ahead)"));
  }
  return absl::OkStatus();
}

// Agents whose enrollment token was revoked, or that were removed (possibly through
// another coordinator).
// A failed check (the database busy or briefly unreachable) is retried a few times a
// second apart rather than left to the next liveness flush, a heartbeat interval later.
void Sweeper::EndRevokedAgents(int retries_left) {
  absl::StatusOr<std::vector<std::string>> ended = EndRevokedAgentStreams(*parts_.tokens, *parts_.registry);
  if (!ended.ok()) {
    if (retries_left > 0 && parts_.executor != nullptr) {
      ::fleetmark::Log(
          ::fleetmark::LogLevel::kWarning,
          absl::StrCat("checking for revoked or removed agents: ", ended.status().message(), "; retrying in 1s"));
      parts_.executor->PostAfter(absl::Seconds(1), [this, retries_left] { EndRevokedAgents(retries_left - 1); });
    }
    return;
  }
  if (!ended->empty()) {
    ::fleetmark::Log(
        ::fleetmark::LogLevel::kInfo,
        absl::StrCat(
            "disconnected agents removed, whose enrollment token is revoked or whose session another stream holds: ",
            absl::StrJoin(*ended, ", ")));
  }
}

void Sweeper::EndStreamsForOutage(absl::Duration outage) {
  for (const auto& session : parts_.registry->All()) {
    if (session->closing()) continue;
    session->Close(grpc::Status(grpc::StatusCode::UNAVAILABLE,
                                absl::StrCat("coordinator database unavailable for ", absl::FormatDuration(outage),
                                             ": keep results spooled and reconnect")));
  }
}

// Returns whether the database took the batch. The agents of a batch that failed are
// remembered until a flush succeeds, which renews their jobs' leases too: their
// renewals could not be recorded meanwhile, and the outage may have ended their
// streams (they are no longer in the registry when it is over).
// `now`: steady time.
bool Sweeper::FlushLiveness(absl::Time now) {
  std::vector<store::AgentLiveness> batch;
  const absl::Duration silence_limit = 3 * options_.heartbeat_interval + absl::Seconds(5);
  const absl::Time wall_now = clock_.Now();  // last_seen is shown: the wall time of the last message
  for (const auto& session : parts_.registry->All()) {
    AgentSession::AgentState s = session->state();
    if (s.agent_id.empty() || session->closing()) continue;
    // A stream waiting for result commits or for the store call of its last message
    // (database slow or down, or a 10 000-job run's ends queued on its run row) is not
    // read meanwhile, so its heartbeats queue up: not silence. Nor is the time this
    // coordinator itself did not run (Loop): silence counts from the stall's end.
    const absl::Time heard = std::max(s.last_heard, stall_ended_);
    if (s.pending_acks == 0 && !s.awaiting_store && now - heard > silence_limit) {
      session->Close(grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED,
                                  absl::StrCat("no heartbeat for ", absl::FormatDuration(now - s.last_heard))));
      continue;
    }
    batch.push_back({s.agent_id, wall_now - (now - s.last_heard), s.rss_bytes, s.cpu_seconds, session->session_id()});
  }
  std::vector<std::string> unrecorded(unrecorded_agents_.begin(), unrecorded_agents_.end());
  absl::Status status = parts_.agents->RecordLiveness(batch, options_.job_lease, unrecorded);
  if (!status.ok()) {
    // The first failure, then one line a minute while it lasts (it runs every
    // heartbeat interval: an outage must not fill the log).
    ++liveness_failures_;
    if (now - last_liveness_warning_ >= absl::Minutes(1)) {
      ::fleetmark::Log(
          ::fleetmark::LogLevel::kWarning,
          liveness_failures_ == 1
              ? absl::StrCat("liveness flush: ", status.message())
              : absl::StrCat("liveness flush: failing for ", liveness_failures_, " flushes since ",
                             absl::FormatTime("%H:%M:%S UTC", first_liveness_failure_, absl::UTCTimeZone()), ": ",
                             status.message()));
      last_liveness_warning_ = now;
    }
    if (liveness_failures_ == 1) first_liveness_failure_ = wall_now;
    for (const store::AgentLiveness& a : batch) unrecorded_agents_.insert(a.agent_id);
    return false;
  }
  if (liveness_failures_ > 0 && unrecorded.empty()) {
    ::fleetmark::Log(::fleetmark::LogLevel::kInfo,
                     absl::StrCat("database reachable again after ", liveness_failures_, " failed liveness flushes"));
  }
  liveness_failures_ = 0;
  last_liveness_warning_ = absl::InfinitePast();
  if (!unrecorded.empty()) {
    ::fleetmark::Log(
        ::fleetmark::LogLevel::kInfo,
        absl::StrCat("database reachable again; renewed the job leases of ", unrecorded.size(),
                     unrecorded.size() == 1 ? " agent whose renewals" : " agents whose renewals", " failed meanwhile"));
  }
  unrecorded_agents_.clear();
  return true;
}

// Jobs of local agents that ended elsewhere (cancelled through another coordinator,
// failed by its sweep): tell the agents to stop them.
void Sweeper::StopEndedJobs() {
  std::map<std::string, std::shared_ptr<AgentSession>> by_job;
  for (const auto& session : parts_.registry->All()) {
    const std::string job = session->state().running_job;
    if (!job.empty()) by_job[job] = session;
  }
  if (by_job.empty()) return;
  std::vector<std::string> jobs;
  for (const auto& [job, session] : by_job) jobs.push_back(job);
  absl::StatusOr<std::vector<std::string>> ended = parts_.runs->EndedJobs(jobs);
  if (!ended.ok()) return;
  for (const std::string& job : *ended) {
    StopRunningJob(*by_job[job], job, "the job ended (cancelled or failed) on another coordinator");
  }
}

void Sweeper::ExpireLeases() {
  absl::StatusOr<std::vector<store::ExpiredJob>> expired = parts_.runs->ExpireLeases();
  if (!expired.ok()) return;
  std::vector<std::string> wake;
  for (const store::ExpiredJob& job : *expired) {
    ::fleetmark::Log(::fleetmark::LogLevel::kWarning,
                     absl::StrCat("job ", job.job_id, " lease expired after attempt ", job.attempts,
                                  (job.done     ? ": done (every case stored)"
                                   : job.failed ? ": failed (infrastructure)"
                                                : ": re-queued")));
    std::shared_ptr<AgentSession> session = parts_.registry->Find(job.agent_id);
    if (session == nullptr) continue;
    StopRunningJob(*session, job.job_id, "lease expired");
    wake.push_back(job.agent_id);
  }
  parts_.dispatcher->Wake(wake);
}
}  // namespace fleetmark::service
