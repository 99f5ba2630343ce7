// The verdict of a group: which of several contenders (the strategies of one point of a
// plan — same workload, io mode, placement and sweep values) is fastest, decided from the
// variation that exists BETWEEN processes, on paired ratios. The one rule of "wins",
// "equivalent" and "undecided": the runner's racing (engine/runner), the strategy map,
// `recommend`, `compare` and the web view all call DecideGroup.
//
//   std::vector<Contender> cs = ...;          // each: process medians tagged with rounds
//   const ResidualSpread s = DeviceSpread(all_groups_of_the_run);
//   VerdictOptions o{.spread = s.sigma, .spread_dof = s.dof};
//   GroupVerdict v = DecideGroup(cs, o);
//   if (v.kind == VerdictKind::kDecided) std::cout << v.leader << " wins";
//
// Method.
// - Levels (Kalibera & Jones, "Rigorous benchmarking in reasonable time", ISMM 2013):
//   a fresh process is the unit that varies between invocations; samples inside one
//   process cannot narrow an interval over processes. A contender is summarised by its
//   process medians, never by its pooled samples.
// - Pairing (randomized multiple interleaved trials, Abedi & Brecht, "Conducting
//   repeatable experiments in highly variable cloud computing environments", ICPE 2017;
//   duet benchmarking, Bulej et al., "Duet benchmarking: improving measurement accuracy
//   in the cloud", ICPE 2020): the contenders of a group run back to back in every round
//   (order shuffled per round), so the process of round r of A and of B saw the same
//   moment of the machine. The comparison rests on the paired log ratios
//   d_r = ln(m_B,r / m_A,r) over the rounds both ran in, which cancel what the round
//   shared (a co-runner, frequency, heat).
// - Noise that pairing does not cancel (DeviceSpread): the additive two-way model of a
//   randomized complete block design, ln m[c][r] = case effect + round effect + residual
//   e[c][r], e ~ N(0, σ²), fitted within each group (the contenders are the treatments,
//   the rounds the blocks; two-way ANOVA without replication: Montgomery, "Design and
//   Analysis of Experiments", 8th ed., ch. 4.1). The round effect is the drift all
//   contenders of a round share (a co-runner, frequency, heat); the ratio of two
//   contenders does not see it, so only σ, the residual, is the device's spread. It is
//   estimated from pairs, which also handles missing rounds: for contenders i, j with
//   k_ij >= 2 common rounds, SS_ij = Σ_r (d_r - mean d)² of their paired log ratios
//   (Var d_r = 2σ² under the model) gives σ² with k_ij - 1 degrees of freedom, so
//   σ̂² = Σ SS_ij / 2 / Σ (k_ij - 1) over the pairs of every group of the run. For a
//   complete group of C contenders and R rounds, Σ_{i<j} SS_ij = C · SS_residual, and σ̂²
//   is exactly the ANOVA's residual mean square SS_residual / ((C-1)(R-1)); its degrees
//   of freedom are counted as Σ (k_ij - 1) · 2 / C per group — (C-1)(R-1) for a complete
//   group; for an incomplete one an approximation (the pairs of one group are not
//   independent), below the exact N - C - R + 1 when some contenders stopped early. Unbiased for σ² also when rounds are missing (each
//   pair's SS_ij / (k_ij - 1) is).
// - Interval: mean(d) ± t(0.975, ν)·s̃/√k, with the moderated variance
//   s̃² = ((k-1)·s² + ν0·s0²) / (k-1+ν0) and ν = k-1+ν0 (Smyth, "Linear models and
//   empirical Bayes methods for assessing differential expression in microarray
//   experiments", Stat. Appl. Genet. Mol. Biol. 3(1), 2004, §3-4): s0² = 2σ̂² is the
//   device's variance of one paired log ratio, so three processes that happen to agree
//   do not give a falsely narrow interval, and three that disagree are not swamped by
//   the prior. ν0 reflects how much independent evidence the prior carries: the pooled
//   residual degrees of freedom minus the group's own (the prior must not count the
//   group's rounds twice: a run of one group gets ν0 = 0, a plain paired t interval),
//   capped at kMaxPriorDegreesOfFreedom because groups differ in their noise (a 10 µs
//   task is noisier than a 10 ms one): a group twice as noisy as the device, at 3
//   rounds, keeps a 95 % interval of ~81 % coverage (~87 % at ν0 = 4) instead of ~67 % with an
//   unbounded prior (simulated, normal residuals; tests/bench/verdict_margin_sim.py); one
//   as noisy as the device: ~97 %. With σ̂ given but its degrees of
//   freedom unknown, ν0 = kPriorDegreesOfFreedom; with no σ̂, s0 = kDefaultSpread and
//   ν0 = kPriorDegreesOfFreedom. Reported as the ratio exp(mean) and [exp(low), exp(high)].
// - Racing (F-race, Birattari, Stützle, Paquete & Varrentrapp, "A racing algorithm for
//   configuring metaheuristics", GECCO 2002; successive elimination, Even-Dar, Mannor &
//   Mansour, "Action elimination and stopping conditions for the multi-armed bandit",
//   JMLR 7, 2006): a contender is OUT when its whole 95 % interval against the leader lies
//   above 1 + margin AND it was slower in every paired round; OUT contenders need no more
//   processes. A 40x gap from one sample per process is out after min_processes rounds.
// - Equivalence (two one-sided tests, Schuirmann, "A comparison of the two one-sided
//   tests procedure and the power approach for assessing the equivalence of average
//   bioavailability", J. Pharmacokinet. Biopharm. 15(6), 1987): a contender is within the
//   margin of the leader when its 90 % interval (t(0.95, ν): both one-sided tests at
//   5 %) lies inside [1/(1 + margin), 1 + margin]; a group is equivalent when every
//   contender not OUT is.
// - Margin: clamp(kMarginSpreads · σ̂, min_margin, max(min_margin, kMaxMargin)) — the
//   smallest difference this device can tell apart from its residual noise (2σ̂ is √2
//   times the standard deviation of one paired log ratio); a gap below it is never
//   "wins". Capped so that "equivalent" stays a useful claim on a noisy device (never
//   "equivalent within 10 %" or more unless min_margin says so). Simulated races of this
//   rule (tests/bench/verdict_margin_sim.py: normal residuals, round drift of σ 0.3,
//   ν0 = 8, decided after every round from 3 up to 10): three equal contenders end
//   equivalent in ~99 % of races at σ = 1-2 % (5 rounds on average) and ~90 % at
//   σ = 3 %, never decided; a 10 % gap is equivalent in none of the races at σ = 2 % or
//   8 % and ~0.2 % at σ = 5 % (where the capped margin is closest to it), and is decided
//   in ~100 % of races at σ = 2 % (3 rounds), ~50 % at σ = 5 %, never for the wrong
//   leader. With kMarginSpreads = 1, equal
//   contenders at σ = 2 % ended equivalent in only ~17 %.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fleetmark::engine {

// One contender of a group: its per-process medians, each tagged with the round (1-based,
// ascending, unique) its process ran in. Rounds pair contenders: only rounds both ran in
// are compared.
struct Contender {
  std::string name;                        // strategy label
  std::vector<uint32_t> rounds;            // round of each process
  std::vector<double> process_medians_ns;  // same length as rounds; > 0
  bool contended = false;  // measured while other work used the device (engine/measure/contention.h)
};

enum class VerdictKind {
  kNone,         // no contender
  kSingle,       // one contender: nothing to compare
  kProvisional,  // fewer than min_processes paired rounds: no verdict may be printed as one
  kDecided,      // the leader beats every other contender (each is OUT)
  kEquivalent,   // the contenders still in are within the margin of the leader
  kUndecided,    // the intervals still straddle the margin: more processes would be needed
};

// "decided" | "equivalent" | "undecided" | "provisional" | "single" | "none".
const char* VerdictKindName(VerdictKind kind);

// The leader against one other contender.
struct PairedRatio {
  std::string name;      // the other contender
  int pairs = 0;         // paired rounds
  double ratio = 0;      // exp(mean d): other / leader (>= 1 for a correct leader)
  double low = 0;        // 95% interval of the ratio; [0, +inf] when pairs < 2
  double high = 0;
  double tost_low = 0;   // 90% interval (the two one-sided tests'); [0, +inf] when pairs < 2
  double tost_high = 0;
  bool slower_every_round = false;  // d_r > 0 in every paired round
  bool out = false;        // decided slower: low > 1 + margin and slower_every_round
  bool within_margin = false;  // [tost_low, tost_high] inside [1 / (1 + margin), 1 + margin]
};

struct VerdictOptions {
  double min_margin = 0.02;  // fraction (0.02 = 2 %), >= 0
  int min_processes = 3;     // paired rounds needed before any verdict
  // The device's residual spread σ̂ (DeviceSpread(...).sigma: the noise of one process's
  // ln median that pairing by round does not cancel), >= 0. 0 with spread_dof 0 =
  // unknown (the prior then is kDefaultSpread); 0 with spread_dof > 0 = measured as none.
  double spread = 0;
  // Its degrees of freedom (DeviceSpread(...).dof), >= 0. 0 = unknown (ν0 is then
  // kPriorDegreesOfFreedom).
  double spread_dof = 0;
};

inline constexpr double kDefaultSpread = 0.015;            // σ when unknown (margin 3 %)
inline constexpr double kPriorDegreesOfFreedom = 4;        // ν0 when the spread's dof is unknown
inline constexpr double kMaxPriorDegreesOfFreedom = 8;     // ν0 never above this
inline constexpr double kMarginSpreads = 2.0;              // margin = this · σ, clamped:
inline constexpr double kMaxMargin = 0.05;                 // ... to at most 5 % (unless min_margin is more)

struct GroupVerdict {
  VerdictKind kind = VerdictKind::kNone;
  std::string leader;               // smallest geometric mean of process medians
  std::vector<PairedRatio> others;  // every other contender, by ratio ascending
  double margin = 0;                // the margin used (fraction)
  std::string reason;               // one line: why this kind ("top two overlap: 1.03x [0.98x, 1.09x]")
  // Contenders that are not OUT (the leader first): those a race still measures.
  std::vector<std::string> open;
};

// Decides one group. Contenders with no process are left out; a contended contender
// can be neither the leader of a decided group nor OUT (the group stays undecided and
// the reason says so). Pure.
GroupVerdict DecideGroup(const std::vector<Contender>& contenders, const VerdictOptions& options);

// The residual spread of a device (method above): σ̂ = sqrt(squares / pair_dof) and the
// degrees of freedom it rests on.
struct ResidualSpread {
  double sigma = 0;  // σ̂ of ln(process median), 0 when nothing could be pooled
  double dof = 0;    // Σ over groups of (C-1)(R-1) (complete groups; see above)
};

// The device's residual spread over the groups of a run (each group: the contenders of
// one point, their process medians tagged with rounds, as DecideGroup takes them; only
// rounds two contenders share count, medians <= 0 or not finite are not processes, a
// repeated round keeps its first process). {0, 0} when no pair of contenders shares two
// rounds. Pure.
ResidualSpread DeviceSpread(const std::vector<std::vector<Contender>>& groups);

// clamp(kMarginSpreads · spread, min_margin, max(min_margin, kMaxMargin)); a negative or
// NaN min_margin counts as 0, a spread <= 0 or NaN as none. Pure.
double MarginFor(double spread, double min_margin);

// Student-t quantile t(p, dof) for p in (0.5, 1), dof > 0 (fractional allowed): Boost.Math's
// inverse Student-t (Hill, "Algorithm 396: Student's t-quantiles", CACM 13(10), 1970, with
// Shaw, "Sampling Student's T distribution", J. Comput. Finance 9(4), 2006, refined on the
// incomplete beta). The one t quantile of fleetmark (statistics.h, ab_compare.h use it).
// p <= 0.5 gives 0; p >= 1 or dof <= 0 gives +inf; NaN gives NaN. Pure.
double StudentTQuantile(double p, double dof);

}  // namespace fleetmark::engine
