#include "engine/topology/cpuinfo.h"

#include <charconv>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"

namespace fleetmark::engine::topology_internal {
namespace {

struct ArmPart {
  unsigned implementer;
  unsigned part;
  absl::string_view name;
};

// Linux arch/arm64/include/asm/cputype.h, arch/arm/include/asm/cputype.h and
// util-linux sys-utils/lscpu-arm.c.
constexpr ArmPart kArmParts[] = {
    {0x41, 0xb76, "ARM1176"},        {0x41, 0xc05, "Cortex-A5"},
    {0x41, 0xc07, "Cortex-A7"},      {0x41, 0xc08, "Cortex-A8"},
    {0x41, 0xc09, "Cortex-A9"},      {0x41, 0xc0d, "Cortex-A12"},
    {0x41, 0xc0e, "Cortex-A17"},     {0x41, 0xc0f, "Cortex-A15"},
    {0x41, 0xd01, "Cortex-A32"},     {0x41, 0xd03, "Cortex-A53"},
    {0x41, 0xd04, "Cortex-A35"},     {0x41, 0xd05, "Cortex-A55"},
    {0x41, 0xd06, "Cortex-A65"},     {0x41, 0xd07, "Cortex-A57"},
    {0x41, 0xd08, "Cortex-A72"},     {0x41, 0xd09, "Cortex-A73"},
    {0x41, 0xd0a, "Cortex-A75"},     {0x41, 0xd0b, "Cortex-A76"},
    {0x41, 0xd0c, "Neoverse-N1"},    {0x41, 0xd0d, "Cortex-A77"},
    {0x41, 0xd0e, "Cortex-A76AE"},   {0x41, 0xd40, "Neoverse-V1"},
    {0x41, 0xd41, "Cortex-A78"},     {0x41, 0xd42, "Cortex-A78AE"},
    {0x41, 0xd43, "Cortex-A65AE"},   {0x41, 0xd44, "Cortex-X1"},
    {0x41, 0xd46, "Cortex-A510"},    {0x41, 0xd47, "Cortex-A710"},
    {0x41, 0xd48, "Cortex-X2"},      {0x41, 0xd49, "Neoverse-N2"},
    {0x41, 0xd4a, "Neoverse-E1"},    {0x41, 0xd4b, "Cortex-A78C"},
    {0x41, 0xd4c, "Cortex-X1C"},     {0x41, 0xd4d, "Cortex-A715"},
    {0x41, 0xd4e, "Cortex-X3"},      {0x41, 0xd4f, "Neoverse-V2"},
    {0x41, 0xd80, "Cortex-A520"},    {0x41, 0xd81, "Cortex-A720"},
    {0x41, 0xd82, "Cortex-X4"},      {0x41, 0xd85, "Cortex-X925"},
    {0x41, 0xd87, "Cortex-A725"},    {0x51, 0x800, "Kryo-2XX-Gold"},
    {0x51, 0x801, "Kryo-2XX-Silver"}, {0x51, 0x802, "Kryo-3XX-Gold"},
    {0x51, 0x803, "Kryo-3XX-Silver"}, {0x51, 0x804, "Kryo-4XX-Gold"},
    {0x51, 0x805, "Kryo-4XX-Silver"},
};

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
