// Preflight gates: whether the device is fit to measure now (docs/architecture.md, "Fleet
// health"; the gates: docs/statistics.md). The runner checks a plan's preconditions before every slice of every case;
// a failing gate is re-checked after a cool-down, up to a bound, then the job is
// deferred -- an infrastructure outcome, never a benchmark failure.
//
//   PreflightOutcome o = RunPreflight(plan.preconditions(), {}, &cancelled);
//   if (!o.passed) return Deferred(o.deferred_reason);   // "deferred: battery: ..."
//   result.env_before = o.conditions;                     // stored with the result
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "fleetmark/v1/host.pb.h"
#include "engine/plan/plan.h"
#include "fleetmark/v1/plan.pb.h"

namespace fleetmark::engine {

// HasGates(preconditions): whether any gate is set (the runner checks nothing
// otherwise) is engine/plan/plan.h's, next to the gates' ranges and defaults.

// The gates `snapshot` fails, one line each, e.g.
//   "battery: 12 % < 20 % and not charging"
//   "temperature: thermal_zone3 (cpu-thermal) 47.5 °C > 45 °C"
//   "other CPU: 63.2 % > 10 % of all CPUs over 2 s"
//   "load average: 9.50 > 4"
//   "governor: powersave, required performance"
//   "free memory: 812 MiB < 1024 MiB"
// A reading the snapshot does not know (no battery, no cpufreq, other_cpu_measured
// false, no plausible temperature) passes its gate; GatesNotChecked says which of those
// were set. Pure function.
std::vector<std::string> GateFailures(const v1::Preconditions& preconditions, const v1::EnvSnapshot& snapshot);

// The gates of `preconditions` that `snapshot` cannot judge (the unknown readings
// GateFailures passes), one line each, in GateFailures' order:
//   "battery: no battery level readable, min 20 % not checked"  (and not charging)
//   "temperature: no thermal zone or battery gave a plausible reading, max 45 °C not checked"
//   "other CPU: not measured, max 10 % not checked"
//   "governor: no cpufreq governor readable, performance not checked"
//   "free memory: MemAvailable not readable, min 1024 MiB not checked"
// An unreadable proc/loadavg reads as load 0, which the snapshot cannot tell from a
// reading, so the load gate is never listed.
// They pass (a device without sensors still runs), but the snapshot says so
// (EnvSnapshot.gates_not_checked). Pure function.
std::vector<std::string> GatesNotChecked(const v1::Preconditions& preconditions, const v1::EnvSnapshot& snapshot);

// Where a check reads and how it waits; tests use a fixture tree and a sleep that
// changes it.
struct PreflightEnv {
  // Root of sys/ and proc/ ("" = the live machine), as TakeEnvSnapshot's.
  std::string fsroot;
  // Waits the cool-down between checks; default absl::SleepFor in 100 ms steps that
  // stop early on cancellation.
  std::function<void(absl::Duration)> sleep;
};

// One check: TakeEnvSnapshot(env.fsroot), plus, when max_other_cpu_percent is set, the
// CPU used by other processes sampled over cpu_sample_seconds (default 2 s: blocks that
// long), with gate_failures filled. Never fails: unreadable parts stay unknown.
// Thread-safe (reads files only).
v1::EnvSnapshot CheckPreconditions(const v1::Preconditions& preconditions, const PreflightEnv& env);

// CPU time used by processes other than the calling one (and its reaped children) over
// `window`, in % of all of the machine's CPUs (fsroot's proc/stat "cpu" line minus
// proc/self/stat utime+stime+cutime+cstime; both in clock ticks), clamped to 0..100.
// Blocks for `window`. false when proc/stat cannot be read or did not advance.
bool SampleOtherCpuPercent(absl::string_view fsroot, absl::Duration window, double* percent);

struct PreflightOutcome {
  bool passed = true;
  v1::EnvSnapshot conditions;   // the last check's (gate_failures empty when passed)
  int checks = 0;               // checks made (1 when the first passed)
  double cooldown_seconds = 0;  // slept between checks
  // When !passed: "deferred: <gate failures joined by "; "> (N checks, S s of
  // cool-down)".
  std::string deferred_reason;
  bool cancelled = false;  // stopped by `cancelled` before the gates passed
};

// Checks `preconditions` (CheckPreconditions) up to max_checks times (default 3),
// sleeping cooldown_seconds (default 30) between failing checks, and stops at the first
// pass. `cancelled` (may be null) ends the waiting early (then passed is false, no
// deferred reason). Runs on the calling thread.
PreflightOutcome RunPreflight(const v1::Preconditions& preconditions, const PreflightEnv& env,
                              const std::atomic<bool>* cancelled);

// A job ended because its gates kept failing: Unavailable with `reason` and a payload
// that IsDeferred recognizes, so the agent reports JobFinished.deferred.
absl::Status DeferredError(absl::string_view reason);
bool IsDeferred(const absl::Status& status);

}  // namespace fleetmark::engine
