// Placement syntax: which CPUs a case's worker threads may run on, as written in plans.
//
// Parsing needs no hardware and no hwloc, so the coordinator's plan validation links
// only this (target fleetmark_placement_spec); planning for a real host is in
// placement.h.
//
//   FLEETMARK_ASSIGN_OR_RETURN(PlacementSpec spec, ParsePlacement("class:efficiency"));
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace fleetmark::engine {

// Logical CPU ids (Linux CPU numbers), ascending, no duplicates.
using CpuSet = std::vector<int>;

// Largest CPU id a placement may name (exclusive): glibc's CPU_SETSIZE.
inline constexpr int kMaxCpuId = 1024;

enum class PlacementKind {
  kAny,         // "any": no pinning
  kClass,       // "class:<name>": the CPUs of one core class
  kOnePerCore,  // "one_per_core": one hardware thread of every physical core
  kSmtPairs,    // "smt_pairs": both SMT siblings of as few cores as possible
  kCpus,        // "cpus:<list>": an explicit list such as "0,2-3"
};

// The fleetmark core class names (HostInfo.core_classes), fastest first.
inline constexpr std::string_view kClassPerformance = "performance";
inline constexpr std::string_view kClassMid = "mid";
inline constexpr std::string_view kClassEfficiency = "efficiency";

struct PlacementSpec {
  PlacementKind kind = PlacementKind::kAny;
  std::string class_name;  // kClass only: performance | mid | efficiency
  CpuSet cpus;             // kCpus only
  std::string text;        // canonical text, e.g. "cpus:0,2-3"
};

// Parses `any | class:<performance|mid|efficiency|mid<N>> | one_per_core | smt_pairs |
// cpus:<list>`; the empty string means "any". Returns InvalidArgument naming the
// value and the allowed forms. CPU ids must be < kMaxCpuId. Thread-safe.
absl::StatusOr<PlacementSpec> ParsePlacement(std::string_view text);

// Parses a Linux CPU list ("0,2-3,8"; the sysfs `cpulist` format). Returns the sorted,
// de-duplicated ids, or InvalidArgument (empty list, bad number, descending range,
// id >= kMaxCpuId). Surrounding whitespace and a trailing newline are ignored.
absl::StatusOr<CpuSet> ParseCpuList(std::string_view text);

// Formats ascending ids as a CPU list, merging runs: {0,1,2,5} -> "0-2,5".
std::string FormatCpuList(const CpuSet& cpus);

}  // namespace fleetmark::engine
