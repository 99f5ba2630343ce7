#include "engine/plan/json_check.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "engine/common/suggest.h"
#include "engine/plan/source_map.h"
#include "fleetmark/v1/plan.pb.h"
#include "google/protobuf/descriptor.h"
#include "nlohmann/json.hpp"

namespace fleetmark::engine {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using Json = nlohmann::json;

// `text` C-escaped, at most 40 bytes, quoted.
std::string Shown(std::string_view text) {
  constexpr size_t kShown = 40;
  return absl::StrCat("\"", PrintableText(text, kShown), "\"");
}

std::string TypeName(const FieldDescriptor* f) {
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
    case FieldDescriptor::CPPTYPE_UINT32:
    case FieldDescriptor::CPPTYPE_INT64:
    case FieldDescriptor::CPPTYPE_UINT64:
      return absl::StrCat("an integer (", f->type_name(), ")");
    case FieldDescriptor::CPPTYPE_DOUBLE:
    case FieldDescriptor::CPPTYPE_FLOAT:
      return "a number";
    case FieldDescriptor::CPPTYPE_BOOL:
      return "true or false";
    case FieldDescriptor::CPPTYPE_ENUM:
      return "an enum name";
    case FieldDescriptor::CPPTYPE_STRING:
      return "a string";
    case FieldDescriptor::CPPTYPE_MESSAGE:
      return "an object";
  }
  return "a value";
}

bool Is64Bit(const FieldDescriptor* f) {
  return f->cpp_type() == FieldDescriptor::CPPTYPE_INT64 || f->cpp_type() == FieldDescriptor::CPPTYPE_UINT64;
}

bool IsInteger(const FieldDescriptor* f) {
  return Is64Bit(f) || f->cpp_type() == FieldDescriptor::CPPTYPE_INT32 ||
         f->cpp_type() == FieldDescriptor::CPPTYPE_UINT32;
}

bool IsUnsigned(const FieldDescriptor* f) {
  return f->cpp_type() == FieldDescriptor::CPPTYPE_UINT32 || f->cpp_type() == FieldDescriptor::CPPTYPE_UINT64;
}

// Whether `value` fits the integer field `f`.
bool FitsSigned(const FieldDescriptor* f, int64_t value) {
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
      return value >= std::numeric_limits<int32_t>::min() && value <= std::numeric_limits<int32_t>::max();
    case FieldDescriptor::CPPTYPE_UINT32:
      return value >= 0 && value <= int64_t{std::numeric_limits<uint32_t>::max()};
    case FieldDescriptor::CPPTYPE_UINT64:
      return value >= 0;
    default:
      return true;
  }
}

bool FitsUnsigned(const FieldDescriptor* f, uint64_t value) {
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
      return value <= std::numeric_limits<int32_t>::max();
    case FieldDescriptor::CPPTYPE_UINT32:
      return value <= std::numeric_limits<uint32_t>::max();
    case FieldDescriptor::CPPTYPE_INT64:
      return value <= std::numeric_limits<int64_t>::max();
    default:
      return true;
  }
}

// A JSON container being read: an object of message type `descriptor` at `path`, or
// an array holding the elements of the repeated field `field` of the message at `path`.
struct Context {
  bool array = false;
  const Descriptor* descriptor = nullptr;
  std::set<int> seen;  // field numbers already given (objects)
  const FieldDescriptor* field = nullptr;
  int index = 0;  // next element (arrays)
  FieldPath path;
};

// nlohmann::json SAX handler (the SAX concept: one method per event; false stops).
class PlanJsonChecker {
 public:
  explicit PlanJsonChecker(std::string_view text) : text_(text) {}

  const std::string& error() const { return error_; }

  bool null() { return Scalar(Kind::kNull, "null"); }
  bool boolean(bool value) { return Scalar(Kind::kBool, value ? "true" : "false"); }
  bool number_integer(Json::number_integer_t value) {
    signed_ = value;
    return Scalar(Kind::kSigned, std::to_string(value));
  }
  bool number_unsigned(Json::number_unsigned_t value) {
    unsigned_ = value;
    return Scalar(Kind::kUnsigned, std::to_string(value));
  }
  bool number_float(Json::number_float_t, const Json::string_t& text) { return Scalar(Kind::kFloat, text); }
  bool string(Json::string_t& value) {
    string_ = value;
    return Scalar(Kind::kString, Shown(value));
  }
  bool binary(Json::binary_t&) { return Fail({}, "binary values are not JSON"); }

  bool start_object(std::size_t) {
    if (stack_.empty()) {
      stack_.push_back({false, v1::Plan::descriptor(), {}, nullptr, 0, {}});
      return true;
    }
    const FieldDescriptor* field = nullptr;
    FieldPath path;
    bool in_array = false;
    if (!NextValue(&field, &path, &in_array)) return false;
    if (field->is_repeated() && !in_array) return Fail(path, "expected a JSON array, got an object");
    if (field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) {
      return Fail(path, absl::StrCat("expected ", TypeName(field), ", got an object"));
    }
    stack_.push_back({false, field->message_type(), {}, nullptr, 0, path});
    return true;
  }

  bool key(Json::string_t& name) {
    Context& object = stack_.back();
    const FieldDescriptor* field = nullptr;
    for (int i = 0; i < object.descriptor->field_count(); ++i) {
      const FieldDescriptor* f = object.descriptor->field(i);
      if (f->name() == name || f->json_name() == name) field = f;
    }
    if (field == nullptr) {
      std::vector<std::string> names;
      for (int i = 0; i < object.descriptor->field_count(); ++i) names.push_back(object.descriptor->field(i)->name());
      return Fail(object.path, absl::StrCat("unknown field ", Shown(name), DidYouMean(name, names)));
    }
    if (!object.seen.insert(field->number()).second) {
      FieldPath path = object.path;
      path.push_back({field->name(), -1});
      return Fail(path, absl::StrCat("duplicate key ", Shown(name), " (each field may be given once)"));
    }
    pending_ = field;
    return true;
  }

  bool end_object() { return EndContainer(); }

  bool start_array(std::size_t) {
    if (stack_.empty()) return Fail({}, "expected a JSON object, got an array");
    const FieldDescriptor* field = nullptr;
    FieldPath path;
    bool in_array = false;
    if (!NextValue(&field, &path, &in_array)) return false;
    if (!field->is_repeated() || in_array) {
      return Fail(path, absl::StrCat("expected ", TypeName(field), ", got an array"));
    }
    Context array;
    array.array = true;
    array.field = field;
    array.path = stack_.back().path;
    stack_.push_back(std::move(array));
    return true;
  }

  bool end_array() { return EndContainer(); }

  bool parse_error(std::size_t position, const std::string& /*last_token*/, const nlohmann::detail::exception& e) {
    // nlohmann's message: "[json.exception.parse_error.101] parse error at line L,
    // column C: <what>"; keep <what>, escaped, with our own 1-based line:column.
    std::string what = e.what();
    if (const size_t colon = what.find(": "); colon != std::string::npos) what = what.substr(colon + 2);
    int line = 1, column = 1;
    for (size_t i = 0; i + 1 < position && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    syntax_error_ = true;
    error_ = absl::StrCat(line, ":", column, ": invalid JSON: ", PrintableText(what));
    return false;
  }

  bool syntax_error() const { return syntax_error_; }

 private:
  enum class Kind { kNull, kBool, kSigned, kUnsigned, kFloat, kString };

  bool Fail(const FieldPath& path, const std::string& what) {
    if (error_.empty()) error_ = absl::StrCat(FormatFieldPath(path), ": ", what);
    return false;
  }

  // The field the next value belongs to, its path, and whether it is an array element.
  bool NextValue(const FieldDescriptor** field, FieldPath* path, bool* in_array) {
    Context& top = stack_.back();
    *path = top.path;
    if (top.array) {
      *field = top.field;
      path->push_back({top.field->name(), top.index++});
      *in_array = true;
    } else {
      *field = pending_;
      path->push_back({pending_->name(), -1});
      *in_array = false;
    }
    return true;
  }

  bool EndContainer() {
    stack_.pop_back();
    return true;
  }

  bool Scalar(Kind kind, const std::string& shown) {
    if (stack_.empty()) return Fail({}, absl::StrCat("expected a JSON object, got ", shown));
    const FieldDescriptor* field = nullptr;
    FieldPath path;
    bool in_array = false;
    if (!NextValue(&field, &path, &in_array)) return false;
    if (kind == Kind::kNull) return true;  // unset, as in protobuf's JSON mapping
    if (field->is_repeated() && !in_array) {
      return Fail(path, absl::StrCat("expected a JSON array, got ", shown));
    }
    const std::string expected = absl::StrCat("expected ", TypeName(field), ", got ");
    bool ok = false;
    if (IsInteger(field)) {
      if (kind == Kind::kSigned || kind == Kind::kUnsigned) {
        ok = kind == Kind::kSigned ? FitsSigned(field, signed_) : FitsUnsigned(field, unsigned_);
        if (!ok) return Fail(path, absl::StrCat(expected, shown, " (out of range)"));
      } else if (kind == Kind::kString && Is64Bit(field)) {
        // protobuf prints 64-bit integers as strings; accept plain decimal ones.
        std::string_view digits = string_;
        if (!IsUnsigned(field) && !digits.empty() && digits[0] == '-') digits.remove_prefix(1);
        ok = !digits.empty() && digits.size() <= 20 && std::all_of(digits.begin(), digits.end(), [](char c) {
          return absl::ascii_isdigit(static_cast<unsigned char>(c));
        });
      }
    } else {
      switch (field->cpp_type()) {
        case FieldDescriptor::CPPTYPE_DOUBLE:
        case FieldDescriptor::CPPTYPE_FLOAT:
          ok = kind == Kind::kSigned || kind == Kind::kUnsigned || kind == Kind::kFloat;
          break;
        case FieldDescriptor::CPPTYPE_BOOL:
          ok = kind == Kind::kBool;
          break;
        case FieldDescriptor::CPPTYPE_STRING:
          ok = kind == Kind::kString;
          break;
        case FieldDescriptor::CPPTYPE_ENUM:
          ok = kind == Kind::kString || kind == Kind::kSigned || kind == Kind::kUnsigned;
          break;
        default:
          break;
      }
    }
    if (!ok) {
      const char* what = kind == Kind::kString ? "string " : kind == Kind::kBool ? "" : "number ";
      return Fail(path, absl::StrCat(expected, what, shown));
    }
    return true;
  }

  std::string_view text_;
  std::vector<Context> stack_;
  const FieldDescriptor* pending_ = nullptr;
  int64_t signed_ = 0;
  uint64_t unsigned_ = 0;
  std::string string_;
  std::string error_;
  bool syntax_error_ = false;
};

}  // namespace

absl::Status CheckJsonPlan(std::string_view text, std::string_view source_name) {
  PlanJsonChecker checker(text);
  const bool ok = Json::sax_parse(text.begin(), text.end(), &checker, Json::input_format_t::json,
                                  /*strict=*/true, /*ignore_comments=*/false);
  if (ok && checker.error().empty()) return absl::OkStatus();
  const std::string& error = checker.error().empty() ? std::string("invalid JSON") : checker.error();
  return absl::InvalidArgumentError(
      absl::StrCat(std::string(source_name), ":", checker.syntax_error() ? "" : " ", error));
}

}  // namespace fleetmark::engine
