// The one check of a results document read from outside (a results file given to
// `fleetmark map`, `recommend`, or any command that loads one): ParseResultsJson runs
// it on every document it returns, so each reader refuses the same inputs with the same
// message. What `fleetmark run` and the agents write always passes.
//
// Pure function; thread-safe.
#pragma once

#include "absl/status/status.h"
#include "fleetmark/v1/result.pb.h"

namespace fleetmark::report {

// Longest time a result may report, ns: one repetition never exceeds one case's
// longest budget (kMaxSecondsPerCaseCap, one day), so a median, sample or CI bound
// beyond it is not a measurement.
inline constexpr double kMaxResultNs = 86'400e9;

// OK, or InvalidArgument naming the device, the case, the field, the allowed range and
// the value, e.g. `device "host", case "batch/synthetic/blocking/direct/any":
// stats.median_ns: 0 <= median_ns <= 8.64e+13 (ns), got -5`. Refused: a (non-empty) case
// id repeated within a device; a negative, non-finite or over-kMaxResultNs time
// (stats' min, median, max and mean, samples_ns, process_medians_ns); a parameter of the
// case's spec outside the range a plan allows (threads, batch tasks, the synthetic,
// memory, fanout and load parameters: engine/scenarios/param_rules.h).
absl::Status CheckResultsDocument(const fleetmark::v1::ResultsDocument& document);

}  // namespace fleetmark::report
