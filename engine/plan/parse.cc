// ParsePlan / LoadPlanFile: protobuf's own parsers, with line:column in errors.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/plan/plan.h"
#include "engine/plan/source_map.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/json_util.h"

namespace fleetmark::engine {
namespace {

// Keeps the first error (and counts the rest) as "<source>:<line>:<column>: <message>".
class FirstErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  explicit FirstErrorCollector(std::string_view source) : source_(source) {}

  void AddError(int line, int column, const std::string& message) override {
    if (first_.empty()) {
      // The parser reports 0-based positions; editors count from 1.
      first_ = absl::StrCat(source_, ":", line + 1, ":", column + 1, ": ", message);
    }
  }
  void AddWarning(int, int, const std::string&) override {}

  const std::string& first() const { return first_; }

 private:
  std::string source_;
  std::string first_;
};

}  // namespace

PlanFormat PlanFormatFromPath(std::string_view path) {
  return absl::EndsWithIgnoreCase(absl::string_view(path.data(), path.size()), ".json")
             ? PlanFormat::kJson
             : PlanFormat::kText;
}

absl::StatusOr<ParsedPlan> ParsePlan(std::string_view text, PlanFormat format,
                                     std::string_view source_view) {
  // Debian's Abseil keeps its own string_view type: work with std::string here.
  const std::string source_name(source_view);
  ParsedPlan parsed;
  parsed.source_name = source_name;
  if (format == PlanFormat::kJson) {
    google::protobuf::util::JsonParseOptions options;
    options.ignore_unknown_fields = false;
    auto status = google::protobuf::util::JsonStringToMessage(
        google::protobuf::StringPiece(text.data(), text.size()), &parsed.plan, options);
    if (!status.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(source_name, ": invalid JSON plan: ", status.message().as_string()));
    }
    return parsed;
  }
  auto tree = std::make_unique<google::protobuf::TextFormat::ParseInfoTree>();
  FirstErrorCollector errors(source_name);
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  parser.WriteLocationsTo(tree.get());
  parser.AllowPartialMessage(false);
  if (!parser.ParseFromString(std::string(text), &parsed.plan)) {
    return absl::InvalidArgumentError(
        errors.first().empty() ? absl::StrCat(source_name, ": malformed text-format plan")
                               : errors.first());
  }
  parsed.source_map = std::make_shared<const PlanSourceMap>(std::move(tree));
  return parsed;
}

absl::StatusOr<ParsedPlan> LoadPlanFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    const std::string what = absl::StrCat(path, ": cannot open plan file: ", std::strerror(err));
    if (err == ENOENT) return absl::NotFoundError(what);
    if (err == EACCES) return absl::PermissionDeniedError(what);
    return absl::InvalidArgumentError(what);
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": cannot read plan file"));
  }
  return ParsePlan(text.str(), PlanFormatFromPath(path), path);
}

}  // namespace fleetmark::engine
