#include "engine/energy/sysfs_value.h"

#include <charconv>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "engine/common/status_macros.h"

namespace fleetmark::engine::energy {
namespace {

// At most 40 characters of a file's text, for an error message.
std::string Excerpt(absl::string_view text) {
  std::string out;
  for (char c : text.substr(0, 40)) out += absl::ascii_isprint(static_cast<unsigned char>(c)) ? c : '?';
  return text.size() > 40 ? absl::StrCat(out, "...") : out;
}

}  // namespace

absl::StatusOr<int64_t> ParseSysfsInt(absl::string_view text, absl::string_view path) {
  const absl::string_view s = absl::StripAsciiWhitespace(text);
  if (s.empty()) return absl::InvalidArgumentError(absl::StrCat(path, ": empty, an integer expected"));
  absl::string_view digits = s;
  const bool plus = digits.front() == '+';
  if (plus) digits.remove_prefix(1);  // from_chars takes '-' only
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec == std::errc::result_out_of_range) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": \"", Excerpt(s), "\" is beyond the 64-bit range"));
  }
  if (ec != std::errc() || end != digits.data() + digits.size() || digits.empty() || (plus && digits.front() == '-')) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": \"", Excerpt(s), "\" is not an integer"));
  }
  return value;
}

absl::StatusOr<int64_t> ReadSysfsInt(const EnergyFiles& files, absl::string_view path) {
  FLEETMARK_ASSIGN_OR_RETURN(std::string text, files.Read(path));
  return ParseSysfsInt(text, path);
}

absl::StatusOr<int64_t> ReadSysfsNonNegative(const EnergyFiles& files, absl::string_view path) {
  FLEETMARK_ASSIGN_OR_RETURN(int64_t value, ReadSysfsInt(files, path));
  if (value < 0) return absl::InvalidArgumentError(absl::StrCat(path, ": ", value, " is negative, 0 or more expected"));
  return value;
}

std::string ReadSysfsName(const EnergyFiles& files, absl::string_view path) {
  absl::StatusOr<std::string> text = files.Read(path);
  if (!text.ok() || text->empty() || text->size() > 64) return "";
  for (char c : *text) {
    if (!absl::ascii_isprint(static_cast<unsigned char>(c))) return "";
  }
  return *text;
}

}  // namespace fleetmark::engine::energy
