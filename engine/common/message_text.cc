#include "engine/common/message_text.h"

#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/common/name_rule.h"
#include "engine/common/text.h"
#include "google/protobuf/descriptor.h"

namespace fleetmark {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

// The problem with `text` under `rule`, or nullopt.
std::optional<std::string> Problem(const std::string& text, const TextRule& rule) {
  if (text.size() > rule.max_bytes) return absl::StrCat(text.size(), " bytes");
  return TextProblem(text, rule.allow_newlines);
}

// "<path>: at most 63 bytes of printable UTF-8 (no control characters), got 10000 bytes".
absl::Status Invalid(const std::string& path, const TextRule& rule, const std::string& problem) {
  return absl::InvalidArgumentError(
      absl::StrCat(path, ": at most ", rule.max_bytes, " bytes of printable UTF-8 (no control characters",
                   rule.allow_newlines ? " but newline and tab" : "", "), got ", problem));
}

absl::Status CheckFields(const Message& message, const std::string& path, const MessageTextRules& rules) {
  const Reflection* reflection = message.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  reflection->ListFields(message, &fields);
  for (const FieldDescriptor* field : fields) {
    const std::string field_path = absl::StrCat(path, ".", field->name());
    const TextRule& rule = rules.For(field->full_name());
    if (!field->is_repeated()) {
      if (field->cpp_type() == FieldDescriptor::CPPTYPE_STRING) {
        if (auto problem = Problem(reflection->GetString(message, field), rule)) {
          return Invalid(field_path, rule, *problem);
        }
      } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
        if (absl::Status s = CheckFields(reflection->GetMessage(message, field), field_path, rules); !s.ok()) return s;
      }
      continue;
    }
    const int size = reflection->FieldSize(message, field);
    if (rule.max_elements > 0 && static_cast<size_t>(size) > rule.max_elements) {
      return absl::InvalidArgumentError(
          absl::StrCat(field_path, ": at most ", rule.max_elements, " entries, got ", size));
    }
    for (int i = 0; i < size; ++i) {
      if (field->cpp_type() == FieldDescriptor::CPPTYPE_STRING) {
        if (auto problem = Problem(reflection->GetRepeatedString(message, field, i), rule)) {
          return Invalid(absl::StrCat(field_path, "[", i, "]"), rule, *problem);
        }
      } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE && field->is_map()) {
        // A map entry: its key first (named by position), then the value by its key.
        const Message& entry = reflection->GetRepeatedMessage(message, field, i);
        const FieldDescriptor* key = field->message_type()->map_key();
        const FieldDescriptor* value = field->message_type()->map_value();
        std::string key_text =
            key->cpp_type() == FieldDescriptor::CPPTYPE_STRING ? entry.GetReflection()->GetString(entry, key) : "";
        const std::string shown_key = absl::StrCat("\"", EscapeForTerminal(key_text, 64), "\"");
        if (key->cpp_type() == FieldDescriptor::CPPTYPE_STRING) {
          const TextRule& key_rule = rules.For(key->full_name());
          if (auto problem = Problem(key_text, key_rule)) {
            return Invalid(absl::StrCat(field_path, " key ", shown_key), key_rule, *problem);
          }
        }
        const std::string value_path = absl::StrCat(field_path, "[", shown_key, "]");
        if (value->cpp_type() == FieldDescriptor::CPPTYPE_STRING) {
          const TextRule& value_rule = rules.For(value->full_name());
          if (auto problem = Problem(entry.GetReflection()->GetString(entry, value), value_rule)) {
            return Invalid(value_path, value_rule, *problem);
          }
        } else if (value->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
          const Message& nested = entry.GetReflection()->GetMessage(entry, value);
          if (absl::Status s = CheckFields(nested, value_path, rules); !s.ok()) return s;
        }
      } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
        const Message& nested = reflection->GetRepeatedMessage(message, field, i);
        if (absl::Status s = CheckFields(nested, absl::StrCat(field_path, "[", i, "]"), rules); !s.ok()) return s;
      }
    }
  }
  return absl::OkStatus();
}

// The sanitized form of `text`, or nullopt if it passes `rule` already.
std::optional<std::string> Sanitized(const std::string& text, const TextRule& rule) {
  if (!Problem(text, rule)) return std::nullopt;
  // Escaping turns a byte into at most 4 ("\\xNN"), and a cut appends "...": cutting the
  // input to (max - 3) / 4 bytes keeps the result within max. Newlines (when allowed)
  // are escaped too, which only makes it safer.
  if (rule.max_bytes < 7) return std::string();
  return EscapeForTerminal(text, (rule.max_bytes - 3) / 4);
}

}  // namespace

const TextRule& MessageTextRules::For(std::string_view full_name) const {
  auto it = fields.find(full_name);
  return it == fields.end() ? default_rule : it->second;
}

absl::Status CheckMessageText(const Message& message, std::string_view root, const MessageTextRules& rules) {
  return CheckFields(message, std::string(root), rules);
}

int SanitizeMessageText(Message* message, const MessageTextRules& rules) {
  int changed = 0;
  const Reflection* reflection = message->GetReflection();
  std::vector<const FieldDescriptor*> fields;
  reflection->ListFields(*message, &fields);
  for (const FieldDescriptor* field : fields) {
    if (field->is_map()) continue;
    const TextRule& rule = rules.For(field->full_name());
    if (field->cpp_type() == FieldDescriptor::CPPTYPE_STRING) {
      if (!field->is_repeated()) {
        if (auto fixed = Sanitized(reflection->GetString(*message, field), rule)) {
          reflection->SetString(message, field, *std::move(fixed));
          ++changed;
        }
        continue;
      }
      for (int i = 0; i < reflection->FieldSize(*message, field); ++i) {
        if (auto fixed = Sanitized(reflection->GetRepeatedString(*message, field, i), rule)) {
          reflection->SetRepeatedString(message, field, i, *std::move(fixed));
          ++changed;
        }
      }
    } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (!field->is_repeated()) {
        changed += SanitizeMessageText(reflection->MutableMessage(message, field), rules);
        continue;
      }
      for (int i = 0; i < reflection->FieldSize(*message, field); ++i) {
        changed += SanitizeMessageText(reflection->MutableRepeatedMessage(message, field, i), rules);
      }
    }
  }
  return changed;
}

const MessageTextRules& HelloTextRules() {
  static const MessageTextRules* const kRules = [] {
    auto* rules = new MessageTextRules;
    rules->default_rule = TextRule{.max_bytes = 256};
    rules->fields = {
        {"fleetmark.v1.Hello.agent_name", {.max_bytes = 64}},
        {"fleetmark.v1.Hello.enrollment_token", {.max_bytes = 4096}},
        {"fleetmark.v1.Hello.agent_credential", {.max_bytes = 4096}},
        {"fleetmark.v1.Hello.labels", {.max_elements = kMaxAgentLabels}},
        {"fleetmark.v1.Hello.LabelsEntry.key", {.max_bytes = kMaxAgentLabelKeyBytes}},
        {"fleetmark.v1.Hello.LabelsEntry.value", {.max_bytes = kMaxAgentLabelValueBytes}},
        {"fleetmark.v1.HostInfo.notes", {.max_bytes = 1024}},
        {"fleetmark.v1.HostInfo.emulation_evidence", {.max_bytes = 1024}},
        {"fleetmark.v1.HostInfo.energy_unavailable", {.max_bytes = 2048}},
        {"fleetmark.v1.EnergySourceInfo.covers", {.max_bytes = 1024}},
        {"fleetmark.v1.EnergySourceInfo.resolution_text", {.max_bytes = 1024}},
        {"fleetmark.v1.EnergySourceInfo.why_not", {.max_bytes = 1024}},
        {"fleetmark.v1.EnergySourceInfo.battery_convention", {.max_bytes = 1024}},
        {"fleetmark.v1.EnergySourceInfo.notes", {.max_bytes = 1024}},
    };
    return rules;
  }();
  return *kRules;
}

bool IsAgentLabelKeyChar(char c) { return IsNameChar(c); }

bool IsAgentLabelValueChar(char c) { return IsAgentLabelKeyChar(c) || c == ':' || c == '/' || c == '+'; }

bool IsAgentLabelKey(std::string_view key) { return IsName(key, kMaxAgentLabelKeyBytes); }

}  // namespace fleetmark
