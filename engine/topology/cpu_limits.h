// CPU and memory limits of this process, as opposed to the machine's: the CPUs it may
// run on (sched_getaffinity, `taskset`), the cgroup CPU quota (v2 cpu.max, v1
// cpu.cfs_quota_us / cpu.cfs_period_us) and the cgroup memory limit (v2 memory.max,
// v1 memory.limit_in_bytes), each the tightest over the process's cgroup and its
// ancestors. "Logical CPUs" everywhere in fleetmark (pool sizes, `threads` defaults,
// HostInfo.logical_cpus, reports) is EffectiveCpus(): min(allowed, ceil(quota)).
//
// Target fleetmark_cpu_limits (no protobuf, no hwloc), so the strategies can size their
// pools with it; engine/topology turns it into v1::ResourceLimits.
//
//   const int threads = EffectiveCpuCount();  // 1 under `taskset -c 0` or cpu.max "50000 100000"
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/topology/placement_spec.h"

namespace fleetmark::engine {

struct CpuLimits {
  // CPUs this process may run on: its affinity (sched_getaffinity live,
  // proc/self/status Cpus_allowed_list in a recorded tree) AND its cgroup cpuset
  // (`cpuset`) AND the machine's online CPUs (`online`), each where known; the same
  // rule live and in a recorded tree. Empty = unknown (then the machine's CPUs).
  CpuSet allowed;
  CpuSet affinity;            // as read; empty = unknown
  CpuSet cpuset;              // the cgroup cpuset's CPUs; empty = none or unknown
  std::string cpuset_source;  // e.g. "cgroup v2 /sys/fs/cgroup/ci/cpuset.cpus.effective"; "" = none
  CpuSet online;              // the machine's online CPUs (sysfs); empty = unknown
  // The cgroup CPU quota in CPUs (quota / period), 0 = no quota.
  double quota_cpus = 0;
  int64_t quota_us = 0;  // of the limiting cgroup, 0 = no quota
  int64_t period_us = 0;
  std::string quota_source;         // e.g. "cgroup v1 /sys/fs/cgroup/cpu/ci/cpu.cfs_quota_us"; "" = none
  uint64_t memory_limit_bytes = 0;  // 0 = no limit
  std::string memory_source;        // e.g. "cgroup v2 /sys/fs/cgroup/app/memory.max"
  std::vector<std::string> notes;   // what could not be read (never an error)

  // min(allowed count (or `machine_cpus` when unknown), ceil(quota_cpus)), at least 1.
  int EffectiveCpus(int machine_cpus) const;
};

// Reads the limits below `fsroot` ("" = the live machine and this process): the
// process's cgroups from proc/self/cgroup (the cpuset's also from proc/self/cpuset),
// their mount points from proc/self/mountinfo, else proc/mounts (else /sys/fs/cgroup,
// /sys/fs/cgroup/cpu and /sys/fs/cgroup/memory), then the limit files of the cgroup and
// every ancestor up to the mount root. The cpuset is the cgroup's effective one (v2
// cpuset.cpus.effective, v1 cpuset.effective_cpus; else the innermost non-empty
// cpuset.cpus, or `cpus` of a legacy cpuset filesystem), as hwloc reads it. Never fails: whatever is
// missing stays unknown/0 (unreadable files in `notes`). Thread-safe; a few file reads.
CpuLimits ReadCpuLimits(std::string_view fsroot = "");

// The "logical CPUs" default of this process: ReadCpuLimits().EffectiveCpus(online
// CPUs). At least 1. Thread-safe; reads a few files per call (limits may change).
int EffectiveCpuCount();

// Parses a cgroup v2 cpu.max ("50000 100000", "max 100000") into quota / period in µs;
// false for "max" (no quota) or malformed text. Exposed for tests.
bool ParseCpuMax(std::string_view text, int64_t* quota_us, int64_t* period_us);

}  // namespace fleetmark::engine
