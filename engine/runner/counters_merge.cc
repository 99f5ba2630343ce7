#include "engine/runner/counters_merge.h"

#include <algorithm>
#include <cmath>

namespace fleetmark::engine {
namespace {

uint64_t WeightedMean(uint64_t a, uint64_t a_weight, uint64_t b, uint64_t b_weight) {
  const double sum =
      static_cast<double>(a) * static_cast<double>(a_weight) + static_cast<double>(b) * static_cast<double>(b_weight);
  return static_cast<uint64_t>(std::llround(sum / static_cast<double>(a_weight + b_weight)));
}

}  // namespace

void MergeCounters(const v1::Counters& slice, v1::Counters& total) {
  if (slice.repetitions() == 0) return;
  const bool first = total.repetitions() == 0;
  const uint64_t before = total.repetitions();
  total.set_cpu_user_seconds(total.cpu_user_seconds() + slice.cpu_user_seconds());
  total.set_cpu_system_seconds(total.cpu_system_seconds() + slice.cpu_system_seconds());
  total.set_voluntary_context_switches(total.voluntary_context_switches() + slice.voluntary_context_switches());
  total.set_involuntary_context_switches(total.involuntary_context_switches() + slice.involuntary_context_switches());
  total.set_allocations(WeightedMean(total.allocations(), before, slice.allocations(), slice.repetitions()));
  total.set_allocated_bytes(
      WeightedMean(total.allocated_bytes(), before, slice.allocated_bytes(), slice.repetitions()));
  total.set_peak_threads(std::max(total.peak_threads(), slice.peak_threads()));
  total.set_rss_delta_bytes(total.rss_delta_bytes() + slice.rss_delta_bytes());
  total.set_repetitions(before + slice.repetitions());
  total.set_peak_rss_bytes(std::max(total.peak_rss_bytes(), slice.peak_rss_bytes()));
  total.set_peak_rss_reset(first ? slice.peak_rss_reset() : total.peak_rss_reset() && slice.peak_rss_reset());
  total.set_allocations_counted(first ? slice.allocations_counted()
                                      : total.allocations_counted() && slice.allocations_counted());
}

}  // namespace fleetmark::engine
