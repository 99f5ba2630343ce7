#include "engine/topology/host_identity.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <map>
#include <optional>
#include "absl/strings/string_view.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "engine/topology/device_info.h"

namespace fleetmark::engine::topology_internal {
namespace {

// "Key: value" lines (hwloc-nofile-info) or KEY="value" lines (os-release).
std::map<std::string, std::string> ParseKeyValues(absl::string_view text, char separator) {
  std::map<std::string, std::string> values;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    std::size_t at = line.find(separator);
    if (at == absl::string_view::npos) continue;
    absl::string_view key = absl::StripAsciiWhitespace(line.substr(0, at));
    absl::string_view value = absl::StripAsciiWhitespace(line.substr(at + 1));
    if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') && value.back() == value.front()) {
      value = value.substr(1, value.size() - 2);
    }
    values[std::string(key)] = std::string(value);
  }
  return values;
}

// "2x Cortex-A76 + 6x Cortex-A55", "Cortex-A9" (all the same), or "" if no part known.
std::string ArmCoreSummary(const CpuInfo& cpuinfo) {
  std::vector<std::pair<std::string, int>> counts;
  for (const auto& [id, entry] : cpuinfo.cpus) {
    std::string name = ArmCoreLabel(entry.implementer, entry.part);
    if (name.empty()) return "";
    auto it = std::find_if(counts.begin(), counts.end(), [&](const auto& c) { return c.first == name; });
    if (it == counts.end()) {
      counts.emplace_back(name, 1);
    } else {
      ++it->second;
    }
  }
  if (counts.size() == 1) return counts[0].first;
  std::string summary;
  for (const auto& [name, count] : counts) {
    absl::StrAppend(&summary, summary.empty() ? "" : " + ", count, "x ", name);
  }
  return summary;
}

std::string CpuModel(const CpuInfo& cpuinfo) {
  std::string arm = ArmCoreSummary(cpuinfo);
  if (!arm.empty()) return arm;
  for (const auto& [id, entry] : cpuinfo.cpus) {
    if (!entry.model_name.empty()) return entry.model_name;
  }
  return cpuinfo.processor;
}

}  // namespace

void FillIdentity(const SysfsReader& reader, const CpuInfo& cpuinfo, v1::HostInfo& host) {
  const bool recorded = !reader.fsroot().empty();
  host.set_cpu_model(CpuModel(cpuinfo));

  std::map<std::string, std::string> nofile;
  if (recorded) {
    nofile = ParseKeyValues(reader.Read("/proc/hwloc-nofile-info").value_or(""), ':');
  }
  if (recorded) {
    host.set_hostname(nofile["HostName"]);
    host.set_arch(nofile["Architecture"]);
    host.set_kernel(nofile["OSRelease"]);
  } else {
    utsname uts{};
    if (uname(&uts) == 0) {
      host.set_arch(uts.machine);
      host.set_kernel(uts.release);
      host.set_hostname(uts.nodename);
    }
  }
  if (host.arch().empty() && !cpuinfo.cpus.empty()) {
    host.set_arch(GuessArch(cpuinfo.cpus.begin()->second));
  }
  if (host.kernel().empty()) {
    // "Linux version 6.1.0-13-amd64 (...)"
    const std::string version = reader.Read("/proc/version").value_or("");
    std::vector<absl::string_view> words = absl::StrSplit(version, ' ', absl::SkipEmpty());
    if (words.size() >= 3 && words[1] == "version") host.set_kernel(std::string(words[2]));
  }

  // Android: getprop below the root (a fixture's stand-in in tests), else build.prop.
  std::string android_source;
  if (std::optional<std::map<std::string, std::string>> props = ReadAndroidProperties(reader, &android_source)) {
    FillAndroid(*props, android_source, host);
  } else {
    std::map<std::string, std::string> os_release = ParseKeyValues(reader.Read("/etc/os-release").value_or(""), '=');
    host.set_os(!os_release["PRETTY_NAME"].empty() ? os_release["PRETTY_NAME"] : nofile["OSName"]);
  }
  if (host.os().empty()) host.add_notes("os: no /etc/os-release in the tree");

  if (host.device_model().empty()) {
    // Device-tree boards, then PCs (DMI), then the ARM kernel's machine name.
    std::string model = reader.Read("/sys/firmware/devicetree/base/model").value_or("");
    model = std::string(
        absl::StripTrailingAsciiWhitespace(absl::string_view(model.c_str())));  // device-tree strings end in NUL
    if (model.empty()) {
      std::string vendor = reader.Read("/sys/class/dmi/id/sys_vendor").value_or("");
      std::string product = reader.Read("/sys/class/dmi/id/product_name").value_or("");
      model = vendor.empty() || absl::StartsWith(product, vendor) ? product : absl::StrCat(vendor, " ", product);
    }
    if (model.empty()) model = cpuinfo.hardware;
    host.set_device_model(model);
  }
  if (host.soc().empty()) {
    std::string soc = reader.Read("/sys/devices/soc0/machine").value_or("");
    if (soc.empty()) soc = reader.Read("/sys/devices/soc0/soc_id").value_or("");
    host.set_soc(soc);
  }

  // /proc/meminfo "MemTotal:       32489480 kB".
  host.set_memory_bytes(ReadMeminfoField(reader, "MemTotal").value_or(0));
  if (host.memory_bytes() == 0) host.add_notes("memory: /proc/meminfo has no MemTotal");
}

}  // namespace fleetmark::engine::topology_internal
