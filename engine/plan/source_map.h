// Internal to engine/plan: field paths ("plan.matrix[0].strategies[2].threads") and the
// line:column where a text-format plan wrote them (from protobuf's ParseInfoTree).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/plan/plan.h"
#include "google/protobuf/text_format.h"

namespace fleetmark::engine {

// One step of a field path: a field name and, for repeated fields, an index (-1 else).
struct PathElement {
  std::string field;
  int index = -1;
};
using FieldPath = std::vector<PathElement>;

// "plan.matrix[0].strategies[2].threads".
std::string FormatFieldPath(const FieldPath& path);

// 1-based position in the plan text.
struct SourcePosition {
  int line = 0;
  int column = 0;
};

class PlanSourceMap {
 public:
  explicit PlanSourceMap(std::unique_ptr<google::protobuf::TextFormat::ParseInfoTree> tree)
      : tree_(std::move(tree)) {}

  // Where `path` (relative to the Plan message) was written; when the field itself was
  // not written (a default), the closest written ancestor. nullopt if none.
  std::optional<SourcePosition> Locate(const FieldPath& path) const;

 private:
  std::unique_ptr<google::protobuf::TextFormat::ParseInfoTree> tree_;
};

}  // namespace fleetmark::engine
