#include "engine/topology/host_text.h"

#include <map>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "engine/topology/placement_spec.h"

namespace fleetmark::engine {
namespace {

template <typename Repeated>
std::string CpuList(const Repeated& cpus) {
  CpuSet set(cpus.begin(), cpus.end());
  return FormatCpuList(set);
}

std::string Ghz(uint64_t khz) {
  return khz == 0 ? "? GHz" : absl::StrFormat("%.2f GHz", static_cast<double>(khz) / 1e6);
}

std::string Bytes(uint64_t bytes) {
  if (bytes >= (1ull << 30)) return absl::StrFormat("%.1f GiB", bytes / double(1ull << 30));
  if (bytes >= (1ull << 20) && bytes % (1ull << 20) == 0) {
    return absl::StrCat(bytes >> 20, " MiB");
  }
  if (bytes % 1024 == 0) return absl::StrCat(bytes >> 10, " KiB");
  return absl::StrCat(bytes, " B");
}

std::string OrUnknown(const std::string& s) { return s.empty() ? "(unknown)" : s; }

// "6 cores x 2 threads" when every core has as many usable CPUs, else "5 cores, 12
// threads" (SMT off or not allowed on some: cores x threads_per_core would overcount).
std::string CoreCount(const v1::CoreKind& kind) {
  const uint32_t cpus = static_cast<uint32_t>(kind.cpus_size());
  if (kind.cores() * kind.threads_per_core() == cpus) {
    return absl::StrFormat("%2u %s x %u %s", kind.cores(), kind.cores() == 1 ? "core " : "cores",
                           kind.threads_per_core(), kind.threads_per_core() == 1 ? "thread " : "threads");
  }
  return absl::StrFormat("%2u %s, %u threads", kind.cores(), kind.cores() == 1 ? "core " : "cores", cpus);
}

std::string KindLine(const v1::CoreKind& kind, int name_width) {
  const std::string machine = CpuList(kind.machine_cpus());
  if (kind.cpus_size() == 0) {
    return absl::StrFormat("  %-*s not available here (cpus %s not allowed to this process)", name_width, kind.name(),
                           machine.empty() ? "?" : machine);
  }
  std::string cpus = CpuList(kind.cpus());
  if (!machine.empty() && machine != cpus) absl::StrAppend(&cpus, " (of ", machine, ")");
  std::string line = absl::StrFormat("  %-*s cpus %-10s %s  %s", name_width, kind.name(), cpus, CoreCount(kind),
                                     Ghz(kind.max_frequency_khz()));
  if (kind.capacity() > 0) absl::StrAppend(&line, "  capacity ", kind.capacity());
  if (!kind.microarchitecture().empty()) absl::StrAppend(&line, "  ", kind.microarchitecture());
  return line;
}

std::string CacheName(const v1::CacheInfo& cache) {
  std::string suffix = cache.type() == "data" ? "d" : cache.type() == "instruction" ? "i" : "";
  return absl::StrCat("L", cache.level(), suffix);
}

// "  rapl:package-0  rapl  1e-06 J  CPU package-0: cores, ...", or "... unreadable: <why>".
std::string EnergySourceLine(const v1::EnergySourceInfo& source) {
  std::string line = absl::StrFormat("  %-26s %-12s %g %s  ", source.name(), source.kind(), source.resolution(),
                                     source.resolution_unit());
  if (!source.readable()) {
    absl::StrAppend(&line, "unreadable: ", source.why_not());
    return line;
  }
  absl::StrAppend(&line, source.covers());
  if (source.charging()) absl::StrAppend(&line, " [charging]");
  if (source.on_external_power()) absl::StrAppend(&line, " [on external power]");
  return line;
}

}  // namespace

std::string FormatLimits(const v1::ResourceLimits& limits) {
  std::string out = absl::StrCat("allowed ", limits.allowed_cpus(), " of ", limits.machine_cpus(), " machine CPUs");
  if (limits.allowed_cpu_ids_size() > 0 && limits.allowed_cpus() < limits.machine_cpus()) {
    absl::StrAppend(&out, " (cpus ", CpuList(limits.allowed_cpu_ids()),
                    limits.cpuset_source().empty() ? "" : absl::StrCat("; cpuset ", limits.cpuset_source()), ")");
  }
  if (limits.cpu_quota() > 0) {
    absl::StrAppend(&out, absl::StrFormat(", CPU quota %.2f CPUs (%d/%d us, %s)", limits.cpu_quota(),
                                          limits.cpu_quota_us(), limits.cpu_period_us(), limits.cpu_quota_source()));
  } else {
    absl::StrAppend(&out, ", no CPU quota");
  }
  absl::StrAppend(&out, limits.memory_limit_bytes() > 0
                            ? absl::StrCat(", memory limit ", Bytes(limits.memory_limit_bytes()))
                            : ", no memory limit");
  absl::StrAppend(&out, " -> ", limits.effective_cpus(), " logical");
  return out;
}

std::string FormatHostText(const v1::HostInfo& host) {
  std::string out;
  auto row = [&out](const char* label, const std::string& value) {
    absl::StrAppend(&out, absl::StrFormat("%-13s%s\n", label, value));
  };
  row("host", OrUnknown(host.hostname()));
  row("cpu", OrUnknown(host.cpu_model()));
  row("arch", OrUnknown(host.arch()));
  row("os", absl::StrCat(OrUnknown(host.os()), ", kernel ", OrUnknown(host.kernel())));
  if (!host.device_model().empty()) row("device", host.device_model());
  if (!host.soc().empty()) row("soc", host.soc());
  row("cpus", absl::StrFormat("%u logical, %u physical cores, %u package%s, %u NUMA node%s", host.logical_cpus(),
                              host.physical_cores(), host.packages(), host.packages() == 1 ? "" : "s",
                              host.numa_nodes(), host.numa_nodes() == 1 ? "" : "s"));
  if (host.has_limits()) row("limits", FormatLimits(host.limits()));
  row("smt", host.smt() ? absl::StrCat("yes (cpu 0 siblings: ", CpuList(host.smt_siblings_of_cpu0()), ")") : "no");
  row("memory", host.memory_bytes() > 0 ? Bytes(host.memory_bytes()) : "(unknown)");
  row("governor", OrUnknown(host.governor()));
  row("clocks", host.clocks_locked() ? "locked (min = max on every CPU)" : "not locked");
  row("source", absl::StrCat(host.topology_source(),
                             host.hwloc_version().empty() ? "" : absl::StrCat(", hwloc ", host.hwloc_version())));
  row("engine", host.engine_version());
  if (!host.energy_unavailable().empty()) {
    row("energy", absl::StrCat("unavailable (", host.energy_unavailable(), ")"));
  } else if (host.energy_sources_size() > 0) {
    int readable = 0;
    for (const auto& source : host.energy_sources()) readable += source.readable() ? 1 : 0;
    row("energy", absl::StrCat(readable, " of ", host.energy_sources_size(), " sources readable"));
  }

  int width = 0;
  for (const auto& k : host.core_classes()) width = std::max<int>(width, k.name().size());
  absl::StrAppend(&out, "core classes (fleetmark: by microarchitecture / max frequency)\n");
  for (const auto& k : host.core_classes()) absl::StrAppend(&out, KindLine(k, width), "\n");
  if (host.core_kinds_size() > 0) {
    absl::StrAppend(&out, "hwloc cpu kinds (index, efficiency rank)\n");
    for (const auto& k : host.core_kinds()) {
      v1::CoreKind named = k;
      named.set_name(absl::StrCat("#", k.name(), " eff ", k.efficiency()));
      absl::StrAppend(&out, KindLine(named, 10), "\n");
    }
  }
  if (host.caches_size() > 0) {
    // Instances grouped by level, type and size.
    std::map<std::tuple<uint32_t, std::string, uint64_t>, std::vector<std::string>> groups;
    for (const auto& cache : host.caches()) {
      groups[{cache.level(), cache.type(), cache.size_bytes()}].push_back(CpuList(cache.cpus()));
    }
    absl::StrAppend(&out, "caches\n");
    for (const auto& [key, instances] : groups) {
      v1::CacheInfo c;
      c.set_level(std::get<0>(key));
      c.set_type(std::get<1>(key));
      absl::StrAppend(&out, absl::StrFormat("  %-4s %-9s x %-2d cpus %s\n", CacheName(c), Bytes(std::get<2>(key)),
                                            instances.size(), absl::StrJoin(instances, " | ")));
    }
  }
  if (host.energy_sources_size() > 0) {
    absl::StrAppend(&out, "energy sources (docs/energy.md)\n");
    for (const auto& source : host.energy_sources()) absl::StrAppend(&out, EnergySourceLine(source), "\n");
  }
  if (host.notes_size() > 0) {
    absl::StrAppend(&out, "notes\n");
    for (const auto& note : host.notes()) absl::StrAppend(&out, "  ", note, "\n");
  }
  return out;
}

std::string FormatHostSummary(const v1::HostInfo& host) {
  std::vector<std::string> classes;
  for (const auto& k : host.core_classes()) {
    if (k.cpus_size() == 0) {
      classes.push_back(absl::StrCat(k.name(), " not available here"));
      continue;
    }
    const std::string count = k.cores() * k.threads_per_core() == static_cast<uint32_t>(k.cpus_size())
                                  ? absl::StrFormat("%ux%u", k.cores(), k.threads_per_core())
                                  : absl::StrFormat("%u cores, %d threads", k.cores(), k.cpus_size());
    classes.push_back(
        absl::StrFormat("%s %s (%s @%s)", k.name(), CpuList(k.cpus()), count, Ghz(k.max_frequency_khz())));
  }
  return absl::StrFormat("%s %s, %u CPUs / %u cores%s, %s", host.arch(), host.cpu_model(), host.logical_cpus(),
                         host.physical_cores(), host.smt() ? ", SMT" : "", absl::StrJoin(classes, " + "));
}

}  // namespace fleetmark::engine
