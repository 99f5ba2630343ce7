#include "engine/measure/counter_collector.h"

#include <algorithm>
#include <utility>

#include "engine/common/status_macros.h"

namespace fleetmark::engine {

CounterCollector::CounterCollector(CounterOptions options) : options_(std::move(options)) {}

CounterCollector::~CounterCollector() {
  if (sampler_ != nullptr) sampler_->Stop();
}

absl::Status CounterCollector::Begin() {
  if (begun_) return absl::FailedPreconditionError("CounterCollector::Begin: already begun");
  peak_rss_reset_ = false;
  peak_rss_reset_status_ = absl::FailedPreconditionError("peak RSS reset not requested");
  if (options_.reset_peak_rss) {
    peak_rss_reset_status_ = ResetPeakRss();
    peak_rss_reset_ = peak_rss_reset_status_.ok();
  }
  FLEETMARK_ASSIGN_OR_RETURN(rss_before_, ReadRssBytes());
  FLEETMARK_ASSIGN_OR_RETURN(threads_before_, ReadThreadCount());
  sampler_.reset();
  if (options_.sample_threads) {
    sampler_ = std::make_unique<PeakThreadSampler>(options_.thread_sample_period);
    FLEETMARK_RETURN_IF_ERROR(sampler_->Start());
  }
  // Baselines last, so the set-up above stays out of the deltas.
  usage_excluded_ = ResourceUsage();
  allocs_excluded_ = AllocationCounts();
  paused_ = false;
  FLEETMARK_ASSIGN_OR_RETURN(usage_before_, ReadResourceUsage());
  allocs_before_ = ReadAllocationCounts();
  begun_ = true;
  return absl::OkStatus();
}

absl::Status CounterCollector::Pause() {
  if (!begun_ || paused_) return absl::OkStatus();
  allocs_at_pause_ = ReadAllocationCounts();
  FLEETMARK_ASSIGN_OR_RETURN(usage_at_pause_, ReadResourceUsage());
  paused_ = true;
  return absl::OkStatus();
}

absl::Status CounterCollector::Resume() {
  if (!begun_ || !paused_) return absl::OkStatus();
  FLEETMARK_ASSIGN_OR_RETURN(const ResourceUsage now, ReadResourceUsage());
  const AllocationCounts allocs = ReadAllocationCounts();
  usage_excluded_ = usage_excluded_ + (now - usage_at_pause_);
  allocs_excluded_.allocations += allocs.allocations - allocs_at_pause_.allocations;
  allocs_excluded_.allocated_bytes += allocs.allocated_bytes - allocs_at_pause_.allocated_bytes;
  paused_ = false;
  return absl::OkStatus();
}

absl::StatusOr<fleetmark::v1::Counters> CounterCollector::End(uint64_t repetitions) {
  if (!begun_) return absl::FailedPreconditionError("CounterCollector::End: Begin not called");
  FLEETMARK_RETURN_IF_ERROR(Resume());
  begun_ = false;
  // Readings first, so the tear-down below stays out of the deltas.
  const AllocationCounts allocs_after = ReadAllocationCounts();
  FLEETMARK_ASSIGN_OR_RETURN(ResourceUsage usage_after, ReadResourceUsage());
  int64_t peak_threads = threads_before_;
  ResourceUsage sampler_usage;
  if (sampler_ != nullptr) {
    sampler_->Stop();
    peak_threads = std::max(peak_threads, sampler_->peak_threads());
    sampler_usage = sampler_->own_usage();
  }
  FLEETMARK_ASSIGN_OR_RETURN(const int64_t threads_after, ReadThreadCount());
  peak_threads = std::max(peak_threads, threads_after);
  FLEETMARK_ASSIGN_OR_RETURN(const uint64_t rss_after, ReadRssBytes());
  FLEETMARK_ASSIGN_OR_RETURN(const ProcessStatus status, ReadProcessStatus());

  // The sampler's whole-life usage includes a little from before the baseline (its
  // first sample) and after; clamping at zero keeps the deltas meaningful.
  const ResourceUsage used = usage_after - usage_before_ - sampler_usage - usage_excluded_;
  fleetmark::v1::Counters counters;
  counters.set_cpu_user_seconds(std::max(0.0, absl::ToDoubleSeconds(used.user_cpu)));
  counters.set_cpu_system_seconds(std::max(0.0, absl::ToDoubleSeconds(used.system_cpu)));
  counters.set_voluntary_context_switches(std::max<int64_t>(0, used.voluntary_context_switches));
  counters.set_involuntary_context_switches(std::max<int64_t>(0, used.involuntary_context_switches));
  const bool counted = AllocationCounterActive();
  counters.set_allocations_counted(counted);
  if (counted && repetitions > 0) {
    const uint64_t allocations = allocs_after.allocations - allocs_before_.allocations - allocs_excluded_.allocations;
    const uint64_t bytes =
        allocs_after.allocated_bytes - allocs_before_.allocated_bytes - allocs_excluded_.allocated_bytes;
    counters.set_allocations((allocations + repetitions / 2) / repetitions);
    counters.set_allocated_bytes((bytes + repetitions / 2) / repetitions);
  }
  counters.set_peak_threads(static_cast<uint32_t>(std::max<int64_t>(0, peak_threads)));
  counters.set_rss_delta_bytes(static_cast<int64_t>(rss_after) - static_cast<int64_t>(rss_before_));
  counters.set_peak_rss_bytes(status.peak_rss_bytes);
  counters.set_peak_rss_reset(peak_rss_reset_);
  counters.set_repetitions(repetitions);
  return counters;
}

}  // namespace fleetmark::engine
