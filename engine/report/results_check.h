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
// stats.median_ns: 0 <= median_ns <= 8.64e+13 (ns), got -5`. Refused: a result without
// a spec or with an empty spec.case_id (named by position, e.g. `devices[0].results[2].spec:
// missing (...)`: what names no case would be shown under invented defaults); a case
// id repeated within a device; a negative, non-finite or over-kMaxResultNs time
// (stats' min, median, max and mean, samples_ns, process_medians_ns); a parameter of the
// case's spec outside the range a plan allows (threads, batch tasks, the synthetic,
// memory, fanout and load parameters: engine/scenarios/param_rules.h).
// Then each result's CheckResultValues, with the field named as above.
absl::Status CheckResultsDocument(const fleetmark::v1::ResultsDocument& document);

// The measured values of one result from outside (an agent's, an imported or a read
// file's): InvalidArgument naming the field (e.g. `result.stats.median_ns: a finite
// number >= 0, got nan`) unless its status and stop_reason are values this fleetmark
// knows, every floating-point field of its statistics, counters and scenario result
// (memory, fanout, load) is finite (except stats.ci_half_width_percent, +Infinity while
// the CI is not achieved), the statistics (ns, percent) are >= 0, and every raw sample
// is >= 0 ns. The environment snapshots are not checked (a sensor's reading is context,
// not a result). The coordinator's store runs it on every result it is given.
absl::Status CheckResultValues(const fleetmark::v1::CaseResult& result);

}  // namespace fleetmark::report
