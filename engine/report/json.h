// JSON export of a RunReport through protobuf's own JSON printer, so any protobuf
// implementation parses it back (field names in lowerCamelCase, int64 as strings,
// enums by name).
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "fleetmark/v1/result.pb.h"

namespace fleetmark::report {

// Pretty-printed JSON with default-valued fields included. Internal on a printer
// error (which protobuf reports only for invalid messages). Thread-safe.
absl::StatusOr<std::string> FormatJson(const fleetmark::v1::RunReport& report);

// Parses FormatJson's output (or any protobuf JSON of RunReport; unknown fields are
// rejected). InvalidArgument with protobuf's message on malformed input.
absl::StatusOr<fleetmark::v1::RunReport> ParseJson(std::string_view json);

}  // namespace fleetmark::report
