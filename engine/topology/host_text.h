// Human-readable rendering of a v1::HostInfo (what `fleetmark topology` prints; also
// usable for an agent's host in `fleetmark agents show`).
//
//   std::cout << FormatHostText(host);
#pragma once

#include <string>

#include "fleetmark/v1/host.pb.h"

namespace fleetmark::engine {

// Multi-line text: identity, CPU counts and SMT, memory, frequency policy, core classes
// with their CPU lists, hwloc kinds, caches (instances grouped by level/type/size),
// energy ("energy: unavailable (<why>)" or how many sources are readable, then one
// line per source) and notes. Frequencies in GHz, sizes in KiB/MiB/GiB. Pure function; thread-safe.
std::string FormatHostText(const v1::HostInfo& host);

// One line, e.g. "allowed 1 of 2 machine CPUs (cpus 0), CPU quota 0.50 CPUs (50000/100000
// us, cgroup v1 /sys/fs/cgroup/cpu/x/cpu.cfs_quota_us), no memory limit -> 1 logical".
std::string FormatLimits(const v1::ResourceLimits& limits);

// One line, e.g. "x86_64 13th Gen Intel(R) Core(TM) i7-1370P, 20 CPUs / 14 cores, SMT,
// performance 0-11 (6x2 @5.00 GHz) + efficiency 12-19 (8x1 @3.90 GHz)".
std::string FormatHostSummary(const v1::HostInfo& host);

}  // namespace fleetmark::engine
