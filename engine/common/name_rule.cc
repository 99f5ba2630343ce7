#include "engine/common/name_rule.h"

namespace fleetmark {

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

bool IsName(std::string_view text, size_t max_bytes) {
  if (text.empty() || text.size() > max_bytes) return false;
  for (char c : text) {
    if (!IsNameChar(c)) return false;
  }
  return true;
}

}  // namespace fleetmark
