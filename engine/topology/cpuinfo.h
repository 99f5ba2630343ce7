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

// ArmCoreName, or for a part missing from the table "ARM implementer 0x99 part 0x001"
// (so unknown parts still tell cores apart and never print as "(unknown)"); "" when the
// entry has no implementer or part (x86).
std::string ArmCoreLabel(absl::string_view implementer, absl::string_view part);

// The documented rank of a known core (by the name ArmCoreName gives, or "IntelCore" /
// "IntelAtom"), for ordering core classes when neither cpufreq nor cpu_capacity says
// which is faster; 0 = unknown. Scale (higher = faster per core):
//   40-49  prime / flagship cores: Cortex-X1..X925, Apple Firestorm/Avalanche, Oryon
//   25-39  big out-of-order cores: Cortex-A57..A725, Neoverse N/V, Kryo Gold, Intel
//          P-cores (IntelCore, 35), ThunderX2, A64FX, TaiShan, Ampere-1, 32-bit A12/A15/A17
//   19-24  older cores found alone or as the bigger of two: Cortex-A8/A9, Krait, Scorpion
//    5-18  little in-order / efficiency cores: Cortex-A5/A7/A32/A35/A53/A55/A510/A520,
//          Neoverse-E1, Kryo Silver, Apple Icestorm/Blizzard, Intel E-cores (IntelAtom, 12)
// Within a tier, a later generation ranks higher (A715 37 > A710 36). Table in cpuinfo.cc.
int CoreRank(absl::string_view microarchitecture);

// "x86_64", "i686", "aarch64", "armv7l", ... guessed from an entry (for recorded
// trees, where uname is not the recorded machine's); "" if unknown.
std::string GuessArch(const CpuInfoEntry& entry);

}  // namespace fleetmark::engine::topology_internal
