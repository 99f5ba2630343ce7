#include "engine/report/gbench_json.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/time/time.h"
#include "engine/report/case_names.h"
#include "nlohmann/json.hpp"

namespace fleetmark::report {
namespace {

using Json = nlohmann::ordered_json;
using fleetmark::v1::CaseResult;

// ns per unit of each Google Benchmark time unit.
double NanosPerUnit(const std::string& unit) {
  if (unit == "us") return 1e3;
  if (unit == "ms") return 1e6;
  if (unit == "s") return 1e9;
  return 1.0;
}

// Google Benchmark's cache type words: "Data", "Instruction", "Unified".
std::string CacheType(const std::string& type) {
  std::string word = absl::AsciiStrToLower(type);
  if (!word.empty()) word[0] = absl::ascii_toupper(word[0]);
  return word.empty() ? "Unified" : word;
}

Json Context(const fleetmark::v1::RunReport& report, const GbenchOptions& options) {
  const auto& host = report.host();
  Json context = Json::object();
  context["date"] = absl::FormatTime("%Y-%m-%dT%H:%M:%S+00:00", options.now, absl::UTCTimeZone());
  context["host_name"] = host.hostname();
  context["executable"] = options.executable;
  context["num_cpus"] = host.logical_cpus();  // min(allowed, ceil(CPU quota))
  if (host.has_limits()) {
    context["fleetmark_allowed_cpus"] = host.limits().allowed_cpus();
    context["fleetmark_machine_cpus"] = host.limits().machine_cpus();
    if (host.limits().cpu_quota() > 0) context["fleetmark_cpu_quota"] = host.limits().cpu_quota();
  }
  uint64_t max_khz = 0;
  for (const auto& kind : host.core_kinds()) max_khz = std::max(max_khz, kind.max_frequency_khz());
  for (const auto& kind : host.core_classes()) max_khz = std::max(max_khz, kind.max_frequency_khz());
  context["mhz_per_cpu"] = max_khz / 1000;
  context["cpu_scaling_enabled"] = !host.governor().empty() && host.governor() != "performance";
  Json caches = Json::array();
  std::set<std::tuple<uint32_t, std::string, uint64_t>> seen;
  for (const auto& cache : host.caches()) {
    if (!seen.insert({cache.level(), cache.type(), cache.size_bytes()}).second) continue;
    caches.push_back({{"type", CacheType(cache.type())},
                      {"level", cache.level()},
                      {"size", cache.size_bytes()},
                      {"num_sharing", std::max<size_t>(1, cache.cpus_size())}});
  }
  context["caches"] = caches;
  for (const CaseResult& r : report.results()) {
    if (r.has_env_before()) {
      // fleetmark records the 1-minute load average only.
      context["load_avg"] = Json::array({r.env_before().load_average_1m()});
      break;
    }
  }
  // Emulated results (qemu-user) measure the emulator, not the hardware: say so where
  // compare.py's users look first (Google Benchmark ignores keys it does not know).
  bool emulated = host.emulated();
  for (const CaseResult& r : report.results()) emulated = emulated || r.emulated();
  context["fleetmark_emulated"] = emulated;
  if (emulated && !host.emulation_evidence().empty()) {
    context["fleetmark_emulation_evidence"] = host.emulation_evidence();
  }
  context["library_build_type"] = "release";
  context["fleetmark_plan"] = report.plan_name();
  if (!host.cpu_model().empty()) context["fleetmark_cpu_model"] = host.cpu_model();
  return context;
}

// The fields every entry of one case shares, in Google Benchmark's order.
Json EntryHead(const std::string& name, const std::string& run_name, int family_index, const char* run_type,
               int64_t repetitions, int threads) {
  Json e = Json::object();
  e["name"] = name;
  e["family_index"] = family_index;
  e["per_family_instance_index"] = 0;
  e["run_name"] = run_name;
  e["run_type"] = run_type;
  e["repetitions"] = repetitions;
  e["threads"] = threads;
  return e;
}

struct SampleSummary {
  double mean, median, stddev;  // stddev: sample (n - 1)
};

SampleSummary Summarize(std::vector<double> sorted) {
  const auto n = static_cast<int64_t>(sorted.size());
  if (n == 0) return {0, 0, 0};
  std::sort(sorted.begin(), sorted.end());
  double mean = 0;
  for (double x : sorted) mean += x / static_cast<double>(n);
  double ss = 0;
  for (double x : sorted) ss += (x - mean) * (x - mean);
  return {mean, n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2,
          n > 1 ? std::sqrt(ss / static_cast<double>(n - 1)) : 0.0};
}

}  // namespace

std::string FormatGbenchJson(const fleetmark::v1::RunReport& report, const GbenchOptions& options) {
  const std::string unit = NanosPerUnit(options.time_unit) == 1.0 ? "ns" : options.time_unit;
  const double per_unit = NanosPerUnit(unit);
  Json benchmarks = Json::array();
  int family = 0;
  for (const CaseResult& r : report.results()) {
    const std::string name = CaseKey(r.spec());
    const int threads = std::max<int>(1, static_cast<int>(r.threads_used()));
    // Every entry of an emulated case carries Google Benchmark's own "label" field
    // ("emulated") and fleetmark_emulated: true.
    auto push = [&benchmarks, &r](Json e) {
      if (r.emulated()) {
        e["label"] = "emulated";
        e["fleetmark_emulated"] = true;
      }
      benchmarks.push_back(std::move(e));
    };
    if (r.status() != fleetmark::v1::CASE_STATUS_OK || r.samples_ns_size() == 0) {
      // No times to report: say why in Google Benchmark's own error fields (what it
      // writes for a benchmark that called SkipWithError), so no case goes missing.
      Json e = EntryHead(name, name, family++, "iteration", 1, threads);
      e["repetition_index"] = 0;
      e["error_occurred"] = true;
      e["error_message"] = r.status() == fleetmark::v1::CASE_STATUS_OK
                               ? r.spec().scenario() + " case: no per-repetition times (see --format json or csv)"
                               : StatusWord(r.status()) + (r.message().empty() ? "" : ": " + r.message());
      e["iterations"] = 0;
      e["real_time"] = 0.0;
      e["cpu_time"] = 0.0;
      e["time_unit"] = unit;
      push(std::move(e));
      continue;
    }
    const int64_t n = r.samples_ns_size();
    const auto& c = r.counters();
    const double cpu_ns = c.repetitions() > 0 ? (c.cpu_user_seconds() + c.cpu_system_seconds()) * 1e9 /
                                                    static_cast<double>(c.repetitions())
                                              : 0.0;
    // Aggregates from the samples themselves (the case's Statistics may be absent).
    const SampleSummary real = Summarize({r.samples_ns().begin(), r.samples_ns().end()});
    const double mean = real.mean, median = real.median, stddev = real.stddev;
    // CPU per repetition when it was measured per repetition; else only its mean.
    const bool per_rep_cpu = r.cpu_samples_ns_size() == n;
    SampleSummary cpu{cpu_ns, cpu_ns, 0.0};
    if (per_rep_cpu) cpu = Summarize({r.cpu_samples_ns().begin(), r.cpu_samples_ns().end()});

    // Without a per-repetition CPU time there are no iteration entries (compare.py needs
    // cpu_time in each): only the aggregates, so its U test is not run on one CPU value
    // copied n times as if it were n measurements.
    if (options.per_sample_entries && per_rep_cpu) {
      for (int64_t i = 0; i < n; ++i) {
        Json e = EntryHead(name, name, family, "iteration", n, threads);
        e["repetition_index"] = i;
        e["iterations"] = 1;
        e["real_time"] = static_cast<double>(r.samples_ns(i)) / per_unit;
        e["cpu_time"] = static_cast<double>(r.cpu_samples_ns(i)) / per_unit;
        e["time_unit"] = unit;
        push(std::move(e));
      }
    }
    struct Aggregate {
      const char* name;
      double real_ns;
      double cpu_ns;
      bool percentage;
    };
    const Aggregate aggregates[] = {
        {"mean", mean, cpu.mean, false},
        {"median", median, cpu.median, false},
        {"stddev", stddev, cpu.stddev, false},
        {"cv", mean > 0 ? stddev / mean : 0.0, cpu.mean > 0 ? cpu.stddev / cpu.mean : 0.0, true},
    };
    for (const Aggregate& a : aggregates) {
      Json e = EntryHead(name + "_" + a.name, name, family, "aggregate", n, threads);
      e["aggregate_name"] = a.name;
      e["aggregate_unit"] = a.percentage ? "percentage" : "time";
      e["iterations"] = n;
      e["real_time"] = a.percentage ? a.real_ns : a.real_ns / per_unit;
      e["cpu_time"] = a.percentage ? a.cpu_ns : a.cpu_ns / per_unit;
      e["time_unit"] = unit;
      // measurement.processes >= 2: each process's median (in time_unit) and sample
      // count, in run order, and the between-process share of the variance.
      if (r.process_medians_ns_size() >= 2) {
        Json medians = Json::array();
        for (double m : r.process_medians_ns()) medians.push_back(m / per_unit);
        e["fleetmark_process_medians"] = std::move(medians);
        Json counts = Json::array();
        for (uint32_t count : r.process_sample_counts()) counts.push_back(count);
        e["fleetmark_process_sample_counts"] = std::move(counts);
        e["fleetmark_between_process_share"] = r.between_process_share();
      }
      // The stationarity check's verdict (engine/measure/stop_rule.h).
      if (r.unstable()) e["fleetmark_unstable"] = true;
      if (r.transient_samples() > 0) e["fleetmark_transient_samples"] = r.transient_samples();
      // The harness's own cost per task (in time_unit) and its share of the median.
      if (r.harness_ns_per_task() > 0) {
        e["fleetmark_harness_per_task"] = r.harness_ns_per_task() / per_unit;
        e["fleetmark_harness_share"] = r.harness_share();
        if (r.harness_heavy()) e["fleetmark_harness_heavy"] = true;
      }
      push(std::move(e));
    }
    ++family;
  }
  Json doc = Json::object();
  doc["context"] = Context(report, options);
  doc["benchmarks"] = std::move(benchmarks);
  return doc.dump(2) + "\n";
}

}  // namespace fleetmark::report
