// CSV export of the results schema: one row per case result with its device (agent),
// dimensions, status, statistics and counters, quoted per RFC 4180 (fields containing a comma, quote, CR or LF are
// enclosed in double quotes with inner quotes doubled; lines end with CRLF).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "fleetmark/v1/result.pb.h"

namespace fleetmark::report {

// Column names of the header row, in order: "agent" (the device, results_document.h),
// then the result's columns, named as the JSON fields of the results schema
// (docs/results-schema.md), "emulated" last.
const std::vector<std::string>& CsvColumns();

// Header row then one row per result of each device (in document order). Times in
// ns; CPU in seconds; allocations per repetition (empty when not counted); non-finite
// numbers as "inf" / "nan". Pure, thread-safe.
std::string FormatResultsCsv(const fleetmark::v1::ResultsDocument& document);

// FormatResultsCsv(LocalResultsDocument(report)): `fleetmark run --format csv`.
std::string FormatCsv(const fleetmark::v1::RunReport& report);

// Quotes one field per RFC 4180 if it needs it; returns it unchanged otherwise.
std::string CsvField(std::string_view value);

}  // namespace fleetmark::report
