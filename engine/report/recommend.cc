// ParseProfile, Recommend and their formats (recommend.h).
#include "engine/report/recommend.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "engine/report/strategy_map_json.h"
#include "engine/report/text_table.h"
#include "engine/scenarios/param_rules.h"

namespace fleetmark::report {
namespace {

// A profile key: the parameter it sets and how many of the parameter's units one of
// its own is.
struct ProfileKey {
  const char* key;
  const char* param;  // a kSyntheticRules field
  double scale;
};

constexpr ProfileKey kProfileKeys[] = {
    {"cpu_ns", "cpu_ns", 1},
    {"cpu_us", "cpu_ns", 1e3},
    {"cpu_ms", "cpu_ns", 1e6},
    {"wait_us", "wait_us", 1},
    {"wait_ms", "wait_us", 1e3},
    {"alloc_bytes", "alloc_bytes", 1},
    {"alloc_kib", "alloc_bytes", 1024},
    {"touch_kib", "touch_kib", 1},
    {"touch_mib", "touch_kib", 1024},
};

// Digits with at most one '.', at least one digit: "50", "0.5", ".5", "5.".
bool IsPlainDecimal(absl::string_view text) {
  bool digit = false, point = false;
  for (char c : text) {
    if (absl::ascii_isdigit(static_cast<unsigned char>(c))) {
      digit = true;
    } else if (c == '.' && !point) {
      point = true;
    } else {
      return false;
    }
  }
  return digit;
}

// `v` (>= 0) as digits without an exponent, as a profile is written: 0.0005, not 5e-04.
std::string PlainDecimal(double v) {
  std::string text = absl::StrFormat("%.12f", v);
  while (text.back() == '0') text.pop_back();
  if (text.back() == '.') text.pop_back();
  return text;
}

const ProfileKey* FindKey(absl::string_view key) {
  for (const ProfileKey& k : kProfileKeys) {
    if (key == k.key) return &k;
  }
  return nullptr;
}

// Equal up to rounding (profile values are converted between units).
bool Same(double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max(1.0, std::fabs(b)); }

const double* Find(const std::vector<std::pair<std::string, double>>& params, const std::string& name) {
  for (const auto& [n, v] : params) {
    if (n == name) return &v;
  }
  return nullptr;
}

std::string PointText(const MapPoint& p) {
  std::vector<std::string> parts;
  for (const auto& [name, value] : p.point) parts.push_back(absl::StrCat(name, "=", FormatParamValue(value)));
  return absl::StrJoin(parts, ",");
}

// A point's own verdict: its decided winner, or the verdict text.
std::string PointVerdict(const MapPoint& p) {
  return p.decisive_winner().empty() ? VerdictText(p) : p.decisive_winner();
}

Recommendation NotMeasured(const MapPoint& first, std::string reason) {
  Recommendation r;
  r.group = first.group;
  r.swept = first.swept;
  r.verdict = Verdict::kNotMeasured;
  r.reason = std::move(reason);
  return r;
}

// The answer for one group's points (all of one group, which sweeps something).
Recommendation RecommendGroup(const std::vector<const MapPoint*>& members, const std::vector<Crossover>& crossovers,
                              const Profile& profile) {
  const MapPoint& first = *members.front();
  // Parameters the group does not sweep must be as measured.
  for (const auto& [name, value] : profile.params) {
    if (std::find(first.swept.begin(), first.swept.end(), name) != first.swept.end()) continue;
    const double* fixed = Find(first.fixed, name);
    if (fixed != nullptr && !Same(value, *fixed)) {
      return NotMeasured(first, absl::StrCat(name, "=", FormatParamValue(value), ": this sweep measured ", name, "=",
                                             FormatParamValue(*fixed), " only"));
    }
  }
  // On each swept axis, the measured values bracketing the profile's.
  std::vector<std::vector<double>> brackets;
  for (size_t axis = 0; axis < first.swept.size(); ++axis) {
    const std::string& name = first.swept[axis];
    std::set<double> values;
    for (const MapPoint* p : members) values.insert(p->point[axis].second);
    const std::string range = absl::StrCat(FormatParamValue(*values.begin()), "..", FormatParamValue(*values.rbegin()));
    const double* x = Find(profile.params, name);
    if (x == nullptr) {
      return NotMeasured(first, absl::StrCat("the profile gives no ", name, " (swept ", range, ")"));
    }
    std::vector<double> bracket;
    for (double v : values) {
      if (Same(*x, v)) bracket = {v};
    }
    if (bracket.empty()) {
      auto hi = values.upper_bound(*x);
      if (hi == values.begin() || hi == values.end()) {
        return NotMeasured(first, absl::StrCat(name, "=", FormatParamValue(*x), " is outside the measured ", range));
      }
      bracket = {*std::prev(hi), *hi};
    }
    brackets.push_back(std::move(bracket));
  }
  // The bracketing points: every combination of the axes' bracket values.
  Recommendation r;
  r.group = first.group;
  r.swept = first.swept;
  std::vector<std::vector<double>> corners = {{}};
  for (const std::vector<double>& bracket : brackets) {
    std::vector<std::vector<double>> next;
    for (const std::vector<double>& c : corners) {
      for (double v : bracket) {
        next.push_back(c);
        next.back().push_back(v);
      }
    }
    corners = std::move(next);
  }
  for (const std::vector<double>& corner : corners) {
    const MapPoint* found = nullptr;
    for (const MapPoint* p : members) {
      bool match = true;
      for (size_t a = 0; a < corner.size(); ++a) match = match && p->point[a].second == corner[a];
      if (match) found = p;
    }
    if (found == nullptr) {
      std::vector<std::string> parts;
      for (size_t a = 0; a < corner.size(); ++a) {
        parts.push_back(absl::StrCat(first.swept[a], "=", FormatParamValue(corner[a])));
      }
      return NotMeasured(
          first, absl::StrCat("the bracketing point ", absl::StrJoin(parts, ","), " has no strategy measured ok"));
    }
    r.points.push_back(*found);
  }
  // The verdict of the bracketing points.
  std::vector<std::string> winners;
  const MapPoint* open = nullptr;  // the first point neither decided nor equivalent
  for (const MapPoint& p : r.points) {
    const std::string w = p.decisive_winner();
    if (!w.empty() && std::find(winners.begin(), winners.end(), w) == winners.end()) winners.push_back(w);
    const bool settled =
        p.kind == engine::VerdictKind::kDecided || p.kind == engine::VerdictKind::kEquivalent || p.ranked.size() < 2;
    if (!settled && open == nullptr) open = &p;
  }
  const bool all_decided =
      std::all_of(r.points.begin(), r.points.end(), [](const MapPoint& p) { return !p.decisive_winner().empty(); });
  if (winners.size() >= 2) {
    r.verdict = Verdict::kCrossover;
    for (const Crossover& c : crossovers) {
      if (c.group != r.group) continue;
      bool inside = true;
      for (size_t a = 0; a < r.swept.size(); ++a) {
        const double lo = brackets[a].front(), hi = brackets[a].back();
        if (r.swept[a] == c.param) {
          inside = inside && c.low <= hi && c.high >= lo;
        } else {
          const double* v = Find(c.fixed, r.swept[a]);
          inside = inside && v != nullptr && *v >= lo && *v <= hi;
        }
      }
      if (inside) r.crossovers.push_back(c);
    }
  } else if (winners.size() == 1 && all_decided) {
    r.verdict = Verdict::kWinner;
    r.best = winners.front();
    // The margin where it is smallest.
    const MapPoint* weakest = &r.points.front();
    for (const MapPoint& p : r.points) {
      if (p.ratio_low < weakest->ratio_low || (p.ratio_low == weakest->ratio_low && p.ratio < weakest->ratio)) {
        weakest = &p;
      }
    }
    r.runner_up = weakest->ranked.size() >= 2 ? weakest->ranked[1].strategy : "";
    r.ratio = weakest->ratio;
    r.ratio_low = weakest->ratio_low;
    r.ratio_high = weakest->ratio_high;
  } else {
    r.verdict = open == nullptr ? Verdict::kEquivalent : Verdict::kUndecided;
    if (open != nullptr) r.reason = absl::StrCat(PointText(*open), ": ", VerdictText(*open));
    r.tied = winners;
    for (const MapPoint& p : r.points) {
      for (const std::string& s : p.tied) {
        if (std::find(r.tied.begin(), r.tied.end(), s) == r.tied.end()) r.tied.push_back(s);
      }
    }
  }
  return r;
}

constexpr char kNear[] =
    "near: every swept parameter on a measured value or between two adjacent measured values, every other given "
    "parameter as measured; the answer is those measured points' verdicts (a winner only when every other strategy "
    "was slower in every paired process round and its interval over >= 3 processes lies above the margin), never an "
    "interpolation";

std::string AnswerText(const Recommendation& r) {
  switch (r.verdict) {
    case Verdict::kWinner:
      return r.best;
    case Verdict::kEquivalent:
      return absl::StrCat("equivalent: ", absl::StrJoin(r.tied, ", "));
    case Verdict::kUndecided:
      return absl::StrCat("undecided: ", absl::StrJoin(r.tied, ", "));
    case Verdict::kCrossover: {
      std::vector<std::string> winners;
      for (const MapPoint& p : r.points) {
        const std::string w = p.decisive_winner();
        if (!w.empty() && std::find(winners.begin(), winners.end(), w) == winners.end()) winners.push_back(w);
      }
      return absl::StrCat("at a crossover: ", absl::StrJoin(winners, " / "));
    }
    case Verdict::kNotMeasured:
      break;
  }
  return "not measured near this profile";
}

std::string MarginText(const Recommendation& r) {
  if (r.verdict != Verdict::kWinner) return "-";
  if (r.runner_up.empty()) return "only strategy measured";
  const bool interval = r.ratio_low > 0 && std::isfinite(r.ratio_high);
  return absl::StrCat(interval ? FormatRatioWithCi(r.ratio, r.ratio_low, r.ratio_high) : FormatRatio(r.ratio), " over ",
                      r.runner_up);
}

std::string FromText(const Recommendation& r) {
  if (r.verdict == Verdict::kNotMeasured) return r.reason;
  if (r.points.size() == 1) {
    const MapPoint& p = r.points.front();
    return absl::StrCat(PointText(p), " (measured): ", PointVerdict(p));
  }
  std::vector<std::string> parts;
  for (const MapPoint& p : r.points) parts.push_back(absl::StrCat(PointText(p), ": ", PointVerdict(p)));
  std::string out = absl::StrJoin(parts, " | ");
  for (const Crossover& c : r.crossovers) {
    absl::StrAppend(&out, "; ", c.from, " -> ", c.to, " at ", c.param, "~", FormatParamValue(std::round(c.estimate)));
  }
  return out;
}

}  // namespace

double ProfileKeyScale(absl::string_view key) {
  const ProfileKey* k = FindKey(key);
  return k == nullptr ? 1 : k->scale;
}

std::string AllowedProfileKeys() {
  std::vector<std::string> keys;
  for (const ProfileKey& k : kProfileKeys) keys.push_back(k.key);
  return absl::StrJoin(keys, ", ");
}

std::string ProfileRangeText(absl::string_view key, absl::string_view param, double max, absl::string_view why) {
  std::string range = absl::StrCat("0 <= ", key, " <= ", FormatParamValue(max / ProfileKeyScale(key)));
  if (!why.empty()) absl::StrAppend(&range, " ", why);
  if (key != param) absl::StrAppend(&range, " (", param, " <= ", FormatParamValue(max), ")");
  return range;
}

absl::StatusOr<Profile> ParseProfile(absl::string_view text, const ProfileLimits* limits) {
  Profile profile;
  std::map<std::string, std::string> keys_given;  // parameter -> the key that set it
  if (absl::StripAsciiWhitespace(text).empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("empty; give key=value[,key=value] with keys ", AllowedProfileKeys()));
  }
  for (absl::string_view term : absl::StrSplit(text, ',')) {
    term = absl::StripAsciiWhitespace(term);
    const size_t eq = term.find('=');
    if (eq == absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("\"", term, "\": not key=value; allowed keys: ", AllowedProfileKeys()));
    }
    const std::string key(absl::StripAsciiWhitespace(term.substr(0, eq)));
    const absl::string_view value_text = absl::StripAsciiWhitespace(term.substr(eq + 1));
    const ProfileKey* k = FindKey(key);
    if (k == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown key \"", key, "\"; allowed keys: ", AllowedProfileKeys()));
    }
    const engine::ParamRule<v1::SyntheticParams>* rule = engine::FindSyntheticRule(k->param);
    // The plan's range, or the caller's narrower one.
    double max = rule->max;
    absl::string_view why;
    if (limits != nullptr) {
      for (const auto& [param, limit] : limits->max) {
        if (param == k->param && limit < max) {
          max = limit;
          why = limits->why;
        }
      }
    }
    const std::string range = ProfileRangeText(key, k->param, max, why);
    double value = 0;
    // Plain decimals only: SimpleAtod also reads hex ("0x10" = 16), exponents, "inf".
    if (absl::StartsWith(value_text, "-") && IsPlainDecimal(value_text.substr(1))) {
      return absl::InvalidArgumentError(absl::StrCat(key, ": ", range, ", got \"", value_text, "\""));
    }
    if (!IsPlainDecimal(value_text) || !absl::SimpleAtod(value_text, &value)) {
      return absl::InvalidArgumentError(
          absl::StrCat(key, ": a plain decimal number (e.g. 50 or 0.5) in ", range, ", got \"", value_text, "\""));
    }
    if (value * k->scale > max * (1 + 1e-12)) {
      return absl::InvalidArgumentError(absl::StrCat(key, ": ", range, ", got \"", value_text, "\""));
    }
    // The plan holds whole units of the parameter: a value that rounds to 0 would
    // silently become "none" of it.
    if (value > 0 && std::llround(value * k->scale) == 0) {
      return absl::InvalidArgumentError(absl::StrCat(key, ": ", value_text, " is ", PlainDecimal(value * k->scale), " ",
                                                     k->param, ", which rounds to 0 (the parameter counts whole ",
                                                     k->param, "); give 0 or at least ", PlainDecimal(0.5 / k->scale),
                                                     " ", key));
    }
    const std::string param(k->param);
    if (Find(profile.params, param) != nullptr) {
      const std::string& first = keys_given[param];
      return absl::InvalidArgumentError(
          first == key ? absl::StrCat(key, ": given twice; give it once")
                       : absl::StrCat(key, ": ", first, " and ", key, " both set ", param, "; give one of them"));
    }
    keys_given[param] = key;
    profile.params.emplace_back(param, value * k->scale);
    profile.keys.push_back(key);
  }
  return profile;
}

std::string FormatProfile(const Profile& profile) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < profile.params.size(); ++i) {
    const auto& [name, value] = profile.params[i];
    // In the units the user gave (cpu_us=1, not cpu_ns=1000), when known.
    const std::string key = i < profile.keys.size() && !profile.keys[i].empty() ? profile.keys[i] : name;
    parts.push_back(absl::StrCat(key, "=", FormatParamValue(value / ProfileKeyScale(key))));
  }
  return absl::StrJoin(parts, ", ");
}

absl::string_view VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kWinner:
      return "winner";
    case Verdict::kEquivalent:
      return "equivalent";
    case Verdict::kUndecided:
      return "undecided";
    case Verdict::kCrossover:
      return "crossover";
    case Verdict::kNotMeasured:
      break;
  }
  return "not_measured";
}

std::vector<Recommendation> Recommend(const StrategyMap& map, const Profile& profile) {
  std::vector<Recommendation> out;
  // Groups in map order (the map keeps a group's points together).
  for (size_t i = 0; i < map.points.size();) {
    std::vector<const MapPoint*> members;
    const std::string& group = map.points[i].group;
    for (; i < map.points.size() && map.points[i].group == group; ++i) members.push_back(&map.points[i]);
    if (!members.front()->synthetic || members.front()->swept.empty()) continue;
    out.push_back(RecommendGroup(members, map.crossovers, profile));
  }
  if (out.empty()) {
    Recommendation none;
    none.reason = "no synthetic sweep measured ok on this device";
    out.push_back(std::move(none));
  }
  return out;
}

std::string FormatRecommendations(const Profile& profile, const std::vector<DeviceRecommendations>& devices) {
  TextTable table({{"device"}, {"workload"}, {"answer"}, {"ratio over runner-up [95%]"}, {"from the measured points"}});
  for (const DeviceRecommendations& d : devices) {
    for (const Recommendation& r : d.answers) {
      table.AddRow({d.device, r.group.empty() ? "-" : r.group, AnswerText(r), MarginText(r), FromText(r)});
    }
  }
  return absl::StrCat("profile ", FormatProfile(profile), "\n", table.Render(), kNear, "\n");
}

std::string AnswerSentence(const Recommendation& r) {
  constexpr char kAround[] = " at the measured points around the profile.";
  switch (r.verdict) {
    case Verdict::kWinner: {
      if (r.runner_up.empty()) return absl::StrCat("Use ", r.best, ": the only strategy measured here.");
      const bool interval = r.ratio_low > 0 && std::isfinite(r.ratio_high);
      return absl::StrCat("Use ", r.best, ": ",
                          interval ? FormatRatioWithCi(r.ratio, r.ratio_low, r.ratio_high) : FormatRatio(r.ratio),
                          " faster than ", r.runner_up, kAround);
    }
    case Verdict::kEquivalent: {
      const double margin = r.points.empty() ? 0 : r.points.front().margin;
      return absl::StrCat("Any of ", absl::StrJoin(r.tied, ", "), ": equivalent within ",
                          absl::StrFormat("%.1f", 100 * margin), " %", kAround);
    }
    case Verdict::kUndecided:
      return absl::StrCat("Not decided between ", absl::StrJoin(r.tied, ", "), ": ", r.reason, ".");
    case Verdict::kCrossover: {
      std::string out = AnswerText(r);  // "at a crossover: a / b"
      out[0] = 'A';
      std::vector<std::string> where;
      for (const Crossover& c : r.crossovers) {
        where.push_back(
            absl::StrCat(c.to, " overtakes ", c.from, " at ", c.param, " ~", FormatParamValue(std::round(c.estimate))));
      }
      if (!where.empty()) absl::StrAppend(&out, " (", absl::StrJoin(where, "; "), ")");
      return out + ".";
    }
    case Verdict::kNotMeasured:
      break;
  }
  return absl::StrCat("Not measured near this profile: ", r.reason, ".");
}

nlohmann::json RecommendationsJsonValue(const Profile& profile, const std::vector<DeviceRecommendations>& devices) {
  nlohmann::json params = nlohmann::json::object();
  for (const auto& [name, value] : profile.params) params[name] = value;
  nlohmann::json out = {{"profile", params}, {"near", kNear}, {"devices", nlohmann::json::array()}};
  for (const DeviceRecommendations& d : devices) {
    nlohmann::json answers = nlohmann::json::array();
    for (const Recommendation& r : d.answers) {
      nlohmann::json points = nlohmann::json::array(), crossovers = nlohmann::json::array();
      for (const MapPoint& p : r.points) points.push_back(MapPointJson(p));
      for (const Crossover& c : r.crossovers) crossovers.push_back(CrossoverJson(c));
      const bool winner = r.verdict == Verdict::kWinner && !r.runner_up.empty();
      answers.push_back({{"group", r.group},
                         {"swept", r.swept},
                         {"verdict", VerdictName(r.verdict)},
                         {"answer", AnswerSentence(r)},
                         {"reason", r.reason},
                         {"best", r.best},
                         {"runner_up", r.runner_up},
                         {"ratio", winner && std::isfinite(r.ratio) ? nlohmann::json(r.ratio) : nullptr},
                         {"ratio_low", winner && std::isfinite(r.ratio_low) ? nlohmann::json(r.ratio_low) : nullptr},
                         {"ratio_high", winner && std::isfinite(r.ratio_high) ? nlohmann::json(r.ratio_high) : nullptr},
                         {"tied", r.tied},
                         {"margin", r.points.empty() ? 0.0 : r.points.front().margin},
                         {"points", std::move(points)},
                         {"crossovers", std::move(crossovers)}});
    }
    out["devices"].push_back({{"device", d.device}, {"answers", std::move(answers)}});
  }
  return out;
}

std::string RecommendationsJson(const Profile& profile, const std::vector<DeviceRecommendations>& devices) {
  return RecommendationsJsonValue(profile, devices).dump(2) + "\n";
}

}  // namespace fleetmark::report
