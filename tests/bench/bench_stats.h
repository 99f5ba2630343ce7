// Small statistics shared by the benchmarks' reports.
#pragma once

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

namespace fleetmark::bench {

// The p-th percentile (0..100) of `values`, nearest-rank (NIST/Hyndman-Fan definition
// 1); 0 for none.
inline double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * values.size()));
  return values[std::min(values.size() - 1, rank == 0 ? 0 : rank - 1)];
}

// "1-min 5-min 15-min" from /proc/loadavg: the load a figure was measured under.
inline std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  return one + " " + five + " " + fifteen;
}

}  // namespace fleetmark::bench
