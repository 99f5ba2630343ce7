// Sweeps of the synthetic workload: values, expansion into cases and their ids, and
// the validation of every synthetic parameter and sweep field.
#include "engine/plan/sweep.h"

#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "engine/plan/plan.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetmark::engine {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A plan with one synthetic matrix whose synthetic/sweeps text is `body`.
std::string SyntheticPlan(const std::string& body, const std::string& workloads = "\"synthetic\"") {
  return absl::StrCat(
      "name: \"sweep\"\nmatrix {\n  strategies { name: \"fixed_pool\" label: \"fixed_pool_cpu\" }\n"
      "  strategies { name: \"fixed_pool\" threads: 100 label: \"fixed_pool_io\" }\n  workloads: [",
      workloads, "]\n  batch { tasks: 10 }\n", body, "\n}\n");
}

absl::StatusOr<ParsedPlan> Parse(const std::string& text) { return ParsePlan(text, PlanFormat::kText, "s.txtpb"); }

absl::Status Validate(const std::string& text) {
  absl::StatusOr<ParsedPlan> parsed = Parse(text);
  if (!parsed.ok()) return parsed.status();
  return ValidatePlan(*parsed);
}

TEST(SweepValuesTest, LogSpacedRangeIsRoundedAndIncludesBothEnds) {
  v1::Sweep sweep;
  sweep.set_param("wait_us");
  sweep.set_from(10);
  sweep.set_to(10000);
  sweep.set_points(7);
  EXPECT_THAT(SweepValues(sweep), ElementsAre(10, 32, 100, 316, 1000, 3162, 10000));
  v1::Sweep list;
  list.set_param("cpu_ns");
  list.add_values(5);
  list.add_values(1);
  EXPECT_THAT(SweepValues(list), ElementsAre(5, 1));  // as written
}

TEST(SweepExpandTest, EachPointIsACaseWhoseIdCarriesIt) {
  absl::StatusOr<ParsedPlan> parsed =
      Parse(SyntheticPlan("synthetic { cpu_ns: 1000 }\nsweeps { param: \"wait_us\" from: 10 to: 10000 points: 7 }"));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_TRUE(ValidatePlan(*parsed).ok()) << ValidatePlan(*parsed);
  const std::vector<v1::CaseSpec> cases = ExpandCases(parsed->plan, false);
  ASSERT_EQ(cases.size(), 7u * 2u);
  std::set<std::string> ids;
  for (const v1::CaseSpec& c : cases) ids.insert(c.case_id());
  EXPECT_EQ(ids.size(), cases.size());
  EXPECT_TRUE(ids.count("batch/synthetic[cpu_ns=1000,wait_us=316]/blocking/fixed_pool_io/any"));
  EXPECT_TRUE(ids.count("batch/synthetic[cpu_ns=1000,wait_us=10]/blocking/fixed_pool_cpu/any"));
  const v1::CaseSpec& first = cases.front();
  EXPECT_EQ(first.workload(), "synthetic");
  EXPECT_EQ(first.synthetic().cpu_ns(), 1000u);
  EXPECT_EQ(first.synthetic().wait_us(), 10u);
  EXPECT_THAT(std::vector<std::string>(first.swept().begin(), first.swept().end()), ElementsAre("wait_us"));
}

TEST(SweepExpandTest, TwoSweepsGiveTheirProductAndOtherWorkloadsStayPlain) {
  absl::StatusOr<ParsedPlan> parsed =
      Parse(SyntheticPlan("synthetic { wait_distribution: \"exponential\" wait_seed: 7 }\n"
                          "sweeps { param: \"cpu_ns\" values: [100, 0] }\n"
                          "sweeps { param: \"wait_us\" from: 1 to: 100 points: 3 }",
                          "\"arithmetic\", \"synthetic\""));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_TRUE(ValidatePlan(*parsed).ok()) << ValidatePlan(*parsed);
  const std::vector<v1::CaseSpec> cases = ExpandCases(parsed->plan, false);
  ASSERT_EQ(cases.size(), 2u + 2u * 3u * 2u);
  EXPECT_EQ(cases[0].case_id(), "batch/arithmetic/blocking/fixed_pool_cpu/any");
  EXPECT_FALSE(cases[0].has_synthetic());
  // A swept value of 0 is still named; the fixed non-default parameters too.
  EXPECT_EQ(cases[2].case_id(),
            "batch/synthetic[cpu_ns=100,wait_us=1,wait_distribution=exponential,wait_seed=7]/blocking/"
            "fixed_pool_cpu/any");
  EXPECT_EQ(cases.back().case_id(),
            "batch/synthetic[cpu_ns=0,wait_us=100,wait_distribution=exponential,wait_seed=7]/blocking/"
            "fixed_pool_io/any");
}

TEST(SweepValidateTest, EachParameterAndSweepFieldIsNamedWithItsRange) {
  struct Case {
    std::string body;
    std::string expected;
  };
  const Case cases[] = {
      {"synthetic { cpu_ns: 2000000000 }",
       "plan.matrix[0].synthetic.cpu_ns: 0 <= cpu_ns <= 1000000000, got 2000000000"},
      {"synthetic { wait_us: 20000000 }", "plan.matrix[0].synthetic.wait_us: 0 <= wait_us <= 10000000, got 20000000"},
      {"synthetic { alloc_bytes: 2000000000 }", "synthetic.alloc_bytes: 0 <= alloc_bytes <= 1073741824"},
      {"synthetic { touch_kib: 2000000 }", "synthetic.touch_kib: 0 <= touch_kib <= 1048576, got 2000000"},
      {"synthetic { wait_distribution: \"normal\" }",
       "synthetic.wait_distribution: one of fixed, uniform, exponential, lognormal (empty = fixed); got \"normal\""},
      {"sweeps { param: \"threads\" values: 1 }",
       "sweeps[0].param: one of cpu_ns, wait_us, alloc_bytes, touch_kib; got \"threads\""},
      {"sweeps { param: \"wait_us\" values: [1, 20000000] }",
       "sweeps[0].values[1]: 0 <= values <= 10000000, got 20000000"},
      {"sweeps { param: \"wait_us\" values: [5, 5] }", "sweeps[0].values[1]: repeats values[0] = 5"},
      {"sweeps { param: \"wait_us\" values: 1 from: 1 to: 10 points: 2 }",
       "sweeps[0].values: either values or from/to/points, not both"},
      {"sweeps { param: \"wait_us\" }", "sweeps[0].values: a list of values or a range"},
      {"sweeps { param: \"wait_us\" from: 0 to: 10 points: 2 }", "sweeps[0].from: 1 <= from <= 10000000, got 0"},
      {"sweeps { param: \"wait_us\" from: 10 to: 10 points: 2 }", "sweeps[0].to: 11 <= to <= 10000000, got 10"},
      {"sweeps { param: \"wait_us\" from: 1 to: 10 points: 65 }", "sweeps[0].points: 2 <= points <= 64, got 65"},
      {"sweeps { param: \"wait_us\" from: 1 to: 3 points: 10 }",
       "sweeps[0].points: 10 log-spaced points from 1 to 3 repeat the value"},
      {"sweeps { param: \"wait_us\" values: 1 }\nsweeps { param: \"wait_us\" values: 2 }",
       "sweeps[1].param: sweeps[0] already sweeps wait_us"},
      {"sweeps { param: \"wait_us\" values: 1 }\nsweeps { param: \"cpu_ns\" values: 2 }\n"
       "sweeps { param: \"touch_kib\" values: 2 }",
       "sweeps[2]: at most 2 swept parameters, got 3"},
  };
  for (const Case& c : cases) {
    const absl::Status status = Validate(SyntheticPlan(c.body));
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << c.body;
    EXPECT_THAT(std::string(status.message()), HasSubstr(c.expected)) << c.body;
  }
  // Parameters without the synthetic workload are refused, not ignored.
  const absl::Status plain = Validate(SyntheticPlan("synthetic { cpu_ns: 5 }", "\"arithmetic\""));
  EXPECT_THAT(std::string(plain.message()),
              HasSubstr("plan.matrix[0].synthetic: set only with the workload \"synthetic\" in workloads"));
}

TEST(SweepValidateTest, ASweptRepetitionThatCannotFinishIsRefusedNamingThePoint) {
  // 10 tasks of 10 s waits on the direct strategy: 100 s for one repetition.
  const std::string text =
      "matrix {\n  strategies { name: \"direct\" }\n  workloads: \"synthetic\"\n  batch { tasks: 10 }\n"
      "  sweeps { param: \"wait_us\" values: [1, 10000000] }\n}\n";
  const absl::Status status = Validate(text);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("one repetition of synthetic[wait_us=10000000]/blocking/direct"));
}

TEST(SweepValidateTest, TheCrossoverPlanIsValid) {
  absl::StatusOr<ParsedPlan> parsed = LoadPlanFile(FLEETMARK_SOURCE_DIR "/plans/crossover.txtpb");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_TRUE(ValidatePlan(*parsed).ok()) << ValidatePlan(*parsed);
  EXPECT_EQ(ExpandCases(parsed->plan, false).size(), 9u * 4u + 5u * 8u + 2u * 2u);
}

}  // namespace
}  // namespace fleetmark::engine
