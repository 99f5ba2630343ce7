#include "engine/topology/emulation.h"

#include <dirent.h>

#include <memory>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace fleetmark::engine::topology_internal {
namespace {

constexpr absl::string_view kBinfmtDir = "/proc/sys/fs/binfmt_misc";

// The family of the CPUs /proc/cpuinfo describes and the line that shows it; "" when
// it says nothing recognisable (empty, unreadable, an unknown format).
std::pair<std::string, std::string> CpuInfoFamily(const CpuInfo& cpuinfo) {
  for (const auto& [id, entry] : cpuinfo.cpus) {
    if (!entry.vendor_id.empty()) return {"x86", absl::StrCat("vendor_id ", entry.vendor_id)};
    if (!entry.implementer.empty()) {
      return {"arm", absl::StrCat("CPU implementer ", entry.implementer)};
    }
    if (!entry.architecture.empty()) {
      return {"arm", absl::StrCat("CPU architecture ", entry.architecture)};
    }
  }
  if (!cpuinfo.processor.empty() && absl::StrContains(cpuinfo.processor, "ARM")) {
    return {"arm", absl::StrCat("Processor ", cpuinfo.processor)};
  }
  return {"", ""};
}

// Names qemu's binfmt handlers use for an architecture ("aarch64" -> qemu-aarch64).
std::vector<std::string> QemuHandlerNames(absl::string_view binary_arch) {
  const std::string family = ArchFamily(binary_arch);
  if (binary_arch == "aarch64") return {"qemu-aarch64"};
  if (family == "arm") return {"qemu-arm", "qemu-armeb"};
  if (binary_arch == "x86_64") return {"qemu-x86_64"};
  if (family == "x86") return {"qemu-i386", "qemu-i486"};
  return {absl::StrCat("qemu-", binary_arch)};
}

// "qemu-aarch64 enabled (interpreter /usr/libexec/qemu-binfmt/aarch64-binfmt-P)" for
// each enabled qemu handler of `binary_arch` registered below the reader's root.
std::vector<std::string> EnabledQemuHandlers(const SysfsReader& reader, absl::string_view binary_arch) {
  std::vector<std::string> found;
  for (const std::string& name : QemuHandlerNames(binary_arch)) {
    std::optional<std::string> text = reader.Read(absl::StrCat(kBinfmtDir, "/", name));
    if (!text) continue;
    std::vector<absl::string_view> lines = absl::StrSplit(*text, '\n');
    if (lines.empty() || absl::StripAsciiWhitespace(lines[0]) != "enabled") continue;
    std::string interpreter;
    for (absl::string_view line : lines) {
      if (absl::ConsumePrefix(&line, "interpreter ")) interpreter = std::string(line);
    }
    found.push_back(interpreter.empty() ? absl::StrCat(name, " enabled")
                                        : absl::StrCat(name, " enabled (interpreter ", interpreter, ")"));
  }
  return found;
}

}  // namespace

std::string BinaryArch() {
#if defined(__x86_64__)
  return "x86_64";
#elif defined(__i386__)
  return "i686";
#elif defined(__aarch64__)
  return "aarch64";
#elif defined(__arm__)
  return "arm";
#elif defined(__riscv) && __riscv_xlen == 64
  return "riscv64";
#elif defined(__powerpc64__)
  return "ppc64";
#else
  return "unknown";
#endif
}

std::string ArchFamily(absl::string_view arch) {
  if (arch == "x86_64" || arch == "amd64" || arch == "x86" ||
      (arch.size() == 4 && arch[0] == 'i' && absl::EndsWith(arch, "86"))) {
    return "x86";
  }
  if (arch == "aarch64" || arch == "arm64" || absl::StartsWith(arch, "arm")) return "arm";
  if (absl::StartsWith(arch, "riscv")) return "riscv";
  if (absl::StartsWith(arch, "ppc")) return "ppc";
  return std::string(arch);
}

EmulationVerdict DetectEmulation(const SysfsReader& reader, const CpuInfo& cpuinfo, absl::string_view binary_arch,
                                 absl::string_view uname_machine) {
  const std::string binary_family = ArchFamily(binary_arch);
  const std::string uname_family = ArchFamily(uname_machine);
  const auto [cpu_family, cpu_line] = CpuInfoFamily(cpuinfo);
  const std::vector<std::string> handlers = EnabledQemuHandlers(reader, binary_arch);

  EmulationVerdict verdict;
  std::vector<std::string> seen = {
      absl::StrCat("binary ", binary_arch), absl::StrCat("uname ", uname_machine.empty() ? "unknown" : uname_machine),
      cpu_family.empty() ? std::string("/proc/cpuinfo names no CPU architecture")
                         : absl::StrCat("/proc/cpuinfo ", cpu_family, " (", cpu_line, ")")};
  if (!cpu_family.empty() && cpu_family != binary_family) {
    verdict.emulated = true;
  } else if (!uname_family.empty() && uname_family != binary_family) {
    verdict.emulated = true;
  } else if (cpu_family.empty() && !handlers.empty()) {
    verdict.emulated = true;
  }
  verdict.evidence = absl::StrJoin(seen, ", ");
  if (!handlers.empty()) {
    absl::StrAppend(&verdict.evidence, "; binfmt_misc ", absl::StrJoin(handlers, ", "));
  }
  return verdict;
}

}  // namespace fleetmark::engine::topology_internal
