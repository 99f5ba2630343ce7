// The verdict rule (verdict.h) on synthetic process medians with known answers.
#include "engine/measure/verdict.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetmark::engine {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A contender whose i-th process ran in round i + 1.
Contender C(const std::string& name, const std::vector<double>& medians, bool contended = false) {
  Contender c{.name = name, .rounds = {}, .process_medians_ns = medians, .contended = contended};
  for (size_t i = 0; i < medians.size(); ++i) c.rounds.push_back(static_cast<uint32_t>(i + 1));
  return c;
}

TEST(StudentTQuantileTest, MatchesTheTable) {
  // Abramowitz & Stegun, Table 26.10.
  EXPECT_NEAR(StudentTQuantile(0.975, 1), 12.706, 1e-3);
  EXPECT_NEAR(StudentTQuantile(0.975, 2), 4.303, 1e-3);
  EXPECT_NEAR(StudentTQuantile(0.975, 6), 2.447, 1e-3);
  EXPECT_NEAR(StudentTQuantile(0.975, 10), 2.228, 1e-3);
  EXPECT_NEAR(StudentTQuantile(0.975, 30), 2.042, 1e-3);
  EXPECT_NEAR(StudentTQuantile(0.95, 4), 2.132, 1e-3);
  // Fractional dof lies between its neighbours (t(0.975, 2.5) = 3.5747).
  EXPECT_NEAR(StudentTQuantile(0.975, 2.5), 3.5747, 1e-3);
  // The normal limit, and the edges.
  EXPECT_NEAR(StudentTQuantile(0.975, 1e9), 1.95996, 1e-4);
  EXPECT_NEAR(StudentTQuantile(0.975, std::numeric_limits<double>::infinity()), 1.95996, 1e-4);
  EXPECT_EQ(StudentTQuantile(0.5, 3), 0);
  EXPECT_TRUE(std::isinf(StudentTQuantile(1, 3)));
  EXPECT_TRUE(std::isinf(StudentTQuantile(0.975, 0)));
  EXPECT_TRUE(std::isinf(StudentTQuantile(0.975, -2)));
  EXPECT_TRUE(std::isnan(StudentTQuantile(std::nan(""), 3)));
  EXPECT_GT(StudentTQuantile(0.975, 1e-3), 1e6);  // a tiny dof: huge, no exception
}

TEST(DeviceSpreadTest, PoolsTheLogVarianceOverCases) {
  // Case 1: ln m = ln 100 ± 0.1 -> sum of squares 0.02 over 1 dof; a one-process case
  // is skipped; case 3 adds 2 dof and no variance.
  const double e = std::exp(0.1);
  EXPECT_NEAR(DeviceSpread({{100 * e, 100 / e}, {50}}), std::sqrt(0.02), 1e-12);
  EXPECT_NEAR(DeviceSpread({{100 * e, 100 / e}, {50}, {7, 7, 7}}), std::sqrt(0.02 / 3), 1e-12);
  // A non-positive median is not a process.
  EXPECT_NEAR(DeviceSpread({{100 * e, 100 / e, 0, -5}}), std::sqrt(0.02), 1e-12);
  EXPECT_EQ(DeviceSpread({}), 0);
  EXPECT_EQ(DeviceSpread({{1}, {2}}), 0);
}

TEST(MarginForTest, IsTheLargerOfTheFloorAndTheSpread) {
  EXPECT_DOUBLE_EQ(MarginFor(0.05, 0.02), 0.05);
  EXPECT_DOUBLE_EQ(MarginFor(0.01, 0.02), 0.02);
  EXPECT_DOUBLE_EQ(MarginFor(0, 0.02), 0.02);
  EXPECT_DOUBLE_EQ(MarginFor(-1, -1), 0);
  EXPECT_DOUBLE_EQ(MarginFor(std::nan(""), 0.03), 0.03);
}

TEST(DecideGroupTest, PairingCancelsDriftCommonToBothContenders) {
  // The machine drifts between rounds (medians 70..150 ns), B is e^0.2 = 1.2214x A in
  // every round. Unpaired, each contender's processes spread ~35 %; paired, d_r = 0.2
  // exactly: s² = 0, s̃² = (0 + 4 · 2 · 0.03²) / 6 = 0.0012, ν = 6,
  // half = t(0.975, 6) · √(0.0012 / 3) = 2.446912 · 0.02 = 0.0489382.
  const std::vector<double> a = {100, 150, 70};
  std::vector<double> b;
  for (double m : a) b.push_back(m * std::exp(0.2));
  EXPECT_GT(DeviceSpread({a, b}), 0.3);  // the unpaired spread would hide a 22 % gap
  const GroupVerdict v = DecideGroup({C("b", b), C("a", a)}, {});
  EXPECT_EQ(v.kind, VerdictKind::kDecided) << v.reason;
  EXPECT_EQ(v.leader, "a");
  EXPECT_DOUBLE_EQ(v.margin, 0.03);  // kDefaultSpread above the 2 % floor
  ASSERT_EQ(v.others.size(), 1u);
  const PairedRatio& p = v.others[0];
  EXPECT_EQ(p.name, "b");
  EXPECT_EQ(p.pairs, 3);
  EXPECT_NEAR(p.ratio, std::exp(0.2), 1e-9);
  EXPECT_NEAR(p.low, 1.16306849, 1e-6);
  EXPECT_NEAR(p.high, 1.28266281, 1e-6);
  EXPECT_TRUE(p.slower_every_round);
  EXPECT_TRUE(p.out);
  EXPECT_FALSE(p.within_margin);
  EXPECT_THAT(v.open, ElementsAre("a"));
  EXPECT_EQ(std::string(VerdictKindName(v.kind)), "decided");
}

TEST(DecideGroupTest, FortyTimesGapWithOneSamplePerProcessIsDecided) {
  // 99.7 ms against 4.96 s, one sample (median) per process, three rounds.
  const std::vector<Contender> cs = {C("direct", {4.96e9, 4.90e9, 5.02e9}), C("pool", {99.7e6, 101e6, 98.9e6})};
  for (double spread : {0.0, 0.2}) {  // the default spread, and a noisy device's
    const GroupVerdict v = DecideGroup(cs, {.spread = spread});
    EXPECT_EQ(v.kind, VerdictKind::kDecided) << v.reason;
    EXPECT_EQ(v.leader, "pool");
    ASSERT_EQ(v.others.size(), 1u);
    EXPECT_TRUE(v.others[0].out);
    EXPECT_GT(v.others[0].low, 30);
    EXPECT_NEAR(v.others[0].ratio, 49.7, 0.5);
    EXPECT_THAT(v.reason, HasSubstr("direct"));
  }
  EXPECT_DOUBLE_EQ(DecideGroup(cs, {.spread = 0.2}).margin, 0.2);
}

TEST(DecideGroupTest, TwoEqualStrategiesBecomeEquivalentNeverDecided) {
  // Both 1000 ns ± 1 % noise that is independent per round (sin / cos streams); device
  // spread 1 %, margin 2 %. Three rounds: the interval still straddles 1.02; from four
  // rounds on it lies inside [1/1.02, 1.02].
  const VerdictOptions o{.min_margin = 0.02, .spread = 0.01};
  for (int k = 1; k <= 30; ++k) {
    std::vector<double> a, b;
    for (int r = 1; r <= k; ++r) {
      a.push_back(1000 * (1 + 0.01 * std::sin(1.3 * r)));
      b.push_back(1000 * (1 + 0.01 * std::cos(2.1 * r)));
    }
    const GroupVerdict v = DecideGroup({C("a", a), C("b", b)}, o);
    EXPECT_NE(v.kind, VerdictKind::kDecided) << k << ": " << v.reason;
    if (k < 3) {
      EXPECT_EQ(v.kind, VerdictKind::kProvisional) << k;
    } else if (k == 3) {
      EXPECT_EQ(v.kind, VerdictKind::kUndecided) << v.reason;
      EXPECT_THAT(v.reason, HasSubstr("straddles the 2.0 % margin"));
    } else {
      EXPECT_EQ(v.kind, VerdictKind::kEquivalent) << k << ": " << v.reason;
      EXPECT_TRUE(v.others[0].within_margin);
      EXPECT_EQ(v.open.size(), 2u);
    }
  }
}

TEST(DecideGroupTest, TenPercentGapWithThreeNoisyProcessesIsUndecided) {
  // Geometric means 105.4 and 115.7 ns (1.10x), but B is faster in round 2:
  // d = {ln 1.25, ln(115/130), ln 1.2}.
  const GroupVerdict v = DecideGroup({C("a", {100, 130, 90}), C("b", {125, 115, 108})}, {});
  EXPECT_EQ(v.kind, VerdictKind::kUndecided) << v.reason;
  EXPECT_EQ(v.leader, "a");
  ASSERT_EQ(v.others.size(), 1u);
  EXPECT_NEAR(v.others[0].ratio, std::exp((std::log(1.25) + std::log(115.0 / 130) + std::log(1.2)) / 3), 1e-9);
  EXPECT_FALSE(v.others[0].slower_every_round);
  EXPECT_FALSE(v.others[0].out);
  EXPECT_FALSE(v.others[0].within_margin);
  EXPECT_LT(v.others[0].low, 1);
  EXPECT_THAT(v.open, ElementsAre("a", "b"));
  EXPECT_THAT(v.reason, HasSubstr("b 1.10x ["));
}

TEST(DecideGroupTest, IntervalAboveTheMarginButNotSlowerEveryRoundIsNotOut) {
  // d = {0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, -0.01}: the interval is far above 1.03 but
  // B was faster once.
  std::vector<double> a(8, 100), b(8, 100 * std::exp(0.5));
  b[7] = 100 * std::exp(-0.01);
  const GroupVerdict v = DecideGroup({C("a", a), C("b", b)}, {});
  ASSERT_EQ(v.others.size(), 1u);
  EXPECT_GT(v.others[0].low, 1.03);
  EXPECT_FALSE(v.others[0].out);
  EXPECT_EQ(v.kind, VerdictKind::kUndecided);
  EXPECT_THAT(v.reason, HasSubstr("not slower in every round"));
}

TEST(DecideGroupTest, ContendedContendersNeitherLeadADecidedGroupNorAreOut) {
  const std::vector<double> fast = {100, 101, 99}, slow = {4000, 4040, 3960};
  GroupVerdict v = DecideGroup({C("a", fast), C("b", slow, /*contended=*/true)}, {});
  EXPECT_EQ(v.kind, VerdictKind::kUndecided);
  EXPECT_THAT(v.reason, HasSubstr("contended: b"));
  ASSERT_EQ(v.others.size(), 1u);
  EXPECT_FALSE(v.others[0].out);
  EXPECT_THAT(v.open, ElementsAre("a", "b"));
  v = DecideGroup({C("a", fast, /*contended=*/true), C("b", slow)}, {});
  EXPECT_EQ(v.kind, VerdictKind::kUndecided);
  EXPECT_EQ(v.leader, "a");
  EXPECT_THAT(v.reason, HasSubstr("contended: a"));
  // Not contended: the same numbers are decided.
  EXPECT_EQ(DecideGroup({C("a", fast), C("b", slow)}, {}).kind, VerdictKind::kDecided);
}

TEST(DecideGroupTest, FewerThanMinProcessesPairedRoundsIsProvisional) {
  GroupVerdict v = DecideGroup({C("a", {100, 100}), C("b", {4000, 4000})}, {});
  EXPECT_EQ(v.kind, VerdictKind::kProvisional);
  EXPECT_EQ(v.reason, "2 paired processes < 3 needed");
  EXPECT_FALSE(v.others[0].out);
  EXPECT_THAT(v.open, ElementsAre("a", "b"));
  // One process: no interval at all.
  v = DecideGroup({C("a", {100}), C("b", {4000})}, {});
  EXPECT_EQ(v.kind, VerdictKind::kProvisional);
  EXPECT_EQ(v.others[0].pairs, 1);
  EXPECT_EQ(v.others[0].low, 0);
  EXPECT_TRUE(std::isinf(v.others[0].high));
  EXPECT_DOUBLE_EQ(v.others[0].ratio, 40);
  // Rounds pair contenders: B ran in rounds 3-5, A in 1-3 -> one pair, provisional
  // though each has three processes.
  Contender b{.name = "b", .rounds = {3, 4, 5}, .process_medians_ns = {4000, 4000, 4000}};
  v = DecideGroup({C("a", {100, 100, 100}), b}, {});
  EXPECT_EQ(v.kind, VerdictKind::kProvisional);
  EXPECT_EQ(v.others[0].pairs, 1);
  // min_processes = 2 accepts two pairs.
  v = DecideGroup({C("a", {100, 101}), C("b", {4000, 4010})}, {.min_processes = 2});
  EXPECT_EQ(v.kind, VerdictKind::kDecided) << v.reason;
}

TEST(DecideGroupTest, RacingKeepsOnlyTheContendersStillOpen) {
  // b is 40x slower (OUT); c overlaps a (d alternating ±5 %): the race goes on between
  // a and c.
  const GroupVerdict v = DecideGroup(
      {C("b", {4000, 4000, 4000, 4000}), C("a", {100, 100, 100, 100}), C("c", {105, 95, 105, 95})}, {});
  EXPECT_EQ(v.kind, VerdictKind::kUndecided);
  EXPECT_EQ(v.leader, "c");  // geometric mean sqrt(105 · 95) = 99.87 < 100
  ASSERT_EQ(v.others.size(), 2u);
  EXPECT_EQ(v.others[0].name, "a");  // by ratio ascending
  EXPECT_EQ(v.others[1].name, "b");
  EXPECT_FALSE(v.others[0].out);
  EXPECT_TRUE(v.others[1].out);
  EXPECT_THAT(v.open, ElementsAre("c", "a"));
}

TEST(DecideGroupTest, EquivalentNamesTheOpenContendersWithinTheMargin) {
  // Three strategies equal to within 0.1 % in every round, a fourth 2x slower. With the
  // default spread (3 %) the prior alone keeps the half-width above the margin until
  // six rounds: t(0.975, 9) · √(4 · 0.0018 / 9 / 6) = 0.0261 < ln 1.03.
  const std::vector<double> base = {1000, 1200, 900, 1100, 1050, 950};
  std::vector<double> b, c, d;
  for (double m : base) {
    b.push_back(m + 1);
    c.push_back(m + 0.5);
    d.push_back(2 * m);
  }
  const GroupVerdict v = DecideGroup({C("a", base), C("b", b), C("c", c), C("d", d)}, {});
  std::vector<double> five(base.begin(), base.end() - 1), five_c(c.begin(), c.end() - 1);
  EXPECT_EQ(DecideGroup({C("a", five), C("c", five_c)}, {}).kind, VerdictKind::kUndecided);
  EXPECT_EQ(v.kind, VerdictKind::kEquivalent) << v.reason;
  EXPECT_THAT(v.open, ElementsAre("a", "c", "b"));
  EXPECT_EQ(v.reason, "c, b within 3.0 % of a");
  EXPECT_TRUE(v.others.back().out);
}

TEST(DecideGroupTest, NoneSingleAndUnusableProcesses) {
  EXPECT_EQ(DecideGroup({}, {}).kind, VerdictKind::kNone);
  // A contender without usable processes (none, 0, NaN) is left out.
  const GroupVerdict v =
      DecideGroup({C("a", {100, 100, 100}), C("empty", {}), C("zero", {0, std::nan("")})}, {});
  EXPECT_EQ(v.kind, VerdictKind::kSingle);
  EXPECT_EQ(v.leader, "a");
  EXPECT_TRUE(v.others.empty());
  EXPECT_EQ(std::string(VerdictKindName(VerdictKind::kNone)), "none");
  // A repeated round keeps its first process; rounds and medians of unequal length are
  // cut to the shorter.
  Contender odd{.name = "b", .rounds = {1, 1, 2, 3, 4}, .process_medians_ns = {4000, 1, 4000, 4000}};
  const GroupVerdict w = DecideGroup({C("a", {100, 100, 100}), odd}, {});
  EXPECT_EQ(w.kind, VerdictKind::kDecided) << w.reason;
  EXPECT_EQ(w.others[0].pairs, 3);
}

}  // namespace
}  // namespace fleetmark::engine
