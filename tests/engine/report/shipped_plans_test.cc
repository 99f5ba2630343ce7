// The shipped plans cover `recommend`'s documented example: on results of
// plans/crossover.txtpb (every case measured ok), `recommend --profile
// 'cpu_us=50,wait_us=2000'` answers for blocking and for suspending waits instead of
// "not measured near this profile".
#include <set>

#include "engine/plan/plan.h"
#include "engine/report/recommend.h"
#include "gtest/gtest.h"

namespace fleetmark::report {
namespace {

TEST(ShippedPlansTest, TheCrossoverPlanCoversRecommendsDocumentedExample) {
  absl::StatusOr<engine::ParsedPlan> parsed = engine::LoadPlanFile(FLEETMARK_SOURCE_DIR "/plans/crossover.txtpb");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  std::vector<v1::CaseResult> results;
  double median = 1e6;
  for (const v1::CaseSpec& spec : engine::ExpandCases(parsed->plan, /*quick=*/true)) {
    v1::CaseResult r;
    *r.mutable_spec() = spec;
    r.set_status(v1::CASE_STATUS_OK);
    median *= 1.5;  // every strategy of a point apart from the others
    r.mutable_stats()->set_count(30);
    r.mutable_stats()->set_median_ns(median);
    r.mutable_stats()->set_ci_low_ns(median * 0.99);
    r.mutable_stats()->set_ci_high_ns(median * 1.01);
    r.mutable_stats()->set_ci_half_width_percent(1);
    for (uint32_t round : {1u, 2u, 3u}) {
      r.add_process_medians_ns(median);
      r.add_process_rounds(round);
    }
    results.push_back(std::move(r));
  }
  absl::StatusOr<Profile> profile = ParseProfile("cpu_us=50,wait_us=2000");
  ASSERT_TRUE(profile.ok());
  std::set<std::string> answered;
  for (const Recommendation& r : Recommend(BuildStrategyMap(results), *profile)) {
    if (r.verdict != Verdict::kNotMeasured) answered.insert(r.group);
  }
  EXPECT_EQ(answered, (std::set<std::string>{"batch/synthetic[cpu_ns=50000]/blocking/any",
                                             "batch/synthetic[cpu_ns=50000]/suspending/any"}));
}

}  // namespace
}  // namespace fleetmark::report
