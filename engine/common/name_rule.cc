#include "engine/common/name_rule.h"

#include "absl/strings/str_cat.h"
#include "engine/common/text.h"

namespace fleetmark {

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

bool IsName(std::string_view text, size_t max_bytes) {
  // A leading '-' would read as a flag wherever the name is an argument (`agents remove --all`).
  if (text.empty() || text.size() > max_bytes || text.front() == '-') return false;
  for (char c : text) {
    if (!IsNameChar(c)) return false;
  }
  return true;
}

std::string NameRuleMessage(std::string_view field, std::string_view text, size_t max_bytes) {
  // Debian's Abseil has its own string_view: StrCat takes std::string here.
  const size_t characters = CharacterCount(text);
  return absl::StrCat(std::string(field), ": 1 to ", max_bytes, " characters of ", std::string(kNameCharacters),
                      ", got \"", EscapeForTerminal(text, 80), "\" (", characters,
                      characters == 1 ? " character)" : " characters)",
                      !text.empty() && text.front() == '-' ? ", which starts with '-' (read as a flag)" : "");
}

}  // namespace fleetmark
