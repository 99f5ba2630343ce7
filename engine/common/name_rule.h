// The name rule of agent names, schedule names and agent label keys, in one place:
// 1 to `max_bytes` characters, each a letter, digit, '.', '_' or '-', the first not '-'
// (a name is an argument of commands, where `--all` would read as a flag). Messages
// quote kNameCharacters, e.g. "name: 1 to 64 characters of [A-Za-z0-9._-], got \"a b\"".
// Pure; thread-safe. Part of fleetmark_text (engine/common), which the agent, the
// coordinator and the CLI link.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace fleetmark {

inline constexpr size_t kMaxNameBytes = 64;
inline constexpr std::string_view kNameCharacters = "[A-Za-z0-9._-]";

// Whether `c` is one of kNameCharacters.
bool IsNameChar(char c);

// Whether `text` follows the name rule with at most `max_bytes` characters.
bool IsName(std::string_view text, size_t max_bytes = kMaxNameBytes);

// The one message for a text that breaks the rule, naming `field`:
// "schedule.name: 1 to 64 characters of [A-Za-z0-9._-], got \"sch😀\" (4 characters)" —
// the text as EscapeForTerminal shows it (valid UTF-8 as its characters; control,
// format and non-UTF-8 bytes escaped; cut at 80 bytes), its length in characters
// (CharacterCount); a text starting with '-' gets ", which starts with '-' (read as a
// flag)" after the count.
std::string NameRuleMessage(std::string_view field, std::string_view text, size_t max_bytes = kMaxNameBytes);

}  // namespace fleetmark
