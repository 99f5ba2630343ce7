// Text checks of every string field of a protobuf message, found by reflection, so a
// field added to the message later is checked without being listed anywhere. Used for
// the agent's hello (HelloTextRules): the coordinator refuses a hello that fails them,
// the agent checks its own before sending it.
//
//   if (absl::Status s = CheckMessageText(hello, "hello", HelloTextRules()); !s.ok()) refuse(s);
//
// Pure functions of their arguments; thread-safe.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "google/protobuf/message.h"

namespace fleetmark {

// What one string field may hold: at most `max_bytes` bytes of well-formed UTF-8 with
// no control character (newline and tab too unless `allow_newlines`; text.h). For a
// repeated field (a map field included) `max_elements` caps the count (0 = no cap).
struct TextRule {
  size_t max_bytes = 256;
  bool allow_newlines = false;
  size_t max_elements = 0;
};

struct MessageTextRules {
  TextRule default_rule;
  // By field full name ("fleetmark.v1.HostInfo.notes"; a map's keys and values are the
  // fields of its entry type: "fleetmark.v1.Hello.LabelsEntry.key"); others get
  // default_rule.
  std::map<std::string, TextRule, std::less<>> fields;

  const TextRule& For(std::string_view full_name) const;
};

// OK if every string field of `message` (nested messages, repeated fields and maps
// included) satisfies its rule. Otherwise InvalidArgument naming the first offending
// field by its path from `root` — "hello.host.core_kinds[2].name",
// `hello.labels["rack"]` for a map value, `hello.labels key "r\x1bk"` for a map key —
// the rule and what is wrong: "hello.host.os: at most 256 bytes of printable UTF-8 (no
// control characters), got 10000 bytes" (or "got invalid UTF-8 at byte 3", "got control
// character U+001B at byte 0"); "hello.labels: at most 64 entries, got 65". Values are
// never quoted (a field may hold a secret); map keys are, escaped and cut to 64 bytes.
absl::Status CheckMessageText(const google::protobuf::Message& message, std::string_view root,
                              const MessageTextRules& rules);

// Makes every string field of `message` (outside maps) satisfy its rule: a string that
// does not is replaced by its EscapeForTerminal form cut to the limit. For text the
// program detected itself (a device's CPU model), which must not stop it from
// registering. Returns the number of strings changed.
int SanitizeMessageText(google::protobuf::Message* message, const MessageTextRules& rules);

// Labels of an agent (--labels, Hello.labels): the agent's own syntax (agent/labels.h)
// is stricter; these are the limits both sides share.
inline constexpr size_t kMaxAgentLabels = 64;
inline constexpr size_t kMaxAgentLabelKeyBytes = 63;
inline constexpr size_t kMaxAgentLabelValueBytes = 63;
// The allowed form of a label key (messages quote it) and of a value's characters.
inline constexpr char kAgentLabelKeyForm[] = "1 to 63 characters of [A-Za-z0-9._-]";
inline constexpr char kAgentLabelValueForm[] = "0 to 63 characters of [A-Za-z0-9._:/+-]";
// Whether `key` is a label key of kAgentLabelKeyForm (the agent's --labels and the
// coordinator's hello check both ask here).
bool IsAgentLabelKey(std::string_view key);
// Whether `c` may appear in a label key ([A-Za-z0-9._-]) / a label value ([A-Za-z0-9._:/+-]).
bool IsAgentLabelKeyChar(char c);
bool IsAgentLabelValueChar(char c);

// The rules of an agent's hello (fleetmark.v1.Hello): every string at most 256 bytes
// of printable UTF-8; agent_name 64; the enrollment token and credential 4096 bytes;
// labels as above; HostInfo.notes (what the host detection could not read) and
// emulation_evidence 1024; energy_unavailable 2048; an energy source's covers,
// resolution_text, why_not, battery_convention and notes 1024.
const MessageTextRules& HelloTextRules();

}  // namespace fleetmark
