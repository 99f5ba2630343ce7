#include "engine/topology/cpu_facts.h"

#include <map>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "engine/topology/sensor_range.h"

namespace fleetmark::engine::topology_internal {
namespace {

constexpr absl::string_view kCpuDir = "/sys/devices/system/cpu";

struct FreqFacts {
  uint64_t max_khz = 0;
  uint64_t scaling_min_khz = 0;
  uint64_t scaling_max_khz = 0;
  std::string governor;
};

std::optional<FreqFacts> ReadFreqDir(const SysfsReader& reader, const std::string& dir,
                                     std::vector<std::string>* notes) {
  const std::string max_path = absl::StrCat(dir, "/cpuinfo_max_freq");
  std::optional<std::string> governor = reader.Read(absl::StrCat(dir, "/scaling_governor"));
  if (!reader.Exists(max_path) && !governor) return std::nullopt;
  auto khz = [&](const std::string& path) {
    return static_cast<uint64_t>(ReadSensor(reader, path, kFrequencyRange, 1, path, notes).value_or(0));
  };
  FreqFacts facts;
  facts.max_khz = khz(max_path);
  facts.scaling_min_khz = khz(absl::StrCat(dir, "/scaling_min_freq"));
  facts.scaling_max_khz = khz(absl::StrCat(dir, "/scaling_max_freq"));
  facts.governor = governor.value_or("");
  return facts;
}

// CPU -> cpufreq facts of the policy directories that list it in related_cpus.
std::map<int, FreqFacts> ReadPolicies(const SysfsReader& reader, std::vector<std::string>* notes) {
  std::map<int, FreqFacts> by_cpu;
  const std::string policies = absl::StrCat(kCpuDir, "/cpufreq");
  for (int policy : reader.ListNumbered(policies, "policy")) {
    const std::string dir = absl::StrCat(policies, "/policy", policy);
    std::optional<FreqFacts> facts = ReadFreqDir(reader, dir, notes);
    if (!facts) continue;
    std::optional<std::string> related = reader.Read(absl::StrCat(dir, "/related_cpus"));
    if (!related) related = reader.Read(absl::StrCat(dir, "/affected_cpus"));
    for (int cpu : ParseLooseCpuList(related.value_or(""))) by_cpu.emplace(cpu, *facts);
  }
  return by_cpu;
}

// CPUs listed by the Intel hybrid PMU directories: cpu -> "IntelCore" / "IntelAtom"
// (the names hwloc uses for its CoreType info).
std::map<int, std::string> ReadIntelHybridTypes(const SysfsReader& reader) {
  std::map<int, std::string> types;
  for (auto [dir, name] :
       {std::pair{"/sys/devices/cpu_core/cpus", "IntelCore"}, std::pair{"/sys/devices/cpu_atom/cpus", "IntelAtom"}}) {
    std::optional<std::string> list = reader.Read(dir);
    if (!list) continue;
    absl::StatusOr<CpuSet> cpus = ParseCpuList(*list);
    if (!cpus.ok()) continue;
    for (int cpu : *cpus) types[cpu] = name;
  }
  return types;
}

}  // namespace

CpuSet ParseLooseCpuList(absl::string_view text) {
  std::string normalized = absl::StrReplaceAll(text, {{" ", ","}, {"\t", ","}});
  while (normalized.find(",,") != std::string::npos) {
    normalized = absl::StrReplaceAll(normalized, {{",,", ","}});
  }
  if (!normalized.empty() && normalized.front() == ',') normalized.erase(0, 1);
  if (!normalized.empty() && normalized.back() == ',') normalized.pop_back();
  absl::StatusOr<CpuSet> cpus = ParseCpuList(normalized);
  return cpus.ok() ? *std::move(cpus) : CpuSet{};
}

CpuSet ReadOnlineCpus(const SysfsReader& reader, const CpuInfo& cpuinfo) {
  CpuSet cpus = ReadSysfsOnlineCpus(reader);
  if (!cpus.empty()) return cpus;
  for (const auto& [id, entry] : cpuinfo.cpus) {
    if (id < kMaxCpuId) cpus.push_back(id);
  }
  return cpus;
}

std::vector<CpuFacts> ReadCpuFacts(const SysfsReader& reader, const CpuInfo& cpuinfo, const CpuSet& cpus,
                                   std::vector<std::string>* notes) {
  const std::map<int, FreqFacts> policies = ReadPolicies(reader, notes);
  const std::map<int, std::string> hybrid = ReadIntelHybridTypes(reader);
  std::vector<CpuFacts> all;
  all.reserve(cpus.size());
  for (int cpu : cpus) {
    CpuFacts facts;
    facts.cpu = cpu;
    const std::string dir = absl::StrCat(kCpuDir, "/cpu", cpu);
    std::optional<FreqFacts> freq = ReadFreqDir(reader, absl::StrCat(dir, "/cpufreq"), notes);
    if (!freq) {
      auto it = policies.find(cpu);
      if (it != policies.end()) freq = it->second;
    }
    if (freq) {
      facts.max_khz = freq->max_khz;
      facts.scaling_min_khz = freq->scaling_min_khz;
      facts.scaling_max_khz = freq->scaling_max_khz;
      facts.governor = freq->governor;
    }
    const std::string capacity = absl::StrCat(dir, "/cpu_capacity");
    facts.capacity =
        static_cast<uint32_t>(ReadSensor(reader, capacity, kCapacityRange, 1, capacity, notes).value_or(0));
    if (auto it = hybrid.find(cpu); it != hybrid.end()) {
      facts.microarchitecture = it->second;
    } else if (auto entry = cpuinfo.cpus.find(cpu); entry != cpuinfo.cpus.end()) {
      facts.microarchitecture = ArmCoreLabel(entry->second.implementer, entry->second.part);
    }
    all.push_back(std::move(facts));
  }
  return all;
}

}  // namespace fleetmark::engine::topology_internal
