// `fleetmark submit --wait`'s watch of a run: live progress per agent (WatchRun stream)
// until the run ends, kept going through a coordinator restart or a database outage,
// bounded by --timeout, with a notice when nothing moves for a long time.
//
//   WatchResult watched = WatchRunUntilEnded(client, run_id, {.timeout = absl::Minutes(30)});
//   if (!watched.ended) return watched.error;  // the command returns it (exit_codes.h)
//
// Progress goes to stderr (redrawn in place on a terminal, else a line per change and
// at most one per 10 s). Not thread-safe: main's thread. Installs SIGINT/SIGTERM
// handlers that print how to follow the run and exit 130.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "coordinator/cli/remote_client.h"
#include "engine/plan/cost.h"
#include "fleetmark/v1/control.pb.h"

namespace fleetmark::cli {

struct WatchOptions {
  // Give up this long after the watch starts (exit 1, the error says the run's state).
  absl::Duration timeout = absl::InfiniteDuration();
  // What the run costs per device (engine/plan/cost.h; `submit` prices it before it
  // sends it): each job's ETA is then a range from the model (JobEta). nullopt: the
  // ETA is the jobs' own rate alone.
  std::optional<engine::PlanCost> cost = std::nullopt;
  // Coordinator unreachable (or its database unavailable) this long in a row: give up
  // (exit 5). Retried with backoff 1 s doubling to 10 s meanwhile.
  absl::Duration unreachable_limit = absl::Minutes(5);
  // No change in the run (states, cases done) this long: print one notice naming the
  // unfinished jobs and their agents' states (again after each further stall).
  absl::Duration no_progress_notice = absl::Minutes(5);
};

struct WatchResult {
  bool ended = false;  // the run reached done, failed or cancelled: `run` is its last state
  // When !ended: why, for the command to return (a FleetmarkError: the watch's words, then
  // how to follow the run, DetachHint).
  absl::Status error;
  v1::RunInfo run;
};

// Remaining time of each job of a watched run, from the rate its cases completed at
// since the watch first saw it running: elapsed since then / cases completed since then
// × cases left. Unknown (nullopt) until one case completed while watched. A case
// completes only after its minimum processes, all cases' processes interleaved, so that
// rate is far off at first: with the run's cost (WatchOptions::cost), EtaText is the
// model's range instead (engine::EstimateRemaining: expected and worst case from the
// plan, raised by the rate when the job is slower), on a job's first attempt.
//
//   JobEta eta(cost);
//   eta.Observe(run, SteadyNow());                 // each RunInfo the watch receives
//   std::string left = eta.EtaText(job, SteadyNow());  // "4m10s, at most 19m"
//
// Not thread-safe (the watch's thread).
class JobEta {
 public:
  explicit JobEta(std::optional<engine::PlanCost> cost = std::nullopt) : cost_(std::move(cost)) {}
  void Observe(const v1::RunInfo& run, absl::Time now);
  std::optional<absl::Duration> Eta(const v1::JobInfo& job, absl::Time now) const;
  // The ETA JobLine shows: "?" while unknown; the rounded rate-based Eta without a cost.
  std::string EtaText(const v1::JobInfo& job, absl::Time now) const;

 private:
  struct Start {
    absl::Time at;
    uint32_t cases_done = 0;
    uint32_t attempts = 0;
  };
  std::optional<engine::PlanCost> cost_;
  std::map<std::string, Start> started_;  // by job id: the first running observation of its attempt
};

// One job's progress line: "  box2  running  [#####     ] 3/12  ETA 4m10s  case
// fixed_pool/arithmetic/batch/..." (ETA "?" while unknown; the case when the agent
// reports it; an attempt past the first and the message when there are).
std::string JobLine(const v1::JobInfo& job, std::optional<absl::Duration> eta);
// The same with the ETA as JobEta::EtaText words it.
std::string JobLine(const v1::JobInfo& job, const std::string& eta);

// Watches run `run_id` (a full id or a unique prefix) until it ends, the timeout
// passes or the coordinator stays unreachable too long. A coordinator error other than
// UNAVAILABLE (unknown run, refused token) ends the watch at once (client.CallError).
WatchResult WatchRunUntilEnded(ControlClient& client, const std::string& run_id, const WatchOptions& options);

// "run <id> continues on the fleet; follow it with `fleetmark runs show <id>`; cancel
// with `fleetmark runs cancel <id>`": printed when the CLI stops watching.
std::string DetachHint(const std::string& run_id);

}  // namespace fleetmark::cli
