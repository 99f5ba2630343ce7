// harness_overhead (issue 13, item 5): fleetmark's own cost on a task, side by side with
// Google Benchmark in one run. For each task body — the bare task (the synthetic
// workload with every parameter 0: Compute returns at once, no wait) and the engine's
// own task bodies (collections, arithmetic) — it prints the ns per task that
//   fleetmark  reports: RunPlan (the engine's real path: a child process per slice,
//              warm-up, timed batches of 100 tasks through `direct`, its stop rule),
//              the median batch / 100; plus, where the engine has one, its own
//              empty-task calibration (CaseResult.harness_ns_per_task);
//   gbench     reports for a loop calling the same Workload::Compute(i) for i in 0..99
//              (benchmark::DoNotOptimize on each value), median of 5 repetitions / 100;
// and the ratio fleetmark / gbench, for wall time and for CPU time (fleetmark: the
// median of its per-repetition process CPU time). A benchmark (ctest label `bench`), not a test: the
// numbers depend on the machine and its load (the load average is printed with them).
//
//   build/release/tests/bench/harness_overhead [--strategy direct] [--seconds 2]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "benchmark/benchmark.h"
#include "engine/child/child.h"
#include "engine/runner/runner.h"
#include "engine/workloads/workload.h"
#include "google/protobuf/text_format.h"

namespace {

constexpr int kTasks = 100;

struct TaskBody {
  std::string name;      // as printed
  std::string workload;  // plan workload
};

const std::vector<TaskBody>& Bodies() {
  static const auto* const bodies = new std::vector<TaskBody>{
      {"bare (empty)", "synthetic"}, {"collections", "collections"}, {"arithmetic", "arithmetic"}};
  return *bodies;
}

// Captures the median aggregate of every benchmark, ns per iteration.
class MedianCapture : public benchmark::ConsoleReporter {
 public:
  MedianCapture() : ConsoleReporter(OO_Tabular) {}
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.run_type == Run::RT_Aggregate && run.aggregate_name == "median") {
        medians_ns[run.run_name.function_name] = run.GetAdjustedRealTime();
        cpu_medians_ns[run.run_name.function_name] = run.GetAdjustedCPUTime();
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }
  std::map<std::string, double> medians_ns;
  std::map<std::string, double> cpu_medians_ns;
};

struct FleetmarkFigures {
  double ns_per_task = 0;
  double cpu_ns_per_task = 0;      // median of the repetitions' process CPU time / tasks
  double harness_ns_per_task = 0;  // 0 where the engine has no calibration
  size_t samples = 0;
};

template <typename Result>
auto HarnessNsPerTask(const Result& r, int) -> decltype(r.harness_ns_per_task()) {
  return r.harness_ns_per_task();
}
template <typename Result>
double HarnessNsPerTask(const Result&, long) {
  return 0;
}

std::map<std::string, FleetmarkFigures> RunFleetmark(const std::string& strategy, double seconds) {
  std::map<std::string, FleetmarkFigures> out;
  for (const TaskBody& body : Bodies()) {
    const std::string text = absl::StrCat(R"pb(name: "harness_overhead"
                                               matrix { strategies { name: ")pb",
                                          strategy, R"pb(" }
                                                         workloads: ")pb",
                                          body.workload, R"pb("
                                                              batch { tasks:)pb",
                                          kTasks, R"pb(}
                                                       }
      measurement {
        warmup_seconds: 0.5
        target_ci_percent: 0.5
        min_repetitions: 200
        max_repetitions: 100000
        max_seconds_per_case: )pb",
                                          seconds, R"pb(
        rounds: 1
        processes: 1
      })pb");
    fleetmark::v1::Plan plan;
    if (!google::protobuf::TextFormat::ParseFromString(text, &plan)) {
      std::fprintf(stderr, "harness_overhead: bad plan\n%s\n", text.c_str());
      std::exit(1);
    }
    fleetmark::v1::CaseResult result;
    absl::StatusOr<fleetmark::engine::RunSummary> summary = fleetmark::engine::RunPlan(
        plan, {}, [&](const fleetmark::v1::CaseResult& r) { result = r; }, nullptr);
    if (!summary.ok() || result.status() != fleetmark::v1::CASE_STATUS_OK) {
      std::fprintf(stderr, "harness_overhead: %s: %s %s\n", body.name.c_str(), summary.status().ToString().c_str(),
                   result.message().c_str());
      std::exit(1);
    }
    std::vector<double> cpu(result.cpu_samples_ns().begin(), result.cpu_samples_ns().end());
    std::sort(cpu.begin(), cpu.end());
    const double cpu_median = cpu.empty() ? 0 : cpu[cpu.size() / 2];
    out[body.name] = {result.stats().median_ns() / kTasks, cpu_median / kTasks, HarnessNsPerTask(result, 0),
                      static_cast<size_t>(result.samples_ns_size())};
  }
  return out;
}

std::string LoadAverage() {
  double load[3] = {0, 0, 0};
  if (getloadavg(load, 3) != 3) return "unknown";
  return absl::StrCat(load[0], " ", load[1], " ", load[2]);
}

}  // namespace

int main(int argc, char** argv) {
  fleetmark::engine::MaybeRunChild(argc, argv);  // the runner's slices re-execute this binary
  std::string strategy = "direct";
  double seconds = 2;
  std::string no_color = "--benchmark_color=false";
  std::vector<char*> gbench_args = {argv[0], no_color.data()};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--strategy" && i + 1 < argc) {
      strategy = argv[++i];
    } else if (arg == "--seconds" && i + 1 < argc) {
      seconds = std::atof(argv[++i]);
    } else {
      gbench_args.push_back(argv[i]);
    }
  }
  std::printf("harness_overhead: load average before: %s\n", LoadAverage().c_str());

  // Google Benchmark on the same task bodies (the Workload objects the engine uses).
  std::vector<std::unique_ptr<fleetmark::engine::Workload>> workloads;
  for (const TaskBody& body : Bodies()) {
    absl::StatusOr<std::unique_ptr<fleetmark::engine::Workload>> w = fleetmark::engine::MakeWorkload(body.workload);
    if (!w.ok()) {
      std::fprintf(stderr, "harness_overhead: %s\n", w.status().ToString().c_str());
      return 1;
    }
    const fleetmark::engine::Workload* raw = w->get();
    workloads.push_back(std::move(*w));
    benchmark::RegisterBenchmark(body.name.c_str(),
                                 [raw](benchmark::State& state) {
                                   for (auto _ : state) {
                                     for (int i = 0; i < kTasks; ++i) benchmark::DoNotOptimize(raw->Compute(i));
                                   }
                                 })
        ->Unit(benchmark::kNanosecond)
        ->Repetitions(5)
        ->ReportAggregatesOnly(true);
  }
  int gbench_argc = static_cast<int>(gbench_args.size());
  benchmark::Initialize(&gbench_argc, gbench_args.data());
  MedianCapture capture;
  benchmark::RunSpecifiedBenchmarks(&capture);

  const std::map<std::string, FleetmarkFigures> fleetmark = RunFleetmark(strategy, seconds);

  std::printf("\nharness_overhead: strategy %s, batches of %d tasks; ns per task (median)\n", strategy.c_str(), kTasks);
  std::printf("%-14s | %10s %10s %8s | %10s %10s %8s | %11s %7s\n", "task", "fm wall", "gb wall", "ratio", "fm cpu",
              "gb cpu", "ratio", "calibration", "fm n");
  auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
  for (const TaskBody& body : Bodies()) {
    const FleetmarkFigures& f = fleetmark.at(body.name);
    const double gb = capture.medians_ns.count(body.name) ? capture.medians_ns.at(body.name) / kTasks : 0;
    const double gb_cpu = capture.cpu_medians_ns.count(body.name) ? capture.cpu_medians_ns.at(body.name) / kTasks : 0;
    const std::string calibration =
        f.harness_ns_per_task > 0 ? absl::StrFormat("%.2f", f.harness_ns_per_task) : std::string("-");
    std::printf("%-14s | %10.2f %10.2f %8.2f | %10.2f %10.2f %8.2f | %11s %7zu\n", body.name.c_str(), f.ns_per_task, gb,
                ratio(f.ns_per_task, gb), f.cpu_ns_per_task, gb_cpu, ratio(f.cpu_ns_per_task, gb_cpu),
                calibration.c_str(), f.samples);
  }
  std::printf(
      "(wall: the reported medians; cpu: process CPU time, which a loaded machine's other work does not\n"
      " inflate; calibration: fleetmark's own empty-task batch through the strategy, per task)\n");
  std::printf("harness_overhead: load average after: %s\n", LoadAverage().c_str());
  return 0;
}
