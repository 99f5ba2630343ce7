// AnswerBracket, AnswerWorkload, OverallSentence and their formats (recommend_answer.h).
#include "engine/report/recommend_answer.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "engine/common/text.h"
#include "engine/report/strategy_map_json.h"
#include "engine/report/text_table.h"
#include "engine/scenarios/registry.h"
#include "engine/strategies/registry.h"

namespace fleetmark::report {
namespace {

std::string IoModeOf(const v1::CaseSpec& spec) { return spec.io_mode().empty() ? "blocking" : spec.io_mode(); }
using engine::IsBatch;

const v1::StrategySpec* SpecOf(const std::vector<v1::StrategySpec>& specs, const std::string& label) {
  for (const v1::StrategySpec& s : specs) {
    if ((s.label().empty() ? s.name() : s.label()) == label) return &s;
  }
  return nullptr;
}

// Each label's spec, first seen, from `results`.
std::vector<v1::StrategySpec> SpecsOf(const std::vector<v1::CaseResult>& results) {
  std::vector<v1::StrategySpec> out;
  for (const v1::CaseResult& r : results) {
    v1::StrategySpec s = r.spec().strategy();
    if (s.label().empty()) s.set_label(s.name());
    if (SpecOf(out, s.label()) == nullptr) out.push_back(std::move(s));
  }
  return out;
}

std::string Described(const std::vector<v1::StrategySpec>& specs, const std::string& label) {
  const v1::StrategySpec* s = SpecOf(specs, label);
  return s == nullptr ? label : DescribeStrategy(*s);
}

std::string ParamsText(const std::vector<std::pair<std::string, double>>& params) {
  std::vector<std::string> parts;
  for (const auto& [name, value] : params) parts.push_back(absl::StrCat(name, "=", FormatParamValue(value)));
  return absl::StrJoin(parts, ",");
}

// "a", "a or b", "a, b or c"; past kMaxNamed items "a, b, c or 10 others" (a sentence,
// not a table: the full list is in the points' tables and the JSON).
constexpr size_t kMaxNamed = 3;
std::string OrList(const std::vector<std::string>& items) {
  if (items.size() <= 1) return items.empty() ? "" : items.front();
  if (items.size() > kMaxNamed + 1) {
    return absl::StrCat(absl::StrJoin(items.begin(), items.begin() + kMaxNamed, ", "), " or ", items.size() - kMaxNamed,
                        " others");
  }
  return absl::StrCat(absl::StrJoin(items.begin(), items.end() - 1, ", "), " or ", items.back());
}

// What the answer of one io mode recommends: "fixed_pool with 64 threads", "coroutine or
// fiber (equivalent within 2.0 %)", "coroutine or fiber (not told apart)".
std::string Choice(const IoModeAnswer& a) {
  if (a.verdict == AnswerKind::kWinner) return DescribeStrategy(a.best_spec);
  // One strategy at several sizes: "fixed_pool with 64 or 100 threads".
  std::vector<std::string> threads;
  for (const std::string& label : a.tied) {
    const v1::StrategySpec* s = SpecOf(a.tied_specs, label);
    if (s == nullptr || s->name() != a.best_spec.name() || s->threads() == 0) break;
    threads.push_back(absl::StrCat(s->threads()));
  }
  if (threads.size() == a.tied.size() && threads.size() >= 2) {
    return absl::StrCat(a.best_spec.name(), " with ", OrList(threads), " threads (", a.open_note, ")");
  }
  return absl::StrCat(OrList(a.tied_text), " (", a.open_note, ")");
}

// The caveat of a winner that another strategy beats at a neighbour.
std::string Caveat(const IoModeAnswer& a) {
  if (a.changes_at.empty()) return "";
  std::vector<std::string> at;
  for (const AnswerPoint& p : a.points) {
    if (std::find(a.changes_at.begin(), a.changes_at.end(), p.role) == a.changes_at.end()) continue;
    at.push_back(absl::StrCat(p.point.decisive_winner(), " at ", ParamsText(p.params)));
  }
  return absl::StrCat(" (near a crossover: ", absl::StrJoin(at, ", "), ")");
}

const MapEntry* Fastest(const IoModeAnswer& a) {
  if (a.verdict == AnswerKind::kNotMeasured || a.points.empty() || a.points.front().point.ranked.empty())
    return nullptr;
  return &a.points.front().point.ranked.front();
}

}  // namespace

const char* AnswerKindName(AnswerKind kind) {
  switch (kind) {
    case AnswerKind::kWinner:
      return "winner";
    case AnswerKind::kOpen:
      return "open";
    case AnswerKind::kNotMeasured:
      break;
  }
  return "not_measured";
}

std::string DescribeStrategy(const v1::StrategySpec& spec) {
  const engine::StrategyTraits* t = engine::FindStrategy(spec.name());
  if (t == nullptr || t->ignores_threads) return spec.name();
  if (spec.threads() > 0)
    return absl::StrCat(spec.name(), " with ", spec.threads(), spec.threads() == 1 ? " thread" : " threads");
  if (!t->suspending && t->concurrency == engine::Concurrency::kThreads) {
    return absl::StrCat(spec.name(), " with one thread per CPU");
  }
  return spec.name();
}

IoModeAnswer AnswerIoMode(const std::string& io_mode, std::vector<AnswerPoint> points,
                          const std::vector<v1::StrategySpec>& specs) {
  IoModeAnswer a;
  a.io_mode = io_mode;
  a.points = std::move(points);
  if (a.points.empty() || !a.points.front().measured || a.points.front().point.ranked.empty()) {
    a.verdict = AnswerKind::kNotMeasured;
    a.reason = "no strategy measured ok at the profile";
    return a;
  }
  const MapPoint& p = a.points.front().point;
  a.verdict_text = VerdictText(p);
  a.best = p.winner();
  if (const v1::StrategySpec* s = SpecOf(specs, a.best))
    a.best_spec = *s;
  else
    a.best_spec.set_name(a.best);
  if (p.ranked.size() >= 2) {
    a.runner_up = p.ranked[1].strategy;
    a.ratio = p.ratio;
    a.ratio_low = p.ratio_low;
    a.ratio_high = p.ratio_high;
  }
  if (p.tie) {
    a.verdict = AnswerKind::kOpen;
    a.equivalent = p.kind == engine::VerdictKind::kEquivalent;
    if (!a.equivalent) a.reason = p.reason;
    a.open_note = p.kind == engine::VerdictKind::kEquivalent
                      ? absl::StrFormat("equivalent within %.1f %%", 100 * p.margin)
                      : "not told apart";
    a.tied = p.tied;
    for (const std::string& label : a.tied) {
      a.tied_text.push_back(Described(specs, label));
      if (const v1::StrategySpec* s = SpecOf(specs, label)) a.tied_specs.push_back(*s);
    }
    return a;
  }
  a.verdict = AnswerKind::kWinner;
  for (size_t i = 1; i < a.points.size(); ++i) {
    const std::string w = a.points[i].measured ? a.points[i].point.decisive_winner() : "";
    if (!w.empty() && w != a.best) a.changes_at.push_back(a.points[i].role);
  }
  return a;
}

// `spread`: the device's residual spread (SpreadOf its results), the margin's and prior's.
std::string OverallSentence(std::vector<IoModeAnswer>& answers, const engine::ResidualSpread& spread) {
  std::vector<IoModeAnswer*> measured;
  for (IoModeAnswer& a : answers) {
    if (a.verdict != AnswerKind::kNotMeasured) measured.push_back(&a);
  }
  if (measured.empty()) return "no answer: no strategy was measured ok at this profile";
  // Nothing decided and nothing equivalent in any io mode: no "use ..." (that would read
  // as a recommendation); say it is open, why when the verdict says (contended), and
  // what would close it.
  if (std::none_of(measured.begin(), measured.end(),
                   [](const IoModeAnswer* a) { return a->verdict == AnswerKind::kWinner || a->equivalent; })) {
    std::vector<std::string> open;
    bool contended = false;
    for (const IoModeAnswer* a : measured) {
      for (const std::string& t : a->tied_text) {
        if (std::find(open.begin(), open.end(), t) == open.end()) open.push_back(t);
      }
      contended = contended || absl::StartsWith(a->reason, "contended");
    }
    return absl::StrCat("no clear answer yet: ", OrList(open), " were not told apart",
                        contended ? " (other work ran on the machine while they were measured)" : "",
                        "; measure again ", contended ? "on a quiet machine" : "with more processes");
  }
  if (measured.size() == 1) {
    const IoModeAnswer& a = *measured.front();
    return absl::StrCat("use ", Choice(a), a.io_mode == "suspending" ? " with suspending waits" : "", Caveat(a));
  }
  // Two io modes: their fastest strategies compared by the map's one rule.
  IoModeAnswer* suspending = nullptr;
  IoModeAnswer* blocking = nullptr;
  for (IoModeAnswer* a : measured) (a->io_mode == "suspending" ? suspending : blocking) = a;
  if (suspending == nullptr || blocking == nullptr) {
    return absl::StrCat("use ", Choice(*measured.front()), " with ", measured.front()->io_mode, " waits");
  }
  MapPoint across;
  MapEntry s = *Fastest(*suspending), b = *Fastest(*blocking);
  s.strategy = "suspending";
  b.strategy = "blocking";
  across.ranked = {s, b};
  DecidePoint(across, MapOptions{.spread = spread.prior_sigma, .spread_dof = spread.prior_dof});
  const std::string blocking_text = Choice(*blocking) + Caveat(*blocking);
  const std::string suspending_text = Choice(*suspending) + Caveat(*suspending);
  std::string out;
  if (across.tie) {
    // Equivalent: just as fast; undecided or provisional: not told apart (never a silent tie).
    out = absl::StrCat("use ", suspending_text, " with suspending waits or, with blocking waits, ", blocking_text,
                       across.kind == engine::VerdictKind::kEquivalent ? "; both just as fast"
                                                                       : "; which is faster is not told apart here");
  } else if (across.winner() == "suspending") {
    out = absl::StrCat("use ", suspending_text, " with suspending waits; if your waits must block, ", blocking_text);
  } else {
    out = absl::StrCat("use ", blocking_text, " (blocking waits; suspending ones are slower here, best ",
                       suspending_text, ")");
  }
  // The order the sentence names them.
  if (across.tie || across.winner() == "suspending") {
    std::stable_partition(answers.begin(), answers.end(),
                          [](const IoModeAnswer& a) { return a.io_mode == "suspending"; });
  } else {
    std::stable_partition(answers.begin(), answers.end(),
                          [](const IoModeAnswer& a) { return a.io_mode == "blocking"; });
  }
  return out;
}

DeviceAnswer AnswerBracket(const BracketPlan& bracket, const std::string& device,
                           const std::vector<v1::CaseResult>& results) {
  DeviceAnswer out;
  out.device = device;
  const std::vector<v1::StrategySpec> specs = SpecsOf(results);
  for (const std::string& io_mode : bracket.io_modes) {
    std::vector<v1::CaseResult> mine;
    for (const v1::CaseResult& r : results) {
      if (IsBatch(r.spec()) && r.spec().has_synthetic() && IoModeOf(r.spec()) == io_mode) mine.push_back(r);
    }
    const StrategyMap map = BuildStrategyMap(mine);
    std::vector<AnswerPoint> points;
    for (const BracketPoint& bp : bracket.points) {
      AnswerPoint ap;
      ap.role = bp.role;
      ap.params = bp.params;
      for (const MapPoint& p : map.points) {
        bool match = true;
        for (const auto& [name, value] : bp.params) {
          double v = 0;
          for (const auto& lists : {&p.point, &p.fixed}) {
            for (const auto& [n, x] : *lists) {
              if (n == name) v = x;
            }
          }
          match = match && v == value;
        }
        if (match && !p.ranked.empty()) {
          ap.measured = true;
          ap.point = p;
          break;
        }
      }
      points.push_back(std::move(ap));
    }
    out.io_modes.push_back(AnswerIoMode(io_mode, std::move(points), specs));
  }
  std::vector<const v1::CaseResult*> all;
  for (const v1::CaseResult& r : results) all.push_back(&r);
  out.sentence = OverallSentence(out.io_modes, SpreadOf(all));
  return out;
}

DeviceAnswer AnswerWorkload(const std::string& workload, const std::string& device,
                            const std::vector<v1::CaseResult>& results) {
  DeviceAnswer out;
  out.device = device;
  const std::vector<v1::StrategySpec> specs = SpecsOf(results);
  std::vector<std::string> io_modes;
  std::vector<v1::CaseResult> mine;
  for (const v1::CaseResult& r : results) {
    if (!IsBatch(r.spec()) || r.spec().has_synthetic() || r.spec().workload() != workload) continue;
    if (!(r.spec().placement().empty() || r.spec().placement() == "any")) continue;
    mine.push_back(r);
    if (std::find(io_modes.begin(), io_modes.end(), IoModeOf(r.spec())) == io_modes.end()) {
      io_modes.push_back(IoModeOf(r.spec()));
    }
  }
  const StrategyMap map = BuildStrategyMap(mine);
  for (const std::string& io_mode : io_modes) {
    std::vector<AnswerPoint> points(1);
    points[0].role = absl::StrCat(workload, " tasks");
    for (const MapPoint& p : map.points) {
      if (p.group == absl::StrCat("batch/", workload, "/", io_mode, "/any") && !p.ranked.empty()) {
        points[0].measured = true;
        points[0].point = p;
      }
    }
    out.io_modes.push_back(AnswerIoMode(io_mode, std::move(points), specs));
  }
  out.sentence = out.io_modes.empty() ? absl::StrCat("no answer: no ", workload, " batch case was measured ok")
                                      : OverallSentence(out.io_modes, SpreadOf([&] {
                                                          std::vector<const v1::CaseResult*> all;
                                                          for (const v1::CaseResult& r : mine) all.push_back(&r);
                                                          return all;
                                                        }()));
  return out;
}

std::string FormatDeviceAnswers(const std::vector<DeviceAnswer>& answers, const std::string& assumed) {
  std::string out;
  for (const DeviceAnswer& d : answers) {
    TextTable table({{"io mode"}, {"point"}, {"params"}, {"fastest"}, {"ratio [95% CI] over"}, {"verdict"}});
    for (const IoModeAnswer& a : d.io_modes) {
      for (const AnswerPoint& p : a.points) {
        if (!p.measured) {
          table.AddRow({a.io_mode, p.role, ParamsText(p.params), "-", "-", "nothing measured ok"});
          continue;
        }
        const MapPoint& m = p.point;
        table.AddRow({a.io_mode, p.role, ParamsText(p.params), m.winner(),
                      m.ranked.size() >= 2 ? absl::StrCat(PointRatioText(m), " ", m.ranked[1].strategy) : "-",
                      VerdictText(m)});
      }
    }
    absl::StrAppend(&out, EscapeForTerminal(d.device), ": ", d.sentence, "\n", table.Render());
  }
  if (!assumed.empty()) absl::StrAppend(&out, "assumed: ", assumed, "\n");
  return out;
}

nlohmann::json DeviceAnswerJson(const DeviceAnswer& d) {
  auto bounded = [](bool winner, double v) { return winner && std::isfinite(v) ? nlohmann::json(v) : nullptr; };
  nlohmann::json io_modes = nlohmann::json::array();
  for (const IoModeAnswer& a : d.io_modes) {
    nlohmann::json points = nlohmann::json::array();
    for (const AnswerPoint& p : a.points) {
      nlohmann::json params = nlohmann::json::object();
      for (const auto& [name, value] : p.params) params[name] = value;
      nlohmann::json j = p.measured ? MapPointJson(p.point) : nlohmann::json::object();
      j["role"] = p.role;
      j["params"] = std::move(params);
      j["measured"] = p.measured;
      j["verdict_text"] = p.measured ? VerdictText(p.point) : "nothing measured ok";
      points.push_back(std::move(j));
    }
    const bool winner = a.verdict == AnswerKind::kWinner && !a.runner_up.empty();
    io_modes.push_back({{"io_mode", a.io_mode},
                        {"verdict", AnswerKindName(a.verdict)},
                        {"verdict_text", a.verdict_text},
                        {"reason", a.reason},
                        {"best", a.best},
                        {"strategy", {{"name", a.best_spec.name()}, {"threads", a.best_spec.threads()}}},
                        {"runner_up", a.runner_up},
                        {"ratio", bounded(winner, a.ratio)},
                        {"ratio_low", bounded(winner, a.ratio_low)},
                        {"ratio_high", bounded(winner, a.ratio_high)},
                        {"tied", a.tied},
                        {"changes_at", a.changes_at},
                        {"points", std::move(points)}});
  }
  return {{"device", d.device}, {"sentence", d.sentence}, {"io_modes", std::move(io_modes)}};
}

std::string BracketAnswersJson(const BracketPlan& bracket, const std::vector<DeviceAnswer>& answers) {
  nlohmann::json profile = nlohmann::json::object();
  for (const auto& [name, value] : bracket.profile.params) profile[name] = value;
  nlohmann::json devices = nlohmann::json::array();
  for (const DeviceAnswer& d : answers) devices.push_back(DeviceAnswerJson(d));
  const nlohmann::json out = {
      {"profile", std::move(profile)},
      {"assumed", {{"tasks", bracket.tasks}, {"io_threads", bracket.io_threads}, {"text", AssumedText(bracket)}}},
      {"plan", bracket.plan.name()},
      {"devices", std::move(devices)}};
  return out.dump(2) + "\n";
}

}  // namespace fleetmark::report
