#include "engine/report/json.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/json_util.h"

namespace fleetmark::report {

absl::StatusOr<std::string> FormatJson(const fleetmark::v1::RunReport& report) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.always_print_primitive_fields = true;
  std::string json;
  const auto status = google::protobuf::util::MessageToJsonString(report, &json, options);
  if (!status.ok()) {
    return absl::InternalError(absl::StrCat("JSON printer: ", status.ToString()));
  }
  return json;
}

absl::StatusOr<fleetmark::v1::RunReport> ParseJson(std::string_view json) {
  fleetmark::v1::RunReport report;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  const auto status = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(json.data(), json.size()), &report, options);
  if (!status.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("RunReport JSON: ", status.ToString()));
  }
  return report;
}

}  // namespace fleetmark::report
