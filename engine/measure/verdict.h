// The verdict of a group: which of several contenders (the strategies of one point of a
// plan — same workload, io mode, placement and sweep values) is fastest, decided from the
// variation that exists BETWEEN processes, on paired ratios. The one rule of "wins",
// "equivalent" and "undecided": the runner's racing (engine/runner), the strategy map,
// `recommend`, `compare` and the web view all call DecideGroup.
//
//   std::vector<Contender> cs = ...;          // each: process medians tagged with rounds
//   VerdictOptions o{.spread = DeviceSpread(all_cases_of_the_run)};
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
// - Interval: mean(d) ± t(0.975, ν)·s̃/√k, with the moderated variance
//   s̃² = ((k-1)·s² + ν0·s0²) / (k-1+ν0) and ν = k-1+ν0 (Smyth, "Linear models and
//   empirical Bayes methods for assessing differential expression in microarray
//   experiments", Stat. Appl. Genet. Mol. Biol. 3(1), 2004, §3-4): s0² is the device's
//   variance of one paired log ratio (2·spread², DeviceSpread below) with ν0 =
//   kPriorDegreesOfFreedom, so three processes that happen to agree do not give a
//   falsely narrow interval, and three that disagree are not swamped by the prior.
//   Reported as the ratio exp(mean) and [exp(low), exp(high)].
// - Racing (F-race, Birattari, Stützle, Paquete & Varrentrapp, "A racing algorithm for
//   configuring metaheuristics", GECCO 2002; successive elimination, Even-Dar, Mannor &
//   Mansour, "Action elimination and stopping conditions for the multi-armed bandit",
//   JMLR 7, 2006): a contender is OUT when its whole interval against the leader lies
//   above 1 + margin AND it was slower in every paired round; OUT contenders need no more
//   processes. A 40x gap from one sample per process is out after min_processes rounds.
// - Margin: max(min_margin, kMarginSpreads · spread) — the smallest difference this
//   device can tell apart from process-to-process noise; a gap below it is never "wins".
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
  bool slower_every_round = false;  // d_r > 0 in every paired round
  bool out = false;        // decided slower: low > 1 + margin and slower_every_round
  bool within_margin = false;  // [low, high] inside [1 / (1 + margin), 1 + margin]
};

struct VerdictOptions {
  double min_margin = 0.02;  // fraction (0.02 = 2 %), >= 0
  int min_processes = 3;     // paired rounds needed before any verdict
  // The device's between-process spread: the standard deviation of ln(process median)
  // around each case's mean (DeviceSpread). 0 = unknown (the prior then is
  // kDefaultSpread).
  double spread = 0;
};

inline constexpr double kDefaultSpread = 0.03;        // used when a device's is unknown
inline constexpr double kPriorDegreesOfFreedom = 4;   // ν0 of the moderated variance
inline constexpr double kMarginSpreads = 1.0;         // margin = max(min_margin, this · spread)

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

// The device's between-process spread over many cases (each a vector of process
// medians, ns): sqrt of the pooled variance of ln(median) around each case's mean,
// sum over cases of sum (ln m - mean)² / sum (k_c - 1), cases with k_c < 2 skipped.
// 0 when nothing can be pooled. Pure.
double DeviceSpread(const std::vector<std::vector<double>>& process_medians_per_case);

// max(min_margin, kMarginSpreads · spread). Pure.
double MarginFor(double spread, double min_margin);

// Student-t quantile t(p, dof) for p in (0.5, 1), dof > 0 (fractional allowed): Boost.Math's
// inverse Student-t (Hill, "Algorithm 396: Student's t-quantiles", CACM 13(10), 1970, with
// Shaw, "Sampling Student's T distribution", J. Comput. Finance 9(4), 2006, refined on the
// incomplete beta). The one t quantile of fleetmark (statistics.h, ab_compare.h use it).
// p <= 0.5 gives 0; p >= 1 or dof <= 0 gives +inf; NaN gives NaN. Pure.
double StudentTQuantile(double p, double dof);

}  // namespace fleetmark::engine
