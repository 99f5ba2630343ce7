// JSON of fleetmark's results: the ResultsDocument (results_document.h) through
// protobuf's own JSON printer with the proto field names (snake_case), every primitive
// field present, int64 as strings and enums by name (docs/results-schema.md), so any
// protobuf implementation or JSON tool reads it.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "fleetmark/v1/result.pb.h"

namespace fleetmark::report {

// Pretty-printed JSON of `document`. Internal on a printer error (which protobuf
// reports only for invalid messages). Thread-safe.
absl::StatusOr<std::string> FormatResultsJson(const fleetmark::v1::ResultsDocument& document);

// FormatResultsJson(LocalResultsDocument(report)): `fleetmark run --format json`.
absl::StatusOr<std::string> FormatJson(const fleetmark::v1::RunReport& report);

// Parses a results document of this schema version or older, and also the RunReport
// JSON that `fleetmark run --format json` wrote before the schema (camelCase keys
// "planName", "host", "results"; read as a local document of one device).
// InvalidArgument "not a results file of ...: " and what is wrong in fleetmark's words:
// "the file is empty", "line 3, column 7: not valid JSON (<the JSON parser's reason>)",
// "its top level is an array, not an object" (both with the shape expected), "a field
// does not fit the results schema (...; protobuf's JSON parser: <its problem, first
// line>)" for unknown fields or wrong types; naming schema_version when it is newer than
// kResultsSchemaVersion; and CheckResultsDocument's message (results_check.h) for a
// document whose values no measurement makes (a case twice, a negative median, a
// parameter out of range).
absl::StatusOr<fleetmark::v1::ResultsDocument> ParseResultsJson(std::string_view json);

// ParseResultsJson, then the one device's results as a RunReport (an empty report for a
// document with no device). InvalidArgument also when the document holds several
// devices (a fleet export of several agents).
absl::StatusOr<fleetmark::v1::RunReport> ParseJson(std::string_view json);

}  // namespace fleetmark::report
