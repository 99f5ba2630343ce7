// Parser for Linux /proc/cpuinfo (x86 and ARM formats) and the ARM "CPU part" to core
// name table. Internal to engine/topology.
#pragma once

#include <map>
#include <string>
#include "absl/strings/string_view.h"

namespace fleetmark::engine::topology_internal {

struct CpuInfoEntry {
  std::string model_name;    // x86 "model name", ARM64 "model name" if present
  std::string implementer;   // ARM "CPU implementer", e.g. "0x41"
  std::string part;          // ARM "CPU part", e.g. "0xd05"
  std::string architecture;  // ARM "CPU architecture", e.g. "8"
  std::string flags;         // x86 "flags" / ARM "Features"
  std::string vendor_id;     // x86 "vendor_id"
};

struct CpuInfo {
  // Keyed by "processor" number. Fields missing in an entry are taken from lines
  // outside any entry (old ARM kernels print "CPU part" once for all CPUs).
  std::map<int, CpuInfoEntry> cpus;
  std::string hardware;   // ARM "Hardware" (board or SoC name)
  std::string processor;  // old ARM "Processor" model line
};

// Parses the text of /proc/cpuinfo; unknown keys are ignored, never fails.
CpuInfo ParseCpuInfo(absl::string_view text);

// Core name for an ARM implementer/part pair ("0x41", "0xd05" -> "Cortex-A55"); ""
// when unknown. Table from the Linux kernel's arch/arm64/include/asm/cputype.h and
// util-linux lscpu-arm.c.
std::string ArmCoreName(absl::string_view implementer, absl::string_view part);

// "x86_64", "i686", "aarch64", "armv7l", ... guessed from an entry (for recorded
// trees, where uname is not the recorded machine's); "" if unknown.
std::string GuessArch(const CpuInfoEntry& entry);

}  // namespace fleetmark::engine::topology_internal
