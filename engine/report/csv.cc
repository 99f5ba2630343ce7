#include "engine/common/partial_result.h"
#include "engine/report/csv.h"

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/report/case_names.h"
#include "engine/report/results_document.h"
#include "engine/report/units.h"
#include "engine/topology/conditions_text.h"

namespace fleetmark::report {
namespace {

using fleetmark::v1::CaseResult;

// One column: its header and how to render it from a result.
struct CsvColumn {
  std::string name;
  std::function<std::string(const CaseResult&)> value;
};

std::string Num(double v) { return ShortestDouble(v); }
std::string Int(uint64_t v) { return absl::StrCat(v); }
std::string SInt(int64_t v) { return absl::StrCat(v); }

using Render = std::function<std::string(const CaseResult&)>;

// Empty unless the result has timing statistics / resource counters / is a batch case:
// a memory, fanout or load case (or one that failed before measuring) has none, and a
// 0 there would read as a measurement.
Render IfStats(Render f) {
  return [f](const CaseResult& r) { return r.has_stats() ? f(r) : std::string(); };
}
Render IfCounters(Render f) {
  return [f](const CaseResult& r) { return r.has_counters() ? f(r) : std::string(); };
}
Render IfLimits(Render f) {
  return [f](const CaseResult& r) { return r.has_limits() ? f(r) : std::string(); };
}
Render IfProcesses(Render f) {
  return [f](const CaseResult& r) { return r.process_medians_ns_size() >= 2 ? f(r) : std::string(); };
}
Render IfSynthetic(Render f) {
  return [f](const CaseResult& r) { return r.spec().has_synthetic() ? f(r) : std::string(); };
}
Render IfHarness(Render f) {
  return [f](const CaseResult& r) { return r.harness_ns_per_task() > 0 ? f(r) : std::string(); };
}
Render IfBatch(Render f) {
  return [f](const CaseResult& r) { return BatchTasks(r.spec()) > 0 ? f(r) : std::string(); };
}

// Empty unless energy was measured (a source, not `unavailable`); ...Numbers: and
// resolved; ...Interval: and over two or more processes.
Render IfEnergy(Render f) {
  return [f](const CaseResult& r) { return r.has_energy() && r.energy().unavailable().empty() ? f(r) : std::string(); };
}
Render IfEnergyNumbers(Render f) {
  return IfEnergy([f](const CaseResult& r) { return r.energy().unresolved() ? std::string() : f(r); });
}
Render IfEnergyInterval(Render f) {
  return IfEnergyNumbers(
      [f](const CaseResult& r) { return r.energy().process_joules_per_repetition_size() >= 2 ? f(r) : std::string(); });
}

const std::vector<CsvColumn>& Columns() {
  static const auto* const columns = new std::vector<CsvColumn>{
      {"result_id", [](const CaseResult& r) { return r.result_id(); }},
      {"run_id", [](const CaseResult& r) { return r.run_id(); }},
      {"job_id", [](const CaseResult& r) { return r.job_id(); }},
      {"case_id", [](const CaseResult& r) { return CaseKey(r.spec()); }},
      {"scenario", [](const CaseResult& r) { return r.spec().scenario(); }},
      {"workload", [](const CaseResult& r) { return r.spec().workload(); }},
      {"io_mode", [](const CaseResult& r) { return r.spec().io_mode(); }},
      {"placement", [](const CaseResult& r) { return r.spec().placement(); }},
      {"strategy", [](const CaseResult& r) { return r.spec().strategy().name(); }},
      {"strategy_label", [](const CaseResult& r) { return StrategyLabel(r.spec()); }},
      {"threads_requested", [](const CaseResult& r) { return Int(r.spec().strategy().threads()); }},
      {"threads_used", [](const CaseResult& r) { return Int(r.threads_used()); }},
      {"tasks", IfBatch([](const CaseResult& r) { return Int(BatchTasks(r.spec())); })},
      {"status", [](const CaseResult& r) { return StatusWord(r.status()); }},
      {"message", [](const CaseResult& r) { return r.message(); }},
      {"stop_reason", IfBatch([](const CaseResult& r) { return StopReasonWord(r.stop_reason()); })},
      {"count", IfStats([](const CaseResult& r) { return Int(r.stats().count()); })},
      {"min_ns", IfStats([](const CaseResult& r) { return Num(r.stats().min_ns()); })},
      {"median_ns", IfStats([](const CaseResult& r) { return Num(r.stats().median_ns()); })},
      {"max_ns", IfStats([](const CaseResult& r) { return Num(r.stats().max_ns()); })},
      {"mean_ns", IfStats([](const CaseResult& r) { return Num(r.stats().mean_ns()); })},
      {"stddev_ns", IfStats([](const CaseResult& r) { return Num(r.stats().stddev_ns()); })},
      {"mad_ns", IfStats([](const CaseResult& r) { return Num(r.stats().mad_ns()); })},
      {"ci_low_ns", IfStats([](const CaseResult& r) { return Num(r.stats().ci_low_ns()); })},
      {"ci_high_ns", IfStats([](const CaseResult& r) { return Num(r.stats().ci_high_ns()); })},
      {"next_low_ns", IfStats([](const CaseResult& r) { return Num(r.stats().next_low_ns()); })},
      {"next_high_ns", IfStats([](const CaseResult& r) { return Num(r.stats().next_high_ns()); })},
      {"ci_half_width_percent", IfStats([](const CaseResult& r) { return Num(r.stats().ci_half_width_percent()); })},
      {"outliers", IfStats([](const CaseResult& r) { return Int(r.stats().outliers()); })},
      {"repetitions", IfCounters([](const CaseResult& r) { return Int(r.counters().repetitions()); })},
      {"cpu_user_seconds", IfCounters([](const CaseResult& r) { return Num(r.counters().cpu_user_seconds()); })},
      {"cpu_system_seconds", IfCounters([](const CaseResult& r) { return Num(r.counters().cpu_system_seconds()); })},
      {"voluntary_context_switches",
       IfCounters([](const CaseResult& r) { return SInt(r.counters().voluntary_context_switches()); })},
      {"involuntary_context_switches",
       IfCounters([](const CaseResult& r) { return SInt(r.counters().involuntary_context_switches()); })},
      {"allocations_per_repetition", IfCounters([](const CaseResult& r) {
         return r.counters().allocations_counted() ? Int(r.counters().allocations()) : std::string();
       })},
      {"allocated_bytes_per_repetition", IfCounters([](const CaseResult& r) {
         return r.counters().allocations_counted() ? Int(r.counters().allocated_bytes()) : std::string();
       })},
      {"peak_threads", IfCounters([](const CaseResult& r) { return Int(r.counters().peak_threads()); })},
      {"rss_delta_bytes", IfCounters([](const CaseResult& r) { return SInt(r.counters().rss_delta_bytes()); })},
      {"peak_rss_bytes", IfCounters([](const CaseResult& r) { return Int(r.counters().peak_rss_bytes()); })},
      {"peak_in_flight", [](const CaseResult& r) { return Int(r.peak_in_flight()); }},
      {"throttled", [](const CaseResult& r) { return std::string(r.throttled() ? "true" : "false"); }},
      {"memory_slope_kib_per_task",
       [](const CaseResult& r) { return r.has_memory() ? Num(r.memory().slope_kib_per_task()) : std::string(); }},
      {"memory_r_squared",
       [](const CaseResult& r) { return r.has_memory() ? Num(r.memory().r_squared()) : std::string(); }},
      {"fanout_total_ms",
       [](const CaseResult& r) { return r.has_fanout() ? Num(r.fanout().total_ms()) : std::string(); }},
      {"fanout_successes",
       [](const CaseResult& r) { return r.has_fanout() ? Int(r.fanout().successes()) : std::string(); }},
      {"fanout_timeouts",
       [](const CaseResult& r) { return r.has_fanout() ? Int(r.fanout().timeouts()) : std::string(); }},
      {"fanout_failures",
       [](const CaseResult& r) { return r.has_fanout() ? Int(r.fanout().failures()) : std::string(); }},
      {"load_throughput_rps",
       [](const CaseResult& r) { return r.has_load() ? Num(r.load().throughput_rps()) : std::string(); }},
      {"load_latency_p99_ms",
       [](const CaseResult& r) { return r.has_load() ? Num(r.load().latency_p99_ms()) : std::string(); }},
      {"started_unix_ns", [](const CaseResult& r) { return SInt(r.started_unix_ns()); }},
      {"finished_unix_ns", [](const CaseResult& r) { return SInt(r.finished_unix_ns()); }},
      {"engine_version", [](const CaseResult& r) { return r.engine_version(); }},
      // The CPU and memory limits the case ran under (empty when not recorded).
      {"logical_cpus", IfLimits([](const CaseResult& r) { return Int(r.limits().effective_cpus()); })},
      {"allowed_cpus", IfLimits([](const CaseResult& r) { return Int(r.limits().allowed_cpus()); })},
      {"machine_cpus", IfLimits([](const CaseResult& r) { return Int(r.limits().machine_cpus()); })},
      {"cpu_quota", IfLimits([](const CaseResult& r) {
         return r.limits().cpu_quota() > 0 ? Num(r.limits().cpu_quota()) : std::string();
       })},
      {"memory_limit_bytes", IfLimits([](const CaseResult& r) {
         return r.limits().memory_limit_bytes() > 0 ? Int(r.limits().memory_limit_bytes()) : std::string();
       })},
      // Batch cases: the stationarity check's verdict (engine/measure/stop_rule.h).
      {"unstable", IfBatch([](const CaseResult& r) { return std::string(r.unstable() ? "true" : "false"); })},
      {"transient_samples", IfBatch([](const CaseResult& r) { return Int(r.transient_samples()); })},
      // Batch cases: the harness's own cost (empty-task calibration), its share of the
      // median and the > 5 % flag; empty when not calibrated.
      {"harness_ns_per_task", IfHarness([](const CaseResult& r) { return Num(r.harness_ns_per_task()); })},
      {"harness_share", IfHarness([](const CaseResult& r) { return Num(r.harness_share()); })},
      {"harness_heavy", IfBatch([](const CaseResult& r) { return std::string(r.harness_heavy() ? "true" : "false"); })},
      // measurement.processes >= 2: each process's median and sample count, in run order
      // (";"-separated), and the between-process share of the variance; empty with one.
      {"process_medians_ns", IfProcesses([](const CaseResult& r) {
         return absl::StrJoin(r.process_medians_ns(), ";", [](std::string* out, double m) { out->append(Num(m)); });
       })},
      {"process_sample_counts",
       IfProcesses([](const CaseResult& r) { return absl::StrJoin(r.process_sample_counts(), ";"); })},
      {"between_process_share", IfProcesses([](const CaseResult& r) { return Num(r.between_process_share()); })},
      // The synthetic workload's parameters at the case's point, the swept ones (names
      // separated by ';'), and the per-process calibration (mean ns per loop iteration);
      // empty for other workloads.
      {"cpu_ns", IfSynthetic([](const CaseResult& r) { return Int(r.spec().synthetic().cpu_ns()); })},
      {"wait_us", IfSynthetic([](const CaseResult& r) { return Int(r.spec().synthetic().wait_us()); })},
      {"wait_distribution", IfSynthetic([](const CaseResult& r) {
         return r.spec().synthetic().wait_distribution().empty() ? std::string("fixed")
                                                                 : r.spec().synthetic().wait_distribution();
       })},
      {"wait_seed", IfSynthetic([](const CaseResult& r) { return Int(r.spec().synthetic().wait_seed()); })},
      {"alloc_bytes", IfSynthetic([](const CaseResult& r) { return Int(r.spec().synthetic().alloc_bytes()); })},
      {"touch_kib", IfSynthetic([](const CaseResult& r) { return Int(r.spec().synthetic().touch_kib()); })},
      {"swept", [](const CaseResult& r) { return absl::StrJoin(r.spec().swept(), ";"); }},
      {"synthetic_ns_per_iteration", [](const CaseResult& r) {
         if (r.synthetic_ns_per_iteration_size() == 0) return std::string();
         double sum = 0;
         for (double v : r.synthetic_ns_per_iteration()) sum += v;
         return Num(sum / r.synthetic_ns_per_iteration_size());
       }},
      // The memory fit: the points it used and the task counts left out (";"-separated).
      {"memory_points_fitted",
       [](const CaseResult& r) { return r.has_memory() ? Int(r.memory().points_fitted()) : std::string(); }},
      {"memory_left_out_tasks", [](const CaseResult& r) { return absl::StrJoin(r.memory().left_out_tasks(), ";"); }},
      // The device fingerprint's hash (engine/topology/fingerprint.h; empty = unknown) and
      // the conditions at the case's start and end (FormatConditions; empty = none).
      {"fingerprint_hash", [](const CaseResult& r) { return r.fingerprint().hash(); }},
      {"conditions_start", [](const CaseResult& r) {
         return r.has_env_before() ? engine::FormatConditions(r.env_before()) : std::string();
       }},
      {"conditions_end",
       [](const CaseResult& r) { return r.has_env_after() ? engine::FormatConditions(r.env_after()) : std::string(); }},
      // measurement.energy (CaseResult.energy; docs/energy.md): why there is none, the
      // source, and the numbers unless unresolved; all empty when the plan did not ask.
      {"energy_unavailable", [](const CaseResult& r) { return r.energy().unavailable(); }},
      {"energy_source", IfEnergy([](const CaseResult& r) { return r.energy().source(); })},
      {"energy_unresolved",
       IfEnergy([](const CaseResult& r) { return std::string(r.energy().unresolved() ? "true" : "false"); })},
      {"energy_joules_per_repetition", IfEnergyNumbers([](const CaseResult& r) { return Num(r.energy().joules_per_repetition()); })},
      {"energy_joules_per_repetition_low", IfEnergyInterval([](const CaseResult& r) { return Num(r.energy().joules_per_repetition_low()); })},
      {"energy_joules_per_repetition_high", IfEnergyInterval([](const CaseResult& r) { return Num(r.energy().joules_per_repetition_high()); })},
      {"energy_net_joules_per_repetition", IfEnergyNumbers([](const CaseResult& r) { return Num(r.energy().net_joules_per_repetition()); })},
      {"energy_net_joules_per_repetition_low", IfEnergyInterval([](const CaseResult& r) { return Num(r.energy().net_joules_per_repetition_low()); })},
      {"energy_net_joules_per_repetition_high", IfEnergyInterval([](const CaseResult& r) { return Num(r.energy().net_joules_per_repetition_high()); })},
      {"energy_joules_per_task", IfEnergyNumbers([](const CaseResult& r) { return Num(r.energy().joules_per_task()); })},
      {"energy_net_joules_per_task", IfEnergyNumbers([](const CaseResult& r) { return Num(r.energy().net_joules_per_task()); })},
      {"energy_mean_power_watts", IfEnergyNumbers([](const CaseResult& r) { return Num(r.energy().mean_power_watts()); })},
      {"energy_baseline_power_watts", IfEnergyNumbers([](const CaseResult& r) { return Num(r.energy().baseline_power_watts()); })},
      {"energy_charging", IfEnergy([](const CaseResult& r) { return std::string(r.energy().charging() ? "true" : "false"); })},
      // Last: measured under user-mode emulation (qemu-user): not a hardware number.
      // A partial result (engine/common/partial_result.h): cancelled after some of its rounds.
      {"partial", [](const CaseResult& r) { return std::string(engine::IsPartialResult(r) ? "true" : "false"); }},
      {"emulated", [](const CaseResult& r) { return std::string(r.emulated() ? "true" : "false"); }},
  };
  return *columns;
}

void AppendRow(const std::vector<std::string>& fields, std::string* out) {
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) out->push_back(',');
    out->append(CsvField(fields[i]));
  }
  out->append("\r\n");
}

}  // namespace

const std::vector<std::string>& CsvColumns() {
  static const auto* const names = [] {
    auto* v = new std::vector<std::string>{"agent"};
    for (const CsvColumn& c : Columns()) v->push_back(c.name);
    return v;
  }();
  return *names;
}

std::string CsvField(std::string_view value) {
  if (value.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(value);
  std::string quoted = "\"";
  for (char c : value) {
    if (c == '"') quoted.push_back('"');
    quoted.push_back(c);
  }
  quoted.push_back('"');
  return quoted;
}

std::string FormatResultsCsv(const fleetmark::v1::ResultsDocument& document) {
  std::string out;
  AppendRow(CsvColumns(), &out);
  std::vector<std::string> fields;
  for (const fleetmark::v1::ResultsDevice& device : document.devices()) {
    for (const CaseResult& r : device.results()) {
      fields.clear();
      fields.push_back(device.agent());
      for (const CsvColumn& c : Columns()) fields.push_back(c.value(r));
      AppendRow(fields, &out);
    }
  }
  return out;
}

std::string FormatCsv(const fleetmark::v1::RunReport& report) { return FormatResultsCsv(LocalResultsDocument(report)); }

}  // namespace fleetmark::report
