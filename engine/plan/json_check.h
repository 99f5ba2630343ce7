// Internal to engine/plan: strict checks of a JSON plan before protobuf parses it.
//
// protobuf's JsonStringToMessage (3.21) lets a later duplicate key win, accepts
// trailing commas, numbers written as strings ("threads": "8") and a single object
// where a list belongs ("matrix": {...}), and reports syntax errors without a
// position. CheckJsonPlan reads the text with nlohmann::json's SAX parser (strict
// RFC 8259: no trailing commas, no comments) against the Plan descriptor and returns
// the first problem as InvalidArgument:
//   "<source>:<line>:<column>: invalid JSON: <what>"   (syntax; 1-based, in bytes)
//   "<source>: plan.matrix[0].strategies[1].threads: expected an integer, got string"
// Accepted like protobuf: field names as written in the .proto or in lowerCamelCase;
// null for "unset"; 64-bit integers also as decimal strings (protobuf prints them so).
// Messages quote input only C-escaped and truncated. Pure; thread-safe.
#pragma once

#include <string_view>

#include "absl/status/status.h"

namespace fleetmark::engine {

absl::Status CheckJsonPlan(std::string_view text, std::string_view source_name);

}  // namespace fleetmark::engine
