// The runner: measures every case of a plan (docs/architecture.md, "Measurement"; the method: docs/statistics.md).
//
// RunPlan expands the plan's cases, keeps those whose case_id matches the filter, and
// measures them in shuffled rounds. A verdict is a claim about the next invocation, so
// the unit of a batch case is a fresh process (Kalibera & Jones, "Rigorous benchmarking
// in reasonable time", ISMM 2013): each round runs one process of every open batch
// case (its whole warm-up, then timed repetitions until its own median's 95% CI meets
// target_ci_percent — a within-process target — or its share of the case's budget runs
// out; more samples in one process cannot narrow an interval over processes), and every
// batch case gets at least max(kMinBatchProcesses = 3, processes, rounds) of them, in
// every mode (--quick included). The result keeps each process's median, sample count
// and round (process_rounds) and the between-process share; its CI is the hierarchical
// one over the processes and their samples (engine/measure/statistics.h).
//
// Pairing. The batch cases that differ only in strategy (one point of a sweep:
// CaseGroupKey, engine/plan/case_group.h) are a group of contenders. In each round the
// groups run in a shuffled order and the open contenders of a group run BACK TO BACK in
// an order shuffled per round, so the processes of one round saw the same moment of the
// machine and their ratio cancels what the round shared (randomized multiple
// interleaved trials — Abedi & Brecht, "Conducting repeatable experiments in highly
// variable cloud computing environments", ICPE 2017; duet benchmarking — Bulej et al.,
// "Duet benchmarking: improving measurement accuracy in the cloud", ICPE 2020).
//
// Racing (F-race — Birattari, Stützle, Paquete & Varrentrapp, "A racing algorithm for
// configuring metaheuristics", GECCO 2002; successive elimination — Even-Dar, Mannor &
// Mansour, JMLR 7, 2006): after the minimum rounds, each group of two or more is judged
// after every round by DecideGroup (engine/measure/verdict.h), with the margin and the
// prior from DeviceSpread over every group measured so far in the run (the residual
// noise after each round's shared drift). An OUT contender stops
// (STOP_REASON_ELIMINATED); a decided or equivalent group stops (GROUP_DECIDED,
// GROUP_EQUIVALENT; a SLOWER contender of a group that ends equivalent without it,
// ELIMINATED); otherwise the open contenders get another process, up to
// measurement.max_processes (default 16, 6 under --quick) or until one of them spent
// its time or repetition budget, and then end GROUP_UNDECIDED. A group with a contended
// contender still open (not OUT beyond what its contention can explain, verdict.h)
// ends GROUP_UNDECIDED at once: more processes under other work cannot decide it. Contention
// (engine/measure/contention.h): around each process the runner reads /proc/stat and its own CPU time; a process during
// which other work took more than kContentionThreshold of the machine is measured again
// (up to kContentionRetries times; once while the load looks persistent), and if still so the case
// is marked contended (CaseResult.contended, other_cpu_share: the worst kept process's share) and its message says why
// its verdict may stay undecided. A case in no group of two (a single strategy) gets its minimum processes and its stop
// rule's reason (CI_TARGET, MAX_*). Each process's share of the budget is what is left of it over the processes still
// planned (the cap for contenders, the minimum for the others).
// Batch cases are measured here; memory/fanout/load go to RunScenarioCase
// (engine/scenarios/scenario.h). Every batch slice and the resource-hungry scenarios run
// in a child process (engine/child/child.h), so a crash, an OOM kill or a hung
// repetition (RunOptions::repetition_bound) becomes a result status, and a cancellation
// kills the work instead of waiting for it.
// Energy (measurement.energy; docs/energy.md, "Per case"): before each process of a batch
// case the runner idles for a baseline as long as the case's previous timed span (the
// first: the process's time quota), then samples the host's best readable source on a
// thread of its own every 5 ms while the process runs, and cuts the process's timed span
// out of the readings (engine/runner/case_energy_probe.h). CaseResult.energy holds the
// result (engine/energy/case_energy.h), or why there is none.
// Both the `fleetmark run` CLI and the agent call RunPlan.
//
//   RunOptions options{.quick = true, .filter = "arithmetic"};
//   absl::StatusOr<RunSummary> s = RunPlan(plan, options,
//       [&](const v1::CaseResult& r) { results.push_back(r); }, &cancel);
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <set>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "engine/common/clock.h"
#include "engine/health/preflight.h"
#include "engine/measure/contention.h"
#include "engine/measure/scheduling_delay.h"
#include "engine/runner/slice.pb.h"
#include "fleetmark/v1/plan.pb.h"
#include "fleetmark/v1/result.pb.h"

namespace fleetmark::engine {

namespace energy {
class EnergyFiles;  // engine/energy/energy_files.h
}  // namespace energy

// Progress of a run; reported after every slice (one case's share of one round).
struct RunProgress {
  int cases_total = 0;   // selected cases, skipped ones included
  int cases_done = 0;    // cases whose final result was delivered, plus the skipped
  int slices_total = 0;  // estimate: batch cases x minimum processes + other cases, raised by racing
  int slices_done = 0;
  int round = 0;             // 1-based current round
  int rounds = 0;            // the minimum rounds, raised as racing adds rounds
  std::string current_case;  // case_id of the slice just finished
  absl::Duration elapsed;
  // Remaining time estimate: elapsed / slices_done × slices left (0 when unknown).
  absl::Duration eta;
};

// Called once per case with its final result, on the thread that called RunPlan.
using ResultCallback = std::function<void(const v1::CaseResult&)>;
using ProgressCallback = std::function<void(const RunProgress&)>;

// A scheduling-delay probe's figures serve the contended processes of the next this
// many seconds (RunOptions::scheduling_delay_probe).
inline constexpr absl::Duration kSchedulingDelayReuse = absl::Seconds(5);

struct RunOptions {
  bool quick = false;  // run ApplyQuick(plan)
  // RE2 regex (engine/plan/case_filter.h, at most kMaxFilterLength bytes); a case runs
  // if it matches anywhere in its case_id. "" = all.
  std::string filter;
  // Executable accepting the hidden child argument (child.h); "" = /proc/self/exe.
  std::string child_executable;
  // Copied into every result (empty for local runs).
  std::string run_id;
  std::string job_id;
  // Case ids not to measure (a fleet job's cases whose results an earlier attempt
  // stored): they get no result and count as done from the start. Ids that are not
  // among the selected cases are ignored; skipping every selected case is not an error
  // (nothing runs, the summary is empty).
  std::set<std::string> skip_case_ids;
  ProgressCallback on_progress;  // may be empty
  // Watchdog of batch cases, which run each slice in a child process: the longest one
  // repetition may take. A slice still running after its warm-up + time quota + 3 x
  // this bound is taken as hung: its child is killed and the case ends as TIMEOUT.
  // 0 = the bound plan validation guarantees, max(max_seconds_per_case, 60 s).
  absl::Duration repetition_bound = absl::ZeroDuration();
  // Where the plan's preflight gates read and how they wait (tests: a fixture tree).
  PreflightEnv preflight;
  // Results' start/end stamps (the wall clock at a case's start; its end that start plus
  // the case's steady duration, so it never ends before it starts) and the run's
  // elapsed time. A wall-clock step during a case is noted in its message ("clock: the
  // wall clock was stepped by -1h ..."). Not owned; null = SystemClock().
  const Clock* clock = nullptr;
  // TEST SEAM: measures one process of a batch case instead of RunBatchSliceInChild
  // (engine/runner/batch_slice.h), given the request and the slice's watchdog; empty =
  // the real child process. Called on RunPlan's thread.
  std::function<runner::SliceResponse(const runner::SliceRequest&, absl::Duration watchdog)> batch_slice_executor;
  // Reads /proc/stat for the contention check around each batch process
  // (engine/measure/contention.h); empty = the real file. A test seam.
  ProcStatReader proc_stat_reader;
  // Measures the waits for a CPU after a contended process
  // (engine/measure/scheduling_delay.h, CaseResult.wakeup_delay_ns and
  // preemption_delay_ns), at most once per kSchedulingDelayReuse; empty = the real
  // probe (~0.2 s on a quiet machine, ~0.4 s under load). A test seam.
  std::function<SchedulingDelay()> scheduling_delay_probe;
  // Where a plan with measurement.energy finds and reads its energy sources
  // (engine/energy/energy_files.h); null = the live /sys. A test seam: not owned, must
  // outlive RunPlan and be thread-safe (the runner's sampler thread reads it).
  const energy::EnergyFiles* energy_files = nullptr;
};

struct RunSummary {
  int cases = 0;  // cases measured (after the filter)
  int ok = 0;
  int unsupported = 0;
  int failed = 0;       // any other non-OK status (resource exhausted, timeout, ...)
  int cancelled = 0;    // started, then cancelled: reported with the rounds they finished
  int partial = 0;      // of `cancelled`: with at least one finished round (IsPartialResult)
  int not_started = 0;  // cancelled before their first slice: no result reported
  int skipped = 0;      // selected cases in RunOptions::skip_case_ids (not in `cases`)
  // Non-empty when the plan's preconditions kept failing before a slice
  // (engine/health/preflight.h): "deferred: <gate>: <value> vs <limit> (...)". The
  // run stopped there; its unfinished cases got no result. An infrastructure outcome.
  std::string deferred;
  v1::EnvSnapshot deferred_conditions;  // what the last failing check saw
};

// Validates `plan` (ValidatePlan) and measures its cases, calling `on_result` with each
// case's final result (result_id left empty: the caller assigns ids). Returns
// InvalidArgument for an invalid plan, a malformed filter, or a filter matching no case
// (nothing runs then). Benchmark failures are result statuses, not errors. The plan's
// preconditions are checked before every slice (RunPreflight); when they keep failing
// the run stops with summary.deferred set (not an error). If
// `*cancelled` becomes true, the current slice is abandoned (its child killed within
// ~20 ms, its samples dropped: its round did not finish), cases whose samples already
// meet their stop rule are reported OK, the other started ones with status CANCELLED —
// those with at least one finished round as a partial result over those rounds
// (engine/common/partial_result.h; summary.partial) —, cases not started yet get no result
// (summary.not_started), and RunPlan returns a summary (not an error).
// `cancelled` may be null. Runs on the calling thread; one RunPlan per process at a
// time (strategies create threads and timing needs the machine).
absl::StatusOr<RunSummary> RunPlan(const v1::Plan& plan, const RunOptions& options, const ResultCallback& on_result,
                                   const std::atomic<bool>* cancelled);

// A batch case whose harness cost (CaseResult.harness_share: an empty-task batch through
// its strategy / its median) is above this share is flagged harness_heavy: the median
// then holds more than 5 % of timing, bookkeeping and dispatch that is not the task.
inline constexpr double kHarnessShareLimit = 0.05;

// Maps an engine status to a case status: OK -> OK, Unimplemented -> UNSUPPORTED,
// ResourceExhausted -> RESOURCE_EXHAUSTED, DeadlineExceeded -> TIMEOUT,
// Cancelled -> CANCELLED, anything else -> FAILED.
v1::CaseStatus CaseStatusFor(const absl::Status& status);

}  // namespace fleetmark::engine
