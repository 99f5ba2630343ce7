// ParsePlan / LoadPlanFile: protobuf's own parsers, with line:column and the field path
// in errors; plan files are size-capped regular files (or "-" for standard input).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/common/suggest.h"
#include "engine/common/text.h"
#include "engine/common/input_file.h"
#include "engine/common/status_macros.h"
#include "engine/plan/json_check.h"
#include "engine/plan/plan.h"
#include "engine/plan/source_map.h"
#include "engine/plan/text_scan.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/json_util.h"

namespace fleetmark::engine {
namespace {

// Parser messages may quote input bytes: escape them and keep the line short.
std::string Sanitized(std::string_view message) { return PrintableText(message, 300); }

// The text between `open` and the next `close` after it in `text`, or nullopt.
std::optional<std::string> Between(const std::string& text, std::string_view open, std::string_view close,
                                   size_t from = 0) {
  const size_t start = text.find(open, from);
  if (start == std::string::npos) return std::nullopt;
  const size_t end = text.find(close, start + open.size());
  if (end == std::string::npos) return std::nullopt;
  return text.substr(start + open.size(), end - start - open.size());
}

// protobuf's text parser message in a person's words, never naming a protobuf type:
//  - "Expected integer, got: -" for a negative number given to an unsigned field
//    (counts, sizes, seconds: every integer of a plan);
//  - `Message type "fleetmark.v1.Matrix" has no field named "stratgies"` -> the
//    block's fields with a did-you-mean (suggest.h);
//  - "Expected identifier, got: " (nothing after: the text ended, a '{' left open) ->
//    what was expected and that the file ended.
// Anything else: ParserProblemText (first line, no package names), escaped.
std::string ParserMessage(const std::string& message, bool at_end) {
  if (message == "Expected integer, got: -") return "takes a whole number >= 0, got a negative number";
  if (absl::StartsWith(message, "Message type \"") && absl::StrContains(message, "\" has no field named \"")) {
    const std::optional<std::string> type = Between(message, "Message type \"", "\"");
    const std::optional<std::string> field = Between(message, "has no field named \"", "\"");
    const google::protobuf::Descriptor* descriptor =
        type ? google::protobuf::DescriptorPool::generated_pool()->FindMessageTypeByName(*type) : nullptr;
    if (field && descriptor != nullptr) {
      std::vector<std::string> names;
      for (int i = 0; i < descriptor->field_count(); ++i) names.push_back(descriptor->field(i)->name());
      return absl::StrCat("no field \"", Sanitized(*field), "\" here", DidYouMean(*field, names),
                          "; the fields here: ", absl::StrJoin(names, ", "));
    }
  }
  if (at_end || (absl::StartsWith(message, "Expected ") && absl::EndsWith(message, ", got: "))) {
    std::string expected =
        Between(message, "Expected ", ", got").value_or(Between(message, "Expected ", ", found").value_or("more"));
    if (expected == "identifier") expected = "a field name or the \"}\" that closes this block";
    return absl::StrCat("expected ", Sanitized(expected), ", but the file ended",
                        at_end ? " (a \"{\" is not closed)" : "");
  }
  return ParserProblemText(message);
}

// Whether only whitespace and comments follow `at` (0-based) in `text`: protobuf's
// tokenizer reached the end there.
bool AtEnd(std::string_view text, SourcePosition at) {
  size_t offset = 0;
  for (int line = 0; line < at.line && offset != std::string_view::npos; ++line) {
    offset = text.find('\n', offset);
    if (offset != std::string_view::npos) ++offset;
  }
  if (offset == std::string_view::npos) return true;
  offset += static_cast<size_t>(at.column);
  while (offset < text.size()) {
    const char c = text[offset];
    if (c == '#') {
      offset = text.find('\n', offset);
      if (offset == std::string_view::npos) return true;
    } else if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
      return false;
    }
    ++offset;
  }
  return true;
}

// protobuf says only "Integer out of range (1000000000000)" for a number past its
// field's type. The field's own rule (validation's range) is named instead: the number
// is swapped for the type's largest value, and if validation then refuses that field,
// its message is returned with the number as given; otherwise the type's range is.
// `at` is 0-based; nullopt when the message is another one.
std::optional<std::string> OutOfRangeMessage(const std::string& text, const std::string& message, SourcePosition at,
                                             const std::string& source_name, const std::string& path) {
  if (!absl::StartsWith(message, "Integer out of range")) return std::nullopt;
  // The number's token starts at the error's position.
  size_t offset = 0;
  for (int line = 0; line < at.line && offset != std::string::npos; ++line) {
    offset = text.find('\n', offset);
    if (offset != std::string::npos) ++offset;
  }
  if (offset == std::string::npos) return std::nullopt;
  offset += static_cast<size_t>(at.column);
  size_t end = offset;
  while (end < text.size() && (absl::ascii_isalnum(static_cast<unsigned char>(text[end])) || text[end] == '-')) ++end;
  if (end == offset || end - offset > 40) return std::nullopt;
  const std::string given = text.substr(offset, end - offset);
  constexpr char kTypeMax[] = "4294967295";  // every integer of a plan is a uint32 or wider
  const std::string swapped = absl::StrCat(text.substr(0, offset), kTypeMax, text.substr(end));
  absl::StatusOr<ParsedPlan> parsed = ParsePlan(swapped, PlanFormat::kText, source_name);
  if (parsed.ok()) {
    const absl::Status valid = ValidatePlan(*parsed);
    const std::string refused(valid.message());
    const std::string got = absl::StrCat(", got ", kTypeMax);
    if (!valid.ok() && absl::StrContains(refused, absl::StrCat(path, ": ")) && absl::EndsWith(refused, got)) {
      return absl::StrCat(refused.substr(0, refused.size() - got.size()), ", got ", Sanitized(given));
    }
  }
  return absl::StrCat(source_name, ":", at.line + 1, ":", at.column + 1, ": ", path,
                      ": a whole number 0..4294967295, got ", Sanitized(given));
}

// Keeps the first error's 0-based position and message.
class FirstErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, int column, const std::string& message) override {
    if (!position_) {
      position_ = SourcePosition{line, column};
      message_ = message;
    }
  }
  void AddWarning(int, int, const std::string&) override {}

  const std::optional<SourcePosition>& position() const { return position_; }
  const std::string& message() const { return message_; }

 private:
  std::optional<SourcePosition> position_;
  std::string message_;
};

constexpr InputFileRule kPlanFileRule{.noun = "plan file",
                                      .must_be = "a plan must be a regular file (or - for standard input)",
                                      .max_bytes = kMaxPlanBytes,
                                      .max_text = "16 MiB",
                                      .stdin_name = kStdinSourceName.data()};

// As ReadInputFile says a file is too large, for plan text given directly.
absl::Status TooLarge(const std::string& name, uint64_t bytes) {
  return absl::InvalidArgumentError(absl::StrCat(name, ": ", kPlanFileRule.noun, " is ", bytes,
                                                 " bytes or more; at most ", kPlanFileRule.max_bytes, " (",
                                                 kPlanFileRule.max_text, ")"));
}

}  // namespace

PlanFormat PlanFormatFromPath(std::string_view path) {
  return absl::EndsWithIgnoreCase(absl::string_view(path.data(), path.size()), ".json") ? PlanFormat::kJson
                                                                                        : PlanFormat::kText;
}

PlanFormat SniffPlanFormat(std::string_view path, std::string_view text) {
  if (PlanFormatFromPath(path) == PlanFormat::kJson) return PlanFormat::kJson;
  const size_t first = text.find_first_not_of(" \t\r\n\f\v");
  return first != std::string_view::npos && text[first] == '{' ? PlanFormat::kJson : PlanFormat::kText;
}

absl::StatusOr<ParsedPlan> ParsePlan(std::string_view text, PlanFormat format, std::string_view source_view) {
  // Debian's Abseil keeps its own string_view type: work with std::string here.
  const std::string source_name(source_view);
  ParsedPlan parsed;
  parsed.source_name = source_name;
  if (text.size() > kMaxPlanBytes) return TooLarge(source_name, text.size());
  if (format == PlanFormat::kJson) {
    FLEETMARK_RETURN_IF_ERROR(CheckJsonPlan(text, source_name));
    google::protobuf::util::JsonParseOptions options;
    options.ignore_unknown_fields = false;
    auto status = google::protobuf::util::JsonStringToMessage(google::protobuf::StringPiece(text.data(), text.size()),
                                                              &parsed.plan, options);
    if (!status.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(source_name, ": invalid JSON plan: ", ParserProblemText(status.message().as_string())));
    }
    return parsed;
  }
  FirstErrorCollector errors;
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  parser.AllowPartialMessage(false);
  if (!parser.ParseFromString(std::string(text), &parsed.plan)) {
    if (!errors.position()) {
      return absl::InvalidArgumentError(absl::StrCat(source_name, ": malformed text-format plan"));
    }
    const SourcePosition at = *errors.position();
    const TextScan scan = ScanPlanText(text, at);
    if (std::optional<std::string> range = OutOfRangeMessage(std::string(text), errors.message(), at, source_name,
                                                             FormatFieldPath(scan.path_at_stop))) {
      return absl::InvalidArgumentError(*range);
    }
    return absl::InvalidArgumentError(absl::StrCat(source_name, ":", at.line + 1, ":", at.column + 1, ": ",
                                                   FormatFieldPath(scan.path_at_stop), ": ",
                                                   ParserMessage(errors.message(), AtEnd(text, at))));
  }
  parsed.source_map = std::make_shared<const PlanSourceMap>(ScanPlanText(text, std::nullopt).positions);
  return parsed;
}

absl::StatusOr<ParsedPlan> LoadPlanFile(const std::string& path) {
  FLEETMARK_ASSIGN_OR_RETURN(const std::string text, ReadInputFile(path, kPlanFileRule));
  const std::string source = path == kStdinPlanPath ? std::string(kStdinSourceName) : path;
  return ParsePlan(text, SniffPlanFormat(path, text), source);
}

}  // namespace fleetmark::engine
