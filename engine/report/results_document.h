// The one results schema of fleetmark (docs/results-schema.md, docs/results-schema.json):
// a ResultsDocument (proto/fleetmark/v1/result.proto) holds a run and its results per
// device, for a local `fleetmark run` (one device, this host) and a fleet run's export
// (one device per agent) alike. JSON (json.h FormatResultsJson) and CSV (csv.h
// FormatResultsCsv) are printed from it, with the same field names.
//
//   v1::ResultsDocument doc = LocalResultsDocument(report);
//   FLEETMARK_ASSIGN_OR_RETURN(std::string json, FormatResultsJson(doc));
//
// All functions are pure and thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "fleetmark/v1/result.pb.h"

namespace fleetmark::report {

// ResultsDocument.schema_version written by this build. Bumped when a field is removed
// or renamed or changes its type, unit or meaning (a reader of version N refuses a
// newer document rather than misreading it); adding a field is not a bump.
inline constexpr uint32_t kResultsSchemaVersion = 1;

// The name a local run's device goes by: the host name, "local" when unknown.
std::string LocalAgentName(const fleetmark::v1::HostInfo& host);

// The document of a local run: source "local", run.plan_name, one device named
// LocalAgentName(report.host) with the host, the report's fingerprint and its results;
// MarkIncomplete'd.
fleetmark::v1::ResultsDocument LocalResultsDocument(const fleetmark::v1::RunReport& report);

// Sets each result's `partial` (engine::IsPartialResult, the one rule) and
// run.incomplete (any result CASE_STATUS_CANCELLED: an interrupted, cancelled or
// deferred run). LocalResultsDocument and the fleet export's document call it, and so
// does every reader (ParseResultsJson), so a file written before these fields reads the same.
void MarkIncomplete(fleetmark::v1::ResultsDocument* document);

// One device's results as a RunReport (plan name, host, fingerprint, results).
fleetmark::v1::RunReport DeviceReport(const fleetmark::v1::ResultsDocument& document,
                                      const fleetmark::v1::ResultsDevice& device);

}  // namespace fleetmark::report
