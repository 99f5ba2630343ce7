#include "engine/plan/source_map.h"

#include "absl/strings/str_cat.h"

namespace fleetmark::engine {

std::string FormatFieldPath(const FieldPath& path) {
  std::string out = "plan";
  for (const PathElement& e : path) {
    absl::StrAppend(&out, ".", e.field);
    if (e.index >= 0) absl::StrAppend(&out, "[", e.index, "]");
  }
  return out;
}

std::string PrintableText(std::string_view text, size_t max_bytes) {
  std::string out;
  for (size_t i = 0; i < text.size() && i < max_bytes; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      absl::StrAppend(&out, "\\x", absl::Hex(c, absl::kZeroPad2));
    }
  }
  if (text.size() > max_bytes) out += "...";
  return out;
}

std::optional<SourcePosition> PlanSourceMap::Locate(const FieldPath& path) const {
  for (size_t n = path.size(); n > 0; --n) {
    FieldPath prefix(path.begin(), path.begin() + static_cast<std::ptrdiff_t>(n));
    if (auto it = positions_.find(FormatFieldPath(prefix)); it != positions_.end()) {
      return it->second;
    }
    // A whole repeated field ("plan.matrix") is where its first element was written.
    if (prefix.back().index < 0) {
      prefix.back().index = 0;
      if (auto it = positions_.find(FormatFieldPath(prefix)); it != positions_.end()) {
        return it->second;
      }
    }
  }
  return std::nullopt;
}

}  // namespace fleetmark::engine
