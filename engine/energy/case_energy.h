// A case's energy from its processes' measurements (CaseResult.energy; docs/energy.md,
// "Per case"): per repetition and per task, gross and net of an idle baseline, mean
// power, the interval over processes, and `unresolved` instead of any number below what
// the source resolves.
//
//   std::vector<ProcessEnergy> processes = ...;   // one per process of the case
//   *result.mutable_energy() = SummarizeCaseEnergy(choice, processes, spec.batch().tasks());
#pragma once

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "engine/energy/best_source.h"
#include "fleetmark/v1/result.pb.h"

namespace fleetmark::engine::energy {

// One process of a case: its timed span's energy and the idle baseline before it.
struct ProcessEnergy {
  double joules = 0;            // gross energy over the timed span, J
  double seconds = 0;           // the timed span, s
  uint64_t repetitions = 0;     // timed repetitions in the span (transient ones included)
  double baseline_joules = 0;   // the idle baseline measured before the process, J
  double baseline_seconds = 0;  // its length, s
  bool charging = false;        // a battery sample while charging (span or baseline)
};

// The case's CaseEnergy (every field described in proto/fleetmark/v1/result.proto):
// per process i, gross g_i = joules / repetitions and net n_i = (joules - seconds x
// baseline_joules / baseline_seconds) / repetitions; the numbers are the means over
// processes, with mean +- t(0.975, k-1) s / sqrt(k) for k >= 2 processes (the Student-t
// interval over independent process values, the top level of Kalibera & Jones,
// "Rigorous benchmarking in reasonable time", ISMM 2013, §4; StudentTQuantile,
// engine/measure/verdict.h). Per task = per repetition / `tasks`. Unresolved (no
// numbers, the reason naming the process and the values) when a process's span is
// shorter than the source's update interval, or its gross or |net| energy is below the
// resolution: choice.resolution J for counters, choice.resolution W x the span for power
// sources. `unavailable` set, naming the process, when one has no repetitions or no
// baseline; also when `processes` is empty. Pure.
fleetmark::v1::CaseEnergy SummarizeCaseEnergy(const EnergyChoice& choice, absl::Span<const ProcessEnergy> processes,
                                              uint64_t tasks);

// A CaseEnergy saying only "unavailable: <why>" (no source, emulation, a failed read).
fleetmark::v1::CaseEnergy UnavailableCaseEnergy(absl::string_view why);

}  // namespace fleetmark::engine::energy
