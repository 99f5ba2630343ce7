// The answer of `recommend --measure` (recommend_answer.h) on synthetic results of its
// own plan with known answers: one sentence across io modes (suspending first when it
// wins, blocking first when it does, both when tied), ties said as such, a neighbour
// with another winner said as a crossover, nothing measured, the JSON fields; and the
// `--workload` answer from a fixed workload's groups.
#include "engine/report/recommend_answer.h"

#include <functional>
#include <set>

#include "engine/plan/plan.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace fleetmark::report {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

// Median (ns) of a case; <= 0 leaves the case out (not measured ok).
using MedianOf = std::function<double(const v1::CaseSpec&)>;

// An ok result per case of `plan` (quick), median m with CI m ± 2 %, measured in three
// processes (rounds 1..3) whose medians are m, m·1.01 and m·0.99 (the paired ratios of
// two contenders are then the same in every round).
// `swing`: labels whose process medians swing by ±10 % instead (m, m·1.1, m·0.9).
std::vector<v1::CaseResult> Results(const v1::Plan& plan, const MedianOf& median,
                                    const std::set<std::string>& swing = {}) {
  std::vector<v1::CaseResult> out;
  for (const v1::CaseSpec& spec : engine::ExpandCases(plan, /*quick=*/true)) {
    const double m = median(spec);
    if (m <= 0) continue;
    v1::CaseResult r;
    *r.mutable_spec() = spec;
    r.set_status(v1::CASE_STATUS_OK);
    r.mutable_stats()->set_count(30);
    r.mutable_stats()->set_median_ns(m);
    r.mutable_stats()->set_ci_low_ns(m * 0.98);
    r.mutable_stats()->set_ci_high_ns(m * 1.02);
    r.mutable_stats()->set_ci_half_width_percent(2);
    for (uint32_t round : {1u, 2u, 3u}) {
      const double step = swing.count(spec.strategy().label()) > 0 ? 0.1 : 0.01;
      r.add_process_medians_ns(m * (round == 2 ? 1 + step : round == 3 ? 1 - step : 1.0));
      r.add_process_rounds(round);
      r.add_process_sample_counts(10);
    }
    out.push_back(std::move(r));
  }
  return out;
}

BracketPlan Example() {
  absl::StatusOr<Profile> profile = ParseProfile("cpu_us=50,wait_us=2000");
  EXPECT_TRUE(profile.ok());
  absl::StatusOr<BracketPlan> b = BuildBracketPlan(*profile, {});
  EXPECT_TRUE(b.ok()) << b.status();
  return *b;
}

// Known medians: per label a base time, io mode suspending scaled by `suspending_scale`.
MedianOf Medians(std::map<std::string, double> base) {
  return [base](const v1::CaseSpec& s) {
    auto it = base.find(s.strategy().label());
    return it == base.end() ? 10e6 : it->second;
  };
}

TEST(RecommendAnswerTest, SuspendingWinsFirstThenTheBlockingChoice) {
  const BracketPlan b = Example();
  const DeviceAnswer a = AnswerBracket(
      b, "vm",
      Results(b.plan, Medians({{"coroutine", 3e6}, {"fiber", 4e6}, {"fixed_pool_64", 5e6}, {"fixed_pool_100", 6e6}})));
  EXPECT_EQ(a.sentence, "use coroutine with suspending waits; if your waits must block, fixed_pool with 64 threads");
  ASSERT_EQ(a.io_modes.size(), 2u);
  EXPECT_EQ(a.io_modes[0].io_mode, "suspending");
  EXPECT_EQ(a.io_modes[0].verdict, AnswerKind::kWinner);
  EXPECT_EQ(a.io_modes[0].runner_up, "fiber");
  EXPECT_EQ(a.io_modes[0].verdict_text, VerdictText(a.io_modes[0].points[0].point));
  EXPECT_THAT(a.io_modes[0].verdict_text, HasSubstr("coroutine"));
  EXPECT_DOUBLE_EQ(a.io_modes[0].ratio, 4.0 / 3.0);
  EXPECT_EQ(a.io_modes[1].best, "fixed_pool_64");
  EXPECT_EQ(a.io_modes[1].best_spec.threads(), 64u);
  ASSERT_EQ(a.io_modes[1].points.size(), 5u);
  for (const AnswerPoint& p : a.io_modes[1].points) EXPECT_TRUE(p.measured) << p.role;
  EXPECT_TRUE(a.io_modes[1].changes_at.empty());

  const std::string text = FormatDeviceAnswers({a}, AssumedText(b));
  EXPECT_THAT(text, HasSubstr("vm: use coroutine with suspending waits"));
  EXPECT_THAT(text, HasSubstr("wait_us x2"));
  EXPECT_THAT(text, HasSubstr("coroutine wins"));
  EXPECT_THAT(text, HasSubstr("assumed: 100 tasks per batch; thread counts tried 16, 64, 100"));

  const nlohmann::json doc = nlohmann::json::parse(BracketAnswersJson(b, {a}));
  EXPECT_EQ(doc.at("profile").at("cpu_ns"), 50000);
  EXPECT_EQ(doc.at("assumed").at("tasks"), 100);
  EXPECT_EQ(doc.at("assumed").at("io_threads"), nlohmann::json::array({16, 64, 100}));
  const nlohmann::json& d = doc.at("devices").at(0);
  EXPECT_EQ(d.at("sentence"), a.sentence);
  EXPECT_EQ(d.at("io_modes").at(1).at("strategy").at("name"), "fixed_pool");
  EXPECT_EQ(d.at("io_modes").at(1).at("strategy").at("threads"), 64);
  EXPECT_EQ(d.at("io_modes").at(0).at("verdict"), "winner");
  EXPECT_EQ(d.at("io_modes").at(0).at("verdict_text"), a.io_modes[0].verdict_text);
  EXPECT_GT(d.at("io_modes").at(0).at("ratio_low").get<double>(), 1.0);
  EXPECT_EQ(d.at("io_modes").at(0).at("points").at(0).at("role"), "profile");
  EXPECT_EQ(d.at("io_modes").at(0).at("points").at(0).at("params").at("wait_us"), 2000);
}

TEST(RecommendAnswerTest, BlockingFirstWhenItIsFaster) {
  const BracketPlan b = Example();
  const DeviceAnswer a =
      AnswerBracket(b, "vm", Results(b.plan, Medians({{"coroutine", 8e6}, {"fiber", 9e6}, {"fixed_pool_100", 4e6}})));
  EXPECT_EQ(a.sentence,
            "use fixed_pool with 100 threads (blocking waits; suspending ones are slower here, best coroutine)");
  EXPECT_EQ(a.io_modes[0].io_mode, "blocking");
}

TEST(RecommendAnswerTest, TiesAreSaidAsTiesAndEqualIoModesBoth) {
  const BracketPlan b = Example();
  const DeviceAnswer a =
      AnswerBracket(b, "vm",
                    Results(b.plan, Medians({{"coroutine", 4e6}, {"fiber", 4.01e6}, {"fixed_pool_100", 4.02e6}}),
                            {"fixed_pool_100"}));
  EXPECT_EQ(a.io_modes[0].verdict, AnswerKind::kOpen);
  EXPECT_THAT(a.io_modes[0].tied, ElementsAre("coroutine", "fiber"));
  // 0.5 % apart, but fixed_pool_100 swings ±10 % between its processes while the
  // suspending ones do not: the paired ratios across io modes disagree by ~18 %, so the
  // io modes are not told apart (undecided); 0.125 % apart with no swing (the residual
  // spread is none, margin 2 %) they are equivalent, "just as fast".
  EXPECT_EQ(a.sentence,
            "use coroutine or fiber (equivalent within 2.0 %) with suspending waits or, with blocking waits, "
            "fixed_pool with 100 threads; which is faster is not told apart here");
  const DeviceAnswer closer = AnswerBracket(
      b, "vm", Results(b.plan, Medians({{"coroutine", 4e6}, {"fiber", 4.01e6}, {"fixed_pool_100", 4.005e6}})));
  EXPECT_EQ(closer.sentence,
            "use coroutine or fiber (equivalent within 2.0 %) with suspending waits or, with blocking waits, "
            "fixed_pool with 100 threads; both just as fast");
  // One strategy tied at two sizes is said once.
  const DeviceAnswer sizes = AnswerBracket(
      b, "vm", Results(b.plan, Medians({{"coroutine", 2e6}, {"fixed_pool_64", 4e6}, {"fixed_pool_100", 4.01e6}})));
  EXPECT_EQ(sizes.sentence,
            "use coroutine with suspending waits; if your waits must block, fixed_pool with 64 or 100 threads "
            "(equivalent within 2.0 %)");
  // 5 % apart but swinging ±10 % between processes: undecided, "not told apart".
  const DeviceAnswer swinging =
      AnswerBracket(b, "vm",
                    Results(b.plan, Medians({{"coroutine", 2e6}, {"fixed_pool_64", 4e6}, {"fixed_pool_100", 4.2e6}}),
                            {"fixed_pool_64"}));
  EXPECT_EQ(swinging.io_modes[1].points[0].point.kind, engine::VerdictKind::kUndecided);
  EXPECT_EQ(swinging.sentence,
            "use coroutine with suspending waits; if your waits must block, fixed_pool with 64 or 100 threads (not "
            "told apart)");
}

TEST(RecommendAnswerTest, ANeighbourWithAnotherWinnerIsACrossover) {
  const BracketPlan b = Example();
  const DeviceAnswer a = AnswerBracket(b, "vm", Results(b.plan, [](const v1::CaseSpec& s) {
                                         const std::string& l = s.strategy().label();
                                         if (l == "coroutine") return 3e6;
                                         if (l == "fixed_pool_64") return 5e6;
                                         if (l == "fixed_pool_100") return s.synthetic().wait_us() > 2000 ? 4e6 : 6e6;
                                         return 10e6;
                                       }));
  ASSERT_EQ(a.io_modes[1].io_mode, "blocking");
  EXPECT_THAT(a.io_modes[1].changes_at, ElementsAre("wait_us x2"));
  EXPECT_EQ(a.sentence,
            "use coroutine with suspending waits; if your waits must block, fixed_pool with 64 threads (near a "
            "crossover: fixed_pool_100 at cpu_ns=50000,wait_us=4000)");
}

TEST(RecommendAnswerTest, AnIoModeNotMeasuredAtTheProfileIsLeftOut) {
  const BracketPlan b = Example();
  // Nothing suspending measured ok: the blocking answer alone.
  DeviceAnswer a =
      AnswerBracket(b, "vm", Results(b.plan, [](const v1::CaseSpec& s) {
                      return s.io_mode() == "suspending" ? 0.0 : s.strategy().label() == "fixed_pool_16" ? 2e6 : 5e6;
                    }));
  EXPECT_EQ(a.sentence, "use fixed_pool with 16 threads");
  EXPECT_EQ(a.io_modes[1].verdict, AnswerKind::kNotMeasured);
  EXPECT_FALSE(a.io_modes[1].points[0].measured);
  EXPECT_THAT(FormatDeviceAnswers({a}, ""), HasSubstr("nothing measured ok"));
  // Nothing at all.
  a = AnswerBracket(b, "vm", {});
  EXPECT_EQ(a.sentence, "no answer: no strategy was measured ok at this profile");
  EXPECT_EQ(DeviceAnswerJson(a).at("io_modes").at(0).at("verdict"), "not_measured");
}

// Nothing decided and nothing equivalent in either io mode (every strategy 4 ms, their
// processes swinging ±10 % in opposite directions): the sentence does not say "use", names
// at most three candidates and says what would close it; contended cases say so.
TEST(RecommendAnswerTest, AllUndecidedIsNoClearAnswerNotAUseSentence) {
  const BracketPlan b = Example();
  std::vector<v1::CaseResult> results = Results(b.plan, [](const v1::CaseSpec&) { return 4e6; });
  for (size_t i = 0; i < results.size(); ++i) {
    const double up = i % 2 == 0 ? 1.1 : 0.9;
    results[i].set_process_medians_ns(1, 4e6 * up);
    results[i].set_process_medians_ns(2, 4e6 * (2 - up));
  }
  DeviceAnswer a = AnswerBracket(b, "vm", results);
  ASSERT_EQ(a.io_modes.size(), 2u);
  for (const IoModeAnswer& m : a.io_modes) {
    EXPECT_EQ(m.verdict, AnswerKind::kOpen) << m.io_mode;
    EXPECT_FALSE(m.equivalent) << m.io_mode;
  }
  EXPECT_THAT(a.sentence, ::testing::StartsWith("no clear answer yet: "));
  EXPECT_THAT(a.sentence, ::testing::MatchesRegex(".* or [0-9]+ others were not told apart; measure again with more "
                                                  "processes"));
  EXPECT_THAT(a.sentence, Not(HasSubstr("use ")));
  for (v1::CaseResult& r : results) {
    r.set_contended(true);
    r.set_other_cpu_share(0.5);
  }
  a = AnswerBracket(b, "vm", results);
  EXPECT_THAT(a.sentence, HasSubstr("(other work ran on the machine while they were measured); measure again on a "
                                    "quiet machine"));
}

TEST(RecommendAnswerTest, DescribeStrategyAsksTheRegistry) {
  v1::StrategySpec s;
  s.set_name("fixed_pool");
  EXPECT_EQ(DescribeStrategy(s), "fixed_pool with one thread per CPU");
  s.set_threads(64);
  EXPECT_EQ(DescribeStrategy(s), "fixed_pool with 64 threads");
  s.set_name("coroutine");
  s.set_threads(0);
  EXPECT_EQ(DescribeStrategy(s), "coroutine");
  s.set_name("direct");
  EXPECT_EQ(DescribeStrategy(s), "direct");
  s.set_name("no_such");
  EXPECT_EQ(DescribeStrategy(s), "no_such");
}

TEST(RecommendAnswerTest, AFixedWorkloadAcrossItsIoModes) {
  v1::Plan plan;
  v1::Matrix& m = *plan.add_matrix();
  for (const auto& [name, threads, label] : std::vector<std::tuple<std::string, int, std::string>>{
           {"direct", 0, "direct"}, {"fixed_pool", 100, "fixed_pool_io"}, {"coroutine", 0, "coroutine_cpu"}}) {
    v1::StrategySpec& s = *m.add_strategies();
    s.set_name(name);
    s.set_threads(threads);
    s.set_label(label);
  }
  m.add_workloads("network");
  m.add_workloads("arithmetic");
  m.add_io_modes("blocking");
  m.add_io_modes("suspending");
  m.mutable_batch()->set_tasks(100);
  const std::vector<v1::CaseResult> results = Results(plan, [](const v1::CaseSpec& s) {
    if (s.io_mode() == "suspending" && s.strategy().name() != "coroutine") return 0.0;  // unsupported
    if (s.strategy().label() == "direct") return 5e9;
    if (s.strategy().label() == "fixed_pool_io") return 100e6;
    return s.io_mode() == "suspending" ? 60e6 : 2.5e9;
  });
  const DeviceAnswer a = AnswerWorkload("network", "vm", results);
  EXPECT_EQ(a.sentence, "use coroutine with suspending waits; if your waits must block, fixed_pool with 100 threads");
  EXPECT_EQ(a.io_modes[0].points[0].role, "network tasks");
  EXPECT_EQ(AnswerWorkload("storage", "vm", results).sentence, "no answer: no storage batch case was measured ok");
}

}  // namespace
}  // namespace fleetmark::report
