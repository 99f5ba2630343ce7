// EditDistance, ClosestNames, DidYouMean (suggest.h).
#include "engine/common/suggest.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/common/text.h"

namespace fleetmark {
namespace {

// Names are program names (flags, commands, registry names): a few dozen bytes. Longer
// typed text gets no suggestion (and no quadratic work on a hostile argument).
constexpr size_t kMaxComparedBytes = 128;
constexpr size_t kMinPrefixBytes = 4;

char Lower(char c) { return absl::ascii_tolower(static_cast<unsigned char>(c)); }

bool IsPrefixOf(std::string_view shorter, std::string_view longer) {
  return shorter.size() >= kMinPrefixBytes && shorter.size() < longer.size() &&
         absl::StartsWithIgnoreCase(absl::string_view(longer.data(), longer.size()),
                                    absl::string_view(shorter.data(), shorter.size()));
}

}  // namespace

size_t EditDistance(std::string_view a, std::string_view b) {
  const size_t n = a.size(), m = b.size();
  // Three rows of the dynamic programme: i-2, i-1, i.
  std::vector<size_t> before(m + 1), previous(m + 1), current(m + 1);
  for (size_t j = 0; j <= m; ++j) previous[j] = j;
  for (size_t i = 1; i <= n; ++i) {
    current[0] = i;
    for (size_t j = 1; j <= m; ++j) {
      const size_t cost = Lower(a[i - 1]) == Lower(b[j - 1]) ? 0 : 1;
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost});
      if (i > 1 && j > 1 && Lower(a[i - 1]) == Lower(b[j - 2]) && Lower(a[i - 2]) == Lower(b[j - 1])) {
        current[j] = std::min(current[j], before[j - 2] + 1);  // adjacent transposition
      }
    }
    std::swap(before, previous);
    std::swap(previous, current);
  }
  return previous[m];
}

std::vector<std::string> ClosestNames(std::string_view typed, const std::vector<std::string>& candidates,
                                      size_t max_names) {
  if (typed.empty() || typed.size() > kMaxComparedBytes) return {};
  const size_t threshold = std::max<size_t>(typed.size(), 3) / 3;
  std::vector<std::pair<size_t, size_t>> close;  // (distance, index)
  for (size_t i = 0; i < candidates.size(); ++i) {
    const std::string& c = candidates[i];
    if (c == typed) return {};
    if (c.size() > kMaxComparedBytes) continue;
    const size_t d = EditDistance(typed, c);
    if (d <= threshold || IsPrefixOf(typed, c) || IsPrefixOf(c, typed)) close.emplace_back(d, i);
  }
  std::stable_sort(close.begin(), close.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (const auto& [d, i] : close) {
    if (out.size() == max_names) break;
    out.push_back(candidates[i]);
  }
  return out;
}

std::string DidYouMean(std::string_view typed, const std::vector<std::string>& candidates, std::string_view prefix) {
  const std::vector<std::string> names = ClosestNames(typed, candidates);
  if (names.empty()) return "";
  std::string out = " (did you mean ";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
    out.append("\"").append(prefix).append(names[i]).append("\"");
  }
  out += "?)";
  return out;
}

std::string OneOfMessage(std::string_view typed, const std::vector<std::string>& names, std::string_view note) {
  std::string out = absl::StrCat("one of ", absl::StrJoin(names, ", "));
  out.append(note).append("; got \"").append(EchoValue(typed)).append("\"").append(DidYouMean(typed, names));
  return out;
}

}  // namespace fleetmark
