#include "engine/topology/sensor_range.h"

#include <cmath>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

namespace fleetmark::engine::topology_internal {

bool InSensorRange(double value, const SensorRange& range, absl::string_view what, std::vector<std::string>* notes) {
  if (std::isfinite(value) && value >= range.min && value <= range.max) return true;
  if (notes != nullptr) {
    notes->push_back(absl::StrFormat("%s: %g%s outside %g..%g%s, left out", what, value, range.unit, range.min,
                                     range.max, range.unit));
  }
  return false;
}

std::optional<double> ReadSensor(const SysfsReader& reader, absl::string_view path, const SensorRange& range,
                                 double scale, absl::string_view what, std::vector<std::string>* notes) {
  std::optional<std::string> text = reader.Read(path);
  if (!text) return std::nullopt;
  std::vector<absl::string_view> words =
      absl::StrSplit(absl::StripAsciiWhitespace(*text), absl::ByAnyChar(" \t\n"), absl::SkipEmpty());
  double raw = 0;
  if (words.empty() || !absl::SimpleAtod(words[0], &raw)) {
    if (notes != nullptr) {
      notes->push_back(absl::StrCat(what, ": \"", words.empty() ? "" : words[0], "\" is not a number, left out"));
    }
    return std::nullopt;
  }
  const double value = raw * scale;
  if (!InSensorRange(value, range, what, notes)) return std::nullopt;
  return value;
}

}  // namespace fleetmark::engine::topology_internal
