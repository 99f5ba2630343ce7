// The headline numbers of a memory, fan-out or load result, for comparing one case
// across devices (`fleetmark compare --agents`): memory KiB/task (RSS slope), fan-out
// total time and timeouts, load throughput, p99 latency and peak RSS. One measurement
// per case and device (no CI), so these are shown, never declared winners.
// Pure functions; safe from any thread.
#pragma once

#include <string>
#include <vector>

#include "fleetmark/v1/result.pb.h"

namespace fleetmark::report {

struct ScenarioMetric {
  std::string name;  // "KiB/task", "total", "timeouts", "throughput", "p99", "peak RSS"
  double value = 0;  // in `unit`
  std::string unit;  // "KiB/task", "ms", "count", "rps", "bytes"
  bool lower_is_better = true;
  std::string text;  // "12.3 KiB/task", "105 ms", "3", "5120 rps", "3.20 ms", "40.0 MiB"
};

// The metrics of an ok scenario result (memory, fanout, load); empty for a batch
// result, a failed one, or one without its scenario result.
std::vector<ScenarioMetric> ScenarioMetrics(const v1::CaseResult& result);

// The metrics joined: "12.3 KiB/task" or "total 105 ms · 0 timeouts"; for a result
// that is not ok, "(<status word>)"; "-" when there is nothing to show.
std::string ScenarioMetricsText(const v1::CaseResult& result);

}  // namespace fleetmark::report
