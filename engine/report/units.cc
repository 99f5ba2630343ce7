#include "engine/report/units.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace fleetmark::report {
namespace {

// `value` with 3 significant digits ("1.23", "12.3", "123") then `suffix`.
std::string ThreeDigits(double value, const char* suffix) {
  char buf[64];
  const double magnitude = std::fabs(value);
  const int decimals = magnitude >= 99.95 ? 0 : magnitude >= 9.995 ? 1 : 2;
  std::snprintf(buf, sizeof buf, "%.*f%s", decimals, value, suffix);
  return buf;
}

}  // namespace

std::string FormatNanos(double ns) {
  if (!std::isfinite(ns) || ns < 0) return "-";
  if (ns < 999.5) return ThreeDigits(ns, " ns");
  if (ns < 999.5e3) return ThreeDigits(ns / 1e3, " µs");
  if (ns < 999.5e6) return ThreeDigits(ns / 1e6, " ms");
  return ThreeDigits(ns / 1e9, " s");
}

std::string FormatCount(double count) {
  if (!std::isfinite(count)) return "-";
  const double magnitude = std::fabs(count);
  if (magnitude < 9999.5) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f", count);
    return buf;
  }
  if (magnitude < 999.5e3) return ThreeDigits(count / 1e3, "k");
  if (magnitude < 999.5e6) return ThreeDigits(count / 1e6, "M");
  return ThreeDigits(count / 1e9, "G");
}

std::string FormatBytes(double bytes) {
  if (!std::isfinite(bytes)) return "-";
  const double magnitude = std::fabs(bytes);
  if (magnitude < 1023.5) return ThreeDigits(bytes, " B");
  if (magnitude < 1023.5 * 1024) return ThreeDigits(bytes / 1024, " KiB");
  if (magnitude < 1023.5 * 1024 * 1024) return ThreeDigits(bytes / (1024.0 * 1024), " MiB");
  return ThreeDigits(bytes / (1024.0 * 1024 * 1024), " GiB");
}

std::string FormatSi(double value, const char* unit) {
  if (!std::isfinite(value)) return "-";
  if (value == 0) return std::string("0 ") + unit;
  static constexpr struct {
    double scale;
    const char* prefix;
  } kPrefixes[] = {{1e3, " k"}, {1, " "}, {1e-3, " m"}, {1e-6, " µ"}, {1e-9, " n"}};
  const double magnitude = std::fabs(value);
  for (const auto& p : kPrefixes) {
    if (magnitude >= p.scale * 0.9995 || p.scale == 1e-9)
      return ThreeDigits(value / p.scale, (std::string(p.prefix) + unit).c_str());
  }
  return "-";  // not reached
}

std::string ShortestDouble(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buf[64];
  const std::to_chars_result r = std::to_chars(buf, buf + sizeof buf, value);
  return std::string(buf, r.ptr);
}

}  // namespace fleetmark::report
