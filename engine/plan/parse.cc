// ParsePlan / LoadPlanFile: protobuf's own parsers, with line:column and the field path
// in errors; plan files are size-capped regular files (or "-" for standard input).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/common/suggest.h"
#include "engine/common/byte_order_mark.h"
#include "engine/common/text.h"
#include "engine/common/input_file.h"
#include "engine/common/status_macros.h"
#include "engine/plan/json_check.h"
#include "engine/plan/plan.h"
#include "engine/plan/source_map.h"
#include "engine/plan/text_scan.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
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
//  - "Interpreting non ascii codepoint 195", "Invalid control characters encountered in
//    text", "Expected identifier, got: \x7f" (`byte`, the one at the error's position, is
//    outside ASCII or a control character) -> the byte and where such bytes may stand.
// Anything else: ParserProblemText (first line, no package names), escaped.
std::string ParserMessage(const std::string& message, bool at_end, std::optional<unsigned char> byte) {
  if (message == "Expected integer, got: -") return "takes a whole number >= 0, got a negative number";
  const bool control = byte && ((*byte < 0x20 && *byte != '\t' && *byte != '\n' && *byte != '\r') || *byte == 0x7f);
  if (absl::StartsWith(message, "Interpreting non ascii codepoint") || (byte && *byte >= 0x80)) {
    return absl::StrCat("a byte outside ASCII",
                        byte && *byte >= 0x80 ? absl::StrCat(" (0x", absl::Hex(*byte, absl::kZeroPad2), ")") : "",
                        " outside \"quotes\": field names, numbers and punctuation are ASCII; other text (UTF-8) "
                        "goes inside a quoted string");
  }
  if (absl::StartsWith(message, "Invalid control characters") || control) {
    return absl::StrCat("a control character",
                        control ? absl::StrCat(" (byte 0x", absl::Hex(*byte, absl::kZeroPad2), ")") : "",
                        ": a plan is text, with spaces, tabs and line breaks between its fields");
  }
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

// The byte offset of `at` (0-based, protobuf's convention) in `text`, npos when the
// text has fewer lines.
size_t OffsetOf(std::string_view text, SourcePosition at) {
  size_t offset = 0;
  for (int line = 0; line < at.line && offset != std::string_view::npos; ++line) {
    offset = text.find('\n', offset);
    if (offset != std::string_view::npos) ++offset;
  }
  return offset == std::string_view::npos ? offset : offset + static_cast<size_t>(at.column);
}

// Whether only whitespace and comments follow `at` (0-based) in `text`: protobuf's
// tokenizer reached the end there.
bool AtEnd(std::string_view text, SourcePosition at) {
  size_t offset = OffsetOf(text, at);
  if (offset == std::string_view::npos) return true;
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

// What is wrong with a number's value that protobuf does not name its field's range for.
enum class ValueProblem {
  kPastIntegerType,  // "Integer out of range (1000000000000)": past the field's type
  kNotInteger,       // "Expected integer, got: many" (also 1.5, 1e400, "8")
  kNotNumber,        // "Expected double, got: many"
  kPastDouble,       // 1e400 for a number: protobuf reads it as infinity, without a word
};

// The problem of protobuf's text parser `message`, if it is one of ValueProblem's.
std::optional<ValueProblem> ValueProblemOf(const std::string& message) {
  if (absl::StartsWith(message, "Integer out of range")) return ValueProblem::kPastIntegerType;
  if (absl::StartsWith(message, "Expected integer, got: ") && message != "Expected integer, got: -") {
    return ValueProblem::kNotInteger;
  }
  if (absl::StartsWith(message, "Expected double, got: ")) return ValueProblem::kNotNumber;
  return std::nullopt;
}

// A number's value at `at` (0-based) with `problem`. The field's own rule (validation's
// range, the one place ranges are defined) is named: the value is swapped for a number
// of the field's kind far past any plan range, and if validation then refuses that
// field, its message is returned with the value as given (after "expected an integer, "
// or "expected a number, " when the value was not one); otherwise the kind the field
// takes is. nullopt when no value token starts at `at`.
std::optional<std::string> ValueMessage(const std::string& text, ValueProblem problem, SourcePosition at,
                                        const std::string& source_name, const std::string& path) {
  const bool past_type = problem == ValueProblem::kPastIntegerType;
  const bool not_number = problem == ValueProblem::kNotNumber;
  const bool past_double = problem == ValueProblem::kPastDouble;
  // The value's token starts at the error's position: a quoted string, or a word.
  const size_t offset = OffsetOf(text, at);
  if (offset == std::string::npos || offset >= text.size()) return std::nullopt;
  size_t end = offset;
  if (text[offset] == '"' || text[offset] == '\'') {
    end = text.find(text[offset], offset + 1);
    end = end == std::string::npos || text.find('\n', offset) < end ? std::string::npos : end + 1;
  } else {
    while (end < text.size() && (absl::ascii_isalnum(static_cast<unsigned char>(text[end])) || text[end] == '-' ||
                                 text[end] == '+' || text[end] == '.' || text[end] == '_')) {
      ++end;
    }
  }
  if (end == std::string::npos || end == offset || end - offset > 40) return std::nullopt;
  const std::string given = text.substr(offset, end - offset);
  // Numbers as given; anything else quoted (a quoted string keeps its own quotes).
  const bool as_given = past_type || past_double || given[0] == '"' || given[0] == '\'';
  const std::string shown = as_given ? Sanitized(given) : absl::StrCat("\"", Sanitized(given), "\"");
  const std::string kind = not_number ? "expected a number, " : past_type || past_double ? "" : "expected an integer, ";
  // Past every plan range, within the field's type: every integer of a plan is a uint32
  // or wider; every number a double.
  const std::string probe = not_number || past_double ? "1e300" : "4294967295";
  const std::string swapped = absl::StrCat(text.substr(0, offset), probe, text.substr(end));
  absl::StatusOr<ParsedPlan> parsed = ParsePlan(swapped, PlanFormat::kText, source_name);
  if (parsed.ok()) {
    const absl::Status valid = ValidatePlan(*parsed);
    const std::string refused(valid.message());
    const std::string field = absl::StrCat(path, ": ");
    const size_t named = refused.find(field);
    const size_t got = refused.rfind(", got ");
    if (!valid.ok() && named != std::string::npos && got != std::string::npos && got > named) {
      const size_t rule = named + field.size();
      return absl::StrCat(refused.substr(0, rule), kind, refused.substr(rule, got - rule), ", got ", shown);
    }
  }
  return absl::StrCat(source_name, ":", at.line + 1, ":", at.column + 1, ": ", path, ": ",
                      not_number    ? "expected a number, got "
                      : past_double ? "a number within +-1.7e308, got "
                      : past_type   ? "a whole number 0..4294967295, got "
                                    : "expected a whole number >= 0, got ",
                      shown);
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

// Where (0-based) the first number of `text` past the largest double starts (its "-"
// included), e.g. 1e400: protobuf's parser reads it as infinity without an error. Only
// called on text the parser accepted.
std::optional<SourcePosition> FirstNumberPastDouble(std::string_view text) {
  google::protobuf::io::ArrayInputStream input(text.data(), static_cast<int>(text.size()));
  FirstErrorCollector ignored;
  google::protobuf::io::Tokenizer tokenizer(&input, &ignored);
  std::optional<SourcePosition> minus;
  while (tokenizer.Next()) {
    const google::protobuf::io::Tokenizer::Token& token = tokenizer.current();
    if (token.type == google::protobuf::io::Tokenizer::TYPE_FLOAT &&
        std::isinf(google::protobuf::io::Tokenizer::ParseFloat(token.text))) {
      return minus.value_or(SourcePosition{token.line, token.column});
    }
    minus = token.type == google::protobuf::io::Tokenizer::TYPE_SYMBOL && token.text == "-"
                ? std::optional<SourcePosition>(SourcePosition{token.line, token.column})
                : std::nullopt;
  }
  return std::nullopt;
}

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

// The 0-based position of byte `offset` of `text`.
SourcePosition PositionOf(std::string_view text, size_t offset) {
  const std::string_view before = text.substr(0, offset);
  const size_t line_start = before.rfind('\n');
  return {static_cast<int>(std::count(before.begin(), before.end(), '\n')),
          static_cast<int>(line_start == std::string_view::npos ? offset : offset - line_start - 1)};
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

absl::StatusOr<ParsedPlan> ParsePlan(std::string_view text_given, PlanFormat format, std::string_view source_view) {
  // Debian's Abseil keeps its own string_view type: work with std::string here.
  const std::string source_name(source_view);
  ParsedPlan parsed;
  parsed.source_name = source_name;
  if (text_given.size() > kMaxPlanBytes) return TooLarge(source_name, text_given.size());
  const std::string_view text = WithoutUtf8Bom(text_given);
  // No parser names a NUL byte (protobuf's said "Unexpected end of string" inside quotes).
  if (const size_t nul = text.find('\0'); nul != std::string_view::npos) {
    const SourcePosition at = PositionOf(text, nul);
    const std::string path =
        format == PlanFormat::kText ? absl::StrCat(FormatFieldPath(ScanPlanText(text, at).path_at_stop), ": ") : "";
    return absl::InvalidArgumentError(absl::StrCat(source_name, ":", at.line + 1, ":", at.column + 1, ": ", path,
                                                   "a NUL byte (0x00): a plan is text, and no field may hold one"));
  }
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
    if (const std::optional<ValueProblem> problem = ValueProblemOf(errors.message())) {
      if (std::optional<std::string> range =
              ValueMessage(std::string(text), *problem, at, source_name, FormatFieldPath(scan.path_at_stop))) {
        return absl::InvalidArgumentError(*range);
      }
    }
    const size_t offset = OffsetOf(text, at);
    const std::optional<unsigned char> byte =
        offset < text.size() ? std::optional<unsigned char>(static_cast<unsigned char>(text[offset])) : std::nullopt;
    return absl::InvalidArgumentError(absl::StrCat(source_name, ":", at.line + 1, ":", at.column + 1, ": ",
                                                   FormatFieldPath(scan.path_at_stop), ": ",
                                                   ParserMessage(errors.message(), AtEnd(text, at), byte)));
  }
  if (const std::optional<SourcePosition> at = FirstNumberPastDouble(text)) {
    const std::string path = FormatFieldPath(ScanPlanText(text, *at).path_at_stop);
    if (std::optional<std::string> range =
            ValueMessage(std::string(text), ValueProblem::kPastDouble, *at, source_name, path)) {
      return absl::InvalidArgumentError(*range);
    }
  }
  parsed.source_map = std::make_shared<const PlanSourceMap>(ScanPlanText(text, std::nullopt).positions);
  return parsed;
}

absl::StatusOr<ParsedPlan> LoadPlanFile(const std::string& path) {
  FLEETMARK_ASSIGN_OR_RETURN(const std::string text, ReadInputFile(path, kPlanFileRule));
  const std::string source = path == kStdinPlanPath ? std::string(kStdinSourceName) : path;
  return ParsePlan(text, SniffPlanFormat(path, WithoutUtf8Bom(text)), source);
}

}  // namespace fleetmark::engine
