// User-mode emulation detection: is this binary running on a CPU of another
// architecture through an emulator (qemu-user, binfmt_misc)? Its numbers then measure
// the emulator, not the hardware, and must be kept apart. Internal to engine/topology.
//
// Under qemu-user, uname(2) is the guest's ("aarch64") but /proc/cpuinfo is the host
// kernel's (x86 "vendor_id"/"flags" lines), and binfmt_misc lists the qemu handler.
#pragma once

#include <string>

#include "absl/strings/string_view.h"
#include "engine/topology/cpuinfo.h"
#include "engine/topology/sysfs.h"

namespace fleetmark::engine::topology_internal {

struct EmulationVerdict {
  bool emulated = false;
  // What was seen, e.g. "binary aarch64, uname aarch64, /proc/cpuinfo x86 (vendor_id
  // GenuineIntel); binfmt_misc qemu-aarch64 enabled (interpreter /usr/bin/qemu-...)".
  std::string evidence;
};

// The architecture this binary was compiled for (its ELF machine): "x86_64", "i686",
// "aarch64", "arm", "riscv64", ... Pure function.
std::string BinaryArch();

// "x86", "arm", "riscv", ... for an architecture name as uname or GuessArch give it
// ("x86_64", "i686", "aarch64", "armv7l", "armv8l", "arm64", "armhf"); the name itself
// when unknown, "" for "". Native 32-bit code on a 64-bit CPU of one family (armhf on an
// arm64 kernel, i686 on x86_64) is the same family: not emulated. Pure function.
std::string ArchFamily(absl::string_view arch);

// Judges emulation from the running binary's architecture, uname's machine, the
// kernel's /proc/cpuinfo (`cpuinfo`, parsed from reader's root) and binfmt_misc
// handlers below reader's root (/proc/sys/fs/binfmt_misc). Emulated when cpuinfo
// describes CPUs of another family than the binary's, or uname does (a kernel of
// another family cannot run the binary natively), or — cpuinfo saying nothing — an
// enabled qemu handler for the binary's own architecture is registered. Missing or
// unreadable files are evidence of nothing, never an error. Thread-safe.
EmulationVerdict DetectEmulation(const SysfsReader& reader, const CpuInfo& cpuinfo, absl::string_view binary_arch,
                                 absl::string_view uname_machine);

}  // namespace fleetmark::engine::topology_internal
