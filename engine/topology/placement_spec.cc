#include "engine/topology/placement_spec.h"

#include <algorithm>
#include <charconv>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace fleetmark::engine {
namespace {

constexpr absl::string_view kAllowedForms =
    "any | class:<performance|mid|efficiency> | one_per_core | smt_pairs | cpus:<list>";

// performance, mid, efficiency, or mid<N> (hosts with more than three classes).
bool IsClassName(absl::string_view name) {
  const absl::string_view mid(kClassMid.data(), kClassMid.size());
  if (name == absl::string_view(kClassPerformance.data(), kClassPerformance.size()) || name == mid ||
      name == absl::string_view(kClassEfficiency.data(), kClassEfficiency.size())) {
    return true;
  }
  if (!absl::StartsWith(name, mid) || name.size() == mid.size()) return false;
  return std::all_of(name.begin() + kClassMid.size(), name.end(), [](char c) { return absl::ascii_isdigit(c); });
}

absl::StatusOr<int> ParseCpuId(absl::string_view text, absl::string_view list) {
  int value = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("CPU list \"", list, "\": \"", text, "\" is not a CPU number (0 <= id < ", kMaxCpuId, ")"));
  }
  if (value < 0 || value >= kMaxCpuId) {
    return absl::InvalidArgumentError(absl::StrCat("CPU list \"", list, "\": 0 <= id < ", kMaxCpuId, ", got ", text));
  }
  return value;
}

}  // namespace

absl::StatusOr<CpuSet> ParseCpuList(std::string_view text) {
  absl::string_view list = absl::StripAsciiWhitespace(absl::string_view(text.data(), text.size()));
  if (list.empty()) {
    return absl::InvalidArgumentError("CPU list: empty (expected e.g. \"0,2-3\")");
  }
  CpuSet cpus;
  for (absl::string_view item : absl::StrSplit(list, ',')) {
    item = absl::StripAsciiWhitespace(item);
    std::size_t dash = item.find('-');
    if (dash == absl::string_view::npos) {
      absl::StatusOr<int> id = ParseCpuId(item, list);
      if (!id.ok()) return id.status();
      cpus.push_back(*id);
      continue;
    }
    absl::StatusOr<int> first = ParseCpuId(item.substr(0, dash), list);
    if (!first.ok()) return first.status();
    absl::StatusOr<int> last = ParseCpuId(item.substr(dash + 1), list);
    if (!last.ok()) return last.status();
    if (*last < *first) {
      return absl::InvalidArgumentError(
          absl::StrCat("CPU list \"", list, "\": range \"", item, "\" must be ascending"));
    }
    for (int id = *first; id <= *last; ++id) cpus.push_back(id);
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

std::string FormatCpuList(const CpuSet& cpus) {
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    parts.push_back(j == i ? absl::StrCat(cpus[i]) : absl::StrCat(cpus[i], "-", cpus[j]));
    i = j + 1;
  }
  return absl::StrJoin(parts, ",");
}

absl::StatusOr<PlacementSpec> ParsePlacement(std::string_view text) {
  absl::string_view s = absl::StripAsciiWhitespace(absl::string_view(text.data(), text.size()));
  PlacementSpec spec;
  if (s.empty() || s == "any") {
    spec.kind = PlacementKind::kAny;
    spec.text = "any";
    return spec;
  }
  if (s == "one_per_core") {
    spec.kind = PlacementKind::kOnePerCore;
    spec.text = std::string(s);
    return spec;
  }
  if (s == "smt_pairs") {
    spec.kind = PlacementKind::kSmtPairs;
    spec.text = std::string(s);
    return spec;
  }
  if (absl::StartsWith(s, "class:")) {
    absl::string_view name = s.substr(6);
    if (!IsClassName(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("placement \"", s,
                       "\": class must be one of performance, mid, efficiency (mid1, mid2, ... on hosts "
                       "with more than three classes), got \"",
                       name, "\""));
    }
    spec.kind = PlacementKind::kClass;
    spec.class_name = std::string(name);
    spec.text = std::string(s);
    return spec;
  }
  if (absl::StartsWith(s, "cpus:")) {
    absl::string_view list = s.substr(5);
    absl::StatusOr<CpuSet> cpus = ParseCpuList(std::string_view(list.data(), list.size()));
    if (!cpus.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("placement \"", s, "\": ", cpus.status().message()));
    }
    spec.kind = PlacementKind::kCpus;
    spec.cpus = *std::move(cpus);
    spec.text = absl::StrCat("cpus:", FormatCpuList(spec.cpus));
    return spec;
  }
  return absl::InvalidArgumentError(absl::StrCat("placement: one of ", kAllowedForms, ", got \"", s, "\""));
}

}  // namespace fleetmark::engine
