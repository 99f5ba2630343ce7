// Internal to engine/plan: a second, position-keeping pass over a text-format plan.
//
// Protobuf's ParseInfoTree records one position per field *statement*, so the second
// element of `workloads: ["a", "b"]` or of `strategies: [{...}, {...}]` had no position
// of its own, and parse errors gave a line:column but no field. ScanPlanText tokenizes
// the text with protobuf's own Tokenizer (same line/column counting as the parser),
// walks the Plan descriptor and records where every field occurrence and every list
// element starts, keyed by its field path; it can also stop at a position (a parse
// error's) and say which field was being parsed there. Tolerates malformed text.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "engine/plan/source_map.h"

namespace fleetmark::engine {

struct TextScan {
  // FormatFieldPath(path) -> 1-based position of the field name (or list element).
  std::unordered_map<std::string, SourcePosition> positions;
  // With `stop_at`: the field whose value was being parsed there, else the message
  // whose fields were (e.g. plan.matrix[0].strategies[1].threads, plan.matrix[0]).
  FieldPath path_at_stop;
};

// `stop_at` is 0-based (protobuf's convention); nullopt scans the whole text.
TextScan ScanPlanText(std::string_view text, std::optional<SourcePosition> stop_at);

}  // namespace fleetmark::engine
