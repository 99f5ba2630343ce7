// Host detection: what a device is (CPU model, core kinds and classes, SMT, caches,
// NUMA, memory, OS, governor), as a v1::HostInfo.
//
// Sources: hwloc 2.9 (cores, PUs, caches, NUMA, hwloc_cpukinds_*), Linux sysfs (cpufreq,
// cpu_capacity, SMT siblings, /sys/devices/cpu_core|cpu_atom/cpus), /proc/cpuinfo
// (model, ARM "CPU part"), /proc/meminfo, /etc/os-release, uname(2), sys/class/
// power_supply and thermal, and on Android getprop or build.prop. With HostOptions::fsroot
// everything is read from a recorded tree (hwloc through HWLOC_FSROOT; an Android-like
// root's own system/bin/getprop is run) and uname/hostname are not used.
//
//   FLEETMARK_ASSIGN_OR_RETURN(v1::HostInfo host, DetectHost({}));
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "fleetmark/v1/host.pb.h"

namespace fleetmark::engine {

struct HostOptions {
  // Root of a recorded Linux tree containing sys/ and proc/ (e.g. an unpacked hwloc
  // test archive); "" = the live machine.
  std::string fsroot;
  // Use hwloc when it loads; false = sysfs only (also the fallback when hwloc fails).
  bool use_hwloc = true;
  // With fsroot: the architecture of the binary that would run on the recorded machine
  // ("aarch64"), to judge emulation against the tree's /proc; "" = not judged (a
  // recorded tree is not the machine this binary runs on). Ignored without fsroot,
  // where the running binary's own architecture and uname(2) are used.
  std::string running_arch = "";
};

// Detects the host. Core kinds are hwloc's (may split one microarchitecture by small
// capacity differences); core classes group cores of the same microarchitecture and
// max frequency, named by rank: one class = "performance"; two = "performance",
// "efficiency"; three = "performance", "mid", "efficiency" (more: "mid1", "mid2", ...).
// Every CPU belongs to exactly one class; HostInfo.cores lists every physical core.
// On Android (system/bin/getprop or system/build.prop below the root) HostInfo.android
// holds model, manufacturer, SoC/board, release, API level, fingerprint; batteries and
// thermal_zones are read on every host. Missing or denied files are "unknown" (noted),
// never an error. HostInfo.energy_sources lists the energy sources found
// (engine/energy/discover.h: RAPL zones, hwmon power/energy channels, batteries), and
// energy_unavailable says why none can be read (or that the binary is emulated).
// HostInfo.emulated says whether this binary runs under user-mode emulation (qemu-user:
// see engine/topology/emulation.h), with what was seen in emulation_evidence.
// Frequencies in kHz, memory in bytes. Whatever cannot be read is left empty/0 and
// explained in HostInfo.notes.
//
// Errors: NotFound when fsroot (or the live /sys) has no CPU at all
// (sys/devices/system/cpu/cpu<N>/ nor /proc/cpuinfo), InvalidArgument if fsroot is not
// a directory. Thread-safe, but with a non-empty fsroot it briefly sets the
// process-wide HWLOC_FSROOT environment variable under a mutex (hwloc 2.9 has no
// per-topology fsroot API), so other threads must not call setenv/getenv("HWLOC_*")
// concurrently. Takes ~10-100 ms on the live machine.
absl::StatusOr<v1::HostInfo> DetectHost(const HostOptions& options = {});

// Makes every string of `host` satisfy the agent hello's text rules (HelloTextRules,
// engine/common/message_text.h): text that does not is escaped and cut, and a note says
// how many strings were. DetectHost applies it to what it read; the agent applies it to
// any host it sends. Returns the number of strings changed. Pure.
int SanitizeHostText(v1::HostInfo& host);

// This process's CPU and memory limits now (engine/topology/cpu_limits.h) as recorded
// in HostInfo.limits and CaseResult.limits: `machine_cpus` is the machine's online CPU
// count (HostInfo.limits.machine_cpus; 0 = sysconf's). `fsroot` as in HostOptions.
// Unreadable parts go to `notes` when it is not null. Never fails; thread-safe.
v1::ResourceLimits DetectResourceLimits(std::string_view fsroot = "", uint32_t machine_cpus = 0,
                                        std::vector<std::string>* notes = nullptr);

}  // namespace fleetmark::engine
