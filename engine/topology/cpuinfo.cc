#include "engine/topology/cpuinfo.h"

#include <charconv>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace fleetmark::engine::topology_internal {
namespace {

struct ArmPart {
  unsigned implementer;
  unsigned part;
  absl::string_view name;
  int rank;  // kCoreRank* scale of cpuinfo.h
};

// Linux arch/arm64/include/asm/cputype.h, arch/arm/include/asm/cputype.h and
// util-linux sys-utils/lscpu-arm.c. Ranks: see CoreRank in cpuinfo.h. Qualcomm's
// Kryo Gold/Silver parts rank as the Cortex cores they derive from (2XX Gold: A73,
// 3XX: A75, 4XX: A76; Silver: A53 / A55).
constexpr ArmPart kArmParts[] = {
    // ARM Ltd (0x41): 32-bit.
    {0x41, 0xb76, "ARM1176", 5},
    {0x41, 0xc05, "Cortex-A5", 9},
    {0x41, 0xc07, "Cortex-A7", 10},
    {0x41, 0xc08, "Cortex-A8", 20},
    {0x41, 0xc09, "Cortex-A9", 21},
    {0x41, 0xc0d, "Cortex-A12", 25},
    {0x41, 0xc0e, "Cortex-A17", 27},
    {0x41, 0xc0f, "Cortex-A15", 26},
    // ARM Ltd: little (in-order) 64-bit cores.
    {0x41, 0xd01, "Cortex-A32", 10},
    {0x41, 0xd03, "Cortex-A53", 12},
    {0x41, 0xd04, "Cortex-A35", 11},
    {0x41, 0xd05, "Cortex-A55", 13},
    {0x41, 0xd06, "Cortex-A65", 13},
    {0x41, 0xd43, "Cortex-A65AE", 13},
    {0x41, 0xd46, "Cortex-A510", 14},
    {0x41, 0xd80, "Cortex-A520", 15},
    {0x41, 0xd88, "Cortex-A520AE", 15},
    {0x41, 0xd4a, "Neoverse-E1", 13},
    // ARM Ltd: big (out-of-order) cores.
    {0x41, 0xd07, "Cortex-A57", 28},
    {0x41, 0xd08, "Cortex-A72", 29},
    {0x41, 0xd09, "Cortex-A73", 30},
    {0x41, 0xd0a, "Cortex-A75", 31},
    {0x41, 0xd0b, "Cortex-A76", 32},
    {0x41, 0xd0e, "Cortex-A76AE", 32},
    {0x41, 0xd0d, "Cortex-A77", 33},
    {0x41, 0xd41, "Cortex-A78", 34},
    {0x41, 0xd42, "Cortex-A78AE", 34},
    {0x41, 0xd4b, "Cortex-A78C", 35},
    {0x41, 0xd47, "Cortex-A710", 36},
    {0x41, 0xd4d, "Cortex-A715", 37},
    {0x41, 0xd81, "Cortex-A720", 38},
    {0x41, 0xd89, "Cortex-A720AE", 38},
    {0x41, 0xd87, "Cortex-A725", 39},
    // ARM Ltd: prime cores.
    {0x41, 0xd44, "Cortex-X1", 44},
    {0x41, 0xd4c, "Cortex-X1C", 45},
    {0x41, 0xd48, "Cortex-X2", 46},
    {0x41, 0xd4e, "Cortex-X3", 47},
    {0x41, 0xd82, "Cortex-X4", 48},
    {0x41, 0xd85, "Cortex-X925", 49},
    // ARM Ltd: Neoverse server cores (Graviton 2 = N1, 3 = V1, 4 = V2; Ampere Altra = N1).
    {0x41, 0xd0c, "Neoverse-N1", 32},
    {0x41, 0xd49, "Neoverse-N2", 36},
    {0x41, 0xd8e, "Neoverse-N3", 38},
    {0x41, 0xd40, "Neoverse-V1", 37},
    {0x41, 0xd4f, "Neoverse-V2", 39},
    {0x41, 0xd84, "Neoverse-V3", 41},
    // Broadcom (0x42), Cavium/Marvell (0x43), Fujitsu (0x46), HiSilicon (0x48),
    // NVIDIA (0x4e), Ampere (0xc0): server and SoC cores.
    {0x42, 0x00f, "Brahma-B15", 26},
    {0x42, 0x100, "Brahma-B53", 12},
    {0x42, 0x516, "ThunderX2", 30},
    {0x43, 0x0a1, "ThunderX-88XX", 20},
    {0x43, 0x0a2, "ThunderX-81XX", 20},
    {0x43, 0x0a3, "ThunderX-83XX", 20},
    {0x43, 0x0af, "ThunderX2-99xx", 30},
    {0x43, 0x0b8, "ThunderX3-T110", 32},
    {0x46, 0x001, "A64FX", 32},
    {0x48, 0xd01, "TaiShan-v110", 31},
    {0x48, 0xd02, "TaiShan-v120", 33},
    {0x48, 0xd40, "Cortex-A76", 32},
    {0x48, 0xd41, "Cortex-A77", 33},
    {0x4e, 0x000, "Denver", 30},
    {0x4e, 0x003, "Denver-2", 30},
    {0x4e, 0x004, "Carmel", 31},
    {0xc0, 0xac3, "Ampere-1", 36},
    {0xc0, 0xac4, "Ampere-1a", 37},
    // Qualcomm (0x51).
    {0x51, 0x001, "Oryon", 42},
    {0x51, 0x00f, "Scorpion", 19},
    {0x51, 0x02d, "Scorpion", 19},
    {0x51, 0x04d, "Krait", 24},
    {0x51, 0x06f, "Krait", 24},
    {0x51, 0x201, "Kryo-Silver", 22},
    {0x51, 0x205, "Kryo-Gold", 29},
    {0x51, 0x211, "Kryo-Silver", 22},
    {0x51, 0x800, "Kryo-2XX-Gold", 30},
    {0x51, 0x801, "Kryo-2XX-Silver", 12},
    {0x51, 0x802, "Kryo-3XX-Gold", 31},
    {0x51, 0x803, "Kryo-3XX-Silver", 13},
    {0x51, 0x804, "Kryo-4XX-Gold", 32},
    {0x51, 0x805, "Kryo-4XX-Silver", 13},
    {0x51, 0xc00, "Falkor", 30},
    {0x51, 0xc01, "Saphira", 31},
    // Samsung (0x53) Exynos M cores.
    {0x53, 0x001, "Exynos-M1", 30},
    {0x53, 0x002, "Exynos-M3", 32},
    {0x53, 0x003, "Exynos-M4", 33},
    {0x53, 0x004, "Exynos-M5", 34},
    // Apple (0x61): efficiency (Icestorm, Blizzard, Sawtooth) and performance
    // (Firestorm, Avalanche, Everest) cores of M1/M2/M3 (Asahi Linux).
    {0x61, 0x022, "Apple-Icestorm", 16},
    {0x61, 0x023, "Apple-Firestorm", 44},
    {0x61, 0x024, "Apple-Icestorm", 16},
    {0x61, 0x025, "Apple-Firestorm", 44},
    {0x61, 0x028, "Apple-Icestorm", 16},
    {0x61, 0x029, "Apple-Firestorm", 44},
    {0x61, 0x032, "Apple-Blizzard", 17},
    {0x61, 0x033, "Apple-Avalanche", 46},
    {0x61, 0x034, "Apple-Blizzard", 17},
    {0x61, 0x035, "Apple-Avalanche", 46},
    {0x61, 0x038, "Apple-Blizzard", 17},
    {0x61, 0x039, "Apple-Avalanche", 46},
};

// Cores that are not ARM parts: Intel hybrid core types (the names hwloc and the
// sysfs PMU directories give them).
struct NamedRank {
  absl::string_view name;
  int rank;
};
constexpr NamedRank kOtherCores[] = {{"IntelCore", 35}, {"IntelAtom", 12}};

bool ParseHex(absl::string_view text, unsigned* value) {
  text = absl::StripAsciiWhitespace(text);
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    text.remove_prefix(2);
  }
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *value, 16);
  return !text.empty() && ec == std::errc() && end == text.data() + text.size();
}

void Assign(CpuInfoEntry& entry, absl::string_view key, std::string value) {
  if (key == "model name") {
    entry.model_name = std::move(value);
  } else if (key == "CPU implementer") {
    entry.implementer = std::move(value);
  } else if (key == "CPU part") {
    entry.part = std::move(value);
  } else if (key == "CPU architecture") {
    entry.architecture = std::move(value);
  } else if (key == "flags" || key == "Features") {
    entry.flags = std::move(value);
  } else if (key == "vendor_id") {
    entry.vendor_id = std::move(value);
  }
}

void FillMissing(CpuInfoEntry& entry, const CpuInfoEntry& shared) {
  auto fill = [](std::string& field, const std::string& from) {
    if (field.empty()) field = from;
  };
  fill(entry.model_name, shared.model_name);
  fill(entry.implementer, shared.implementer);
  fill(entry.part, shared.part);
  fill(entry.architecture, shared.architecture);
  fill(entry.flags, shared.flags);
  fill(entry.vendor_id, shared.vendor_id);
}

}  // namespace

CpuInfo ParseCpuInfo(absl::string_view text) {
  CpuInfo info;
  CpuInfoEntry shared;
  CpuInfoEntry* current = nullptr;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::StripAsciiWhitespace(line).empty()) {
      current = nullptr;  // a blank line ends a processor's block
      continue;
    }
    std::size_t colon = line.find(':');
    if (colon == absl::string_view::npos) continue;
    absl::string_view key = absl::StripAsciiWhitespace(line.substr(0, colon));
    std::string value(absl::StripAsciiWhitespace(line.substr(colon + 1)));
    if (key == "processor") {
      int id = -1;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), id);
      if (ec == std::errc() && end == value.data() + value.size() && id >= 0) {
        current = &info.cpus[id];
      } else {
        current = nullptr;
      }
      continue;
    }
    if (key == "Hardware") {
      info.hardware = value;
    } else if (key == "Processor") {
      info.processor = value;
    }
    Assign(current != nullptr ? *current : shared, key, std::move(value));
  }
  for (auto& [id, entry] : info.cpus) FillMissing(entry, shared);
  return info;
}

std::string ArmCoreName(absl::string_view implementer, absl::string_view part) {
  unsigned impl = 0;
  unsigned p = 0;
  if (!ParseHex(implementer, &impl) || !ParseHex(part, &p)) return "";
  for (const ArmPart& known : kArmParts) {
    if (known.implementer == impl && known.part == p) return std::string(known.name);
  }
  return "";
}

std::string ArmCoreLabel(absl::string_view implementer, absl::string_view part) {
  std::string name = ArmCoreName(implementer, part);
  if (!name.empty() || implementer.empty() || part.empty()) return name;
  return absl::StrCat("ARM implementer ", implementer, " part ", part);
}

int CoreRank(absl::string_view microarchitecture) {
  if (microarchitecture.empty()) return 0;
  for (const ArmPart& known : kArmParts) {
    if (known.name == microarchitecture) return known.rank;
  }
  for (const NamedRank& known : kOtherCores) {
    if (known.name == microarchitecture) return known.rank;
  }
  return 0;
}

std::string GuessArch(const CpuInfoEntry& entry) {
  if (!entry.vendor_id.empty()) {
    for (absl::string_view flag : absl::StrSplit(entry.flags, ' ')) {
      if (flag == "lm") return "x86_64";
    }
    return "i686";
  }
  if (entry.architecture == "8" || entry.architecture == "AArch64") return "aarch64";
  if (entry.architecture == "7") return "armv7l";
  if (!entry.architecture.empty()) return "arm";
  return "";
}

}  // namespace fleetmark::engine::topology_internal
