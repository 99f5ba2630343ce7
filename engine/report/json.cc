#include "engine/report/json.h"

#include <algorithm>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "engine/report/results_check.h"
#include "engine/report/results_document.h"
#include "engine/common/status_macros.h"
#include "engine/common/byte_order_mark.h"
#include "engine/common/text.h"
#include "google/protobuf/util/json_util.h"
#include "nlohmann/json.hpp"

namespace fleetmark::report {
namespace {

constexpr char kNotResults[] =
    "not a results file of `fleetmark run --format json` or `fleetmark export --format json`: ";
// What such a file looks like, for messages about its shape.
constexpr char kExpectedShape[] =
    "expected one JSON object {\"schema_version\": 1, \"source\": ..., \"run\": {...}, \"devices\": [...]} "
    "(docs/results-schema.md)";

// "line 3, column 7" of byte `offset` (0-based) of `text`.
std::string LineColumn(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  size_t line = 1, column = 1;
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return absl::StrCat("line ", line, ", column ", column);
}

// Reads the JSON without building it (SAX): its syntax, and what its top level is.
class ShapeReader : public nlohmann::json_sax<nlohmann::json> {
 public:
  std::string top;  // "an object", "an array", ... ("" before the first value)
  bool failed = false;
  size_t error_offset = 0;
  std::string error;  // nlohmann's reason, without its prefix

  bool null() override { return Value("null"); }
  bool boolean(bool) override { return Value("a boolean"); }
  bool number_integer(number_integer_t) override { return Value("a number"); }
  bool number_unsigned(number_unsigned_t) override { return Value("a number"); }
  bool number_float(number_float_t, const string_t&) override { return Value("a number"); }
  bool string(string_t&) override { return Value("a string"); }
  bool binary(binary_t&) override { return Value("binary data"); }
  bool start_object(std::size_t) override { return Value("an object"); }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return Value("an array"); }
  bool end_array() override { return true; }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) override {
    failed = true;
    error_offset = position == 0 ? 0 : position - 1;
    std::string_view what = e.what();
    // "[json.exception.parse_error.101] parse error at line 1, column 2: syntax error ..."
    if (const size_t colon = what.find(": "); colon != std::string_view::npos) what.remove_prefix(colon + 2);
    error = std::string(what);
    return false;
  }

 private:
  bool Value(const char* kind) {
    if (top.empty()) top = kind;
    return true;
  }
};

// The file's syntax and top level, in fleetmark's words: "line 2, column 5: not valid
// JSON (...)", "the file is empty", "its top level is an array, not an object".
absl::Status CheckJsonShape(std::string_view json) {
  if (absl::StripAsciiWhitespace(absl::string_view(json.data(), json.size())).empty()) {
    return absl::InvalidArgumentError(absl::StrCat(kNotResults, "the file is empty; ", kExpectedShape));
  }
  ShapeReader reader;
  nlohmann::json::sax_parse(json.begin(), json.end(), &reader);
  if (reader.failed) {
    return absl::InvalidArgumentError(absl::StrCat(kNotResults, LineColumn(json, reader.error_offset),
                                                   ": not valid JSON (", ParserProblemText(reader.error), ")"));
  }
  if (reader.top != "an object") {
    return absl::InvalidArgumentError(
        absl::StrCat(kNotResults, "its top level is ", reader.top, ", not an object; ", kExpectedShape));
  }
  return absl::OkStatus();
}

// Protobuf JSON parse of `json` into `message`. A ResultsDocument ignores fields it does
// not know (docs/results-schema.md: adding a field is no version bump, readers ignore
// what they do not know); the pre-schema RunReport is parsed strictly (`strict`), so
// a document is never mistaken for one.
absl::Status ParseJsonMessage(std::string_view json, google::protobuf::Message* message, bool strict) {
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = !strict;
  const auto status = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(json.data(), json.size()), message, options);
  if (!status.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("a field does not fit the results schema (docs/results-schema.md; protobuf's JSON parser: ",
                     ParserProblemText(status.message().as_string()), ")"));
  }
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

absl::StatusOr<fleetmark::v1::ResultsDocument> ParseResultsJson(std::string_view json_given) {
  const std::string_view json = WithoutUtf8Bom(json_given);
  FLEETMARK_RETURN_IF_ERROR(CheckJsonShape(json));
  fleetmark::v1::ResultsDocument document;
  const absl::Status as_document = ParseJsonMessage(json, &document, /*strict=*/false);
  if (as_document.ok() && document.schema_version() > kResultsSchemaVersion) {
    return absl::InvalidArgumentError(
        absl::StrCat(kNotResults, "schema_version ", document.schema_version(),
                     " is newer than this fleetmark reads (1 <= schema_version <= ", kResultsSchemaVersion, ")"));
  }
  if (as_document.ok() && document.schema_version() > 0) {
    FLEETMARK_RETURN_IF_ERROR(CheckResultsDocument(document));
    MarkIncomplete(&document);  // files written before `partial` and `incomplete` read the same
    return document;
  }
  // Before the schema: `fleetmark run --format json` wrote a RunReport (camelCase).
  fleetmark::v1::RunReport report;
  if (ParseJsonMessage(json, &report, /*strict=*/true).ok()) {
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
