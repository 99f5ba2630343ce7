// Per-CPU facts from sysfs and /proc/cpuinfo: frequencies, governor, capacity,
// microarchitecture. Internal to engine/topology.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

#include "engine/topology/cpuinfo.h"
#include "engine/topology/placement_spec.h"
#include "engine/topology/sysfs.h"

namespace fleetmark::engine::topology_internal {

struct CpuFacts {
  int cpu = 0;
  uint64_t max_khz = 0;           // cpufreq cpuinfo_max_freq, 0 = unknown
  uint64_t scaling_min_khz = 0;   // cpufreq scaling_min_freq, 0 = unknown
  uint64_t scaling_max_khz = 0;   // cpufreq scaling_max_freq, 0 = unknown
  std::string governor;           // cpufreq scaling_governor, "" = unknown
  uint32_t capacity = 0;          // cpu_capacity (ARM, some x86), 0 = unknown
  std::string microarchitecture;  // "IntelCore"/"IntelAtom" (sysfs PMU dirs), ARM core name
};

// The machine's online CPUs: /sys/devices/system/cpu/online, else the cpu<N>
// directories, else /proc/cpuinfo's processors. Empty if none is found.
CpuSet ReadOnlineCpus(const SysfsReader& reader, const CpuInfo& cpuinfo);

// Facts for each of `cpus`, same order. cpufreq is read from cpu<N>/cpufreq or, when a
// CPU lacks that directory, from the cpufreq policy whose related_cpus lists it.
// Frequencies and capacities outside their plausible range (sensor_range.h) are
// unknown (0), with a note appended to `notes` when it is not null.
std::vector<CpuFacts> ReadCpuFacts(const SysfsReader& reader, const CpuInfo& cpuinfo, const CpuSet& cpus,
                                   std::vector<std::string>* notes = nullptr);

// Parses a space- or comma-separated list of CPU numbers or ranges ("0 1", "0-3").
CpuSet ParseLooseCpuList(absl::string_view text);

}  // namespace fleetmark::engine::topology_internal
