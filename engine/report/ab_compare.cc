// MatchCases, CompareAb, SummarizeFleet, FormatAb, AbJson (ab_compare.h).
#include "engine/report/ab_compare.h"

#include <algorithm>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <limits>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
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

// exp(mean ± t · sd / √n) of log values.
PairedRatio LogInterval(const std::vector<double>& logs) {
  PairedRatio out;
  out.n = static_cast<int>(logs.size());
  if (logs.size() < 2) return out;
  const auto [mean, sd] = MeanSd(logs);
  const double half = StudentT975(out.n - 1) * sd / std::sqrt(static_cast<double>(logs.size()));
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

std::string Interval(double ratio, double low, double high) {
  if (!(ratio > 0)) return "-";
  return FormatRatioWithCi(ratio, low, high);
}

}  // namespace

double StudentT975(int df) {
  return boost::math::quantile(boost::math::students_t_distribution<double>(std::max(1, df)), 0.975);
}

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
    case AbVerdict::kTie:
      return "tie";
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
  return AbVerdict::kTie;
}

PairedRatio PairedLogRatio(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> logs;
  const size_t n = std::min(a.size(), b.size());
  for (size_t k = 0; k < n; ++k) {
    if (!(a[k] > 0) || !(b[k] > 0) || !std::isfinite(a[k]) || !std::isfinite(b[k])) return {};
    logs.push_back(std::log(b[k] / a[k]));
  }
  return LogInterval(logs);
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
  const std::vector<double> rounds_a(a->process_medians_ns().begin(), a->process_medians_ns().end());
  const std::vector<double> rounds_b(b->process_medians_ns().begin(), b->process_medians_ns().end());
  const PairedRatio paired = PairedLogRatio(rounds_a, rounds_b);
  if (paired.n >= 2 && paired.ratio > 0) {
    out.ratio = paired.ratio;
    out.low = paired.low;
    out.high = paired.high;
    out.paired_rounds = paired.n;
    out.method = absl::StrCat("paired rounds (n=", paired.n, ", log-ratio Student-t)");
  } else {
    // One process per case: the medians, and the interval arithmetic of their CIs.
    const v1::Statistics &sa = a->stats(), &sb = b->stats();
    const bool cis = sa.count() >= 2 && sb.count() >= 2 && sa.ci_low_ns() > 0 && sb.ci_low_ns() > 0 &&
                     std::isfinite(sa.ci_high_ns()) && std::isfinite(sb.ci_high_ns()) &&
                     std::isfinite(sa.ci_half_width_percent()) && std::isfinite(sb.ci_half_width_percent());
    out.ratio = out.b_median_ns / out.a_median_ns;
    out.low = cis ? std::min(sb.ci_low_ns(), sb.median_ns()) / std::max(sa.ci_high_ns(), sa.median_ns()) : 0;
    out.high = cis ? std::max(sb.ci_high_ns(), sb.median_ns()) / std::min(sa.ci_low_ns(), sa.median_ns()) : kInf;
    out.method = cis ? "medians' CIs (unpaired)" : "no CI (n=1)";
  }
  out.verdict = RatioVerdict(out.ratio, out.low, out.high, options);
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
      case AbVerdict::kTie:
        ++fleet.tie;
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
    const PairedRatio over = LogInterval(logs);
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
                   {"B/A [95% CI]", Align::kRight},
                   {"B is"},
                   {"method"}});
  for (const DeviceAb& d : devices) {
    table.AddRow({d.device, d.a_status.empty() ? FormatNanos(d.a_median_ns) : absl::StrCat("(", d.a_status, ")"),
                  d.b_status.empty() ? FormatNanos(d.b_median_ns) : absl::StrCat("(", d.b_status, ")"),
                  Interval(d.ratio, d.low, d.high), AbVerdictName(d.verdict), d.method});
  }
  absl::StrAppend(&out, table.Render());
  absl::StrAppend(&out, "\nfleet: B is faster on ", fleet.faster, " device", fleet.faster == 1 ? "" : "s",
                  ", slower on ", fleet.slower, ", tie on ", fleet.tie);
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
                    {"verdict", AbVerdictName(d.verdict)}});
  }
  return {{"a", cases.a},
          {"b", cases.b},
          {"min_margin", options.min_margin},
          {"devices", std::move(rows)},
          {"fleet",
           {{"faster", fleet.faster},
            {"slower", fleet.slower},
            {"tie", fleet.tie},
            {"not_measured", fleet.unmeasured},
            {"devices", fleet.devices},
            {"ratio", fleet.devices > 0 ? Number(fleet.ratio) : nlohmann::json(nullptr)},
            {"ratio_low", fleet.devices > 0 ? Number(fleet.low) : nlohmann::json(nullptr)},
            {"ratio_high", fleet.devices > 0 ? Number(fleet.high) : nlohmann::json(nullptr)},
            {"verdict", AbVerdictName(fleet.verdict)}}}};
}

}  // namespace fleetmark::report
