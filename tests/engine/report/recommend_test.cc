// `fleetmark recommend`'s answers on synthetic results with known answers: on a
// measured point, between two points that agree, at a crossover, outside the sweep
// (not measured), undecided points, a fixed parameter the profile contradicts, a
// two-parameter sweep's corners; and the profile's parsing and its errors.
#include "engine/report/recommend.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/engine/report/sweep_results.h"
#include "nlohmann/json.hpp"

namespace fleetmark::report {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A result of `label` at a sweep point (sweep_results.h).
v1::CaseResult Result(const std::string& label, uint32_t wait, double median, double half, uint32_t cpu = 1000,
                      bool two = false) {
  return testing::SweepResult(label, wait, median, half, cpu, two);
}

// wait_us 10, 100: cpu wins (2x, then 1.5x); 1000: io wins 2x; 10000: undecided (io
// 1.05x, but as fast as cpu in round 2). Each result has three processes m - h, m, m + h
// (a drift every result shares, which pairing cancels), io at 10000 {8.5, 9.0, 11.0} ms.
// The device's residual spread: 0.0207865 over 8 dof (margin 4.16 %; each point's prior
// 8 - 2 = 6 dof).
std::vector<v1::CaseResult> OneSweep() {
  return {Result("cpu", 10, 1.0e6, 0.1e6),   Result("io", 10, 2.0e6, 0.2e6),
          Result("cpu", 100, 1.0e6, 0.1e6),  Result("io", 100, 1.5e6, 0.1e6),
          Result("cpu", 1000, 4.0e6, 0.2e6), Result("io", 1000, 2.0e6, 0.1e6),
          Result("cpu", 10000, 9.0e6, 1e6),  testing::ProcessResult("io", 10000, {8.5e6, 9.0e6, 11.0e6})};
}

Profile Parse(const std::string& text) {
  absl::StatusOr<Profile> p = ParseProfile(text);
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() ? *p : Profile{};
}

Recommendation Only(const std::vector<v1::CaseResult>& results, const std::string& profile) {
  const std::vector<Recommendation> answers = Recommend(BuildStrategyMap(results), Parse(profile));
  EXPECT_EQ(answers.size(), 1u);
  return answers.empty() ? Recommendation{} : answers.front();
}

TEST(RecommendTest, OnAMeasuredPointItIsThatPointsVerdict) {
  const Recommendation r = Only(OneSweep(), "wait_us=10");
  EXPECT_EQ(r.verdict, Verdict::kWinner);
  EXPECT_EQ(r.group, "batch/synthetic[cpu_ns=1000]/blocking/any");
  EXPECT_EQ(r.best, "cpu");
  EXPECT_EQ(r.runner_up, "io");
  // The paired ratio (ln 2 in every round, up to rounding); the prior fitted to the
  // sweep's points (three exact, one noisy) has little weight: a narrow interval.
  EXPECT_NEAR(r.ratio, 2.0, 1e-12);
  EXPECT_NEAR(r.ratio_low, 1.9990803, 1e-6);
  EXPECT_NEAR(r.ratio_high, 2.0009201, 1e-6);
  ASSERT_EQ(r.points.size(), 1u);
  EXPECT_EQ(r.points[0].point[0].second, 10);
  // The profile's cpu_ns equals the sweep's fixed value: still on the point.
  EXPECT_EQ(Only(OneSweep(), "wait_us=10,cpu_us=1").verdict, Verdict::kWinner);
}

TEST(RecommendTest, BetweenTwoPointsThatAgreeTheirWinnerWithTheSmallerMargin) {
  const Recommendation r = Only(OneSweep(), "wait_ms=0.05");  // wait_us=50, between 10 and 100
  EXPECT_EQ(r.verdict, Verdict::kWinner);
  EXPECT_EQ(r.best, "cpu");
  ASSERT_EQ(r.points.size(), 2u);
  EXPECT_EQ(r.points[0].point[0].second, 10);
  EXPECT_EQ(r.points[1].point[0].second, 100);
  // The margin is the weaker bracketing point's (wait_us=100: the paired ratio of
  // {1.4/0.9, 1.5, 1.6/1.1}, 1.503x [1.443x, 1.565x]).
  EXPECT_NEAR(r.ratio, 1.5028006, 1e-6);
  EXPECT_NEAR(r.ratio_low, 1.4028155, 1e-6);
  EXPECT_NEAR(r.ratio_high, 1.6099121, 1e-6);
  const std::string text = FormatRecommendations(Parse("wait_us=50"), {{"vm", {r}}});
  EXPECT_THAT(text, HasSubstr("1.50x [1.40x, 1.61x] over io"));
}

TEST(RecommendTest, BetweenPointsWithDifferentWinnersIsACrossover) {
  const Recommendation r = Only(OneSweep(), "wait_us=300");
  EXPECT_EQ(r.verdict, Verdict::kCrossover);
  EXPECT_TRUE(r.best.empty());
  ASSERT_EQ(r.points.size(), 2u);
  EXPECT_EQ(r.points[0].decisive_winner(), "cpu");
  EXPECT_EQ(r.points[1].decisive_winner(), "io");
  ASSERT_EQ(r.crossovers.size(), 1u);
  EXPECT_EQ(r.crossovers[0].from, "cpu");
  EXPECT_EQ(r.crossovers[0].to, "io");
  EXPECT_EQ(r.crossovers[0].low, 100);
  EXPECT_EQ(r.crossovers[0].high, 1000);
  const std::string text = FormatRecommendations(Parse("wait_us=300"), {{"vm", {r}}});
  EXPECT_THAT(text, HasSubstr("at a crossover: cpu / io"));
  EXPECT_THAT(text, HasSubstr("wait_us=100: cpu | wait_us=1000: io; cpu -> io at wait_us~"));
}

TEST(RecommendTest, OutsideTheSweepIsNotMeasuredNeverExtrapolated) {
  for (const char* profile : {"wait_us=20000", "wait_us=5"}) {
    const Recommendation r = Only(OneSweep(), profile);
    EXPECT_EQ(r.verdict, Verdict::kNotMeasured) << profile;
    EXPECT_THAT(r.reason, HasSubstr("is outside the measured 10..10000")) << profile;
    EXPECT_TRUE(r.points.empty());
    EXPECT_TRUE(r.best.empty());
    const std::string text = FormatRecommendations(Parse(profile), {{"vm", {r}}});
    EXPECT_THAT(text, HasSubstr("not measured near this profile"));
  }
  // A parameter the sweep held fixed at another value, and a swept one left out.
  const Recommendation fixed = Only(OneSweep(), "cpu_us=50,wait_us=100");
  EXPECT_EQ(fixed.verdict, Verdict::kNotMeasured);
  EXPECT_EQ(fixed.reason, "cpu_ns=50000: this sweep measured cpu_ns=1000 only");
  const Recommendation missing = Only(OneSweep(), "cpu_ns=1000");
  EXPECT_EQ(missing.verdict, Verdict::kNotMeasured);
  EXPECT_EQ(missing.reason, "the profile gives no wait_us (swept 10..10000)");
  // Fixed workloads only: nothing to answer from.
  std::vector<v1::CaseResult> fixed_only = {Result("cpu", 10, 1e6, 1e5)};
  fixed_only[0].mutable_spec()->clear_synthetic();
  fixed_only[0].mutable_spec()->clear_swept();
  fixed_only[0].mutable_spec()->set_workload("arithmetic");
  const Recommendation none = Only(fixed_only, "wait_us=10");
  EXPECT_EQ(none.verdict, Verdict::kNotMeasured);
  EXPECT_EQ(none.reason, "no synthetic sweep measured ok on this device");
}

TEST(RecommendTest, AnUndecidedPointIsReportedWithItsReasonNeverAsAWinner) {
  const Recommendation on = Only(OneSweep(), "wait_us=10000");
  EXPECT_EQ(on.verdict, Verdict::kUndecided);
  EXPECT_THAT(on.tied, ElementsAre("cpu", "io"));
  EXPECT_THAT(on.reason, HasSubstr("wait_us=10000: undecided: io 1.05x [0.95x, 1.16x] against cpu straddles"));
  // Between a decided point (io at 1000) and an undecided one: undecided, the decided
  // winner first.
  const Recommendation between = Only(OneSweep(), "wait_us=3000");
  EXPECT_EQ(between.verdict, Verdict::kUndecided);
  EXPECT_THAT(between.tied, ElementsAre("io", "cpu"));
  const std::string text = FormatRecommendations(Parse("wait_us=3000"), {{"vm", {between}}});
  EXPECT_THAT(text, HasSubstr("undecided: io, cpu"));
  EXPECT_THAT(text, HasSubstr("wait_us=1000: io | wait_us=10000: undecided: "));
  EXPECT_EQ(VerdictName(between.verdict), "undecided");
}

TEST(RecommendTest, EquivalentPointsAnswerEquivalent) {
  // cpu and io within 1 % in every round of a quiet device: equivalent at both points.
  std::vector<v1::CaseResult> results;
  for (uint32_t wait : {10u, 100u}) {
    results.push_back(testing::ProcessResult("cpu", wait, {1.00e6, 1.001e6, 0.999e6}));
    results.push_back(testing::ProcessResult("io", wait, {1.005e6, 1.006e6, 1.004e6}));
  }
  const Recommendation r = Only(results, "wait_us=50");
  EXPECT_EQ(r.verdict, Verdict::kEquivalent);
  EXPECT_THAT(r.tied, ElementsAre("cpu", "io"));
  EXPECT_EQ(VerdictName(r.verdict), "equivalent");
  const nlohmann::json doc = nlohmann::json::parse(RecommendationsJson(Parse("wait_us=50"), {{"vm", {r}}}));
  EXPECT_EQ(doc["devices"][0]["answers"][0]["verdict"], "equivalent");
  EXPECT_DOUBLE_EQ(doc["devices"][0]["answers"][0]["margin"].get<double>(), 0.02);
}

TEST(RecommendTest, TwoSweptParametersUseTheFourCorners) {
  std::vector<v1::CaseResult> results;
  for (uint32_t cpu : {100u, 1000u}) {
    for (uint32_t wait : {10u, 100u}) {
      // io wins everywhere except at (cpu 1000, wait 10).
      const bool cpu_wins = cpu == 1000 && wait == 10;
      results.push_back(Result("cpu", wait, cpu_wins ? 1e6 : 3e6, 1e5, cpu, true));
      results.push_back(Result("io", wait, cpu_wins ? 3e6 : 1e6, 1e5, cpu, true));
    }
  }
  const Recommendation inside = Only(results, "wait_us=50,cpu_ns=300");
  EXPECT_EQ(inside.verdict, Verdict::kCrossover);
  EXPECT_EQ(inside.points.size(), 4u);
  const Recommendation edge = Only(results, "wait_us=50,cpu_ns=100");  // on the cpu=100 line: io twice
  EXPECT_EQ(edge.verdict, Verdict::kWinner);
  EXPECT_EQ(edge.best, "io");
  EXPECT_EQ(edge.points.size(), 2u);
  EXPECT_EQ(Only(results, "wait_us=50,cpu_ns=3000").verdict, Verdict::kNotMeasured);
}

TEST(RecommendTest, JsonCarriesTheVerdictAndThePoints) {
  const Profile profile = Parse("cpu_us=1,wait_us=50");
  const std::vector<Recommendation> answers = Recommend(BuildStrategyMap(OneSweep()), profile);
  const nlohmann::json doc = nlohmann::json::parse(RecommendationsJson(profile, {{"vm", answers}}));
  EXPECT_EQ(doc.at("profile").at("cpu_ns"), 1000);
  EXPECT_EQ(doc.at("profile").at("wait_us"), 50);
  const nlohmann::json& a = doc.at("devices").at(0).at("answers").at(0);
  EXPECT_EQ(doc.at("devices").at(0).at("device"), "vm");
  EXPECT_EQ(a.at("verdict"), "winner");
  EXPECT_EQ(a.at("best"), "cpu");
  EXPECT_EQ(a.at("runner_up"), "io");
  EXPECT_NEAR(a.at("ratio").get<double>(), 1.5028006, 1e-6);
  EXPECT_EQ(a.at("points").at(0).at("kind"), "decided");
  ASSERT_EQ(a.at("points").size(), 2u);
  EXPECT_EQ(a.at("points").at(1).at("point").at("wait_us"), 100);
  EXPECT_EQ(a.at("points").at(1).at("winner"), "cpu");
  EXPECT_THAT(doc.at("near").get<std::string>(), HasSubstr("never an interpolation"));
}

// AnswerSentence says each kind of answer in one sentence from the answer's own fields
// (the Recommend page shows it; the JSON carries it as "answer").
TEST(RecommendTest, EveryAnswerIsOneSentence) {
  EXPECT_EQ(AnswerSentence(Only(OneSweep(), "wait_us=10")),
            "Use cpu: 2.00x [2.00x, 2.00x] faster than io at the measured points around the profile.");
  EXPECT_THAT(AnswerSentence(Only(OneSweep(), "wait_us=300")),
              ::testing::MatchesRegex("At a crossover: cpu / io \\(io overtakes cpu at wait_us ~[0-9]+\\)\\."));
  EXPECT_THAT(AnswerSentence(Only(OneSweep(), "wait_us=10000")),
              ::testing::StartsWith("Not decided between cpu, io: wait_us=10000: undecided: io 1.05x [0.95x, 1.16x]"));
  EXPECT_EQ(AnswerSentence(Only(OneSweep(), "wait_us=20000")),
            "Not measured near this profile: wait_us=20000 is outside the measured 10..10000.");
  std::vector<v1::CaseResult> results;
  for (uint32_t wait : {10u, 100u}) {
    results.push_back(testing::ProcessResult("cpu", wait, {1.00e6, 1.001e6, 0.999e6}));
    results.push_back(testing::ProcessResult("io", wait, {1.005e6, 1.006e6, 1.004e6}));
  }
  const Recommendation equivalent = Only(results, "wait_us=50");
  EXPECT_EQ(AnswerSentence(equivalent),
            "Any of cpu, io: equivalent within 2.0 % at the measured points around the profile.");
  const nlohmann::json doc = nlohmann::json::parse(RecommendationsJson(Parse("wait_us=50"), {{"vm", {equivalent}}}));
  EXPECT_EQ(doc["devices"][0]["answers"][0]["answer"], AnswerSentence(equivalent));
  EXPECT_EQ(RecommendationsJsonValue(Parse("wait_us=50"), {{"vm", {equivalent}}}), doc);
}

TEST(RecommendTest, ProfileKeysMapToParametersAndBadOnesAreNamed) {
  const Profile p = Parse(" cpu_us = 50 , wait_ms=2, alloc_kib=1, touch_mib=0.5");
  EXPECT_EQ(p.params, (std::vector<std::pair<std::string, double>>{
                          {"cpu_ns", 50000}, {"wait_us", 2000}, {"alloc_bytes", 1024}, {"touch_kib", 512}}));
  // Echoed in the units given (issue 34's trial, D8: cpu_us=1 was echoed as cpu_ns=1000).
  EXPECT_EQ(FormatProfile(p), "cpu_us=50, wait_ms=2, alloc_kib=1, touch_mib=0.5");
  EXPECT_EQ(FormatProfile(Parse("cpu_us=1")), "cpu_us=1");
  Profile in_code;
  in_code.params = {{"cpu_ns", 1000}};
  EXPECT_EQ(FormatProfile(in_code), "cpu_ns=1000");

  auto error = [](const std::string& text) {
    absl::StatusOr<Profile> p = ParseProfile(text);
    EXPECT_FALSE(p.ok()) << text;
    EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument) << text;
    return std::string(p.status().message());
  };
  EXPECT_EQ(error("cpus=5"),
            "unknown key \"cpus\"; allowed keys: cpu_ns, cpu_us, cpu_ms, wait_us, wait_ms, alloc_bytes, alloc_kib, "
            "touch_kib, touch_mib");
  EXPECT_EQ(error("cpu_us=-5"), "cpu_us: 0 <= cpu_us <= 1000000 (cpu_ns <= 1000000000), got \"-5\"");
  EXPECT_EQ(error("wait_us=abc"),
            "wait_us: a plain decimal number (e.g. 50 or 0.5) in 0 <= wait_us <= 10000000, got \"abc\"");
  // Only plain decimals: SimpleAtod read "0x10" as 16 and "1e-7" as a number.
  EXPECT_EQ(error("cpu_us=0x10"),
            "cpu_us: a plain decimal number (e.g. 50 or 0.5) in 0 <= cpu_us <= 1000000 (cpu_ns <= 1000000000), got "
            "\"0x10\"");
  EXPECT_THAT(error("cpu_us=1e-7"), HasSubstr("cpu_us: a plain decimal number"));
  EXPECT_THAT(error("cpu_us=+5"), HasSubstr("cpu_us: a plain decimal number"));
  EXPECT_THAT(error("cpu_us=5.0.1"), HasSubstr("cpu_us: a plain decimal number"));
  // A value that rounds to no whole unit of its parameter was silently 0.
  EXPECT_EQ(error("cpu_us=0.0001"),
            "cpu_us: 0.0001 is 0.1 cpu_ns, which rounds to 0 (the parameter counts whole cpu_ns); give 0 or at least "
            "0.0005 cpu_us");
  EXPECT_THAT(error("wait_ms=0.0004"), HasSubstr("wait_ms: 0.0004 is 0.4 wait_us, which rounds to 0"));
  EXPECT_EQ(Parse("cpu_us=0.0005,wait_us=0").params,
            (std::vector<std::pair<std::string, double>>{{"cpu_ns", 0.5}, {"wait_us", 0}}));
  EXPECT_EQ(Parse("cpu_us=.5, wait_ms=2.").keys, (std::vector<std::string>{"cpu_us", "wait_ms"}));
  EXPECT_EQ(error("wait_ms=10001"), "wait_ms: 0 <= wait_ms <= 10000 (wait_us <= 10000000), got \"10001\"");
  EXPECT_THAT(error("wait_us=inf"), HasSubstr("got \"inf\""));
  EXPECT_THAT(error("wait_us=nan"), HasSubstr("got \"nan\""));
  EXPECT_EQ(error("cpu_ns=5,cpu_us=1"), "cpu_us: cpu_ns and cpu_us both set cpu_ns; give one of them");
  EXPECT_EQ(error("cpu_us=50,cpu_us=60"), "cpu_us: given twice; give it once");
  EXPECT_THAT(error("wait_us"), HasSubstr("\"wait_us\": not key=value; allowed keys: cpu_ns"));
  EXPECT_THAT(error(" "), HasSubstr("empty"));
  EXPECT_THAT(error("wait_us=1,"), HasSubstr("not key=value"));
}

}  // namespace
}  // namespace fleetmark::report
