// Names the report formats show for a case: strategy label, case key, status and
// stop-reason words. One place, so table, CSV and gbench-json agree.
#pragma once

#include <cstdint>
#include <string>

#include "fleetmark/v1/result.pb.h"

namespace fleetmark::report {

// The spec's label; else "<name>" when threads is 0, else "<name>_<threads>"
// (plan.proto's documented default); "?" when the name is empty too.
std::string StrategyLabel(const fleetmark::v1::CaseSpec& spec);

// The workload as case ids show it: the workload's name; for the synthetic workload
// with its parameters, swept ones included ("synthetic[cpu_ns=1000,wait_us=316]",
// engine/common/synthetic_text.h), so the points of a sweep stay apart. "" when the
// spec has no workload.
std::string WorkloadText(const fleetmark::v1::CaseSpec& spec);

// The spec's case_id; else "<scenario>/<workload>/<io_mode>/<label>/<placement>" with
// empty parts shown as "-".
std::string CaseKey(const fleetmark::v1::CaseSpec& spec);

// "ok", "unsupported", "resource_exhausted", "timeout", "failed", "cancelled",
// "unspecified"; "status <n>" for values this build does not know.
std::string StatusWord(fleetmark::v1::CaseStatus status);

// "ci_target", "max_repetitions", "max_time", "unspecified"; "reason <n>" if unknown.
std::string StopReasonWord(fleetmark::v1::StopReason reason);

// Batch task count n of the spec, with the default 100 for 0; 0 for other scenarios
// (an empty scenario counts as batch).
uint32_t BatchTasks(const fleetmark::v1::CaseSpec& spec);

}  // namespace fleetmark::report
