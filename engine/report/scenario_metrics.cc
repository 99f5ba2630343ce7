// ScenarioMetrics, ScenarioMetricsText (scenario_metrics.h).
#include "engine/report/scenario_metrics.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "engine/report/case_names.h"
#include "engine/report/units.h"

namespace fleetmark::report {

std::vector<ScenarioMetric> ScenarioMetrics(const v1::CaseResult& r) {
  std::vector<ScenarioMetric> out;
  if (r.status() != v1::CASE_STATUS_OK) return out;
  if (r.has_memory()) {
    const double slope = r.memory().slope_kib_per_task();
    out.push_back({"KiB/task", slope, "KiB/task", true, absl::StrFormat("%.1f KiB/task", slope)});
  } else if (r.has_fanout()) {
    const v1::FanoutResult& f = r.fanout();
    out.push_back({"total", f.total_ms(), "ms", true, absl::StrCat("total ", FormatNanos(f.total_ms() * 1e6))});
    out.push_back(
        {"timeouts", static_cast<double>(f.timeouts()), "count", true, absl::StrCat(f.timeouts(), " timeouts")});
  } else if (r.has_load()) {
    const v1::LoadResult& l = r.load();
    out.push_back({"throughput", l.throughput_rps(), "rps", false, absl::StrFormat("%.0f rps", l.throughput_rps())});
    out.push_back({"p99", l.latency_p99_ms(), "ms", true, absl::StrCat("p99 ", FormatNanos(l.latency_p99_ms() * 1e6))});
    out.push_back({"peak RSS", static_cast<double>(l.peak_rss_bytes()), "bytes", true,
                   absl::StrCat("RSS ", FormatBytes(static_cast<double>(l.peak_rss_bytes())))});
  }
  return out;
}

std::string ScenarioMetricsText(const v1::CaseResult& r) {
  if (r.status() != v1::CASE_STATUS_OK) return absl::StrCat("(", StatusWord(r.status()), ")");
  const std::vector<ScenarioMetric> metrics = ScenarioMetrics(r);
  if (metrics.empty()) return "-";
  return absl::StrJoin(metrics, " · ", [](std::string* out, const ScenarioMetric& m) { out->append(m.text); });
}

}  // namespace fleetmark::report
