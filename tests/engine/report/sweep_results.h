// Synthetic batch results for the strategy map's and recommend's unit tests: a result
// of one strategy at a sweep point with a chosen median and CI. Header-only test helper.
#pragma once

#include <cstdint>
#include <string>

#include "fleetmark/v1/result.pb.h"

namespace fleetmark::report::testing {

// A batch result of `label` at wait_us = `wait` (and cpu_ns = `cpu`, swept too when
// `two`), median m with the CI [m - h, m + h], 50 samples.
inline v1::CaseResult SweepResult(const std::string& label, uint32_t wait, double median, double half,
                                  uint32_t cpu = 1000, bool two = false) {
  v1::CaseResult r;
  v1::CaseSpec& s = *r.mutable_spec();
  s.set_scenario("batch");
  s.set_workload("synthetic");
  s.set_io_mode("blocking");
  s.set_placement("any");
  s.mutable_strategy()->set_name("fixed_pool");
  s.mutable_strategy()->set_label(label);
  s.mutable_synthetic()->set_cpu_ns(cpu);
  s.mutable_synthetic()->set_wait_us(wait);
  s.add_swept("wait_us");
  if (two) s.add_swept("cpu_ns");
  r.set_status(v1::CASE_STATUS_OK);
  r.mutable_stats()->set_count(50);
  r.mutable_stats()->set_median_ns(median);
  r.mutable_stats()->set_ci_low_ns(median - half);
  r.mutable_stats()->set_ci_high_ns(median + half);
  r.mutable_stats()->set_ci_half_width_percent(100 * half / median);
  return r;
}

}  // namespace fleetmark::report::testing
