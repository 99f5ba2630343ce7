// MatchCases, CompareAb, SummarizeFleet, FormatAb, AbJson (ab_compare.h).
#include "engine/report/ab_compare.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "engine/measure/verdict.h"
#include "engine/report/text_table.h"
#include "engine/report/units.h"

namespace fleetmark::report {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// `item` is a run of whole '/'-separated parts of `id`.
bool MatchesParts(const std::string& id, const std::string& item) {
  if (item.empty()) return false;
  const std::string padded = absl::StrCat("/", id, "/");
  return absl::StrContains(padded, absl::StrCat("/", item, "/"));
}

// Mean and sample standard deviation of `v` (n >= 2).
std::pair<double, double> MeanSd(const std::vector<double>& v) {
  double mean = 0;
  for (double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  double squares = 0;
  for (double x : v) squares += (x - mean) * (x - mean);
  return {mean, std::sqrt(squares / static_cast<double>(v.size() - 1))};
}

// exp(mean) of log values and its Student-t 95% interval exp(mean ± t · sd / √n); n < 2:
// ratio 0 (none).
struct LogInterval {
  double ratio = 0, low = 0, high = 0;
};
LogInterval IntervalOfLogs(const std::vector<double>& logs) {
  LogInterval out;
  if (logs.size() < 2) return out;
  const auto [mean, sd] = MeanSd(logs);
  const double n = static_cast<double>(logs.size());
  const double half = engine::StudentTQuantile(0.975, n - 1) * sd / std::sqrt(n);
  out.ratio = std::exp(mean);
  out.low = std::exp(mean - half);
  out.high = std::exp(mean + half);
  return out;
}

std::string StatusText(const v1::CaseResult* r) {
  if (r == nullptr) return "not measured";
  if (r->status() != v1::CASE_STATUS_OK) {
    std::string name = v1::CaseStatus_Name(r->status());
    return absl::AsciiStrToLower(name.substr(std::min<size_t>(name.size(), 12)));
  }
  if (!(r->stats().median_ns() > 0) || !std::isfinite(r->stats().median_ns())) return "no timed samples";
  return "";
}

nlohmann::json Number(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

// The ratio with its interval, or alone when there is none (never "[0.00x, inf]").
std::string Interval(double ratio, double low, double high) {
  if (!(ratio > 0)) return "-";
  if (!(low > 0) || !std::isfinite(high)) return FormatRatio(ratio);
  return FormatRatioWithCi(ratio, low, high);
}

}  // namespace

std::vector<std::string> CloseMatches(const std::string& item, const std::vector<std::string>& candidates,
                                      size_t limit) {
  std::vector<std::pair<size_t, std::string>> scored;
  for (const std::string& c : candidates) {
    // A candidate holding the item (or a part of it) scores as its closest part.
    size_t best = EditDistance(item, c);
    for (absl::string_view part : absl::StrSplit(c, '/')) best = std::min(best, EditDistance(item, std::string(part)));
    scored.emplace_back(best, c);
  }
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> out;
  for (const auto& [distance, c] : scored) {
    if (out.size() >= limit) break;
    if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  }
  return out;
}

absl::StatusOr<CasePair> MatchCases(const std::vector<std::string>& items, const std::vector<std::string>& case_ids) {
  if (items.size() != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("--cases: two case ids or labels A,B, got ", items.size(), " item", items.size() == 1 ? "" : "s"));
  }
  std::vector<std::string> matched;
  for (const std::string& item : items) {
    if (std::find(case_ids.begin(), case_ids.end(), item) != case_ids.end()) {
      matched.push_back(item);
      continue;
    }
    std::vector<std::string> hits;
    for (const std::string& id : case_ids) {
      if (MatchesParts(id, item) && std::find(hits.begin(), hits.end(), id) == hits.end()) hits.push_back(id);
    }
    if (hits.empty()) {
      const std::vector<std::string> close = CloseMatches(item, case_ids);
      return absl::InvalidArgumentError(
          absl::StrCat("--cases: \"", item, "\" matches no case of the run (a case id, or whole '/'-parts of one)",
                       close.empty() ? "" : absl::StrCat("; close: ", absl::StrJoin(close, ", "))));
    }
    if (hits.size() > 1) {
      const size_t shown = std::min<size_t>(hits.size(), 5);
      return absl::InvalidArgumentError(
          absl::StrCat("--cases: \"", item, "\" matches ", hits.size(), " cases, give one case id: ",
                       absl::StrJoin(hits.begin(), hits.begin() + static_cast<std::ptrdiff_t>(shown), ", "),
                       hits.size() > shown ? ", ..." : ""));
    }
    matched.push_back(hits.front());
  }
  if (matched[0] == matched[1]) {
    return absl::InvalidArgumentError(
        absl::StrCat("--cases: A and B are the same case \"", matched[0], "\"; give two different cases"));
  }
  return CasePair{matched[0], matched[1]};
}

std::string AbVerdictName(AbVerdict v) {
  switch (v) {
    case AbVerdict::kFaster:
      return "faster";
    case AbVerdict::kSlower:
      return "slower";
    case AbVerdict::kEquivalent:
      return "equivalent";
    case AbVerdict::kUndecided:
      return "undecided";
    case AbVerdict::kUnmeasured:
      break;
  }
  return "not measured";
}

AbVerdict RatioVerdict(double ratio, double low, double high, const MapOptions& options) {
  if (!(ratio > 0) || !std::isfinite(ratio)) return AbVerdict::kUnmeasured;
  const double margin = std::max(0.0, options.min_margin);
  if (high < 1 && 1 / ratio - 1 > margin) return AbVerdict::kFaster;
  if (low > 1 && ratio - 1 > margin) return AbVerdict::kSlower;
  if (low >= 1 / (1 + margin) && high <= 1 + margin) return AbVerdict::kEquivalent;
  return AbVerdict::kUndecided;
}

DeviceAb CompareAb(const std::string& device, const v1::CaseResult* a, const v1::CaseResult* b,
                   const MapOptions& options) {
  DeviceAb out;
  out.device = device;
  out.a_status = StatusText(a);
  out.b_status = StatusText(b);
  if (out.a_status.empty()) out.a_median_ns = a->stats().median_ns();
  if (out.b_status.empty()) out.b_median_ns = b->stats().median_ns();
  if (!out.a_status.empty() || !out.b_status.empty()) {
    out.method = std::string(1, '-');  // not = "-": a false GCC 12 -Wrestrict (GCC bug 105329)
    return out;
  }
  // The two cases as the contenders of one group ("A" and "B"), the one verdict rule.
  MapPoint pair;
  pair.ranked = {EntryOf(*a), EntryOf(*b)};
  pair.ranked[0].strategy = "A";
  pair.ranked[1].strategy = "B";
  DecidePoint(pair, WithSpreadOf(options, {a, b}));
  const bool b_leads = pair.winner() == "B";
  out.paired_rounds = pair.pairs;
  out.reason = pair.reason;
  if (b_leads) {  // runner-up A / leader B: invert to B / A
    out.ratio = 1 / pair.ratio;
    out.low = pair.ratio_high > 0 && std::isfinite(pair.ratio_high) ? 1 / pair.ratio_high : 0;
    out.high = pair.ratio_low > 0 ? 1 / pair.ratio_low : kInf;
  } else {
    out.ratio = pair.ratio;
    out.low = pair.ratio_low;
    out.high = pair.ratio_high;
  }
  if (pair.pairs < 2) {
    out.low = 0;
    out.high = kInf;
  }
  switch (pair.kind) {
    case engine::VerdictKind::kDecided:
      out.verdict = b_leads ? AbVerdict::kFaster : AbVerdict::kSlower;
      break;
    case engine::VerdictKind::kEquivalent:
      out.verdict = AbVerdict::kEquivalent;
      break;
    default:
      out.verdict = AbVerdict::kUndecided;
      break;
  }
  out.method = pair.pairs >= 2 ? absl::StrCat("paired rounds (n=", pair.pairs, ", moderated t)")
                               : absl::StrCat(pair.pairs, " paired round", pair.pairs == 1 ? "" : "s",
                                              ": provisional, no interval");
  return out;
}

FleetAb SummarizeFleet(const std::vector<DeviceAb>& devices, const MapOptions& options) {
  FleetAb fleet;
  std::vector<double> logs;
  for (const DeviceAb& d : devices) {
    switch (d.verdict) {
      case AbVerdict::kFaster:
        ++fleet.faster;
        break;
      case AbVerdict::kSlower:
        ++fleet.slower;
        break;
      case AbVerdict::kEquivalent:
        ++fleet.equivalent;
        break;
      case AbVerdict::kUndecided:
        ++fleet.undecided;
        break;
      case AbVerdict::kUnmeasured:
        ++fleet.unmeasured;
        break;
    }
    if (d.verdict != AbVerdict::kUnmeasured) logs.push_back(std::log(d.ratio));
  }
  fleet.devices = static_cast<int>(logs.size());
  if (logs.empty()) return fleet;
  if (logs.size() == 1) {
    // One device: its ratio, and no interval over devices.
    fleet.ratio = std::exp(logs.front());
    fleet.low = 0;
    fleet.high = kInf;
  } else {
    const LogInterval over = IntervalOfLogs(logs);
    fleet.ratio = over.ratio;
    fleet.low = over.low;
    fleet.high = over.high;
  }
  fleet.verdict = RatioVerdict(fleet.ratio, fleet.low, fleet.high, options);
  return fleet;
}

std::string FormatAb(const CasePair& cases, const std::vector<DeviceAb>& devices, const FleetAb& fleet) {
  std::string out = absl::StrCat("A = ", cases.a, "\nB = ", cases.b, "\n\n");
  TextTable table({{"device"},
                   {"A median", Align::kRight},
                   {"B median", Align::kRight},
                   {"B/A [95%]", Align::kRight},
                   {"B is"},
                   {"method"}});
  for (const DeviceAb& d : devices) {
    table.AddRow({d.device, d.a_status.empty() ? FormatNanos(d.a_median_ns) : absl::StrCat("(", d.a_status, ")"),
                  d.b_status.empty() ? FormatNanos(d.b_median_ns) : absl::StrCat("(", d.b_status, ")"),
                  Interval(d.ratio, d.low, d.high), AbVerdictName(d.verdict), d.method});
  }
  absl::StrAppend(&out, table.Render());
  absl::StrAppend(&out, "\nfleet: B is faster on ", fleet.faster, " device", fleet.faster == 1 ? "" : "s",
                  ", slower on ", fleet.slower, ", equivalent on ", fleet.equivalent, ", undecided on ",
                  fleet.undecided);
  if (fleet.unmeasured > 0) absl::StrAppend(&out, ", not measured on ", fleet.unmeasured);
  if (fleet.devices > 0) {
    absl::StrAppend(&out, "; geometric-mean B/A ", Interval(fleet.ratio, fleet.low, fleet.high), " over ",
                    fleet.devices, " device", fleet.devices == 1 ? "" : "s",
                    fleet.devices < 2 ? " (no interval over one device)" : " (Student-t over devices)");
  }
  absl::StrAppend(&out, "\n");
  return out;
}

nlohmann::json AbJson(const CasePair& cases, const std::vector<DeviceAb>& devices, const FleetAb& fleet,
                      const MapOptions& options) {
  nlohmann::json rows = nlohmann::json::array();
  for (const DeviceAb& d : devices) {
    rows.push_back({{"device", d.device},
                    {"a_median_ns", d.a_median_ns},
                    {"b_median_ns", d.b_median_ns},
                    {"a_status", d.a_status},
                    {"b_status", d.b_status},
                    {"ratio", d.ratio > 0 ? Number(d.ratio) : nlohmann::json(nullptr)},
                    {"ratio_low", d.ratio > 0 ? Number(d.low) : nlohmann::json(nullptr)},
                    {"ratio_high", d.ratio > 0 ? Number(d.high) : nlohmann::json(nullptr)},
                    {"paired_rounds", d.paired_rounds},
                    {"method", d.method},
                    {"reason", d.reason},
                    {"verdict", AbVerdictName(d.verdict)}});
  }
  return {{"a", cases.a},
          {"b", cases.b},
          {"min_margin", options.min_margin},
          {"devices", std::move(rows)},
          {"fleet",
           {{"faster", fleet.faster},
            {"slower", fleet.slower},
            {"equivalent", fleet.equivalent},
            {"undecided", fleet.undecided},
            {"not_measured", fleet.unmeasured},
            {"devices", fleet.devices},
            {"ratio", fleet.devices > 0 ? Number(fleet.ratio) : nlohmann::json(nullptr)},
            {"ratio_low", fleet.devices > 0 ? Number(fleet.low) : nlohmann::json(nullptr)},
            {"ratio_high", fleet.devices > 0 ? Number(fleet.high) : nlohmann::json(nullptr)},
            {"verdict", AbVerdictName(fleet.verdict)}}}};
}

}  // namespace fleetmark::report
