#include "engine/topology/host.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "engine/common/message_text.h"
#include "engine/topology/core_classes.h"
#include "engine/topology/cpu_facts.h"
#include "engine/topology/cpu_limits.h"
#include "engine/topology/device_info.h"
#include "engine/topology/cpuinfo.h"
#include "engine/topology/emulation.h"
#include "engine/topology/energy_info.h"
#include "engine/topology/host_identity.h"
#include "engine/topology/sensor_range.h"
#include "engine/topology/sysfs.h"
#include "engine/topology/topology_view.h"

#ifndef FLEETMARK_ENGINE_VERSION
#define FLEETMARK_ENGINE_VERSION "unknown"
#endif

namespace fleetmark::engine {
namespace {

using topology_internal::CoreClasses;
using topology_internal::CoreTraits;
using topology_internal::CpuFacts;
using topology_internal::KindView;
using topology_internal::TopologyView;

const KindView* KindOf(const std::vector<KindView>& kinds, int cpu) {
  for (const KindView& kind : kinds) {
    if (std::binary_search(kind.cpus.begin(), kind.cpus.end(), cpu)) return &kind;
  }
  return nullptr;
}

// Restricts `kind` (the group of `members`, each a core's CPUs) to `usable`: cpus,
// cores and threads_per_core then count only usable CPUs; machine_cpus keeps them all.
// One rule for hwloc's kinds and fleetmark's classes.
void KeepUsable(const std::vector<CpuSet>& members, const CpuSet& usable, v1::CoreKind& kind) {
  CpuSet all;
  uint32_t cores = 0;
  uint32_t threads = 0;
  for (const CpuSet& core : members) {
    all.insert(all.end(), core.begin(), core.end());
    const CpuSet mine = topology_internal::IntersectCpus(core, usable);
    if (mine.empty()) continue;
    ++cores;
    threads = std::max<uint32_t>(threads, static_cast<uint32_t>(mine.size()));
  }
  std::sort(all.begin(), all.end());
  kind.clear_machine_cpus();
  for (int cpu : all) kind.add_machine_cpus(static_cast<uint32_t>(cpu));
  kind.clear_cpus();
  for (int cpu : topology_internal::IntersectCpus(all, usable)) kind.add_cpus(static_cast<uint32_t>(cpu));
  kind.set_cores(cores);
  kind.set_threads_per_core(threads);
}

// hwloc's kinds, as they are (name = kind index; hwloc orders them from the most
// energy-efficient to the most performant), restricted to `usable`; a kind with no
// usable CPU is left out.
void FillKinds(const TopologyView& view, const std::map<int, CpuFacts>& facts, const CpuSet& usable,
               v1::HostInfo& host) {
  for (std::size_t k = 0; k < view.kinds.size(); ++k) {
    const KindView& kind = view.kinds[k];
    v1::CoreKind out;
    out.set_name(absl::StrCat(k));
    out.set_efficiency(kind.efficiency);
    out.set_microarchitecture(kind.core_type);
    out.set_max_frequency_khz(kind.max_khz);
    for (int cpu : kind.cpus) {
      if (auto it = facts.find(cpu); it != facts.end()) {
        out.set_capacity(std::max(out.capacity(), it->second.capacity));
        if (out.max_frequency_khz() == 0) out.set_max_frequency_khz(it->second.max_khz);
        if (out.microarchitecture().empty()) out.set_microarchitecture(it->second.microarchitecture);
      }
    }
    std::vector<CpuSet> members;
    for (const auto& core : view.cores) {
      if (std::binary_search(kind.cpus.begin(), kind.cpus.end(), core.cpus[0])) members.push_back(core.cpus);
    }
    KeepUsable(members, usable, out);
    if (out.cpus_size() > 0) *host.add_core_kinds() = std::move(out);
  }
}

void FillFrequencyPolicy(const std::vector<CpuFacts>& facts, v1::HostInfo& host) {
  if (facts.empty()) return;
  host.set_governor(facts.front().governor);
  bool locked = true;
  for (const CpuFacts& f : facts) {
    if (f.scaling_min_khz == 0 || f.scaling_min_khz != f.scaling_max_khz) locked = false;
  }
  host.set_clocks_locked(locked);
  if (std::all_of(facts.begin(), facts.end(), [](const CpuFacts& f) { return f.governor.empty() && f.max_khz == 0; })) {
    host.add_notes(
        "cpufreq: not exposed (virtual machine or no driver): governor and "
        "max frequencies unknown, clocks_locked false");
  }
}

}  // namespace

v1::ResourceLimits DetectResourceLimits(std::string_view fsroot, uint32_t machine_cpus,
                                        std::vector<std::string>* notes) {
  const CpuLimits limits = ReadCpuLimits(fsroot);
  if (machine_cpus == 0) {
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    machine_cpus = online > 0 ? static_cast<uint32_t>(online) : 1;
  }
  v1::ResourceLimits out;
  out.set_machine_cpus(machine_cpus);
  if (limits.allowed.empty()) {
    out.set_allowed_cpus(machine_cpus);  // unknown: all of them
  } else {
    out.set_allowed_cpus(static_cast<uint32_t>(limits.allowed.size()));
    for (int cpu : limits.allowed) out.add_allowed_cpu_ids(static_cast<uint32_t>(cpu));
  }
  out.set_cpu_quota(limits.quota_cpus);
  out.set_cpu_quota_us(limits.quota_us);
  out.set_cpu_period_us(limits.period_us);
  out.set_cpu_quota_source(limits.quota_source);
  out.set_memory_limit_bytes(limits.memory_limit_bytes);
  out.set_memory_limit_source(limits.memory_source);
  out.set_cpuset_source(limits.cpuset_source);
  out.set_effective_cpus(static_cast<uint32_t>(limits.EffectiveCpus(static_cast<int>(machine_cpus))));
  if (notes != nullptr) notes->insert(notes->end(), limits.notes.begin(), limits.notes.end());
  return out;
}

absl::StatusOr<v1::HostInfo> DetectHost(const HostOptions& options) {
  if (!options.fsroot.empty()) {
    struct stat st;
    if (stat(options.fsroot.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "fsroot: a directory holding a recorded sys/ and proc/ tree expected, got \"", options.fsroot, "\""));
    }
  }
  topology_internal::SysfsReader reader(options.fsroot);
  const topology_internal::CpuInfo cpuinfo = topology_internal::ParseCpuInfo(reader.Read("/proc/cpuinfo").value_or(""));
  const CpuSet online = topology_internal::ReadOnlineCpus(reader, cpuinfo);
  if (!options.fsroot.empty() && online.empty()) {
    return absl::NotFoundError(absl::StrCat(
        "fsroot \"", options.fsroot, "\": no CPU in sys/devices/system/cpu nor proc/cpuinfo (not a recorded tree?)"));
  }

  v1::HostInfo host;
  std::string source = "sysfs";
  absl::StatusOr<TopologyView> view = absl::UnavailableError("hwloc not requested");
  if (options.use_hwloc) {
    view = topology_internal::LoadHwlocTopology(options.fsroot);
    if (view.ok()) {
      source = "hwloc";
    } else {
      host.add_notes(absl::StrCat("hwloc: ", view.status().message(), "; used sysfs"));
    }
  }
  if (!view.ok()) {
    view = topology_internal::ReadSysfsTopology(reader, online);
    if (!view.ok()) return view.status();
  }
  host.set_topology_source(options.fsroot.empty() ? source
                                                  : absl::StrCat("fsroot:", options.fsroot, " (", source, ")"));
  host.set_hwloc_version(view->hwloc_version);

  // The whole machine (hwloc includes the CPUs this process may not use; offline ones
  // are left out); what the process may use is `usable`, from the limits.
  for (auto& core : view->cores) {
    if (!online.empty()) core.cpus = topology_internal::IntersectCpus(core.cpus, online);
  }
  std::erase_if(view->cores, [](const topology_internal::CoreView& core) { return core.cpus.empty(); });
  if (view->cores.empty()) return absl::NotFoundError("no online CPU in the topology");
  CpuSet cpus;
  for (const auto& core : view->cores) cpus.insert(cpus.end(), core.cpus.begin(), core.cpus.end());
  std::sort(cpus.begin(), cpus.end());
  std::vector<std::string> sensor_notes;
  const std::vector<CpuFacts> facts = topology_internal::ReadCpuFacts(reader, cpuinfo, cpus, &sensor_notes);
  bool implausible_kind = false;
  for (KindView& kind : view->kinds) {
    // hwloc reads cpuinfo_max_freq itself: the same range applies.
    if (kind.max_khz != 0 &&
        !topology_internal::InSensorRange(static_cast<double>(kind.max_khz), topology_internal::kFrequencyRange,
                                          "hwloc cpu kind FrequencyMaxMHz", &sensor_notes)) {
      kind.max_khz = 0;
      implausible_kind = true;
    }
  }
  // hwloc ranked its kinds by that frequency: their efficiency ranks mean nothing then.
  if (implausible_kind) {
    for (KindView& kind : view->kinds) kind.efficiency = -1;
  }
  for (std::string& note : sensor_notes) host.add_notes(std::move(note));
  std::map<int, CpuFacts> facts_by_cpu;
  for (const CpuFacts& f : facts) facts_by_cpu[f.cpu] = f;

  std::vector<std::string> limit_notes;
  *host.mutable_limits() = DetectResourceLimits(options.fsroot, static_cast<uint32_t>(cpus.size()), &limit_notes);
  for (std::string& note : limit_notes) host.add_notes(std::move(note));
  CpuSet usable = topology_internal::IntersectCpus(
      cpus, CpuSet(host.limits().allowed_cpu_ids().begin(), host.limits().allowed_cpu_ids().end()));
  if (usable.empty()) usable = cpus;  // allowed unknown (or none of the topology's: noted)
  if (usable.size() < cpus.size()) {
    host.add_notes(absl::StrCat("cpus: ", usable.size(), " of ", cpus.size(),
                                " online CPUs usable by this process (affinity/cgroup cpuset)"));
  }
  // "Logical CPUs" = what this process may use.
  host.set_logical_cpus(std::min<uint32_t>(static_cast<uint32_t>(std::max<std::size_t>(usable.size(), 1)),
                                           host.limits().effective_cpus()));
  host.set_physical_cores(static_cast<uint32_t>(view->cores.size()));
  host.set_packages(static_cast<uint32_t>(view->packages));
  host.set_numa_nodes(static_cast<uint32_t>(view->numa_nodes));
  for (const v1::CacheInfo& cache : view->caches) {
    // Per-core cache traits below read the machine's caches; the host lists the usable.
    const CpuSet mine = topology_internal::IntersectCpus(CpuSet(cache.cpus().begin(), cache.cpus().end()), usable);
    if (mine.empty()) continue;
    v1::CacheInfo* out = host.add_caches();
    *out = cache;
    out->clear_cpus();
    for (int cpu : mine) out->add_cpus(static_cast<uint32_t>(cpu));
  }
  FillKinds(*view, facts_by_cpu, usable, host);

  std::vector<CoreTraits> traits;
  for (const auto& core : view->cores) {
    CoreTraits t;
    t.cpus = core.cpus;
    for (int cpu : core.cpus) {
      const CpuFacts& f = facts_by_cpu[cpu];
      t.max_khz = std::max(t.max_khz, f.max_khz);
      t.capacity = std::max(t.capacity, f.capacity);
      if (t.microarchitecture.empty()) t.microarchitecture = f.microarchitecture;
    }
    for (const v1::CacheInfo& cache : view->caches) {
      if (cache.cpus_size() == 0 || std::find(cache.cpus().begin(), cache.cpus().end(),
                                              static_cast<uint32_t>(core.cpus[0])) == cache.cpus().end()) {
        continue;
      }
      if (cache.level() == 2 && cache.type() != "instruction") {
        t.l2_share_bytes = cache.size_bytes() * core.cpus.size() / static_cast<uint64_t>(cache.cpus_size());
      } else if (cache.level() == 1 && cache.type() == "data") {
        t.l1d_bytes = cache.size_bytes();
      }
    }
    if (const KindView* kind = KindOf(view->kinds, core.cpus[0])) {
      t.hwloc_efficiency = kind->efficiency;
      if (t.microarchitecture.empty()) t.microarchitecture = kind->core_type;
      if (t.max_khz == 0) t.max_khz = kind->max_khz;
    }
    traits.push_back(std::move(t));
    if (core.cpus.size() > 1) host.set_smt(true);
  }
  // Classes are the machine's: ranked over every core, then restricted to `usable`.
  const CoreClasses classes = topology_internal::GroupCoreClasses(traits);
  for (std::size_t k = 0; k < classes.classes.size(); ++k) {
    std::vector<CpuSet> members;
    for (std::size_t i = 0; i < view->cores.size(); ++i) {
      if (classes.class_of_core[i] == static_cast<int>(k)) members.push_back(view->cores[i].cpus);
    }
    v1::CoreKind* out = host.add_core_classes();
    *out = classes.classes[k];
    KeepUsable(members, usable, *out);
  }
  for (std::size_t i = 0; i < view->cores.size(); ++i) {
    v1::CoreInfo* core = host.add_cores();
    core->set_index(static_cast<uint32_t>(i));
    core->set_package(static_cast<uint32_t>(view->cores[i].package));
    for (int cpu : view->cores[i].cpus) core->add_cpus(static_cast<uint32_t>(cpu));
    core->set_core_class(classes.classes[classes.class_of_core[i]].name());
    core->set_max_frequency_khz(classes.core_max_khz[i]);
  }
  if (!view->cores.empty()) {
    for (int cpu : view->cores.front().cpus) {
      host.add_smt_siblings_of_cpu0(static_cast<uint32_t>(cpu));
    }
  }

  FillFrequencyPolicy(facts, host);
  topology_internal::FillIdentity(reader, cpuinfo, host);
  topology_internal::FillPowerAndThermal(reader, host);
  if (options.fsroot.empty() || !options.running_arch.empty()) {
    // Live: uname(2) is the binary's view (qemu-user fakes it), host.arch() holds it.
    const topology_internal::EmulationVerdict verdict = topology_internal::DetectEmulation(
        reader, cpuinfo, options.fsroot.empty() ? topology_internal::BinaryArch() : options.running_arch, host.arch());
    host.set_emulated(verdict.emulated);
    host.set_emulation_evidence(verdict.evidence);
  }
  topology_internal::FillEnergySources(options.fsroot, host.emulated(), host);
  host.set_engine_version(FLEETMARK_ENGINE_VERSION);
  // Everything read from the device's files (a thermal zone's type, a CPU model, a
  // device-tree string) passes the agent hello's text rule before anyone prints,
  // serializes or sends it (`fleetmark topology` printed raw escape bytes, protobuf
  // logged invalid UTF-8).
  SanitizeHostText(host);
  return host;
}

int SanitizeHostText(v1::HostInfo& host) {
  const int changed = SanitizeMessageText(&host, HelloTextRules());
  if (changed > 0) {
    host.add_notes(absl::StrCat(changed,
                                " detected host strings were not printable UTF-8 within their limits "
                                "and were escaped or cut"));
  }
  return changed;
}

}  // namespace fleetmark::engine
