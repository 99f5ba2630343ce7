// Synthetic batch results for the strategy map's and recommend's unit tests: a result
// of one strategy at a sweep point with a chosen median, CI and process medians.
// Header-only test helper.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fleetmark/v1/result.pb.h"

namespace fleetmark::report::testing {

// A batch result of `label` at wait_us = `wait` (and cpu_ns = `cpu`, swept too when
// `two`), median m with the CI [m - h, m + h], 50 samples, and three processes (rounds
// 1-3) whose medians are m - h, m, m + h: every result drifts the same way over the
// rounds, so two results' paired ratio is the same in every round when h / m is.
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
  for (double m : {median - half, median, median + half}) r.add_process_medians_ns(m);
  return r;
}

// The same result with the given process medians (rounds 1, 2, ...) instead.
inline v1::CaseResult ProcessResult(const std::string& label, uint32_t wait, const std::vector<double>& medians,
                                    uint32_t cpu = 1000) {
  v1::CaseResult r = SweepResult(label, wait, medians.empty() ? 1 : medians[medians.size() / 2], 0, cpu);
  r.clear_process_medians_ns();
  for (double m : medians) r.add_process_medians_ns(m);
  return r;
}

}  // namespace fleetmark::report::testing
