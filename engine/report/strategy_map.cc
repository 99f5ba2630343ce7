// BuildStrategyMap, FormatStrategyMap (strategy_map.h).
#include "engine/report/strategy_map.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "engine/measure/contention_evidence.h"
#include "engine/plan/case_group.h"
#include "engine/report/case_names.h"
#include "engine/report/text_table.h"
#include "engine/report/units.h"
#include "engine/scenarios/registry.h"
#include "google/protobuf/descriptor.h"

namespace fleetmark::report {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The value of synthetic parameter `name` of `spec` (0 when it has none).
double ParamValue(const v1::CaseSpec& spec, const std::string& name) {
  const google::protobuf::FieldDescriptor* field = v1::SyntheticParams::descriptor()->FindFieldByName(name);
  if (field == nullptr || field->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_UINT32) return 0;
  return v1::SyntheticParams::GetReflection()->GetUInt32(spec.synthetic(), field);
}

// The numeric synthetic parameters of `spec` that are not in `swept`, in field order.
std::vector<std::pair<std::string, double>> FixedParams(const v1::CaseSpec& spec,
                                                        const std::vector<std::string>& swept) {
  std::vector<std::pair<std::string, double>> out;
  const google::protobuf::Descriptor* descriptor = v1::SyntheticParams::descriptor();
  for (int f = 0; f < descriptor->field_count(); ++f) {
    const google::protobuf::FieldDescriptor* field = descriptor->field(f);
    if (field->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_UINT32) continue;
    if (std::find(swept.begin(), swept.end(), field->name()) != swept.end()) continue;
    out.emplace_back(field->name(), ParamValue(spec, field->name()));
  }
  return out;
}

// "4.17 ms (3 proc.)": an entry's centre and how many processes it rests on.
std::string CentreText(const MapEntry& e) {
  const size_t processes = static_cast<size_t>(std::count_if(e.process_medians_ns.begin(), e.process_medians_ns.end(),
                                                             [](double m) { return m > 0 && std::isfinite(m); }));
  return absl::StrCat(FormatNanos(e.centre_ns), " (", processes, " proc.)");
}

bool Mapped(const v1::CaseResult& r) {
  const v1::CaseSpec& spec = r.spec();
  return engine::IsBatch(spec) && r.status() == v1::CASE_STATUS_OK && r.stats().median_ns() > 0 &&
         std::isfinite(r.stats().median_ns());
}

// The verdict's contender for an entry.
engine::Contender ContenderOf(const MapEntry& e) {
  return engine::Contender{.name = e.strategy,
                           .rounds = e.rounds,
                           .process_medians_ns = e.process_medians_ns,
                           .contended = e.contended,
                           .other_cpu_share = e.other_cpu_share,
                           .wakeups_per_repetition = e.episodes.wakeups,
                           .preemptions_per_repetition = e.episodes.preemptions,
                           .wakeup_delay_ns = e.wakeup_delay_ns,
                           .preemption_delay_ns = e.preemption_delay_ns};
}

}  // namespace

MapEntry EntryOf(const v1::CaseResult& r) {
  const v1::Statistics& s = r.stats();
  MapEntry e;
  e.strategy = StrategyLabel(r.spec());
  e.median_ns = s.median_ns();
  e.samples = s.count();
  e.fastest_ns = s.min_ns();
  e.contended = r.contended();
  e.other_cpu_share = r.other_cpu_share();
  e.episodes = engine::WaitEpisodesPerRepetition(r);
  e.wakeup_delay_ns = r.wakeup_delay_ns();
  e.preemption_delay_ns = r.preemption_delay_ns();
  e.quick = r.quick();
  // A CI that was not achieved (too few samples: an infinite half-width) or is
  // degenerate bounds nothing.
  const bool has_ci = std::isfinite(s.ci_half_width_percent()) && s.count() >= 2 && s.ci_low_ns() > 0 &&
                      s.ci_high_ns() >= s.ci_low_ns() && std::isfinite(s.ci_high_ns());
  e.ci_low_ns = has_ci ? std::min(s.ci_low_ns(), s.median_ns()) : 0;
  e.ci_high_ns = has_ci ? std::max(s.ci_high_ns(), s.median_ns()) : kInf;
  e.process_medians_ns.assign(r.process_medians_ns().begin(), r.process_medians_ns().end());
  if (e.process_medians_ns.empty() && s.median_ns() > 0) e.process_medians_ns.push_back(s.median_ns());
  const bool rounds_given = r.process_rounds_size() == static_cast<int>(e.process_medians_ns.size());
  for (size_t i = 0; i < e.process_medians_ns.size(); ++i) {
    e.rounds.push_back(rounds_given ? r.process_rounds(static_cast<int>(i)) : static_cast<uint32_t>(i + 1));
  }
  double log_sum = 0;
  int usable = 0;
  for (double m : e.process_medians_ns) {
    if (m > 0 && std::isfinite(m)) {
      log_sum += std::log(m);
      ++usable;
    }
  }
  e.centre_ns = usable > 0 ? std::exp(log_sum / usable) : 0;
  return e;
}

engine::ResidualSpread SpreadOf(const std::vector<const v1::CaseResult*>& results) {
  // (run, job, point) -> groups of that point; a strategy already in the last group of
  // its point starts a new one.
  std::map<std::vector<std::string>, std::vector<std::vector<engine::Contender>>> points;
  for (const v1::CaseResult* r : results) {
    if (!Mapped(*r)) continue;
    MapEntry e = EntryOf(*r);
    std::vector<std::vector<engine::Contender>>& groups =
        points[{r->run_id(), r->job_id(), engine::CasePointKey(r->spec())}];
    const auto seen = [&](const std::vector<engine::Contender>& g) {
      return std::any_of(g.begin(), g.end(), [&](const engine::Contender& c) { return c.name == e.strategy; });
    };
    if (groups.empty() || seen(groups.back())) groups.emplace_back();
    groups.back().push_back(ContenderOf(e));
  }
  std::vector<std::vector<engine::Contender>> all;
  for (auto& [key, groups] : points) {
    for (auto& g : groups) all.push_back(std::move(g));
  }
  return engine::DeviceSpread(all);
}

MapOptions WithSpreadOf(MapOptions options, const std::vector<const v1::CaseResult*>& results) {
  if (options.spread > 0) return options;
  const engine::ResidualSpread spread = SpreadOf(results);
  options.spread = spread.prior_sigma;
  options.spread_dof = spread.prior_dof;
  return options;
}

void DecidePoint(MapPoint& p, const MapOptions& options) {
  std::stable_sort(p.ranked.begin(), p.ranked.end(),
                   [](const MapEntry& a, const MapEntry& b) { return a.centre_ns < b.centre_ns; });
  std::vector<engine::Contender> contenders;
  for (const MapEntry& e : p.ranked) {
    contenders.push_back(ContenderOf(e));
  }
  const engine::GroupVerdict v = engine::DecideGroup(contenders, {.min_margin = options.min_margin,
                                                                  .min_processes = options.min_processes,
                                                                  .spread = options.spread,
                                                                  .spread_dof = options.spread_dof});
  // The leader first, then the others in the verdict's order; entries the verdict left
  // out (no usable process) last.
  std::vector<std::string> order = {v.leader};
  for (const engine::PairedRatio& o : v.others) order.push_back(o.name);
  std::vector<MapEntry> ranked;
  std::vector<bool> used(p.ranked.size(), false);
  for (const std::string& name : order) {
    for (size_t i = 0; i < p.ranked.size(); ++i) {
      if (!used[i] && p.ranked[i].strategy == name) {
        used[i] = true;
        ranked.push_back(std::move(p.ranked[i]));
        break;
      }
    }
  }
  for (size_t i = 0; i < p.ranked.size(); ++i) {
    if (!used[i]) ranked.push_back(std::move(p.ranked[i]));
  }
  p.ranked = std::move(ranked);
  p.kind = v.kind;
  p.reason = v.reason;
  p.margin = v.margin;
  p.ratio = p.ratio_low = p.ratio_high = 0;
  p.pairs = p.fewest_pairs = 0;
  if (!v.others.empty()) {
    const engine::PairedRatio& r = v.others.front();
    p.ratio = r.ratio;
    p.ratio_low = r.low;
    p.ratio_high = r.high;
    p.pairs = r.pairs;
    p.fewest_pairs = r.pairs;
    for (const engine::PairedRatio& o : v.others) p.fewest_pairs = std::min(p.fewest_pairs, o.pairs);
  }
  p.tie = p.ranked.size() >= 2 && v.kind != engine::VerdictKind::kDecided;
  p.tied.clear();
  if (v.kind == engine::VerdictKind::kDecided) {
    p.tied = {v.leader};
  } else if (!v.leader.empty()) {
    p.tied = v.open;
  }
}

std::string PointRatioText(const MapPoint& p) {
  if (p.ranked.size() < 2 || !(p.ratio > 0)) return "-";
  return p.has_interval() ? FormatRatioWithCi(p.ratio, p.ratio_low, p.ratio_high) : FormatRatio(p.ratio);
}

std::string VerdictText(const MapPoint& p) {
  if (p.ranked.empty()) return "nothing measured";
  if (p.ranked.size() < 2) return "only one strategy";
  switch (p.kind) {
    case engine::VerdictKind::kDecided:
      return absl::StrCat(p.winner(), " wins (", PointRatioText(p), " over ", p.ranked[1].strategy, ")");
    case engine::VerdictKind::kEquivalent:
      return absl::StrFormat("equivalent within %.1f %%: %s", p.margin * 100, absl::StrJoin(p.tied, ", "));
    case engine::VerdictKind::kUndecided:
      return absl::StrCat("undecided: ", p.reason);
    case engine::VerdictKind::kProvisional:
      return absl::StrCat("provisional: ", p.fewest_pairs, p.fewest_pairs == 1 ? " process" : " processes",
                          " — not a verdict");
    case engine::VerdictKind::kSingle:
    case engine::VerdictKind::kNone:
      break;
  }
  return "only one strategy";
}

namespace {

const MapEntry* Find(const MapPoint& p, const std::string& strategy) {
  for (const MapEntry& e : p.ranked) {
    if (e.strategy == strategy) return &e;
  }
  return nullptr;
}

// Where log(centre(to) / centre(from)) crosses 0 between points i..j of `line`
// (ordered by `axis`), interpolated in log(axis) (linearly when a value is 0).
double Estimate(const std::vector<const MapPoint*>& line, size_t axis, size_t i, size_t j, const std::string& from,
                const std::string& to) {
  for (size_t k = i; k < j; ++k) {
    const MapEntry *fa = Find(*line[k], from), *ta = Find(*line[k], to);
    const MapEntry *fb = Find(*line[k + 1], from), *tb = Find(*line[k + 1], to);
    if (!fa || !ta || !fb || !tb) continue;
    if (!(fa->centre_ns > 0 && ta->centre_ns > 0 && fb->centre_ns > 0 && tb->centre_ns > 0)) continue;
    const double da = std::log(ta->centre_ns / fa->centre_ns), db = std::log(tb->centre_ns / fb->centre_ns);
    if (!(da > 0 && db <= 0)) continue;
    const double t = da / (da - db);
    const double xa = line[k]->point[axis].second, xb = line[k + 1]->point[axis].second;
    if (xa > 0 && xb > 0) return std::exp(std::log(xa) + t * (std::log(xb) - std::log(xa)));
    return xa + t * (xb - xa);
  }
  const double lo = line[i]->point[axis].second, hi = line[j]->point[axis].second;
  return lo > 0 ? std::sqrt(lo * hi) : (lo + hi) / 2;
}

void FindCrossovers(const std::vector<const MapPoint*>& group, std::vector<Crossover>& out) {
  const std::vector<std::string>& swept = group.front()->swept;
  for (size_t axis = 0; axis < swept.size(); ++axis) {
    // Lines: the points sharing the other swept values, ordered by this one.
    std::map<std::vector<double>, std::vector<const MapPoint*>> lines;
    for (const MapPoint* p : group) {
      std::vector<double> key;
      for (size_t a = 0; a < p->point.size(); ++a) {
        if (a != axis) key.push_back(p->point[a].second);
      }
      lines[key].push_back(p);
    }
    for (auto& [key, line] : lines) {
      std::stable_sort(line.begin(), line.end(), [axis](const MapPoint* a, const MapPoint* b) {
        return a->point[axis].second < b->point[axis].second;
      });
      std::string last;
      size_t last_index = 0;
      for (size_t k = 0; k < line.size(); ++k) {
        const std::string winner = line[k]->decisive_winner();
        if (winner.empty()) continue;
        if (!last.empty() && winner != last) {
          std::vector<std::pair<std::string, double>> fixed = line[k]->point;
          fixed.erase(fixed.begin() + static_cast<std::ptrdiff_t>(axis));
          const double low = line[last_index]->point[axis].second, high = line[k]->point[axis].second;
          out.push_back(
              Crossover{.group = line[k]->group,
                        .param = swept[axis],
                        .fixed = std::move(fixed),
                        .from = last,
                        .to = winner,
                        .low = low,
                        .high = high,
                        .estimate = std::clamp(Estimate(line, axis, last_index, k, last, winner), low, high)});
        }
        last = winner;
        last_index = k;
      }
    }
  }
}

}  // namespace

std::string FormatRatio(double v) { return std::isfinite(v) ? absl::StrFormat("%.2fx", v) : "inf"; }

std::string FormatParamValue(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15) return absl::StrCat(static_cast<int64_t>(v));
  return ShortestDouble(v);
}

std::string FormatRatioWithCi(double ratio, double low, double high) {
  return absl::StrCat(FormatRatio(ratio), " [", FormatRatio(low), ", ", FormatRatio(high), "]");
}

StrategyMap BuildStrategyMap(const std::vector<v1::CaseResult>& results, const MapOptions& options) {
  StrategyMap map;
  std::vector<std::string> group_order;
  // group -> point values -> index into map.points
  std::map<std::string, std::map<std::vector<double>, size_t>> index;
  for (const v1::CaseResult& r : results) {
    const v1::CaseSpec& spec = r.spec();
    if (!Mapped(r)) continue;
    const std::vector<std::string> swept(spec.swept().begin(), spec.swept().end());
    const std::string group = engine::CaseGroupKey(spec, swept, /*with_swept_values=*/false);
    std::vector<double> values;
    for (const std::string& name : swept) values.push_back(ParamValue(spec, name));
    auto [git, new_group] = index.try_emplace(group);
    if (new_group) group_order.push_back(group);
    auto [pit, new_point] = git->second.try_emplace(values, map.points.size());
    if (new_point) {
      MapPoint p;
      p.group = group;
      p.swept = swept;
      for (size_t a = 0; a < swept.size(); ++a) p.point.emplace_back(swept[a], values[a]);
      p.synthetic = spec.has_synthetic();
      if (p.synthetic) p.fixed = FixedParams(spec, swept);
      map.points.push_back(std::move(p));
    }
    map.points[pit->second].ranked.push_back(EntryOf(r));
  }
  std::vector<const v1::CaseResult*> all;
  for (const v1::CaseResult& r : results) all.push_back(&r);
  const MapOptions decide = WithSpreadOf(options, all);
  for (MapPoint& p : map.points) DecidePoint(p, decide);
  // Groups in first-seen order, points by their values.
  std::vector<MapPoint> ordered;
  for (const std::string& group : group_order) {
    std::vector<const MapPoint*> members;
    for (const auto& [values, i] : index[group]) members.push_back(&map.points[i]);
    if (!members.front()->swept.empty()) FindCrossovers(members, map.crossovers);
    for (const MapPoint* p : members) ordered.push_back(*p);
  }
  map.points = std::move(ordered);
  return map;
}

std::string FormatStrategyMap(const StrategyMap& map) {
  std::string out;
  for (size_t i = 0; i < map.points.size();) {
    const std::string& group = map.points[i].group;
    const std::vector<std::string>& swept = map.points[i].swept;
    std::vector<Column> columns;
    for (const std::string& name : swept) columns.push_back({name, Align::kRight});
    for (const char* header : {"leader", "centre", "runner-up", "centre"}) columns.push_back({header});
    columns.push_back({"paired ratio [95%]", Align::kRight});
    columns.push_back({"verdict"});
    TextTable table(columns);
    for (; i < map.points.size() && map.points[i].group == group; ++i) {
      const MapPoint& p = map.points[i];
      std::vector<std::string> row;
      for (const auto& [name, value] : p.point) row.push_back(FormatParamValue(value));
      const MapEntry& w = p.ranked.front();
      row.push_back(w.strategy);
      row.push_back(CentreText(w));
      if (p.ranked.size() >= 2) {
        row.push_back(p.ranked[1].strategy);
        row.push_back(CentreText(p.ranked[1]));
        row.push_back(PointRatioText(p));
      } else {
        row.insert(row.end(), {"-", "-", "-"});
      }
      row.push_back(VerdictText(p));
      table.AddRow(std::move(row));
    }
    absl::StrAppend(&out, group, swept.empty() ? "" : absl::StrCat("  (swept: ", absl::StrJoin(swept, ", "), ")"), "\n",
                    table.Render());
    for (const Crossover& c : map.crossovers) {
      if (c.group != group) continue;
      std::vector<std::string> fixed;
      for (const auto& [name, value] : c.fixed) fixed.push_back(absl::StrCat(name, "=", FormatParamValue(value)));
      absl::StrAppend(&out, "crossover ", c.param,
                      fixed.empty() ? "" : absl::StrCat(" (", absl::StrJoin(fixed, ", "), ")"), ": ", c.from, " -> ",
                      c.to, " at ~", FormatParamValue(std::round(c.estimate)), ", between ", FormatParamValue(c.low),
                      " and ", FormatParamValue(c.high), "\n");
    }
    out += "\n";
  }
  if (!out.empty()) {
    out += "centre: geometric mean of the strategy's per-process medians (n processes), what the verdict ranks by\n";
  }
  return out;
}

}  // namespace fleetmark::report
