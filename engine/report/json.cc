#include "engine/report/json.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "engine/report/results_check.h"
#include "engine/report/results_document.h"
#include "engine/common/status_macros.h"
#include "engine/common/text.h"
#include "google/protobuf/util/json_util.h"

namespace fleetmark::report {
namespace {

constexpr char kNotResults[] =
    "not a results file of `fleetmark run --format json` or `fleetmark export --format json`: ";

// Strict protobuf JSON parse of `json` into `message` (unknown fields rejected).
absl::Status ParseStrict(std::string_view json, google::protobuf::Message* message) {
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  const auto status = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(json.data(), json.size()), message, options);
  if (!status.ok()) return absl::InvalidArgumentError(ParserProblemText(status.message().as_string()));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> FormatResultsJson(const fleetmark::v1::ResultsDocument& document) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.always_print_primitive_fields = true;
  options.preserve_proto_field_names = true;
  std::string json;
  const auto status = google::protobuf::util::MessageToJsonString(document, &json, options);
  if (!status.ok()) {
    return absl::InternalError(absl::StrCat("JSON printer: ", status.ToString()));
  }
  return json;
}

absl::StatusOr<std::string> FormatJson(const fleetmark::v1::RunReport& report) {
  return FormatResultsJson(LocalResultsDocument(report));
}

absl::StatusOr<fleetmark::v1::ResultsDocument> ParseResultsJson(std::string_view json) {
  fleetmark::v1::ResultsDocument document;
  const absl::Status as_document = ParseStrict(json, &document);
  if (as_document.ok() && document.schema_version() > kResultsSchemaVersion) {
    return absl::InvalidArgumentError(
        absl::StrCat(kNotResults, "schema_version ", document.schema_version(),
                     " is newer than this fleetmark reads (1 <= schema_version <= ", kResultsSchemaVersion, ")"));
  }
  if (as_document.ok() && document.schema_version() > 0) {
    FLEETMARK_RETURN_IF_ERROR(CheckResultsDocument(document));
    return document;
  }
  // Before the schema: `fleetmark run --format json` wrote a RunReport (camelCase).
  fleetmark::v1::RunReport report;
  if (ParseStrict(json, &report).ok()) {
    fleetmark::v1::ResultsDocument legacy = LocalResultsDocument(report);
    legacy.set_schema_version(0);  // read from a file older than the schema
    FLEETMARK_RETURN_IF_ERROR(CheckResultsDocument(legacy));
    return legacy;
  }
  if (as_document.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(kNotResults, "schema_version: missing or 0 (1 <= schema_version <= ", kResultsSchemaVersion, ")"));
  }
  return absl::InvalidArgumentError(absl::StrCat(kNotResults, as_document.message()));
}

absl::StatusOr<fleetmark::v1::RunReport> ParseJson(std::string_view json) {
  absl::StatusOr<fleetmark::v1::ResultsDocument> document = ParseResultsJson(json);
  if (!document.ok()) return document.status();
  if (document->devices_size() > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("results JSON: holds ", document->devices_size(), " devices, expected one"));
  }
  if (document->devices_size() == 0) {
    fleetmark::v1::RunReport report;
    report.set_plan_name(document->run().plan_name());
    return report;
  }
  return DeviceReport(*document, document->devices(0));
}

}  // namespace fleetmark::report
