// Parent side of the memory scenario: one child process per point, then the fit.
#include "engine/scenarios/memory_scenario.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/common/status_macros.h"
#include "engine/child/child.h"
#include "engine/scenarios/case_status.h"
#include "engine/scenarios/least_squares.h"
#include "engine/scenarios/params.h"
#include "engine/scenarios/resource_limits.h"
#include "engine/strategies/executors/os_thread.h"
#include "engine/strategies/limits.h"
#include "engine/strategies/registry.h"

namespace fleetmark::engine {
namespace {

bool UsesThreadPerTask(std::string_view name) {
  const StrategyTraits* strategy = FindStrategy(name);
  return strategy != nullptr && IsMemoryThreadPerTask(*strategy);
}

// Fewer OK points than this make a line that fits exactly (R^2 = 1 by construction).
constexpr size_t kMinFitPoints = 3;

// A conservative guess of the memory N tasks need, for the fit check before the point:
// a thread costs its touched stack plus ~32 KiB (kernel stack, TLS, descriptor, page
// tables); a fibre its touched stack plus ~16 KiB; a coroutine or callback ~1 KiB.
uint64_t EstimateBytes(std::string_view strategy, uint32_t n, const MemoryConfig& config) {
  const uint64_t touched = uint64_t{config.touch_stack_kib} * 1024;
  uint64_t per_task = 1024;
  if (UsesThreadPerTask(strategy)) per_task = touched + 32 * 1024;
  if (const StrategyTraits* s = FindStrategy(strategy); s != nullptr && s->carrier == Carrier::kFiber) {
    per_task = touched + 16 * 1024;
  }
  return per_task * n;
}

v1::MemoryPoint SkippedPoint(uint32_t n, const absl::Status& why) {
  v1::MemoryPoint point;
  point.set_tasks(n);
  point.set_status(v1::CASE_STATUS_RESOURCE_EXHAUSTED);
  point.set_message(absl::StrCat("skipped: ", why.message()));
  return point;
}

// Runs one point in a child. Never fails: errors become the point's status.
v1::MemoryPoint RunPoint(const v1::CaseSpec& spec, uint32_t n, const MemoryConfig& config, const ScenarioContext& ctx) {
  const std::string& name = spec.strategy().name();
  const StrategyTraits* strategy = FindStrategy(name);
  if (strategy != nullptr && strategy->carrier == Carrier::kPool && n > static_cast<uint32_t>(kMaxThreads)) {
    return SkippedPoint(n, absl::ResourceExhaustedError(absl::StrCat(name, " is sized N per point and holds at most ",
                                                                     kMaxThreads, " threads")));
  }
  if (UsesThreadPerTask(name)) {
    if (absl::Status fits = CheckThreadsFit(n); !fits.ok()) return SkippedPoint(n, fits);
  }
  if (absl::Status fits = CheckMemoryFits(EstimateBytes(name, n, config), config.max_memory_bytes); !fits.ok()) {
    return SkippedPoint(n, fits);
  }
  v1::CaseSpec request = spec;
  request.mutable_memory()->clear_task_counts();
  request.mutable_memory()->add_task_counts(n);
  absl::StatusOr<std::string> response =
      RunInChild(kMemoryPointChildKind, request.SerializeAsString(),
                 {.executable = ctx.child_executable, .timeout = config.point_timeout, .cancelled = ctx.cancelled});
  v1::MemoryPoint point;
  if (!response.ok()) {
    point.set_tasks(n);
    point.set_status(CaseStatusForError(response.status()));
    point.set_message(ChildErrorMessage(response.status()));
    return point;
  }
  if (!point.ParseFromString(*response)) {
    point.set_tasks(n);
    point.set_status(v1::CASE_STATUS_FAILED);
    point.set_message("child process: response is not a MemoryPoint");
  }
  return point;
}

}  // namespace

bool IsMemoryThreadPerTask(const StrategyTraits& strategy) {
  return strategy.carrier == Carrier::kThreadPerTask ||
         (strategy.carrier == Carrier::kPool && !strategy.ignores_threads);
}

void FitMemoryPoints(bool thread_per_task, v1::MemoryResult* memory, v1::CaseResult* result) {
  std::vector<double> x, rss_kib, pss_kib, uss_kib, kernel_kib, total_kib;
  std::vector<std::string> problems;
  std::vector<std::string> notes;  // measurement caveats of the fit
  v1::CaseStatus first_problem = v1::CASE_STATUS_OK;
  memory->clear_left_out_tasks();
  for (const v1::MemoryPoint& point : memory->points()) {
    const uint32_t n = point.tasks();
    if (point.status() != v1::CASE_STATUS_OK) {
      if (first_problem == v1::CASE_STATUS_OK) first_problem = point.status();
      problems.push_back(absl::StrCat("N=", n, ": ", point.message()));
      memory->add_left_out_tasks(n);
      continue;
    }
    x.push_back(n);
    const double base = static_cast<double>(point.baseline_rss_bytes());
    rss_kib.push_back((static_cast<double>(point.rss_bytes()) - base) / 1024);
    // KernelStack is system-wide: other processes' thread churn moves it. Only a
    // thread per task adds kernel stacks, and N new threads never remove any, so a
    // negative delta is noise (counted as 0); for fibres, coroutines and callbacks it
    // is noise only and left out.
    double kernel = 0;
    if (thread_per_task) {
      kernel = static_cast<double>(point.kernel_stack_delta_bytes()) / 1024;
      if (kernel < 0) {
        notes.push_back(
            absl::StrCat("N=", n, ": kernel-stack delta ", kernel, " KiB < 0 (system-wide noise), counted as 0"));
        kernel = 0;
      }
    }
    kernel_kib.push_back(kernel);
    total_kib.push_back(rss_kib.back() + kernel);
    if (point.pss_bytes() != 0) {
      pss_kib.push_back(static_cast<double>(point.pss_bytes()) / 1024);
      uss_kib.push_back(static_cast<double>(point.uss_bytes()) / 1024);
    }
  }
  if (absl::StatusOr<LineFit> fit = FitLine(x, rss_kib); fit.ok()) {
    memory->set_slope_kib_per_task(fit->slope);
    memory->set_intercept_kib(fit->intercept);
    memory->set_r_squared(fit->r_squared);
    memory->set_points_fitted(fit->points);
    if (memory->left_out_tasks_size() > 0) {
      notes.push_back(absl::StrCat("slope fitted on the ", fit->points,
                                   " points that ran, without N=", absl::StrJoin(memory->left_out_tasks(), ", N=")));
    }
    if (static_cast<size_t>(fit->points) < kMinFitPoints) {
      notes.push_back(absl::StrCat("only ", fit->points,
                                   " points fitted: R^2 = 1 by "
                                   "construction, the slope is unchecked"));
    }
    if (fit->slope < 0) {
      notes.push_back(absl::StrCat("RSS slope ", fit->slope,
                                   " KiB/task < 0: noise exceeds "
                                   "the per-task cost at these task counts; use larger ones"));
    }
  } else if (problems.empty()) {
    problems.push_back(absl::StrCat("no slope: ", fit.status().message()));
    first_problem = v1::CASE_STATUS_FAILED;
  }
  if (absl::StatusOr<LineFit> fit = FitLine(x, kernel_kib); fit.ok()) {
    memory->set_kernel_stack_slope_kib_per_task(fit->slope);
  }
  if (absl::StatusOr<LineFit> fit = FitLine(x, total_kib); fit.ok()) {
    memory->set_total_slope_kib_per_task(fit->slope);
  }
  if (pss_kib.size() == x.size()) {
    if (absl::StatusOr<LineFit> fit = FitLine(x, pss_kib); fit.ok()) {
      memory->set_pss_slope_kib_per_task(fit->slope);
    }
    if (absl::StatusOr<LineFit> fit = FitLine(x, uss_kib); fit.ok()) {
      memory->set_uss_slope_kib_per_task(fit->slope);
    }
  }
  result->set_status(first_problem);
  problems.insert(problems.end(), notes.begin(), notes.end());
  result->set_message(absl::StrJoin(problems, "; "));
}

absl::Status RunMemoryCase(const v1::CaseSpec& spec, const ScenarioContext& ctx, v1::CaseResult* result) {
  FLEETMARK_ASSIGN_OR_RETURN(MemoryConfig config, ResolveMemoryConfig(spec));
  v1::MemoryResult* memory = result->mutable_memory();
  const TaskStack stack = DescribeTaskStack(spec.strategy().name(), config.stack_kib);
  memory->set_stack_kib(stack.kib);
  memory->set_stack_source(stack.source);

  uint32_t largest_ok = 0;
  for (uint32_t n : config.task_counts) {
    if (ctx.cancelled != nullptr && ctx.cancelled->load()) {
      result->set_status(v1::CASE_STATUS_CANCELLED);
      result->set_message("cancelled");
      return absl::OkStatus();
    }
    v1::MemoryPoint point = RunPoint(spec, n, config, ctx);
    if (point.status() == v1::CASE_STATUS_UNSUPPORTED || point.status() == v1::CASE_STATUS_CANCELLED) {
      // Same answer for every N (the strategy cannot do it) or the job was cancelled.
      result->set_status(point.status());
      result->set_message(point.message());
      *memory->add_points() = point;
      return absl::OkStatus();
    }
    if (point.status() == v1::CASE_STATUS_OK) largest_ok = std::max(largest_ok, n);
    *memory->add_points() = point;
  }
  // Threads: one per task for thread strategies (at the largest OK point), else the
  // carrier threads the fibres/coroutines/callbacks ran on.
  const bool thread_per_task = UsesThreadPerTask(spec.strategy().name());
  if (thread_per_task) {
    result->set_threads_used(largest_ok);
  } else {
    result->set_threads_used(config.threads > 0 ? static_cast<uint32_t>(config.threads)
                                                : static_cast<uint32_t>(LogicalCpuCount()));
  }
  FitMemoryPoints(thread_per_task, memory, result);
  return absl::OkStatus();
}

}  // namespace fleetmark::engine
