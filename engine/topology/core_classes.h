// fleetmark core classes: cores grouped by microarchitecture and max frequency, ranked
// and named performance / mid / efficiency. Unlike hwloc 2.9's CPU kinds, which may
// split one microarchitecture by small capacity or frequency differences (favoured
// cores, per-core turbo), a class keeps such cores together. Internal to
// engine/topology; exposed for tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/topology/placement_spec.h"
#include "fleetmark/v1/host.pb.h"

namespace fleetmark::engine::topology_internal {

// Cores of one microarchitecture stay in one class while their max frequency (or, when
// frequencies are unknown, cpu_capacity) is at least this fraction of the class's
// fastest core: 0.92 keeps Intel Turbo Boost Max 3.0 favoured cores (+2-5%) with their
// siblings and separates prime from big ARM cores (+20% and more).
inline constexpr double kSameClassRatio = 0.92;

struct CoreTraits {
  CpuSet cpus;                    // the core's hardware threads
  std::string microarchitecture;  // "" = unknown
  uint64_t max_khz = 0;           // 0 = unknown
  uint32_t capacity = 0;          // 0 = unknown
  int hwloc_efficiency = -1;      // -1 = unknown
  // Per-core share of its L2 (size / CPUs sharing it, times the core's threads) and its
  // L1 data cache, bytes; 0 = unknown.
  uint64_t l2_share_bytes = 0;
  uint64_t l1d_bytes = 0;
};

struct CoreClasses {
  std::vector<v1::CoreKind> classes;   // performance first, efficiency last
  std::vector<int> class_of_core;      // per input core, index into `classes`
  std::vector<uint64_t> core_max_khz;  // per input core, after filling unknowns
};

// Groups `cores` into classes. A core with unknown max frequency takes the highest
// known one of its microarchitecture. Classes are ranked, higher first, by capacity,
// then max frequency, then hwloc efficiency, then the core's documented rank
// (CoreRank in cpuinfo.h: Cortex-X > A7xx > A5xx, IntelCore > IntelAtom, ...), then
// its L2 share, then its L1d size -- each criterion counting only when every class
// knows it (a value known for some classes only is not compared with "unknown").
// Never by CPU order: classes equal on all of these are ordered by microarchitecture
// name, so the labels follow the cores whichever CPU numbers they have. Named: 1 -> performance;
// 2 -> performance, efficiency; 3 -> performance, mid, efficiency; n > 3 ->
// performance, mid1 .. mid<n-2>, efficiency. CoreKind.efficiency is the rank from the
// bottom (0 = efficiency class), like hwloc's; CoreKind.max_frequency_khz is the value
// most of the class's cores have (favoured cores reaching a little more keep theirs in
// HostInfo.cores); capacity is the class's highest. Pure function.
CoreClasses GroupCoreClasses(std::vector<CoreTraits> cores);

// The name of class `rank` (0 = fastest) among `count` classes.
std::string ClassName(int rank, int count);

}  // namespace fleetmark::engine::topology_internal
