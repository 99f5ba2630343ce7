// Collects the resource counters of one case (fleetmark.v1.Counters) around its timed
// repetitions: CPU user/system time and context switches (getrusage deltas), operator
// new calls and bytes (alloc_counter.h), peak threads (a background sampler), RSS
// delta and peak RSS (VmHWM after a reset).
//
//   CounterCollector collector;
//   FLEETMARK_RETURN_IF_ERROR(collector.Begin());
//   for (...) samples.push_back(RunOnce());
//   FLEETMARK_ASSIGN_OR_RETURN(fleetmark::v1::Counters c, collector.End(samples.size()));
//
// Everything is process-wide: run one case at a time in a process, or the counters mix
// cases. The sampler thread's own CPU time and context switches are subtracted from
// the getrusage deltas; its allocations (none while sampling) do not count. Work the
// caller does between repetitions (recording samples, checking the stop rule) is left
// out by bracketing it with Pause/Resume, so CPU and allocations are the workload's.
#pragma once

#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "engine/measure/alloc_counter.h"
#include "engine/measure/process_stats.h"
#include "engine/measure/thread_sampler.h"
#include "fleetmark/v1/result.pb.h"

namespace fleetmark::engine {

struct CounterOptions {
  bool sample_threads = true;  // run a PeakThreadSampler between Begin and End
  absl::Duration thread_sample_period = kDefaultThreadSamplePeriod;
  bool reset_peak_rss = true;  // write "5" to /proc/self/clear_refs at Begin
};

class CounterCollector {
 public:
  explicit CounterCollector(CounterOptions options = {});
  ~CounterCollector();
  CounterCollector(const CounterCollector&) = delete;
  CounterCollector& operator=(const CounterCollector&) = delete;

  // Snapshots the baselines, resets VmHWM (if asked and allowed) and starts the
  // sampler. FailedPrecondition if already begun; Internal/NotFound if getrusage or
  // /proc readings fail. Call Begin/End from one thread.
  absl::Status Begin();

  // Stops the sampler and returns the deltas since Begin:
  //   cpu_user_seconds, cpu_system_seconds, voluntary/involuntary_context_switches:
  //     sums over all repetitions (minus the sampler thread's own);
  //   allocations, allocated_bytes: per repetition (total / repetitions, rounded to
  //     nearest), 0 with allocations_counted = false when the counting operator new
  //     is not linked (AllocationCounterActive());
  //   peak_threads: max of the sampled counts (and the Begin/End readings);
  //   rss_delta_bytes: RSS at End - RSS at Begin;
  //   peak_rss_bytes: VmHWM at End, with peak_rss_reset saying whether it was reset
  //     at Begin (false: it is the peak since process start);
  //   repetitions: `repetitions`.
  // FailedPrecondition if Begin was not called; Internal if a reading fails.
  absl::StatusOr<fleetmark::v1::Counters> End(uint64_t repetitions);

  // Between Pause and Resume, CPU time, context switches and allocations (of the whole
  // process) are not counted. Pause when paused or not begun, and Resume when not
  // paused, are no-ops; End while paused ends the pause first. Internal if getrusage
  // fails. The two readings cost about a microsecond: pause around work that is
  // longer, not around every repetition.
  absl::Status Pause();
  absl::Status Resume();

  // Whether the VmHWM reset at the last Begin succeeded, and why not.
  bool peak_rss_reset() const { return peak_rss_reset_; }
  const absl::Status& peak_rss_reset_status() const { return peak_rss_reset_status_; }

 private:
  CounterOptions options_;
  bool begun_ = false;
  ResourceUsage usage_before_;
  AllocationCounts allocs_before_;
  bool paused_ = false;
  ResourceUsage usage_at_pause_;
  AllocationCounts allocs_at_pause_;
  ResourceUsage usage_excluded_;  // summed over the pauses
  AllocationCounts allocs_excluded_;
  uint64_t rss_before_ = 0;
  int64_t threads_before_ = 0;
  bool peak_rss_reset_ = false;
  absl::Status peak_rss_reset_status_;
  std::unique_ptr<PeakThreadSampler> sampler_;
};

}  // namespace fleetmark::engine
