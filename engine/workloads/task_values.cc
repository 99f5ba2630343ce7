#include "engine/workloads/task_values.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

namespace fleetmark::engine {

int32_t SaturatingFloatToInt(float value) {
  if (std::isnan(value)) return 0;
  // 2^31 is exactly representable as a float; every float below it truncates into range.
  constexpr float kTwoPow31 = 2147483648.0f;
  if (value >= kTwoPow31) return std::numeric_limits<int32_t>::max();
  if (value <= -kTwoPow31) return std::numeric_limits<int32_t>::min();
  return static_cast<int32_t>(value);
}

int32_t ArithmeticValue(int i) {
  const float x = static_cast<float>(i);
  return SaturatingFloatToInt(std::pow(x, x));
}

CollectionsResult CollectionsValue(int i) {
  std::vector<int> list;
  list.reserve(i > 0 ? static_cast<std::size_t>(i) : 0);
  for (int k = 0; k < i; ++k) list.push_back(k);

  std::vector<float> floats;
  floats.reserve(list.size());
  for (int k : list) floats.push_back(static_cast<float>(k));
  for (float& f : floats) f += 0.3f;

  std::unordered_map<std::string, float> by_text;
  by_text.reserve(floats.size());
  char buf[32];
  for (float f : floats) {
    const auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), f);
    by_text.insert_or_assign(std::string(buf, ec == std::errc() ? end : buf), f);
  }
  for (auto& [key, value] : by_text) value *= value;

  CollectionsResult result;
  for (const auto& [key, value] : by_text) {
    if (value > 5.0f) {
      ++result.kept;
      result.sum += value;
    }
  }
  return result;
}

}  // namespace fleetmark::engine
