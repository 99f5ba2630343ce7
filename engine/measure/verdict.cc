// DecideGroup, DeviceSpread, RoundSpread, MarginFor, StudentTQuantile (verdict.h).
#include "engine/measure/verdict.h"

#include <algorithm>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "engine/measure/empirical_bayes.h"

namespace fleetmark::engine {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// A contender's usable processes: round -> ln(median), medians > 0 and finite only (a
// repeated round keeps its first process).
struct Logs {
  const Contender* contender = nullptr;
  std::map<uint32_t, double> by_round;
  double mean_log = 0;  // ln of the geometric mean
};

Logs LogsOf(const Contender& c) {
  Logs out;
  out.contender = &c;
  const size_t n = std::min(c.rounds.size(), c.process_medians_ns.size());
  for (size_t i = 0; i < n; ++i) {
    const double m = c.process_medians_ns[i];
    if (m > 0 && std::isfinite(m)) out.by_round.emplace(c.rounds[i], std::log(m));
  }
  double sum = 0;
  for (const auto& [round, log] : out.by_round) sum += log;
  if (!out.by_round.empty()) out.mean_log = sum / static_cast<double>(out.by_round.size());
  return out;
}

std::string Ratio(double r) { return std::isfinite(r) ? absl::StrFormat("%.2fx", r) : std::string("inf"); }

std::string RatioText(const PairedRatio& p) {
  if (p.pairs < 2) return Ratio(p.ratio);
  return absl::StrCat(Ratio(p.ratio), " [", Ratio(p.low), ", ", Ratio(p.high), "]");
}

std::string Percent(double fraction) { return absl::StrFormat("%.1f %%", fraction * 100); }

// The paired log ratios other - base over the rounds both ran in.
std::vector<double> PairedLogRatios(const Logs& base, const Logs& other) {
  std::vector<double> d;
  for (const auto& [round, log] : other.by_round) {
    const auto it = base.by_round.find(round);
    if (it != base.by_round.end()) d.push_back(log - it->second);
  }
  return d;
}

// The residual sums of one group (verdict.h, DeviceSpread): Σ SS_ij / 2, Σ (k_ij - 1)
// and the degrees of freedom Σ (k_ij - 1) · 2 / C.
struct ResidualSums {
  double squares = 0;
  double pair_dof = 0;
  double dof = 0;
};

ResidualSums ResidualsOf(const std::vector<Logs>& group) {
  ResidualSums sums;
  std::vector<bool> paired(group.size(), false);
  for (size_t i = 0; i < group.size(); ++i) {
    for (size_t j = i + 1; j < group.size(); ++j) {
      const std::vector<double> d = PairedLogRatios(group[i], group[j]);
      if (d.size() < 2) continue;
      double mean = 0;
      for (double x : d) mean += x;
      mean /= static_cast<double>(d.size());
      for (double x : d) sums.squares += (x - mean) * (x - mean) / 2;
      sums.pair_dof += static_cast<double>(d.size() - 1);
      paired[i] = paired[j] = true;
    }
  }
  const double contenders = static_cast<double>(std::count(paired.begin(), paired.end(), true));
  if (contenders >= 2) sums.dof = sums.pair_dof * 2 / contenders;
  return sums;
}

// The group's own residual spread moderated by the prior (verdict.h, Margin):
// sqrt((d_g · s_g² + ν0 · σ0²) / (d_g + ν0)); σ0 when the group has no residual dof.
double GroupSpread(const ResidualSums& own, double prior_sigma, double prior_dof) {
  const double d = own.pair_dof > 0 ? own.dof : 0;
  if (!(d + prior_dof > 0)) return prior_sigma;
  const double variance = d > 0 ? own.squares / own.pair_dof : 0;
  return std::sqrt((d * variance + prior_dof * prior_sigma * prior_sigma) / (d + prior_dof));
}

// The share of a contended contender's time that is certainly its own (verdict.h,
// Contention): s = max(1 - p, (1 - (W·δw + P·δp) / T) / kInterferenceFactor) in
// [0, 1]; a p that is NaN or >= 1 bounds nothing, nor does an unknown count or delay.
double OwnShare(const Logs& l) {
  const Contender& c = *l.contender;
  const double p = c.other_cpu_share;
  double share = p >= 0 && p < 1 ? 1 - p : 0;
  const auto known = [](double x) { return x >= 0 && std::isfinite(x); };
  // A delay of 0 is "not measured" for wake-ups (a sleep always overshoots a little);
  // a preemption probe that saw no preemption measured 0 legitimately.
  if (known(c.wakeups_per_repetition) && known(c.preemptions_per_repetition) && c.wakeup_delay_ns > 0 &&
      std::isfinite(c.wakeup_delay_ns) && known(c.preemption_delay_ns)) {
    const double added =
        c.wakeups_per_repetition * c.wakeup_delay_ns + c.preemptions_per_repetition * c.preemption_delay_ns;
    share = std::max(share, (1 - added / std::exp(l.mean_log)) / kInterferenceFactor);
  }
  return std::clamp(share, 0.0, 1.0);
}

std::vector<Logs> UsableLogs(const std::vector<Contender>& contenders) {
  std::vector<Logs> logs;
  for (const Contender& c : contenders) {
    Logs l = LogsOf(c);
    if (!l.by_round.empty()) logs.push_back(std::move(l));
  }
  return logs;
}

// The leader against `other` over their common rounds, with the moderated interval
// (prior variance s0² with prior_dof degrees of freedom).
PairedRatio Compare(const Logs& leader, const Logs& other, double prior_variance, double prior_dof, double margin,
                    size_t comparisons) {
  PairedRatio p;
  p.name = other.contender->name;
  const std::vector<double> d = PairedLogRatios(leader, other);
  p.pairs = static_cast<int>(d.size());
  p.low = p.tost_low = p.best_low = 0;
  p.high = p.tost_high = kInf;
  if (d.empty()) {  // nothing paired: the ratio of the geometric means, unbounded
    p.ratio = std::exp(other.mean_log - leader.mean_log);
    return p;
  }
  const double k = static_cast<double>(d.size());
  double mean = 0;
  for (double x : d) mean += x;
  mean /= k;
  p.ratio = std::exp(mean);
  p.slower_every_round = std::all_of(d.begin(), d.end(), [](double x) { return x > 0; });
  if (d.size() >= 2) {
    double squares = 0;
    for (double x : d) squares += (x - mean) * (x - mean);
    const double s2 = squares / (k - 1);
    const double nu = k - 1 + prior_dof;
    const double moderated = ((k - 1) * s2 + prior_dof * prior_variance) / nu;
    const double se = std::sqrt(moderated / k);
    const double half = StudentTQuantile(0.975, nu) * se;
    p.low = std::exp(mean - half);
    p.high = std::exp(mean + half);
    // SLOWER's bound (verdict.h): one of `comparisons` simultaneous bounds.
    p.best_low = std::exp(mean - StudentTQuantile(1 - kSlowerAlpha / static_cast<double>(comparisons), nu) * se);
    const double tost_half = StudentTQuantile(0.95, nu) * se;
    p.tost_low = std::exp(mean - tost_half);
    p.tost_high = std::exp(mean + tost_half);
  }
  p.out = p.slower_every_round && p.low > 1 + margin;
  p.within_margin = p.pairs >= 2 && p.tost_low >= 1 / (1 + margin) && p.tost_high <= 1 + margin;
  return p;
}

}  // namespace

const char* VerdictKindName(VerdictKind kind) {
  switch (kind) {
    case VerdictKind::kSingle:
      return "single";
    case VerdictKind::kProvisional:
      return "provisional";
    case VerdictKind::kDecided:
      return "decided";
    case VerdictKind::kEquivalent:
      return "equivalent";
    case VerdictKind::kUndecided:
      return "undecided";
    case VerdictKind::kNone:
      break;
  }
  return "none";
}

double MarginFor(double spread, double min_margin) {
  const double floor = min_margin > 0 && std::isfinite(min_margin) ? min_margin : 0;
  const double scaled = spread > 0 && std::isfinite(spread) ? kMarginSpreads * spread : 0;
  return std::clamp(scaled, floor, std::max(floor, kMaxMargin));
}

ResidualSpread DeviceSpread(const std::vector<std::vector<Contender>>& groups) {
  double squares = 0, pair_dof = 0, dof = 0;
  std::vector<SampleVariance> units;  // each group's residual variance and dof
  for (const std::vector<Contender>& group : groups) {
    const ResidualSums sums = ResidualsOf(UsableLogs(group));
    squares += sums.squares;
    pair_dof += sums.pair_dof;
    dof += sums.dof;
    if (sums.pair_dof > 0) units.push_back({.variance = sums.squares / sums.pair_dof, .dof = sums.dof});
  }
  if (!(pair_dof > 0)) return {};
  ResidualSpread out{.sigma = std::sqrt(squares / pair_dof), .dof = dof};
  if (squares > 0) {
    const VariancePrior prior = FitVariancePrior(units);
    out.prior_sigma = std::sqrt(prior.variance);
    out.prior_dof = prior.dof;
  } else {
    out.prior_sigma = 0;
    out.prior_dof = dof;
  }
  return out;
}

double RoundSpread(const std::vector<std::vector<Contender>>& groups) {
  double squares = 0, dof = 0;
  for (const std::vector<Contender>& group : groups) {
    std::map<uint32_t, std::pair<double, int>> by_round;  // round -> Σ centred log, contenders
    for (const Logs& logs : UsableLogs(group)) {
      if (logs.by_round.size() < 2) continue;
      for (const auto& [round, log] : logs.by_round) {
        by_round[round].first += log - logs.mean_log;
        ++by_round[round].second;
      }
    }
    std::vector<double> effects;
    for (const auto& [round, sum_count] : by_round) {
      if (sum_count.second >= 2) effects.push_back(sum_count.first / sum_count.second);
    }
    if (effects.size() < 2) continue;
    double mean = 0;
    for (double e : effects) mean += e;
    mean /= static_cast<double>(effects.size());
    for (double e : effects) squares += (e - mean) * (e - mean);
    dof += static_cast<double>(effects.size() - 1);
  }
  return dof > 0 ? std::sqrt(squares / dof) : 0;
}

double StudentTQuantile(double p, double dof) {
  if (std::isnan(p) || std::isnan(dof)) return std::numeric_limits<double>::quiet_NaN();
  if (p <= 0.5) return 0;
  if (p >= 1 || !(dof > 0)) return kInf;
  if (std::isinf(dof)) dof = 1e300;  // the normal limit; Boost takes any finite dof
  // Errors become values (an overflow for a tiny dof: +inf) instead of exceptions.
  using Quiet =
      boost::math::policies::policy<boost::math::policies::domain_error<boost::math::policies::ignore_error>,
                                    boost::math::policies::overflow_error<boost::math::policies::ignore_error>,
                                    boost::math::policies::evaluation_error<boost::math::policies::ignore_error>>;
  return boost::math::quantile(boost::math::students_t_distribution<double, Quiet>(dof), p);
}

StudentMean StudentMeanOf(const std::vector<double>& values, double p) {
  StudentMean out;
  if (values.empty()) return out;
  const double n = static_cast<double>(values.size());
  for (double v : values) out.mean += v;
  out.mean /= n;
  if (values.size() < 2) return out;
  double squares = 0;
  for (double v : values) squares += (v - out.mean) * (v - out.mean);
  out.half_width = StudentTQuantile(p, n - 1) * std::sqrt(squares / (n - 1) / n);
  return out;
}

GroupVerdict DecideGroup(const std::vector<Contender>& contenders, const VerdictOptions& options) {
  GroupVerdict v;
  const std::vector<Logs> logs = UsableLogs(contenders);
  // Known: measured (> 0), or measured as none (0 over some degrees of freedom).
  const bool dof_known = options.spread_dof >= 0;  // false for NaN
  const bool known = std::isfinite(options.spread) &&
                     (options.spread > 0 || (options.spread == 0 && dof_known && options.spread_dof > 0));
  const double spread = known ? options.spread : kDefaultSpread;
  if (logs.empty()) {
    v.margin = MarginFor(spread, options.min_margin);
    v.reason = "nothing measured";
    return v;
  }
  // The leader: the smallest geometric mean (the first of equals).
  size_t lead = 0;
  for (size_t i = 1; i < logs.size(); ++i) {
    if (logs[i].mean_log < logs[lead].mean_log) lead = i;
  }
  v.leader = logs[lead].contender->name;
  v.open = {v.leader};
  if (logs.size() == 1) {
    v.margin = MarginFor(spread, options.min_margin);
    v.kind = VerdictKind::kSingle;
    v.reason = "only one strategy";
    return v;
  }
  // The prior (verdict.h, Interval): s0² = 2σ0², ν0 at most kMaxPriorDegreesOfFreedom.
  const double prior_variance = 2 * spread * spread;
  const double prior_dof =
      known && dof_known ? std::min(options.spread_dof, kMaxPriorDegreesOfFreedom) : kPriorDegreesOfFreedom;
  v.margin = MarginFor(GroupSpread(ResidualsOf(logs), spread, prior_dof), options.min_margin);
  for (size_t i = 0; i < logs.size(); ++i) {
    if (i != lead) {
      v.others.push_back(Compare(logs[lead], logs[i], prior_variance, prior_dof, v.margin, logs.size() - 1));
    }
  }
  std::stable_sort(v.others.begin(), v.others.end(),
                   [](const PairedRatio& a, const PairedRatio& b) { return a.ratio < b.ratio; });
  // A contended contender is OUT only beyond what its contention can explain (verdict.h,
  // Contention): low · s > 1 + margin; it is never within the margin.
  std::vector<std::string> contended;
  for (const Logs& l : logs) {
    if (!l.contender->contended) continue;
    const double kept = OwnShare(l);
    auto it = std::find_if(v.others.begin(), v.others.end(),
                           [&](const PairedRatio& o) { return o.name == l.contender->name; });
    if (it != v.others.end()) {
      it->out = it->out && it->low * kept > 1 + v.margin;
      it->within_margin = false;
      if (it->out) continue;  // out all the same: its contention no longer matters
    }
    contended.push_back(l.contender->name);
  }
  // SLOWER (verdict.h): significantly behind the leader, not a candidate.
  bool any_slower = false;
  for (PairedRatio& p : v.others) {
    const bool was_contended = std::find(contended.begin(), contended.end(), p.name) != contended.end();
    p.slower = !p.out && !p.within_margin && !was_contended && p.pairs >= 2 && p.best_low > 1;
    any_slower = any_slower || p.slower;
    if (!p.out && !p.slower) v.open.push_back(p.name);
  }

  const int min_processes = std::max(1, options.min_processes);
  int fewest = v.others.front().pairs;
  for (const PairedRatio& p : v.others) fewest = std::min(fewest, p.pairs);
  if (fewest < min_processes) {
    // Too few paired rounds: nothing is OUT yet, whatever the interval says.
    for (PairedRatio& p : v.others) p.out = p.slower = false;
    v.open = {v.leader};
    for (const PairedRatio& p : v.others) v.open.push_back(p.name);
    v.kind = VerdictKind::kProvisional;
    v.reason = absl::StrCat(fewest, " paired process", fewest == 1 ? "" : "es", " < ", min_processes, " needed");
    return v;
  }
  if (!contended.empty() && v.open.size() > 1) {
    v.kind = VerdictKind::kUndecided;
    v.reason =
        absl::StrCat("contended: ", absl::StrJoin(contended, ", "), " measured while other work used the device");
    return v;
  }
  const PairedRatio* blocking = nullptr;  // the closest other neither OUT, SLOWER nor within the margin
  for (const PairedRatio& p : v.others) {
    if (!p.out && !p.slower && !p.within_margin) {
      blocking = &p;
      break;
    }
  }
  std::string slower_text;  // "; D slower 1.04x [1.02x, 1.06x]"
  for (const PairedRatio& p : v.others) {
    if (!p.slower) continue;
    absl::StrAppend(&slower_text, "; ", p.name, " slower ", RatioText(p),
                    p.low > 1 + v.margin ? " but not slower in every round" : "");
  }
  if (v.open.size() == 1 && !any_slower) {
    v.kind = VerdictKind::kDecided;
    v.reason = absl::StrCat("every other slower in every round beyond the ", Percent(v.margin), " margin; ",
                            v.others.front().name, " ", RatioText(v.others.front()));
  } else if (v.open.size() == 1) {
    v.kind = VerdictKind::kUndecided;
    v.reason =
        absl::StrCat(v.leader, " leads, but not beyond the ", Percent(v.margin), " margin in every round", slower_text);
  } else if (blocking == nullptr) {
    v.kind = VerdictKind::kEquivalent;
    v.reason = absl::StrCat(absl::StrJoin(v.open.begin() + 1, v.open.end(), ", "), " within ", Percent(v.margin),
                            " of ", v.leader, slower_text);
  } else {
    v.kind = VerdictKind::kUndecided;
    v.reason =
        absl::StrCat(blocking->name, " ", RatioText(*blocking), " against ", v.leader,
                     blocking->low > 1 + v.margin ? " but not slower in every round"
                                                  : absl::StrCat(" straddles the ", Percent(v.margin), " margin"));
  }
  return v;
}

}  // namespace fleetmark::engine
