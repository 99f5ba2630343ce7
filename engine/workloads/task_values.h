// The CPU parts of S1's tasks as pure functions (docs/architecture.md, "Workloads"), so
// tests can check them against hand-computed values and every strategy computes the
// same thing.
#pragma once

#include <cstddef>
#include <cstdint>

namespace fleetmark::engine {

// Converts like Kotlin's Float.toInt(): truncates toward zero, saturates out-of-range
// values to INT32_MIN/INT32_MAX (so +inf -> INT32_MAX) and maps NaN to 0. A plain
// static_cast of an out-of-range float is undefined behaviour in C++.
int32_t SaturatingFloatToInt(float value);

// S1 arithmetic: ((float)i raised to the power (float)i) converted to int, i.e.
// SaturatingFloatToInt(std::pow(float(i), float(i))). 0^0 = 1; i >= 10 saturates to
// INT32_MAX (10^10 > 2^31 - 1).
int32_t ArithmeticValue(int i);

// S1 list manipulation, for task i: the list 0..i-1, mapped to float, plus 0.3f,
// associated into a hash map keyed by each value's shortest decimal string
// (std::to_chars, like Kotlin's Float.toString), values squared, entries with a value
// > 5 kept. Since (k + 0.3)^2 > 5 exactly when k >= 2, `kept` is max(0, i - 2).
struct CollectionsResult {
  std::size_t kept = 0;  // entries left after the filter
  double sum = 0;        // sum of the kept (squared) values
};
CollectionsResult CollectionsValue(int i);

}  // namespace fleetmark::engine
