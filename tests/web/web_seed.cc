// web_seed: fills a fresh fleetmark database with a small, deterministic fleet for the
// web view's browser and API tests, through the coordinator's Store (the same path
// agents' results take). Prints a JSON manifest to stdout: agent ids, run ids and the
// seeded medians, from which the tests derive what the pages must show.
//
//   web_seed --database_uri=postgresql://.../fleetmark_web_123 [--import_laptop] > manifest.json
//
// Devices: an x86 host (SMT, P/E cores), a phone (big/mid/LITTLE) and an ARM board
// whose name and labels are hostile HTML. Runs: a batch study on all three, a memory
// run, a load run, a sweep of the synthetic workload (the strategy map), 14 nightly runs
// (with a step in one case's median at night 8, and the calibration block: the host's
// drifts on the last night, so it ends quarantined) and a run still in progress. With
// --import_laptop also a laptop without an agent whose results file is imported as
// `fleetmark results import` imports it: an imported run under an imported device record.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "coordinator/store/store.h"
#include "engine/common/status_macros.h"
#include "engine/report/json.h"
#include "engine/report/results_document.h"
#include "engine/topology/fingerprint.h"

ABSL_FLAG(std::string, database_uri, "", "PostgreSQL URI of the (fresh) database to seed");
ABSL_FLAG(bool, import_laptop, false,
          "also import a laptop's results file as `fleetmark results import` does (manifest: imported_run_id, "
          "imported_device)");

namespace {

using fleetmark::store::Store;
using nlohmann::json;
namespace v1 = fleetmark::v1;

constexpr char kHostileName[] = "<img src=x onerror=alert(1)>";

struct Device {
  std::string name;
  std::string agent_id;
  double scale;       // multiplies the reference medians
  v1::HostInfo host;  // its results' device fingerprint unless a result has its own
};

std::string ResultId(int n) { return absl::StrFormat("%08x-5eed-4000-8000-%012x", n, n); }

// Deterministic noise in [-1, 1].
double Noise(int seed) { return std::sin(seed * 12.9898) * 0.5 + std::sin(seed * 78.233) * 0.5; }

v1::HostInfo Host(const std::string& arch, const std::string& cpu, int cores, int threads, bool smt,
                  const std::vector<std::tuple<std::string, int, int, uint64_t, std::string>>& kinds,
                  uint64_t memory_gib, const std::string& model) {
  v1::HostInfo host;
  host.set_hostname(model);
  host.set_arch(arch);
  host.set_cpu_model(cpu);
  host.set_physical_cores(cores);
  host.set_logical_cpus(threads);
  host.set_smt(smt);
  host.set_memory_bytes(memory_gib << 30);
  host.set_os(arch == "x86_64" ? "Debian GNU/Linux 12 (bookworm)" : "Android 14");
  host.set_kernel(arch == "x86_64" ? "6.1.0-18-amd64" : "6.1.0-18-android14");
  host.set_governor("schedutil");
  host.set_device_model(model);
  uint32_t cpu_id = 0;
  for (const auto& [name, n, tpc, khz, uarch] : kinds) {
    v1::CoreKind* kind = host.add_core_classes();
    kind->set_name(name);
    kind->set_cores(n);
    kind->set_threads_per_core(tpc);
    kind->set_max_frequency_khz(khz);
    kind->set_microarchitecture(uarch);
    for (int i = 0; i < n * tpc; ++i) {
      kind->add_machine_cpus(cpu_id);
      kind->add_cpus(cpu_id++);
    }
  }
  return host;
}

// `host` in a cpuset of its first core class only (a container pinned to the P-cores):
// the other classes keep their machine CPUs and have none allowed, as DetectHost
// reports them (engine/topology/host.cc KeepUsable).
v1::HostInfo InFirstClassCpuset(v1::HostInfo host) {
  const uint32_t machine = host.logical_cpus();
  for (int k = 1; k < host.core_classes_size(); ++k) {
    v1::CoreKind* kind = host.mutable_core_classes(k);
    kind->clear_cpus();
    kind->set_cores(0);
    kind->set_threads_per_core(0);
  }
  const v1::CoreKind& first = host.core_classes(0);
  host.set_logical_cpus(static_cast<uint32_t>(first.cpus_size()));
  v1::ResourceLimits* limits = host.mutable_limits();
  limits->set_machine_cpus(machine);
  limits->set_allowed_cpus(static_cast<uint32_t>(first.cpus_size()));
  limits->set_effective_cpus(static_cast<uint32_t>(first.cpus_size()));
  limits->mutable_allowed_cpu_ids()->CopyFrom(first.cpus());
  limits->set_cpuset_source("/sys/fs/cgroup/cpuset.cpus.effective");
  return host;
}

// A timed batch result with 40 samples around `median_ns`, a ±`ci_percent` CI and three
// process medians.
v1::CaseResult BatchResult(int id, const std::string& strategy, const std::string& workload, double median_ns,
                           double ci_percent) {
  v1::CaseResult r;
  r.set_result_id(ResultId(id));
  v1::CaseSpec* spec = r.mutable_spec();
  spec->mutable_strategy()->set_name(strategy);
  spec->set_workload(workload);
  spec->set_io_mode("blocking");
  spec->set_scenario("batch");
  spec->set_placement("any");
  spec->mutable_batch()->set_tasks(100);
  spec->set_case_id(absl::StrFormat("batch/%s/blocking/%s/any", workload, strategy));
  r.set_status(v1::CASE_STATUS_OK);
  r.set_stop_reason(v1::STOP_REASON_CI_TARGET);
  // The conditions at the case's start and end (the Run page's conditions table).
  for (v1::EnvSnapshot* env : {r.mutable_env_before(), r.mutable_env_after()}) {
    const bool end = env == r.mutable_env_after();
    env->set_battery_level_percent(end ? 79 : 80);
    env->set_battery_charging(true);
    env->set_free_memory_bytes(uint64_t{end ? 5900u : 6000u} << 20);
    env->set_load_average_1m(end ? 0.75 : 0.5);
    env->set_governor("schedutil");
    // No thermal zone seeded: a temperature gate at the start passed unchecked.
    if (!end) {
      env->add_gates_not_checked(
          "temperature: no thermal zone or battery gave a plausible reading, max 45 °C not checked");
    }
  }
  std::vector<double> samples;
  for (int k = 0; k < 40; ++k) {
    const double v = median_ns * (1 + 0.04 * Noise(id * 100 + k)) + (k == 7 ? median_ns * 0.3 : 0);
    samples.push_back(v);
    r.add_samples_ns(static_cast<int64_t>(v));
  }
  double sum = 0, lo = samples[0], hi = samples[0];
  for (double v : samples) sum += v, lo = std::min(lo, v), hi = std::max(hi, v);
  const double mean = sum / samples.size();
  double var = 0;
  for (double v : samples) var += (v - mean) * (v - mean);
  v1::Statistics* s = r.mutable_stats();
  s->set_count(samples.size());
  s->set_min_ns(lo);
  s->set_max_ns(hi);
  s->set_mean_ns(mean);
  s->set_stddev_ns(std::sqrt(var / (samples.size() - 1)));
  s->set_median_ns(median_ns);
  s->set_mad_ns(median_ns * 0.02);
  s->set_ci_low_ns(median_ns * (1 - ci_percent / 100));
  s->set_ci_high_ns(median_ns * (1 + ci_percent / 100));
  s->set_ci_half_width_percent(ci_percent);
  s->set_outliers(1);
  // Three processes at m(1 - ci), m, m(1 + ci): every result drifts alike over the
  // rounds (the verdict's paired ratios are the medians' ratios), the device spread ≈ ci.
  for (double f : {-1.0, 0.0, 1.0}) r.add_process_medians_ns(median_ns * (1 + f * ci_percent / 100));
  v1::Counters* c = r.mutable_counters();
  c->set_cpu_user_seconds(median_ns * 40 / 1e9);
  c->set_cpu_system_seconds(median_ns * 4 / 1e9);
  c->set_voluntary_context_switches(120);
  c->set_involuntary_context_switches(7);
  c->set_allocations(strategy == "direct" ? 0 : 210);
  c->set_allocated_bytes(strategy == "direct" ? 0 : 16384);
  c->set_peak_threads(strategy == "direct" ? 1 : 9);
  c->set_repetitions(40);
  if (strategy == "single_thread") {
    // 60 leading repetitions dropped as transient (not in the samples): the counters
    // cover all 100, so CPU per repetition divides by 100 (the CLI's rule), not by 40.
    r.set_transient_samples(60);
    c->set_repetitions(100);
    c->set_cpu_user_seconds(c->cpu_user_seconds() * 2.5);
    c->set_cpu_system_seconds(c->cpu_system_seconds() * 2.5);
  }
  r.set_threads_used(strategy == "direct" || strategy == "single_thread" ? 1 : 8);
  return r;
}

// Runs a whole job of `device` in `run` through the store, as an agent would.
absl::Status RunJob(Store& store, const v1::RunInfo& run, const Device& device, std::vector<v1::CaseResult> results,
                    bool finish) {
  std::string job_id;
  for (const auto& job : run.jobs()) {
    if (job.agent_name() == device.name) job_id = job.job_id();
  }
  if (job_id.empty()) return absl::NotFoundError("seed: no job for " + device.name);
  FLEETMARK_ASSIGN_OR_RETURN(auto claimed, store.ClaimJobs({device.agent_id}, absl::Hours(24)));
  if (claimed.empty()) return absl::InternalError("seed: could not claim a job for " + device.name);
  FLEETMARK_RETURN_IF_ERROR(store.MarkJobRunning(job_id, device.agent_id, absl::Hours(24)));
  std::vector<Store::AgentResult> batch;
  for (v1::CaseResult& r : results) {
    r.set_run_id(run.run_id());
    r.set_job_id(job_id);
    if (!r.has_fingerprint()) *r.mutable_fingerprint() = fleetmark::engine::DeviceFingerprintOf(device.host);
    batch.push_back({device.agent_id, &r});
  }
  FLEETMARK_ASSIGN_OR_RETURN(auto outcomes, store.InsertResults(batch));
  for (const auto& o : outcomes) {
    if (!o.stored) return absl::InternalError("seed: result " + o.result_id + " not stored: " + o.message);
  }
  const uint32_t total = finish ? results.size() : results.size() * 3;
  FLEETMARK_RETURN_IF_ERROR(store.UpdateJobProgress(job_id, device.agent_id, results.size(), total, absl::Hours(24)));
  if (finish)
    FLEETMARK_RETURN_IF_ERROR(
        store.FinishJob(job_id, device.agent_id, {.ok = true, .cancelled = false, .message = ""}));
  return absl::OkStatus();
}

absl::StatusOr<v1::RunInfo> NewRun(Store& store, const std::string& plan, const std::string& by,
                                   const std::vector<Device*>& devices, uint32_t cases) {
  fleetmark::store::NewRun run;
  run.plan.set_name(plan);
  run.submitted_by = by;
  for (const Device* d : devices) run.agent_ids.push_back(d->agent_id);
  run.cases_total = cases;
  return store.CreateRun(run);
}

// --import_laptop: a laptop with no agent measured a plan with `fleetmark run --format
// json` 30 days ago; its results file (report::FormatResultsJson of the local run's
// document, with the run's times) is read back as the CLI reads it
// (report::ParseResultsJson) and stored as the coordinator stores `results import`'s
// request (Store::ImportResults, the rules of coordinator/store/result_import.h): one run
// marked imported under a new device record, "dev-laptop-imported".
absl::Status ImportLaptop(Store& store, int* id, json* manifest) {
  v1::RunReport report;
  report.set_plan_name("laptop-sweep");
  v1::HostInfo host = Host("x86_64", "AMD Ryzen 7 7840U", 8, 16, true, {{"performance", 8, 2, 5100000, "Zen4"}}, 32,
                           "Framework Laptop 13");
  host.set_hostname("dev-laptop");  // its device's name in the file
  *report.mutable_host() = host;
  *report.mutable_fingerprint() = fleetmark::engine::DeviceFingerprintOf(host);
  for (const auto& [strategy, median] :
       std::vector<std::pair<std::string, double>>{{"direct", 8e3}, {"fixed_pool", 80e3}, {"work_stealing", 75e3}}) {
    v1::CaseResult r = BatchResult((*id)++, strategy, "arithmetic", median, 1.5);
    *r.mutable_fingerprint() = report.fingerprint();
    *report.add_results() = std::move(r);
  }
  v1::ResultsDocument local = fleetmark::report::LocalResultsDocument(report);
  const absl::Time measured = absl::Now() - absl::Hours(24 * 30);
  local.mutable_run()->set_created_unix_ns(absl::ToUnixNanos(measured));
  local.mutable_run()->set_finished_unix_ns(absl::ToUnixNanos(measured + absl::Minutes(5)));
  FLEETMARK_ASSIGN_OR_RETURN(const std::string file, fleetmark::report::FormatResultsJson(local));
  FLEETMARK_ASSIGN_OR_RETURN(const v1::ResultsDocument document, fleetmark::report::ParseResultsJson(file));
  FLEETMARK_ASSIGN_OR_RETURN(const fleetmark::store::ImportOutcome outcome,
                             store.ImportResults(document, "import:alice"));
  if (outcome.run_id.empty() || outcome.devices.size() != 1 || outcome.devices[0].matched) {
    return absl::InternalError("seed: the laptop's file was not imported under a device record of its own");
  }
  (*manifest)["imported_run_id"] = outcome.run_id;
  (*manifest)["imported_device"] = {{"name", outcome.devices[0].agent_name}, {"agent_id", outcome.devices[0].agent_id}};
  return absl::OkStatus();
}

absl::Status Seed(const std::string& uri, bool import_laptop) {
  fleetmark::store::StoreOptions options;
  options.connection.uri = uri;
  FLEETMARK_ASSIGN_OR_RETURN(std::unique_ptr<Store> store, Store::Open(options));
  FLEETMARK_RETURN_IF_ERROR(store->Migrate());

  std::vector<Device> devices = {{"x86-host", "", 1.0}, {"pixel-8", "", 2.5}, {kHostileName, "", 4.0}};
  std::vector<v1::HostInfo> hosts = {
      InFirstClassCpuset(Host("x86_64", "Intel(R) Core(TM) i7-12700H", 14, 20, true,
                              {{"performance", 6, 2, 4700000, "IntelCore"}, {"efficiency", 8, 1, 3500000, "IntelAtom"}},
                              32, "ThinkPad X1")),
      Host("aarch64", "Google Tensor G3", 9, 9, false,
           {{"performance", 1, 1, 2910000, "Cortex-X3"},
            {"mid", 4, 1, 2370000, "Cortex-A715"},
            {"efficiency", 4, 1, 1700000, "Cortex-A510"}},
           8, "Pixel 8"),
      Host("aarch64", "<b>Cortex</b> \"A76\" & <script>alert(3)</script>", 4, 4, false,
           {{"performance", 4, 1, 2400000, "Cortex-A76"}}, 8, "Raspberry Pi 5"),
  };
  json manifest;
  for (size_t i = 0; i < devices.size(); ++i) {
    fleetmark::store::AgentRegistration reg;
    reg.name = devices[i].name;
    reg.credential_sha256 = std::string(64, 'a' + i);
    reg.host = hosts[i];
    devices[i].host = hosts[i];
    reg.labels = {{"site", i == 2 ? "<script>alert(2)</script>" : "lab"}, {"tier", i == 0 ? "x86" : "arm"}};
    // A zero-width space (Unicode Cf) the page must show escaped, as the CLI prints it.
    if (i == 2) reg.labels["note"] = "zero\u200bwidth";
    reg.engine_version = "0.1.0";
    FLEETMARK_ASSIGN_OR_RETURN(devices[i].agent_id, store->RegisterAgent(reg));
    manifest["agents"].push_back({{"name", devices[i].name}, {"agent_id", devices[i].agent_id}});
  }
  Device& x86 = devices[0];
  Device& phone = devices[1];
  Device& board = devices[2];

  // 1. The batch study on every device. Reference medians (ns) per workload and
  // strategy; the phone's single_thread/storage is within the CIs of the host's
  // (a "no difference" cell), everything else scales by the device's factor.
  const std::vector<std::string> strategies = {"direct",        "single_thread", "fixed_pool",
                                               "work_stealing", "coroutine",     "fiber"};
  const std::map<std::string, std::vector<double>> reference = {
      {"arithmetic", {9e3, 640e3, 95e3, 88e3, 120e3, 150e3}},
      {"collections", {2.1e6, 2.6e6, 0.61e6, 0.42e6, 0.7e6, 0.8e6}},
      {"storage", {110e6, 112e6, 9.8e6, 10.4e6, 11.5e6, 12.2e6}},
  };
  int id = 1;
  FLEETMARK_ASSIGN_OR_RETURN(v1::RunInfo study,
                             NewRun(*store, "s1-frameworks", "cli:alice", {&x86, &phone, &board}, 18));
  json medians;
  for (Device* d : {&x86, &phone, &board}) {
    std::vector<v1::CaseResult> results;
    for (const auto& [workload, values] : reference) {
      for (size_t s = 0; s < strategies.size(); ++s) {
        double median = values[s] * d->scale;
        if (d == &phone && workload == "storage" && strategies[s] == "single_thread") median = values[s] * 1.005;
        results.push_back(BatchResult(id++, strategies[s], workload, median, 1.5));
        medians[d->agent_id][results.back().spec().case_id()] = {{"median_ns", median},
                                                                 {"ci_low_ns", results.back().stats().ci_low_ns()},
                                                                 {"ci_high_ns", results.back().stats().ci_high_ns()},
                                                                 {"strategy", strategies[s]},
                                                                 {"workload", workload}};
      }
    }
    FLEETMARK_RETURN_IF_ERROR(RunJob(*store, study, *d, results, true));
  }
  manifest["study_run_id"] = study.run_id();
  manifest["medians"] = medians;

  // 2. Memory: RSS vs live tasks (KiB per task: threads ≈ 64/40, fibres 12/9, coroutines 1.6/1.1).
  FLEETMARK_ASSIGN_OR_RETURN(v1::RunInfo memory_run, NewRun(*store, "s2-memory", "cli:bob", {&x86, &phone}, 4));
  const std::vector<std::pair<std::string, double>> slopes = {
      {"thread_per_task", 64}, {"fixed_pool", 62}, {"fiber", 12}, {"coroutine", 1.6}};
  for (Device* d : {&x86, &phone}) {
    std::vector<v1::CaseResult> results;
    for (const auto& [strategy, slope_kib] : slopes) {
      const double slope = d == &phone ? slope_kib * 0.65 : slope_kib;
      v1::CaseResult r;
      r.set_result_id(ResultId(id++));
      r.mutable_spec()->mutable_strategy()->set_name(strategy);
      r.mutable_spec()->set_scenario("memory");
      r.mutable_spec()->set_workload("network");
      r.mutable_spec()->set_io_mode(strategy == "fiber" || strategy == "coroutine" ? "suspending" : "blocking");
      r.mutable_spec()->set_placement("any");
      r.mutable_spec()->set_case_id(absl::StrFormat("memory/network/%s/%s/any", r.spec().io_mode(), strategy));
      r.set_status(v1::CASE_STATUS_OK);
      // The phone's fixed pool ran out of memory at its last point: the case is resource
      // exhausted, its slope fitted on the 4 points that ran (the web says which was left out).
      const bool exhausted = d == &phone && strategy == "fixed_pool";
      v1::MemoryResult* m = r.mutable_memory();
      for (uint32_t tasks : {1u, 10u, 100u, 1000u, 10000u}) {
        v1::MemoryPoint* p = m->add_points();
        p->set_tasks(tasks);
        p->set_baseline_rss_bytes(6 << 20);
        if (exhausted && tasks == 10000) {
          p->set_status(v1::CASE_STATUS_RESOURCE_EXHAUSTED);
          p->set_message("std::thread: Resource temporarily unavailable");
          continue;
        }
        p->set_rss_bytes((6 << 20) +
                         static_cast<uint64_t>((180 + slope * tasks * (1 + 0.02 * Noise(id + tasks))) * 1024));
        p->set_status(v1::CASE_STATUS_OK);
      }
      if (exhausted) {
        r.set_status(v1::CASE_STATUS_RESOURCE_EXHAUSTED);
        r.set_message("10000 tasks: std::thread: Resource temporarily unavailable");
        m->add_left_out_tasks(10000);
      }
      m->set_points_fitted(exhausted ? 4 : 5);
      m->set_slope_kib_per_task(slope);
      m->set_intercept_kib(180);
      m->set_r_squared(0.998);
      results.push_back(r);
    }
    FLEETMARK_RETURN_IF_ERROR(RunJob(*store, memory_run, *d, results, true));
  }
  manifest["memory_run_id"] = memory_run.run_id();

  // 3. Load: latency percentiles and throughput vs users.
  FLEETMARK_ASSIGN_OR_RETURN(v1::RunInfo load_run, NewRun(*store, "s3-load", "cli:carol", {&x86}, 9));
  {
    std::vector<v1::CaseResult> results;
    const std::vector<std::pair<std::string, double>> servers = {
        {"fixed_pool", 1.0}, {"coroutine", 0.45}, {"event_loop", 0.33}};
    for (const auto& [strategy, cost] : servers) {
      for (uint32_t users : {100u, 1000u, 5000u}) {
        v1::CaseResult r;
        r.set_result_id(ResultId(id++));
        r.mutable_spec()->mutable_strategy()->set_name(strategy);
        r.mutable_spec()->set_scenario("load");
        r.mutable_spec()->set_placement("any");
        r.mutable_spec()->mutable_load()->set_users(users);
        r.mutable_spec()->set_case_id(absl::StrFormat("load/-/-/%s/any/users=%d", strategy, users));
        r.set_status(v1::CASE_STATUS_OK);
        v1::LoadResult* l = r.mutable_load();
        const double saturation = std::max(1.0, users * cost / 1200.0);
        l->set_users(users);
        l->set_throughput_rps(users / 0.5 / saturation);
        l->set_latency_p50_ms(2 * saturation);
        l->set_latency_p95_ms(6 * saturation * saturation);
        l->set_latency_p99_ms(11 * saturation * saturation);
        l->set_latency_mean_ms(2.5 * saturation);
        l->set_latency_max_ms(25 * saturation * saturation);
        l->set_requests(users * 30);
        // Threads: one per user for the pool server, a few for the others; RSS grows with them.
        l->set_peak_threads(strategy == "fixed_pool" ? std::min(users, 1000u) + 4 : 6);
        l->set_peak_rss_bytes((uint64_t{12} << 20) + uint64_t{users} * (strategy == "fixed_pool" ? 72 : 9) * 1024);
        results.push_back(r);
      }
    }
    FLEETMARK_RETURN_IF_ERROR(RunJob(*store, load_run, x86, results, true));
  }
  manifest["load_run_id"] = load_run.run_id();

  // 3b. A sweep of the synthetic workload's wait (the strategy map): a CPU-sized and an
  // IO-sized pool and `direct` at wait_us 10, 100, 1000, 10000. The IO-sized pool overtakes
  // the CPU-sized one between 100 and 1000 us on the host, between 1000 and 10000 on the
  // phone; on the phone at 10 us `direct` and the CPU-sized pool are 1.01x apart
  // (undecided); on the host `direct` at 10000 us is contended and 1.33x the IO-sized
  // pool, which the other work can explain (undecided too).
  FLEETMARK_ASSIGN_OR_RETURN(v1::RunInfo sweep_run, NewRun(*store, "crossover", "cli:dave", {&x86, &phone}, 12));
  {
    const std::vector<uint32_t> waits = {10, 100, 1000, 10000};
    // median (us) per wait: fixed_pool_cpu, fixed_pool_io, direct
    const std::map<std::string, std::vector<std::vector<double>>> medians_us = {
        {"x86-host", {{20, 30, 90}, {60, 90, 900}, {900, 400, 9000}, {9000, 1500, 2000}}},
        {"pixel-8", {{50, 80, 50.5}, {150, 220, 1800}, {1400, 2000, 18000}, {25000, 6000, 180000}}},
    };
    const std::vector<std::pair<std::string, uint32_t>> pools = {
        {"fixed_pool_cpu", 8}, {"fixed_pool_io", 64}, {"direct", 0}};
    for (Device* d : {&x86, &phone}) {
      std::vector<v1::CaseResult> results;
      for (size_t w = 0; w < waits.size(); ++w) {
        for (size_t k = 0; k < pools.size(); ++k) {
          const std::string name = k == 2 ? "direct" : "fixed_pool";
          v1::CaseResult r = BatchResult(id++, name, "synthetic", medians_us.at(d->name)[w][k] * 1e3, 1.5);
          v1::CaseSpec* spec = r.mutable_spec();
          if (k < 2) {
            spec->mutable_strategy()->set_label(pools[k].first);
            spec->mutable_strategy()->set_threads(pools[k].second);
          }
          spec->mutable_synthetic()->set_cpu_ns(1000);
          spec->mutable_synthetic()->set_wait_us(waits[w]);
          spec->add_swept("wait_us");
          spec->set_case_id(
              absl::StrFormat("batch/synthetic[cpu_ns=1000,wait_us=%d]/blocking/%s/any", waits[w], pools[k].first));
          if (d == &x86 && waits[w] == 10000 && k == 2) {
            // Other work took 40 % of the host's CPU while `direct` ran at 10000 us: the
            // case is contended and only 1.33x the leader, within the 1 / (1 - 0.4) that
            // work can explain, so the point stays undecided and the pages mark it.
            r.set_contended(true);
            r.set_other_cpu_share(0.4);
            manifest["contended_result_id"] = r.result_id();
            manifest["contended_case_id"] = spec->case_id();
          }
          results.push_back(r);
        }
      }
      FLEETMARK_RETURN_IF_ERROR(RunJob(*store, sweep_run, *d, results, true));
    }
  }
  manifest["sweep_run_id"] = sweep_run.run_id();

  // 4. Nightly runs: batch/arithmetic/blocking/fixed_pool/any gets 30% slower on the
  // host from night 8 on; the phone gets a kernel update at night 10 that makes it 25%
  // slower: a fingerprint event that starts a new segment, not a change point.
  v1::HostInfo updated_phone = phone.host;
  updated_phone.set_kernel("6.1.0-21-android14");
  const v1::DeviceFingerprint updated_fingerprint = fleetmark::engine::DeviceFingerprintOf(updated_phone);
  json nightly = json::array();
  for (int night = 0; night < 14; ++night) {
    FLEETMARK_ASSIGN_OR_RETURN(v1::RunInfo run, NewRun(*store, "nightly", "schedule:nightly", {&x86, &phone}, 5));
    for (Device* d : {&x86, &phone}) {
      double base = 95e3 * d->scale * (1 + 0.01 * Noise(night * 7 + (d == &x86)));
      if (d == &x86 && night >= 8) base *= 1.3;
      if (d == &phone && night >= 10) base *= 1.25;
      std::vector<v1::CaseResult> results = {BatchResult(id++, "fixed_pool", "arithmetic", base, 1.0),
                                             BatchResult(id++, "direct", "arithmetic", 9e3 * d->scale, 1.0)};
      // The calibration block (plans/nightly.txtpb): about 1 % noise on both; the
      // host's drifts 40 % slower on the last night, which quarantines it.
      const std::vector<std::pair<std::string, double>> calibration = {
          {"direct", 8e3}, {"single_thread", 60e3}, {"fixed_pool", 30e3}};
      for (size_t c = 0; c < calibration.size(); ++c) {
        double median = calibration[c].second * d->scale * (1 + 0.01 * Noise(night * 31 + c * 5 + (d == &x86)));
        if (d == &x86 && night == 13) median *= 1.4;
        v1::CaseResult r = BatchResult(id++, calibration[c].first, "arithmetic", median, 1.0);
        r.mutable_spec()->mutable_strategy()->set_label("calibration_" + calibration[c].first);
        r.mutable_spec()->set_case_id(
            absl::StrFormat("batch/arithmetic/blocking/calibration_%s/any", calibration[c].first));
        results.push_back(std::move(r));
      }
      if (d == &phone && night >= 10) {
        for (v1::CaseResult& r : results) *r.mutable_fingerprint() = updated_fingerprint;
      }
      FLEETMARK_RETURN_IF_ERROR(RunJob(*store, run, *d, std::move(results), true));
    }
    nightly.push_back({{"run_id", run.run_id()}, {"days_ago", 14 - night}});
  }
  manifest["nightly"] = nightly;
  manifest["history_case_id"] = "batch/arithmetic/blocking/fixed_pool/any";
  manifest["history_change_index"] = 8;
  manifest["fingerprint_change_index"] = 10;
  manifest["fingerprint_change_text"] = "kernel 6.1.0-18-android14 → 6.1.0-21-android14";
  manifest["quarantined_agent"] = x86.name;
  manifest["quiet_agent"] = phone.name;

  // 5. Fan-out (S4) on the board (before its live run below: one job at a time per agent): the scenario's own metrics
  // (total time, timeouts, p99, peak threads), one case exhausted its threads and one is unsupported: the Run page
  // shows them as the CLI's fan-out table does, not as a timed batch (median 0).
  FLEETMARK_ASSIGN_OR_RETURN(v1::RunInfo fanout_run, NewRun(*store, "s4-fanout", "cli:erin", {&board}, 3));
  {
    std::vector<v1::CaseResult> results;
    struct FanoutCase {
      std::string strategy;
      v1::CaseStatus status;
      double total_ms;
      uint64_t timeouts;
      double p99_ms;
      uint32_t peak_threads;
    };
    for (const FanoutCase& f : {FanoutCase{"fiber", v1::CASE_STATUS_OK, 1512.5, 0, 1504.0, 6},
                                FanoutCase{"fixed_pool", v1::CASE_STATUS_OK, 4630.0, 12, 3001.0, 104},
                                FanoutCase{"thread_per_task", v1::CASE_STATUS_RESOURCE_EXHAUSTED, 0, 0, 0, 0}}) {
      v1::CaseResult r;
      r.set_result_id(ResultId(id++));
      r.mutable_spec()->mutable_strategy()->set_name(f.strategy);
      r.mutable_spec()->mutable_strategy()->set_threads(f.strategy == "fixed_pool" ? 100 : 0);
      r.mutable_spec()->set_scenario("fanout");
      r.mutable_spec()->set_workload("network");
      r.mutable_spec()->set_io_mode(f.strategy == "fiber" ? "suspending" : "blocking");
      r.mutable_spec()->set_placement("any");
      r.mutable_spec()->mutable_fanout()->set_requests(1000);
      r.mutable_spec()->mutable_fanout()->set_calls_per_request(3);
      r.mutable_spec()->set_case_id(
          absl::StrFormat("fanout/network/%s/%s/any/R1000_D3", r.spec().io_mode(), f.strategy));
      r.set_status(f.status);
      if (f.status != v1::CASE_STATUS_OK) {
        r.set_message("thread creation failed after 31000 threads: Resource temporarily unavailable");
      } else {
        r.set_threads_used(f.strategy == "fixed_pool" ? 48 : 2);  // the pool reached 48 of 100
        v1::FanoutResult* out = r.mutable_fanout();
        out->set_total_ms(f.total_ms);
        out->set_successes(1000 - f.timeouts);
        out->set_timeouts(f.timeouts);
        out->set_latency_p50_ms(f.p99_ms * 0.9);
        out->set_latency_p99_ms(f.p99_ms);
        out->set_peak_threads(f.peak_threads);
        out->set_peak_rss_bytes(uint64_t{40} << 20);
      }
      results.push_back(r);
    }
    manifest["fanout_result_ids"] = {results[0].result_id(), results[1].result_id(), results[2].result_id()};
    FLEETMARK_RETURN_IF_ERROR(RunJob(*store, fanout_run, board, results, true));
  }
  manifest["fanout_run_id"] = fanout_run.run_id();

  // 6. Schedules: a paused one with a case filter, and an active one running every case.
  {
    v1::Schedule paused;
    paused.set_name("weekly-fanout");
    paused.set_cron("0 3 * * 0");
    paused.mutable_plan()->set_name("s4-fanout");
    paused.set_selector("arch=aarch64");
    paused.set_filter("^fanout/");
    paused.set_quick(true);
    FLEETMARK_RETURN_IF_ERROR(store->CreateSchedule(paused, absl::Now() + absl::Hours(24 * 5)).status());
    FLEETMARK_RETURN_IF_ERROR(store->SetSchedulePaused("weekly-fanout", true));
    v1::Schedule active;
    active.set_name("yearly-s1");
    active.set_cron("0 3 1 1 *");
    active.mutable_plan()->set_name("s1-frameworks");
    FLEETMARK_RETURN_IF_ERROR(store->CreateSchedule(active, absl::Now() + absl::Hours(24 * 30)).status());
  }

  // 7. Two runs whose ids share their first 8 characters (no jobs): the prefix "abcdef01"
  // is ambiguous, "abcdef01-1" names one of them.
  {
    pqxx::connection conn(uri);
    pqxx::work txn(conn);
    for (const char* run_id : {"abcdef01-1111-4111-8111-111111111111", "abcdef01-2222-4222-8222-222222222222"}) {
      txn.exec_params(
          "INSERT INTO runs (run_id, plan_id, plan_name, status, submitted_by) SELECT $1::uuid, plan_id, plan_name, "
          "'done', 'cli:frank' FROM runs WHERE run_id = $2::uuid",
          std::string(run_id), fanout_run.run_id());
    }
    // yearly-s1 last fired the fan-out run (the Runs page links it from "last fire").
    txn.exec_params(
        "INSERT INTO schedule_fires (schedule_id, slot, run_id) SELECT schedule_id, now() - interval '1 day', "
        "$1::uuid FROM schedules WHERE name = 'yearly-s1'",
        fanout_run.run_id());
    txn.commit();
  }
  manifest["yearly_fire_run_id"] = fanout_run.run_id();
  manifest["ambiguous_prefix"] = "abcdef01";
  manifest["ambiguous_run_ids"] = {"abcdef01-1111-4111-8111-111111111111", "abcdef01-2222-4222-8222-222222222222"};

  // 8. A run still in progress on the board.
  // Its third case is unsupported: no samples, no statistics, no counters (the Run page
  // shows "–" in their cells, never "0 – 0").
  FLEETMARK_ASSIGN_OR_RETURN(v1::RunInfo live, NewRun(*store, "s1-frameworks", "cli:alice", {&board}, 18));
  v1::CaseResult unsupported = BatchResult(id++, "single_thread", "arithmetic", 0, 0);
  unsupported.set_status(v1::CASE_STATUS_UNSUPPORTED);
  unsupported.set_message("no suspending wait");
  unsupported.set_stop_reason(v1::STOP_REASON_UNSPECIFIED);
  unsupported.clear_samples_ns();
  unsupported.clear_stats();
  unsupported.clear_counters();
  FLEETMARK_RETURN_IF_ERROR(RunJob(*store, live, board,
                                   {BatchResult(id++, "direct", "arithmetic", 36e3, 1.5),
                                    BatchResult(id++, "fixed_pool", "arithmetic", 380e3, 1.5), unsupported},
                                   false));
  manifest["live_run_id"] = live.run_id();
  manifest["unsupported_result_id"] = unsupported.result_id();
  manifest["hostile_name"] = kHostileName;
  if (import_laptop) FLEETMARK_RETURN_IF_ERROR(ImportLaptop(*store, &id, &manifest));
  std::cout << manifest.dump(2) << std::endl;
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const std::string uri = absl::GetFlag(FLAGS_database_uri);
  if (uri.empty()) {
    std::cerr << "web_seed: --database_uri is required\n";
    return 2;
  }
  absl::Status status = Seed(uri, absl::GetFlag(FLAGS_import_laptop));
  if (!status.ok()) {
    std::cerr << "web_seed: " << status << "\n";
    return 1;
  }
  return 0;
}
