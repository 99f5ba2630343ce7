// A RunReport with every kind of row the formatters must handle, for the report tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/report/case_names.h"
#include "fleetmark/v1/result.pb.h"

namespace fleetmark::report::testing {

// A batch case with samples `base_ns`·(1 + small spread), statistics filled from
// hand-set values (median = base_ns), counters for `reps` repetitions.
inline fleetmark::v1::CaseResult BatchCase(const std::string& strategy, uint32_t threads, const std::string& workload,
                                           int64_t base_ns, int reps = 10) {
  fleetmark::v1::CaseResult r;
  r.set_result_id("id-" + strategy + "-" + workload);
  auto* spec = r.mutable_spec();
  spec->mutable_strategy()->set_name(strategy);
  spec->mutable_strategy()->set_threads(threads);
  spec->set_workload(workload);
  spec->set_io_mode("blocking");
  spec->set_scenario("batch");
  spec->set_placement("any");
  spec->mutable_batch()->set_tasks(100);
  spec->set_case_id("batch/" + workload + "/blocking/" + strategy + "/any");
  r.set_status(fleetmark::v1::CASE_STATUS_OK);
  r.set_stop_reason(fleetmark::v1::STOP_REASON_CI_TARGET);
  for (int i = 0; i < reps; ++i) r.add_samples_ns(base_ns + (i % 3) * base_ns / 100);
  // CPU per repetition: 0.6 of its wall time (user 0.5 + system 0.1, as the counters).
  for (int i = 0; i < reps; ++i) r.add_cpu_samples_ns(r.samples_ns(i) * 6 / 10);
  auto* st = r.mutable_stats();
  st->set_count(reps);
  st->set_min_ns(static_cast<double>(base_ns));
  st->set_median_ns(static_cast<double>(base_ns));
  st->set_max_ns(base_ns * 1.02);
  st->set_mean_ns(base_ns * 1.01);
  st->set_stddev_ns(base_ns * 0.008);
  st->set_mad_ns(base_ns * 0.01);
  st->set_ci_low_ns(base_ns * 0.99);
  st->set_ci_high_ns(base_ns * 1.01);
  st->set_ci_half_width_percent(1.0);
  auto* c = r.mutable_counters();
  c->set_cpu_user_seconds(0.5e-9 * static_cast<double>(base_ns) * reps);
  c->set_cpu_system_seconds(0.1e-9 * static_cast<double>(base_ns) * reps);
  c->set_allocations(250);
  c->set_allocated_bytes(8000);
  c->set_allocations_counted(true);
  c->set_repetitions(reps);
  c->set_peak_threads(threads + 1);
  r.set_threads_used(threads);
  r.set_engine_version("0.1.0");
  r.mutable_env_before()->set_load_average_1m(0.5);
  return r;
}

inline fleetmark::v1::RunReport SampleReport() {
  fleetmark::v1::RunReport report;
  report.set_plan_name("s1-test");
  auto* host = report.mutable_host();
  host->set_hostname("testhost");
  host->set_cpu_model("Test CPU @ 3.0GHz");
  host->set_logical_cpus(2);
  host->set_governor("schedutil");
  auto* kind = host->add_core_kinds();
  kind->set_name("performance");
  kind->set_max_frequency_khz(3000000);
  auto* l1 = host->add_caches();
  l1->set_level(1);
  l1->set_type("data");
  l1->set_size_bytes(32768);
  l1->add_cpus(0);
  auto* l1b = host->add_caches();  // second instance of the same cache
  *l1b = *l1;
  l1b->set_cpus(0, 1);

  // arithmetic: direct fastest (2 µs), fixed_pool 2× (4 µs), a capped throttled
  // work_stealing, an unsupported fiber.
  *report.add_results() = BatchCase("fixed_pool", 2, "arithmetic", 4000);
  *report.add_results() = BatchCase("direct", 0, "arithmetic", 2000);
  auto ws = BatchCase("work_stealing", 2, "arithmetic", 3000);
  ws.set_stop_reason(fleetmark::v1::STOP_REASON_MAX_REPETITIONS);
  ws.set_throttled(true);
  ws.mutable_counters()->set_allocations_counted(false);
  ws.mutable_counters()->set_allocations(0);
  *report.add_results() = ws;
  fleetmark::v1::CaseResult fiber;
  fiber.mutable_spec()->CopyFrom(BatchCase("fiber", 1, "arithmetic", 1).spec());
  fiber.set_status(fleetmark::v1::CASE_STATUS_UNSUPPORTED);
  fiber.set_message("no blocking wait, \"suspending\" only");
  *report.add_results() = fiber;
  // storage, milliseconds.
  *report.add_results() = BatchCase("fixed_pool", 100, "storage", 12'500'000);
  auto labelled = BatchCase("fixed_pool", 2, "storage", 250'000'000);
  labelled.mutable_spec()->mutable_strategy()->set_label("fixed_pool_cpu, small");
  labelled.mutable_spec()->set_case_id("batch/storage/blocking/fixed_pool_cpu/any");
  *report.add_results() = labelled;

  // memory
  fleetmark::v1::CaseResult threads_mem;
  threads_mem.mutable_spec()->set_scenario("memory");
  threads_mem.mutable_spec()->set_workload("network");
  threads_mem.mutable_spec()->mutable_strategy()->set_name("thread_per_task");
  threads_mem.set_status(fleetmark::v1::CASE_STATUS_OK);
  auto* m = threads_mem.mutable_memory();
  for (uint32_t n : {10u, 100u, 1000u}) {
    auto* p = m->add_points();
    p->set_tasks(n);
    p->set_baseline_rss_bytes(4u << 20);
    p->set_rss_bytes((4u << 20) + n * 64 * 1024);
    p->set_status(fleetmark::v1::CASE_STATUS_OK);
  }
  m->set_slope_kib_per_task(64);
  m->set_r_squared(0.999);
  m->set_total_slope_kib_per_task(80);
  m->set_stack_source("pthread_attr_setstacksize 64 KiB");
  *report.add_results() = threads_mem;
  fleetmark::v1::CaseResult fiber_mem = threads_mem;
  fiber_mem.mutable_spec()->mutable_strategy()->set_name("fiber");
  fiber_mem.mutable_memory()->set_slope_kib_per_task(8);
  fiber_mem.mutable_memory()->mutable_points(2)->set_status(fleetmark::v1::CASE_STATUS_RESOURCE_EXHAUSTED);
  *report.add_results() = fiber_mem;

  // fanout
  fleetmark::v1::CaseResult fan;
  fan.mutable_spec()->set_scenario("fanout");
  fan.mutable_spec()->mutable_strategy()->set_name("coroutine");
  fan.mutable_spec()->mutable_fanout()->set_requests(100);
  fan.mutable_spec()->mutable_fanout()->set_calls_per_request(5);
  fan.set_status(fleetmark::v1::CASE_STATUS_OK);
  fan.mutable_fanout()->set_total_ms(2512.5);
  fan.mutable_fanout()->set_successes(495);
  fan.mutable_fanout()->set_timeouts(5);
  fan.mutable_fanout()->set_latency_p50_ms(2500);
  fan.mutable_fanout()->set_latency_p99_ms(3000);
  fan.mutable_fanout()->set_executor("coroutines on 2 threads");
  *report.add_results() = fan;

  // load
  fleetmark::v1::CaseResult load;
  load.mutable_spec()->set_scenario("load");
  load.mutable_spec()->mutable_strategy()->set_name("event_loop");
  load.mutable_spec()->mutable_load()->set_users(1000);
  load.set_status(fleetmark::v1::CASE_STATUS_OK);
  auto* l = load.mutable_load();
  l->set_throughput_rps(1834.25);
  l->set_latency_mean_ms(12.5);
  l->set_latency_p50_ms(10);
  l->set_latency_p95_ms(30);
  l->set_latency_p99_ms(45);
  l->set_latency_p999_ms(80);
  l->set_errors_timeout(3);
  l->set_errors_refused(1);
  l->set_peak_rss_bytes(300u << 20);
  l->set_server_threads(4);
  l->set_generator_cpu_percent(12.4);
  *report.add_results() = load;
  // Every result names its case, as every result fleetmark writes does (a results file
  // without is refused: results_check.h): the scenario cases by the key the table shows.
  for (fleetmark::v1::CaseResult& r : *report.mutable_results()) {
    if (r.spec().case_id().empty()) r.mutable_spec()->set_case_id(fleetmark::report::CaseKey(r.spec()));
  }
  return report;
}

}  // namespace fleetmark::report::testing
