// Internal to engine/plan: field paths ("plan.matrix[0].strategies[2].threads") and the
// line:column where a text-format plan wrote them (from ScanPlanText, text_scan.h).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/plan/plan.h"

namespace fleetmark::engine {

// One step of a field path: a field name and, for repeated fields, an index (-1 else).
struct PathElement {
  std::string field;
  int index = -1;
};
using FieldPath = std::vector<PathElement>;

// "plan.matrix[0].strategies[2].threads".
std::string FormatFieldPath(const FieldPath& path);

// `text` with bytes outside printable ASCII written as \xNN, cut to `max_bytes` (then
// "..." is appended), so error messages quoting input never carry raw control bytes.
std::string PrintableText(std::string_view text, size_t max_bytes = 200);

// 1-based position in the plan text.
struct SourcePosition {
  int line = 0;
  int column = 0;
};

class PlanSourceMap {
 public:
  // `positions`: FormatFieldPath(path) -> where the field (or list element) starts.
  explicit PlanSourceMap(std::unordered_map<std::string, SourcePosition> positions)
      : positions_(std::move(positions)) {}

  // Where `path` (relative to the Plan message) was written; when the field itself was
  // not written (a default), the closest written ancestor. nullopt if none.
  std::optional<SourcePosition> Locate(const FieldPath& path) const;

 private:
  std::unordered_map<std::string, SourcePosition> positions_;
};

}  // namespace fleetmark::engine
