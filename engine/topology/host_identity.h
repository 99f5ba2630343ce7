// Host identity (OS, kernel, arch, hostname, device model, SoC, memory) from
// /etc/os-release, uname(2), /proc, DMI / device-tree and, on Android, getprop.
// Internal to engine/topology.
#pragma once

#include <string>

#include "engine/topology/cpuinfo.h"
#include "engine/topology/sysfs.h"
#include "fleetmark/v1/host.pb.h"

namespace fleetmark::engine::topology_internal {

// Fills host.os, kernel, arch, hostname, device_model, soc, memory_bytes and, on
// Android (getprop or build.prop below the root: device_info.h), host.android. With a
// recorded tree (reader.fsroot() non-empty) uname and gethostname describe the live
// machine, so they are replaced by the tree's proc/hwloc-nofile-info (written by
// hwloc's gather tool), proc/version and /proc/cpuinfo; what is missing stays "" and is
// noted in host.notes.
void FillIdentity(const SysfsReader& reader, const CpuInfo& cpuinfo, v1::HostInfo& host);

}  // namespace fleetmark::engine::topology_internal
