// The structural part of a host's topology (cores and their CPUs, caches, NUMA nodes,
// packages, hwloc CPU kinds), read either by hwloc or from sysfs. Internal to
// engine/topology; host.cc turns it into v1::HostInfo.
#pragma once

#include <cstdint>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/statusor.h"
#include "engine/topology/placement_spec.h"
#include "engine/topology/sysfs.h"
#include "fleetmark/v1/host.pb.h"

namespace fleetmark::engine::topology_internal {

struct CoreView {
  int package = 0;  // package (socket) index, 0-based
  CpuSet cpus;      // the core's hardware threads, ascending
};

// One hwloc CPU kind (hwloc_cpukinds_get_info).
struct KindView {
  CpuSet cpus;
  int efficiency = -1;    // hwloc rank, 0 = most energy-efficient, -1 = unknown
  std::string core_type;  // hwloc "CoreType" info, e.g. "IntelAtom"; "" if absent
  uint64_t max_khz = 0;   // hwloc "FrequencyMaxMHz" info × 1000, 0 if absent
};

struct TopologyView {
  std::vector<CoreView> cores;        // ordered by first CPU
  std::vector<v1::CacheInfo> caches;  // one per cache instance
  std::vector<KindView> kinds;        // hwloc only; empty from sysfs
  int numa_nodes = 0;
  int packages = 0;
  std::string hwloc_version;  // "" from sysfs
};

// Loads the whole machine's topology with hwloc (CPUs disallowed by a cgroup cpuset
// included; offline CPUs are not in it). With a non-empty `fsroot` it sets HWLOC_FSROOT for
// the duration of the load (under a process-wide mutex) and disables hwloc's x86 CPUID
// backend, which would otherwise describe the live CPU instead of the recorded one.
// Internal errors of hwloc -> Internal; a topology without PUs -> NotFound.
absl::StatusOr<TopologyView> LoadHwlocTopology(absl::string_view fsroot);

// Reads the same from sysfs (topology/thread_siblings_list or thread_siblings,
// physical_package_id, cache/index<N>, node<N>) for `cpus`. NotFound if `cpus` is
// empty.
absl::StatusOr<TopologyView> ReadSysfsTopology(const SysfsReader& reader, const CpuSet& cpus);

}  // namespace fleetmark::engine::topology_internal
