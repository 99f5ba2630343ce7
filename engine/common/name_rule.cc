#include "engine/common/name_rule.h"

namespace fleetmark {

bool IsName(std::string_view text, size_t max_bytes) {
  if (text.empty() || text.size() > max_bytes) return false;
  for (char c : text) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

}  // namespace fleetmark
