#include "engine/runner/batch_slice.h"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <memory>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/common/status_macros.h"
#include "engine/measure/counter_collector.h"
#include "engine/measure/statistics.h"
#include "engine/measure/stop_rule.h"
#include "engine/plan/cost.h"
#include "engine/plan/plan.h"
#include "engine/child/child.h"
#include "engine/runner/runner.h"
#include "engine/runner/this_host.h"
#include "engine/strategies/registry.h"
#include "engine/strategies/strategy.h"
#include "engine/topology/placement.h"
#include "engine/workloads/workload.h"

namespace fleetmark::engine {
namespace {

using Clock = std::chrono::steady_clock;

// CPU time of the whole process (every thread, user + system), ns; -1 if unavailable.
int64_t ProcessCpuNanos() {
  timespec ts{};
  if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return -1;
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

runner::SliceResponse FailedSlice(const absl::Status& status) {
  runner::SliceResponse response;
  response.set_status(CaseStatusFor(status));
  response.set_message(std::string(status.message()));
  return response;
}

absl::StatusOr<std::unique_ptr<Strategy>> StartStrategy(const v1::StrategySpec& spec, const StrategyOptions& options) {
  FLEETMARK_ASSIGN_OR_RETURN(std::unique_ptr<Strategy> strategy, MakeStrategy(spec.name()));
  FLEETMARK_RETURN_IF_ERROR(strategy->Start(options));
  return strategy;
}

RepetitionHook& TestRepetitionHook() {
  static RepetitionHook hook = nullptr;
  return hook;
}

RepetitionHook& TimedTestRepetitionHook() {
  static RepetitionHook hook = nullptr;
  return hook;
}

// "1.20 ms -> 2.00 ms": the halves' medians of a drift.
std::string DriftText(const DriftCheck& drift) {
  return absl::StrCat(absl::FormatDuration(absl::Nanoseconds(std::llround(drift.first_median_ns))), " -> ",
                      absl::FormatDuration(absl::Nanoseconds(std::llround(drift.second_median_ns))));
}

// Re-checks the stop rule every `CheckStride(n)` repetitions: each check sorts all n
// samples, so checking after every repetition of a microsecond case would cost more than
// the case; about 50 checks per doubling keeps the overshoot below ~2% of n.
size_t CheckStride(size_t n) { return std::max<size_t>(1, n / 50); }

class SliceRunner {
 public:
  SliceRunner(const runner::SliceRequest& request, const std::atomic<bool>* cancelled)
      : request_(request), spec_(request.spec()), cancelled_(cancelled) {}

  runner::SliceResponse Run() {
    absl::Status status = Prepare();
    if (!status.ok()) return FailedSlice(status);
    status = Measure();
    if (strategy_ != nullptr) {
      response_.set_threads_used(static_cast<uint32_t>(strategy_->threads_used()));
      response_.set_peak_in_flight(
          std::max<uint32_t>(response_.peak_in_flight(), static_cast<uint32_t>(strategy_->peak_in_flight())));
      strategy_->Stop();
    }
    for (int cpu : hooks_->CpusSeen()) response_.add_cpus_used(static_cast<uint32_t>(cpu));
    if (status.ok() && !hooks_->status().ok()) status = hooks_->status();
    if (status.ok() && caller_affinity_ && !caller_affinity_->status().ok()) {
      status = caller_affinity_->status();
    }
    if (!status.ok()) {
      response_.set_status(IsPlacementUnsupported(status) ? v1::CASE_STATUS_UNSUPPORTED : CaseStatusFor(status));
      response_.set_message(std::string(status.message()));
    } else {
      response_.set_status(v1::CASE_STATUS_OK);
    }
    return std::move(response_);
  }

 private:
  bool Cancelled() const { return cancelled_ != nullptr && cancelled_->load(); }

  absl::Status Prepare() {
    FLEETMARK_ASSIGN_OR_RETURN(workload_, MakeWorkload(spec_.workload(), spec_.synthetic()));
    response_.set_synthetic_ns_per_iteration(workload_->calibration_ns_per_iteration());
    FLEETMARK_ASSIGN_OR_RETURN(io_mode_, ParseIoMode(spec_.io_mode()));
    FLEETMARK_ASSIGN_OR_RETURN(PlacementSpec placement, ParsePlacement(spec_.placement()));
    CpuSet cpus;
    if (placement.kind != PlacementKind::kAny) {
      FLEETMARK_ASSIGN_OR_RETURN(cpus,
                                 PlanPlacement(placement, ThisHost(), static_cast<int>(spec_.strategy().threads())));
    }
    hooks_ = std::make_unique<PlacementHooks>(cpus);
    options_.threads = static_cast<int>(spec_.strategy().threads());
    options_.stack_kib = static_cast<int>(spec_.strategy().stack_kib());
    options_.limit = static_cast<int>(spec_.strategy().limit());
    hooks_->Install(options_);
    // A strategy running tasks on the caller (direct) runs them on this thread, which
    // no on_thread_start hook sees.
    const StrategyTraits* traits = FindStrategy(spec_.strategy().name());
    if (!cpus.empty() && traits != nullptr && traits->carrier == Carrier::kCaller) {
      caller_affinity_.emplace(cpus);
      FLEETMARK_RETURN_IF_ERROR(caller_affinity_->status());
    }
    tasks_ =
        spec_.batch().tasks() == 0 ? static_cast<int>(kDefaultBatchTasks) : static_cast<int>(spec_.batch().tasks());
    if (!request_.include_setup()) {
      FLEETMARK_ASSIGN_OR_RETURN(strategy_, StartStrategy(spec_.strategy(), options_));
    }
    return absl::OkStatus();
  }

  void RunTestHook() const {
    if (RepetitionHook hook = TestRepetitionHook(); hook != nullptr) hook(spec_);
  }
  void RunTimedTestHook() const {
    if (RepetitionHook hook = TimedTestRepetitionHook(); hook != nullptr) hook(spec_);
  }

  // One repetition: the batch (plus construction and teardown with include_setup).
  absl::Status RunOnce() { return RunOnce(*workload_); }
  absl::Status RunOnce(const Workload& workload) {
    if (!request_.include_setup()) return strategy_->RunBatch(workload, tasks_, io_mode_);
    FLEETMARK_ASSIGN_OR_RETURN(std::unique_ptr<Strategy> s, StartStrategy(spec_.strategy(), options_));
    absl::Status status = s->RunBatch(workload, tasks_, io_mode_);
    response_.set_threads_used(static_cast<uint32_t>(s->threads_used()));
    response_.set_peak_in_flight(
        std::max<uint32_t>(response_.peak_in_flight(), static_cast<uint32_t>(s->peak_in_flight())));
    s->Stop();
    return status;
  }

  // The empty-task calibration (issue 13, item 5; Google Benchmark and JMH calibrate
  // their harness the same way): batches of MakeEmptyWorkload's task through the case's
  // strategy, threads and placement hooks, timed exactly as a repetition is, after the
  // warm-up (warm threads) and outside the counters. At least kMinCalibrationBatches
  // batches, more until kCalibrationTasks tasks ran or kMaxCalibrationSeconds passed.
  // Sets harness_ns_per_task = median batch / tasks: the same statistic as the case's own
  // median, so the share compares like with like. (The fastest batch, kept until
  // session 13, was biased low against a median: a 20-task batch handed to one pool
  // thread has a bimodal hand-off, a worker still spinning or one woken by a futex, and
  // the floor of 100 empty batches caught the first while the case's median paid the
  // second; a few-ns task then showed a 4.6 % "share".) A failing empty batch leaves it 0
  // (not calibrated; the case's own repetitions report the failure); only a
  // cancellation is returned.
  // kMinCalibrationBatches, kCalibrationTasks, kMaxCalibrationSeconds: engine/plan/cost.h
  // (the cost estimate charges them too).
  absl::Status Calibrate() {
    const std::unique_ptr<Workload> empty = MakeEmptyWorkload();
    std::vector<double> batch_ns;
    const Clock::time_point start = Clock::now();
    while (static_cast<int>(batch_ns.size()) < kMinCalibrationBatches ||
           (static_cast<int64_t>(batch_ns.size()) * tasks_ < kCalibrationTasks &&
            std::chrono::duration<double>(Clock::now() - start).count() < kMaxCalibrationSeconds)) {
      if (Cancelled()) return absl::CancelledError("cancelled during the harness calibration");
      const Clock::time_point t0 = Clock::now();
      const absl::Status status = RunOnce(*empty);
      const Clock::time_point t1 = Clock::now();
      if (!status.ok()) return absl::OkStatus();
      batch_ns.push_back(static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count()));
    }
    if (tasks_ > 0) response_.set_harness_ns_per_task(Median(batch_ns) / tasks_);
    return absl::OkStatus();
  }

  // DeadlineExceeded (and response_.repetition_overrun) when one repetition of `took`
  // is above the request's bound: a repetition cannot be interrupted, so the slice stops
  // after it rather than start another.
  absl::Status CheckRepetitionBound(Clock::duration took, const char* phase) {
    const double seconds = std::chrono::duration<double>(took).count();
    const double bound = request_.repetition_bound_seconds();
    if (bound <= 0 || seconds <= bound) return absl::OkStatus();
    response_.set_repetition_overrun(true);
    return absl::DeadlineExceededError(absl::StrCat(
        "one repetition (", phase, ") took ", absl::FormatDuration(absl::Milliseconds(std::llround(seconds * 1e3))),
        ", more than the ", absl::FormatDuration(absl::Seconds(bound)), " bound on one repetition"));
  }

  absl::Status Measure() {
    // Time-based warm-up (at least one batch, which also surfaces `unsupported` early).
    const Clock::time_point warm_end = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                          std::chrono::duration<double>(request_.warmup_seconds()));
    do {
      if (Cancelled()) return absl::CancelledError("cancelled during warm-up");
      RunTestHook();
      const Clock::time_point w0 = Clock::now();
      FLEETMARK_RETURN_IF_ERROR(RunOnce());
      FLEETMARK_RETURN_IF_ERROR(CheckRepetitionBound(Clock::now() - w0, "warm-up"));
    } while (Clock::now() < warm_end);
    if (absl::Status calibrated = Calibrate(); absl::IsCancelled(calibrated)) return calibrated;
    hooks_->ResetSeen();

    // The slice is one process of the case: it stops on its own samples' CI (a
    // within-process target; the interval over processes is the runner's) or its quota.
    std::vector<int64_t> samples;
    StopRuleOptions rule;
    rule.target_ci_percent = request_.target_ci_percent();
    rule.min_repetitions = request_.min_samples();
    rule.min_time = absl::Seconds(request_.min_seconds());
    rule.max_repetitions = std::numeric_limits<int64_t>::max();
    rule.max_time = absl::InfiniteDuration();
    const uint32_t quota = std::max<uint32_t>(1, request_.max_repetitions());
    // Room for the whole quota now, so recording a sample never allocates while the
    // counters run (capped: a time-limited slice rarely takes a million samples).
    samples.reserve(std::min<size_t>(quota, size_t{1} << 20));

    std::vector<int64_t> cpu_samples;
    cpu_samples.reserve(std::min<size_t>(quota, size_t{1} << 20));
    CounterCollector collector;
    const absl::Status counters_started = collector.Begin();
    const Clock::time_point start = Clock::now();
    Clock::time_point settled_start = start;  // from the first sample kept after a transient
    uint64_t transient = 0;                   // leading samples dropped as a transient phase
    size_t next_check = 1;
    absl::Status status;
    while (true) {
      if (Cancelled()) {
        status = absl::CancelledError("cancelled");
        break;
      }
      RunTestHook();                           // outside the timed span
      const int64_t cpu0 = ProcessCpuNanos();  // outside the wall-time span
      const Clock::time_point t0 = Clock::now();
      RunTimedTestHook();
      status = RunOnce();
      const Clock::time_point t1 = Clock::now();
      const int64_t cpu1 = ProcessCpuNanos();
      if (!status.ok()) break;
      samples.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
      if (cpu0 >= 0 && cpu1 >= cpu0) cpu_samples.push_back(cpu1 - cpu0);
      status = CheckRepetitionBound(t1 - t0, "timed");
      if (!status.ok()) break;
      const size_t taken = samples.size() + transient;
      if (taken >= quota) {
        response_.set_stop_reason(v1::STOP_REASON_MAX_REPETITIONS);
        break;
      }
      if (std::chrono::duration<double>(t1 - start).count() >= request_.max_seconds()) {
        response_.set_stop_reason(v1::STOP_REASON_MAX_TIME);
        break;
      }
      if (samples.size() >= next_check) {
        next_check = samples.size() + CheckStride(samples.size());
        // The stop rule copies and sorts the samples: the runner's cost, not the case's.
        (void)collector.Pause();
        // A transient phase (this process's samples drift between their halves) is
        // warm-up: its samples are dropped, the settled time restarts, and no CI stop
        // happens on a drifting sequence.
        const DriftCheck drift = DetectDrift(absl::MakeConstSpan(samples), rule.target_ci_percent);
        if (drift.drifting) {
          const size_t kept_now = samples.size();
          const size_t dropped = kept_now / 2;
          if (cpu_samples.size() == kept_now) cpu_samples.erase(cpu_samples.begin(), cpu_samples.begin() + dropped);
          samples.erase(samples.begin(), samples.begin() + dropped);
          transient += dropped;
          settled_start = t1;
          response_.set_drift(DriftText(drift));
          next_check = samples.size() + CheckStride(samples.size());
          (void)collector.Resume();
          continue;
        }
        const absl::Duration settled = absl::FromChrono(t1 - settled_start);
        const StopDecision decision = DecideStop(samples, rule, settled);
        const bool target_met = decision.reason == v1::STOP_REASON_CI_TARGET;
        (void)collector.Resume();
        if (target_met) {
          response_.set_stop_reason(v1::STOP_REASON_CI_TARGET);
          break;
        }
      }
    }
    const Clock::time_point end = Clock::now();
    response_.set_measured_seconds(std::chrono::duration<double>(end - start).count());
    // The span the runner's energy sampler cuts out (steady_clock is CLOCK_MONOTONIC).
    response_.set_timed_start_mono_ns(
        std::chrono::duration_cast<std::chrono::nanoseconds>(start.time_since_epoch()).count());
    response_.set_timed_end_mono_ns(
        std::chrono::duration_cast<std::chrono::nanoseconds>(end.time_since_epoch()).count());
    const size_t kept = samples.size();
    response_.set_transient_samples(transient);
    // Never a quiet early stop: a slice that did not end on its CI target is unstable
    // when its samples still drift, or when a transient was dropped and too few samples
    // followed to tell whether it settled.
    if (response_.stop_reason() != v1::STOP_REASON_CI_TARGET) {
      const DriftCheck drift = DetectDrift(absl::MakeConstSpan(samples), rule.target_ci_percent);
      if (drift.drifting) response_.set_drift(DriftText(drift));
      response_.set_unstable(drift.drifting || (transient > 0 && !drift.checked));
    }
    // Counters cover every timed repetition, transient ones included (they ran).
    const size_t taken = kept + transient;
    if (counters_started.ok()) {
      absl::StatusOr<v1::Counters> counters = collector.End(taken);
      if (counters.ok() && cpu_samples.size() == kept && kept > 0) {
        // CPU time is the repetitions' own (their CPU clock windows): the clock reads
        // and the stop rule between repetitions are not the case's. getrusage's
        // user/system split is kept.
        double total_ns = 0;
        for (int64_t ns : cpu_samples) total_ns += static_cast<double>(ns);
        const double user = counters->cpu_user_seconds();
        const double system = counters->cpu_system_seconds();
        const double user_share = user + system > 0 ? user / (user + system) : 1.0;
        counters->set_cpu_user_seconds(total_ns * 1e-9 * user_share);
        counters->set_cpu_system_seconds(total_ns * 1e-9 * (1.0 - user_share));
      }
      if (counters.ok()) *response_.mutable_counters() = *counters;
    }
    response_.mutable_samples_ns()->Assign(samples.begin(), samples.end());
    // Per-repetition CPU only when every repetition has one (else none: never a guess).
    if (cpu_samples.size() == kept) {
      response_.mutable_cpu_samples_ns()->Assign(cpu_samples.begin(), cpu_samples.end());
    }
    return status;
  }

  const runner::SliceRequest& request_;
  const v1::CaseSpec& spec_;
  const std::atomic<bool>* cancelled_;
  std::unique_ptr<Workload> workload_;
  IoMode io_mode_ = IoMode::kBlocking;
  int tasks_ = 0;
  StrategyOptions options_;
  std::unique_ptr<PlacementHooks> hooks_;
  std::optional<ScopedThreadAffinity> caller_affinity_;
  std::unique_ptr<Strategy> strategy_;
  runner::SliceResponse response_;
};

absl::StatusOr<std::string> BatchSliceChildHandler(std::string_view request_bytes) {
  runner::SliceRequest request;
  if (!request.ParseFromArray(request_bytes.data(), static_cast<int>(request_bytes.size()))) {
    return absl::InvalidArgumentError("malformed batch slice request");
  }
  return RunBatchSlice(request, nullptr).SerializeAsString();
}

const ChildHandlerRegistration kBatchSliceRegistration(kBatchSliceChildKind, &BatchSliceChildHandler);

}  // namespace

runner::SliceResponse RunBatchSlice(const runner::SliceRequest& request, const std::atomic<bool>* cancelled) {
  return SliceRunner(request, cancelled).Run();
}

runner::SliceResponse RunBatchSliceInChild(const runner::SliceRequest& request, const std::string& executable,
                                           absl::Duration timeout, const std::atomic<bool>* cancelled) {
  ChildOptions options;
  options.executable = executable;
  options.timeout = timeout;
  options.cancelled = cancelled;
  absl::StatusOr<std::string> bytes = RunInChild(kBatchSliceChildKind, request.SerializeAsString(), options);
  if (!bytes.ok()) return FailedSlice(bytes.status());
  runner::SliceResponse response;
  if (!response.ParseFromString(*bytes)) {
    return FailedSlice(absl::InternalError("child returned a malformed batch slice response"));
  }
  return response;
}

void SetRepetitionHookForTesting(RepetitionHook hook) { TestRepetitionHook() = hook; }

void SetTimedRepetitionHookForTesting(RepetitionHook hook) { TimedTestRepetitionHook() = hook; }

}  // namespace fleetmark::engine
