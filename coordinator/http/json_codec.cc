#include "coordinator/scheduler/same_host.h"
#include "coordinator/http/json_codec.h"

#include "engine/topology/conditions_text.h"

#include <cmath>
#include <map>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "coordinator/service/selector.h"
#include "engine/report/case_names.h"
#include "engine/report/strategy_map.h"
#include "engine/report/strategy_map_json.h"
#include "engine/report/table.h"

namespace fleetmark::http {
namespace {

using nlohmann::json;
namespace v1 = fleetmark::v1;

int64_t Ms(int64_t unix_ns) { return unix_ns / 1000000; }

std::string WithoutPrefix(const std::string& name, absl::string_view prefix) {
  std::string out = absl::StartsWith(name, prefix) ? name.substr(prefix.size()) : name;
  return absl::AsciiStrToLower(out);
}

// JSON has no infinities: map them (and NaN) to null.
json Number(double value) { return std::isfinite(value) ? json(value) : json(nullptr); }

// Nanosecond statistics to 0.1 ns: finer digits carry no information and only
// lengthen the payload.
json Ns(double value) { return std::isfinite(value) ? json(std::round(value * 10) / 10) : json(nullptr); }

json CoreKindJson(const fleetmark::v1::CoreKind& kind) {
  return {{"name", kind.name()},
          {"cpus", std::vector<uint32_t>(kind.cpus().begin(), kind.cpus().end())},
          {"machine_cpus", std::vector<uint32_t>(kind.machine_cpus().begin(), kind.machine_cpus().end())},
          {"cores", kind.cores()},
          {"threads_per_core", kind.threads_per_core()},
          {"max_frequency_khz", kind.max_frequency_khz()},
          {"capacity", kind.capacity()},
          {"microarchitecture", kind.microarchitecture()}};
}

json HostJson(const fleetmark::v1::HostInfo& host) {
  json kinds = json::array();
  for (const auto& k : host.core_kinds()) kinds.push_back(CoreKindJson(k));
  json classes = json::array();
  for (const auto& k : host.core_classes()) classes.push_back(CoreKindJson(k));
  return {{"hostname", host.hostname()},
          {"cpu_model", host.cpu_model()},
          {"arch", host.arch()},
          {"logical_cpus", host.logical_cpus()},
          {"physical_cores", host.physical_cores()},
          {"smt", host.smt()},
          {"core_kinds", kinds},
          {"core_classes", classes},
          {"memory_bytes", host.memory_bytes()},
          {"os", host.os()},
          {"kernel", host.kernel()},
          {"device_model", host.device_model()},
          {"soc", host.soc()},
          {"governor", host.governor()},
          {"clocks_locked", host.clocks_locked()},
          {"engine_version", host.engine_version()},
          {"numa_nodes", host.numa_nodes()},
          {"emulated", host.emulated()},
          {"emulation_evidence", host.emulation_evidence()}};
}

json EnvJson(const fleetmark::v1::EnvSnapshot& env) {
  return {
      {"cpu_frequency_khz", std::vector<uint64_t>(env.cpu_frequency_khz().begin(), env.cpu_frequency_khz().end())},
      {"temperatures_c", std::vector<double>(env.temperatures_c().begin(), env.temperatures_c().end())},
      {"thermal_zone_types",
       std::vector<std::string>(env.thermal_zone_types().begin(), env.thermal_zone_types().end())},
      {"load_average_1m", Number(env.load_average_1m())},
      {"trip_point_crossed", env.trip_point_crossed()},
      {"unix_ms", Ms(env.unix_time_ns())},
      // The preflight gates' conditions (null = unknown) and the one-line summary.
      {"battery_level_percent", env.battery_level_percent() >= 0 ? json(env.battery_level_percent()) : json()},
      {"battery_charging", env.battery_charging()},
      {"battery_temperature_c", env.battery_temperature_known() ? Number(env.battery_temperature_c()) : json()},
      {"free_memory_bytes", env.free_memory_bytes() > 0 ? json(env.free_memory_bytes()) : json()},
      {"governor", env.governor()},
      {"other_cpu_percent", env.other_cpu_measured() ? Number(env.other_cpu_percent()) : json()},
      {"gate_failures", std::vector<std::string>(env.gate_failures().begin(), env.gate_failures().end())},
      {"gates_not_checked", std::vector<std::string>(env.gates_not_checked().begin(), env.gates_not_checked().end())},
      {"summary", engine::FormatConditions(env)}};
}

json MemoryJson(const fleetmark::v1::MemoryResult& m) {
  json points = json::array();
  for (const auto& p : m.points()) {
    points.push_back({{"tasks", p.tasks()},
                      {"rss_bytes", p.rss_bytes()},
                      {"pss_bytes", p.pss_bytes()},
                      {"uss_bytes", p.uss_bytes()},
                      {"baseline_rss_bytes", p.baseline_rss_bytes()},
                      {"status", CaseStatusName(p.status())},
                      {"message", p.message()}});
  }
  return {{"points", points},
          {"slope_kib_per_task", Number(m.slope_kib_per_task())},
          {"intercept_kib", Number(m.intercept_kib())},
          {"r_squared", Number(m.r_squared())},
          // The slope is fitted on the points that ran: how many, and the task counts left out.
          {"points_fitted", m.points_fitted()},
          {"left_out_tasks", std::vector<uint32_t>(m.left_out_tasks().begin(), m.left_out_tasks().end())},
          {"stack_kib", m.stack_kib()}};
}

json LoadJson(const fleetmark::v1::LoadResult& l) {
  return {{"users", l.users()},
          {"throughput_rps", Number(l.throughput_rps())},
          {"latency_mean_ms", Number(l.latency_mean_ms())},
          {"latency_p50_ms", Number(l.latency_p50_ms())},
          {"latency_p95_ms", Number(l.latency_p95_ms())},
          {"latency_p99_ms", Number(l.latency_p99_ms())},
          {"latency_p999_ms", Number(l.latency_p999_ms())},
          {"latency_max_ms", Number(l.latency_max_ms())},
          {"requests", l.requests()},
          {"server_requests", l.server_requests()},
          {"errors_refused", l.errors_refused()},
          {"errors_timeout", l.errors_timeout()},
          {"errors_5xx", l.errors_5xx()},
          {"errors_other", l.errors_other()},
          {"peak_rss_bytes", l.peak_rss_bytes()},
          {"peak_threads", l.peak_threads()}};
}

json FanoutJson(const fleetmark::v1::FanoutResult& f) {
  return {{"total_ms", Number(f.total_ms())},
          {"successes", f.successes()},
          {"timeouts", f.timeouts()},
          {"failures", f.failures()},
          {"latency_p50_ms", Number(f.latency_p50_ms())},
          {"latency_p95_ms", Number(f.latency_p95_ms())},
          {"latency_p99_ms", Number(f.latency_p99_ms())},
          {"latency_max_ms", Number(f.latency_max_ms())},
          {"peak_threads", f.peak_threads()},
          {"peak_rss_bytes", f.peak_rss_bytes()}};
}

json RatioJson(const std::optional<Ratio>& r) {
  if (!r) return nullptr;
  return {{"ratio", Number(r->ratio)},
          {"low", Number(r->low)},
          {"high", Number(r->high)},
          {"no_difference", r->no_difference}};
}

}  // namespace

std::string CaseStatusName(fleetmark::v1::CaseStatus status) {
  return WithoutPrefix(fleetmark::v1::CaseStatus_Name(status), "CASE_STATUS_");
}

std::string StopReasonName(fleetmark::v1::StopReason reason) {
  return WithoutPrefix(fleetmark::v1::StopReason_Name(reason), "STOP_REASON_");
}

json AgentJson(const store::WebAgent& agent) {
  return {{"agent_id", agent.agent_id},
          {"name", agent.name},
          {"state", agent.state},
          {"last_seen_unix_ms", Ms(agent.last_seen_unix_ns)},
          {"running_job_id", agent.running_job_id},
          {"labels", agent.labels},
          {"host", HostJson(agent.host)},
          {"health", agent.health},
          {"quarantine_reason", agent.quarantine_reason},
          {"quarantined_unix_ms", Ms(agent.quarantined_unix_ns)},
          {"noise_percent", agent.noise_percent < 0 ? json(nullptr) : json(agent.noise_percent)},
          {"noise_nights", agent.noise_nights},
          // The host's short id ("" = unknown), the other agents on it and whether this
          // one may run a job beside them (coordinator/scheduler/same_host.h).
          {"host_id", scheduler::ShortHostId({agent.machine_id, agent.boot_id})},
          {"same_host_as", agent.same_host_as},
          {"exclusive_cpus", agent.exclusive_cpus}};
}

json RunJson(const store::WebRun& run) {
  json jobs = json::array();
  for (const store::WebJob& j : run.jobs) {
    jobs.push_back({{"job_id", j.job_id},
                    {"agent_id", j.agent_id},
                    {"agent_name", j.agent_name},
                    {"status", j.status},
                    {"message", j.message},
                    {"attempts", j.attempts},
                    {"cases_done", j.cases_done},
                    {"cases_total", j.cases_total}});
  }
  return {{"run_id", run.run_id},
          {"plan_name", run.plan_name},
          {"status", run.status},
          {"selector", run.selector},
          {"selector_text", service::SelectorText(run.selector, run.imported)},
          {"submitted_by", run.submitted_by},
          {"quick", run.quick},
          {"created_unix_ms", Ms(run.created_unix_ns)},
          {"finished_unix_ms", Ms(run.finished_unix_ns)},
          {"results", run.results},
          {"imported", run.imported},
          {"jobs", jobs}};
}

json ScheduleJson(const store::WebSchedule& s) {
  return {{"name", s.name},
          {"cron", s.cron},
          {"plan_name", s.plan_name},
          {"selector", s.selector},
          {"selector_text", service::SelectorText(s.selector)},
          {"quick", s.quick},
          {"filter", s.filter},
          {"paused", s.paused},
          {"next_fire_unix_ms", Ms(s.next_fire_unix_ns)},
          {"last_fire_unix_ms", Ms(s.last_fire_slot_unix_ns)},
          {"last_fire_outcome", s.last_fire_outcome},
          {"last_fire_run_id", s.last_fire_run_id}};
}

json ResultJson(const store::WebResult& wr, bool full) {
  // Built by assignment, not initializer lists: nlohmann copies every nested
  // initializer, and run pages list hundreds of results.
  const fleetmark::v1::CaseResult& r = wr.result;
  const auto& s = r.stats();
  const auto& c = r.counters();
  json out = json::object();
  out["result_id"] = r.result_id();
  out["agent_id"] = wr.agent_id;
  out["agent_name"] = wr.agent_name;
  out["run_id"] = r.run_id();
  out["case_id"] = r.spec().case_id();
  out["scenario"] = r.spec().scenario();
  out["workload"] = report::WorkloadText(r.spec());  // a sweep point's parameters included
  out["workload_name"] = r.spec().workload();
  out["io_mode"] = r.spec().io_mode();
  out["placement"] = r.spec().placement();
  out["strategy"] = StrategyLabel(r.spec());
  out["strategy_name"] = r.spec().strategy().name();
  out["threads"] = r.spec().strategy().threads();
  // The CLI table's own cells (engine/report/table.h), so both show the same values.
  out["threads_text"] = report::ThreadsText(r);
  out["cpu_per_rep_text"] = report::CpuPerRepetitionText(r);
  if (r.has_memory()) out["slope_text"] = report::MemorySlopeText(r);
  out["status"] = CaseStatusName(r.status());
  out["message"] = r.message();
  out["stop_reason"] = StopReasonName(r.stop_reason());
  out["throttled"] = r.throttled();
  out["emulated"] = r.emulated();
  // The conditions it was measured under (engine/measure/contention.h; quick settings).
  out["contended"] = r.contended();
  out["other_cpu_share"] = Number(r.other_cpu_share());
  out["quick"] = r.quick();
  out["fingerprint"] = FingerprintJson(r.fingerprint());
  out["threads_used"] = r.threads_used();
  out["peak_in_flight"] = r.peak_in_flight();
  out["finished_unix_ms"] = Ms(r.finished_unix_ns());
  json& stats = out["stats"];
  stats["count"] = s.count();
  stats["min_ns"] = Ns(s.min_ns());
  stats["median_ns"] = Ns(s.median_ns());
  stats["max_ns"] = Ns(s.max_ns());
  stats["mean_ns"] = Ns(s.mean_ns());
  stats["stddev_ns"] = Ns(s.stddev_ns());
  stats["mad_ns"] = Ns(s.mad_ns());
  stats["ci_low_ns"] = Ns(s.ci_low_ns());
  stats["ci_high_ns"] = Ns(s.ci_high_ns());
  stats["outliers"] = s.outliers();
  stats["ci_half_width_percent"] = Number(s.ci_half_width_percent());
  stats["next_low_ns"] = Ns(s.next_low_ns());
  stats["next_high_ns"] = Ns(s.next_high_ns());
  json& counters = out["counters"];
  counters["cpu_user_seconds"] = Number(c.cpu_user_seconds());
  counters["cpu_system_seconds"] = Number(c.cpu_system_seconds());
  counters["allocations"] = c.allocations();
  counters["allocated_bytes"] = c.allocated_bytes();
  counters["peak_threads"] = c.peak_threads();
  counters["rss_delta_bytes"] = c.rss_delta_bytes();
  counters["repetitions"] = c.repetitions();
  if (r.has_memory()) out["memory"] = MemoryJson(r.memory());
  if (r.has_load()) out["load"] = LoadJson(r.load());
  if (r.has_fanout()) out["fanout"] = FanoutJson(r.fanout());
  if (full) {
    out["samples_ns"] = std::vector<int64_t>(r.samples_ns().begin(), r.samples_ns().end());
    out["counters"]["voluntary_context_switches"] = c.voluntary_context_switches();
    out["counters"]["involuntary_context_switches"] = c.involuntary_context_switches();
    out["env_before"] = EnvJson(r.env_before());
    out["env_after"] = EnvJson(r.env_after());
    out["cpus_used"] = std::vector<uint32_t>(r.cpus_used().begin(), r.cpus_used().end());
    out["cooldown_seconds"] = Number(r.cooldown_seconds());
    out["engine_version"] = r.engine_version();
  }
  return out;
}

json FingerprintJson(const v1::DeviceFingerprint& fp) {
  if (fp.hash().empty()) return nullptr;
  json fields = json::array();
  for (const engine::FingerprintField& f : engine::FingerprintFields(fp)) {
    fields.push_back({{"field", f.name}, {"value", f.value}});
  }
  return {{"hash", fp.hash()}, {"fields", std::move(fields)}};
}

json FingerprintChangesJson(const std::vector<engine::FingerprintChange>& changes) {
  json out = json::array();
  for (const engine::FingerprintChange& c : changes) {
    out.push_back({{"field", c.field}, {"before", c.before}, {"after", c.after}});
  }
  return out;
}

json ComparisonJson(const std::vector<DeviceResults>& devices, const Comparison& c) {
  json out;
  out["devices"] = json::array();
  for (const DeviceResults& d : devices) {
    out["devices"].push_back({{"agent_id", d.agent_id},
                              {"name", d.name},
                              {"run_id", d.run_id},
                              {"emulated", d.emulated},
                              {"emulated_left_out", d.emulated_left_out},
                              {"fingerprint", FingerprintJson(d.fingerprint)},
                              {"fingerprints", d.fingerprints}});
  }
  // The fingerprint fields that differ between the devices (compare lists them).
  std::vector<v1::DeviceFingerprint> sides;
  for (const DeviceResults& d : devices) sides.push_back(d.fingerprint);
  out["fingerprint_differences"] = json::array();
  for (const engine::FingerprintRow& row : engine::DifferingFingerprintFields(sides)) {
    out["fingerprint_differences"].push_back({{"field", row.field}, {"values", row.values}});
  }
  out["workloads"] = json::array();
  for (const WorkloadColumn& w : c.workloads) out["workloads"].push_back({{"key", w.key}, {"label", w.label}});
  out["strategies"] = c.strategies;
  out["cells"] = json::array();
  for (const Cell& cell : c.cells) {
    json values = json::array();
    for (const auto& v : cell.values) {
      if (!v) {
        values.push_back(nullptr);
        continue;
      }
      values.push_back({{"result_id", v->result_id},
                        {"median_ns", Number(v->median_ns)},
                        {"ci_low_ns", v->has_ci() ? Number(v->ci_low_ns) : json(nullptr)},
                        {"ci_high_ns", v->has_ci() ? Number(v->ci_high_ns) : json(nullptr)},
                        {"normalized", Number(v->normalized)},
                        {"fastest", v->fastest},
                        {"contended", v->contended},
                        {"other_cpu_share", Number(v->other_cpu_share)}});
    }
    json ratios = json::array();
    for (const auto& r : cell.ratios) ratios.push_back(RatioJson(r));
    out["cells"].push_back({{"strategy", cell.strategy},
                            {"workload", cell.workload},
                            {"values", values},
                            {"winner", cell.winner},
                            {"no_difference", cell.no_difference},
                            {"verdict", cell.verdict},
                            {"reason", cell.reason},
                            {"ratios", ratios}});
  }
  out["geomean"] = json::array();
  for (const auto& [key, row] : c.geomean) {
    json ratios = json::array();
    for (const auto& r : row) ratios.push_back(RatioJson(r));
    out["geomean"].push_back({{"workload", key}, {"ratios", ratios}});
  }
  json overall = json::array();
  for (const auto& r : c.overall) overall.push_back(RatioJson(r));
  out["overall"] = {{"ratios", overall}};
  return out;
}

json StrategyMapsJson(const std::vector<DeviceResults>& devices) {
  json out = {{"devices", json::array()}, {"crossovers", json::array()}};
  // (group, param, fixed, from, to) -> index into out["crossovers"]
  std::map<std::string, size_t> crossover_index;
  for (const DeviceResults& d : devices) {
    std::vector<fleetmark::v1::CaseResult> results;
    results.reserve(d.results.size());
    for (const store::WebResult& r : d.results) results.push_back(r.result);
    const report::StrategyMap map = report::BuildStrategyMap(results);
    out["devices"].push_back({{"agent_id", d.agent_id},
                              {"name", d.name},
                              {"run_id", d.run_id},
                              {"emulated", d.emulated},
                              {"emulated_left_out", d.emulated_left_out},
                              {"map", report::StrategyMapJson(map)}});
    for (const report::Crossover& c : map.crossovers) {
      json key = report::CrossoverJson(c);
      for (const char* per_device : {"low", "high", "estimate"}) key.erase(per_device);
      auto [it, added] = crossover_index.try_emplace(key.dump(), out["crossovers"].size());
      if (added) {
        key["devices"] = json::array();
        out["crossovers"].push_back(std::move(key));
      }
      out["crossovers"][it->second]["devices"].push_back(
          {{"agent_id", d.agent_id}, {"name", d.name}, {"low", c.low}, {"high", c.high}, {"estimate", c.estimate}});
    }
  }
  return out;
}

}  // namespace fleetmark::http
