// hwloc 2.9 reader for TopologyView.
#include <hwloc.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "engine/topology/topology_view.h"

namespace fleetmark::engine::topology_internal {
namespace {

// Serializes hwloc loads with the process environment they read (HWLOC_FSROOT).
ABSL_CONST_INIT absl::Mutex env_mu(absl::kConstInit);

// Sets an environment variable for the lifetime of the object, restoring the old value.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

struct TopologyDeleter {
  void operator()(hwloc_topology* t) const { hwloc_topology_destroy(t); }
};
using TopologyPtr = std::unique_ptr<hwloc_topology, TopologyDeleter>;

CpuSet ToCpuSet(hwloc_const_bitmap_t bitmap) {
  CpuSet cpus;
  if (bitmap == nullptr) return cpus;
  int id = hwloc_bitmap_first(bitmap);
  while (id >= 0 && id < kMaxCpuId) {
    cpus.push_back(id);
    id = hwloc_bitmap_next(bitmap, id);
  }
  return cpus;
}

std::string CacheTypeName(hwloc_obj_cache_type_e type) {
  switch (type) {
    case HWLOC_OBJ_CACHE_DATA:
      return "data";
    case HWLOC_OBJ_CACHE_INSTRUCTION:
      return "instruction";
    case HWLOC_OBJ_CACHE_UNIFIED:
      return "unified";
  }
  return "unified";
}

// Fills `view` from a loaded topology.
void ReadLoaded(hwloc_topology_t topology, TopologyView& view) {
  hwloc_obj_t root = hwloc_get_root_obj(topology);
  if (const char* version = hwloc_obj_get_info_by_name(root, "hwlocVersion")) {
    view.hwloc_version = version;
  }
  view.packages = std::max(1, hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_PACKAGE));
  view.numa_nodes = std::max(1, hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_NUMANODE));

  // Cores; a platform whose hwloc topology has no Core objects gets one core per PU.
  const hwloc_obj_type_t core_type =
      hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_CORE) > 0 ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
  const int ncores = hwloc_get_nbobjs_by_type(topology, core_type);
  for (int i = 0; i < ncores; ++i) {
    hwloc_obj_t core = hwloc_get_obj_by_type(topology, core_type, i);
    CoreView c;
    c.cpus = ToCpuSet(core->cpuset);
    if (c.cpus.empty()) continue;
    hwloc_obj_t package = hwloc_get_ancestor_obj_by_type(topology, HWLOC_OBJ_PACKAGE, core);
    c.package = package != nullptr ? static_cast<int>(package->logical_index) : 0;
    view.cores.push_back(std::move(c));
  }
  std::sort(view.cores.begin(), view.cores.end(),
            [](const CoreView& a, const CoreView& b) { return a.cpus[0] < b.cpus[0]; });

  for (hwloc_obj_type_t type : {HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L1ICACHE, HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L2ICACHE,
                                HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L3ICACHE, HWLOC_OBJ_L4CACHE, HWLOC_OBJ_L5CACHE}) {
    const int n = hwloc_get_nbobjs_by_type(topology, type);
    for (int i = 0; i < n; ++i) {
      hwloc_obj_t obj = hwloc_get_obj_by_type(topology, type, i);
      v1::CacheInfo cache;
      cache.set_level(obj->attr->cache.depth);
      cache.set_type(CacheTypeName(obj->attr->cache.type));
      cache.set_size_bytes(obj->attr->cache.size);
      for (int cpu : ToCpuSet(obj->cpuset)) cache.add_cpus(static_cast<uint32_t>(cpu));
      view.caches.push_back(std::move(cache));
    }
  }

  const int nkinds = hwloc_cpukinds_get_nr(topology, 0);
  for (int k = 0; k < nkinds; ++k) {
    hwloc_bitmap_t cpuset = hwloc_bitmap_alloc();
    int efficiency = -1;
    unsigned nr_infos = 0;
    hwloc_info_s* infos = nullptr;
    if (hwloc_cpukinds_get_info(topology, static_cast<unsigned>(k), cpuset, &efficiency, &nr_infos, &infos, 0) == 0) {
      KindView kind;
      kind.cpus = ToCpuSet(cpuset);
      kind.efficiency = efficiency;
      for (unsigned i = 0; i < nr_infos; ++i) {
        absl::string_view name = infos[i].name != nullptr ? infos[i].name : "";
        const char* value = infos[i].value != nullptr ? infos[i].value : "";
        uint64_t mhz = 0;
        if (name == "CoreType") {
          kind.core_type = value;
        } else if (name == "FrequencyMaxMHz" && absl::SimpleAtoi(value, &mhz)) {
          kind.max_khz = mhz * 1000;
        }
      }
      view.kinds.push_back(std::move(kind));
    }
    hwloc_bitmap_free(cpuset);
  }
}

}  // namespace

absl::StatusOr<TopologyView> LoadHwlocTopology(absl::string_view fsroot) {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) {
    return absl::InternalError(absl::StrCat("hwloc_topology_init failed, errno ", errno));
  }
  TopologyPtr topology(raw);
  hwloc_topology_set_cache_types_filter(topology.get(), HWLOC_TYPE_FILTER_KEEP_ALL);
  hwloc_topology_set_io_types_filter(topology.get(), HWLOC_TYPE_FILTER_KEEP_NONE);
  // The whole machine, also the CPUs a cgroup cpuset keeps from this process: classes
  // are ranked over every core; host.cc restricts to the allowed CPUs (the same rule
  // live and for a recorded tree, where hwloc would apply only the cgroup).
  hwloc_topology_set_flags(topology.get(), HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
  int load_result = 0;
  if (fsroot.empty()) {
    // Under the same mutex: a concurrent fsroot load must not lend us its HWLOC_FSROOT.
    absl::MutexLock lock(&env_mu);
    load_result = hwloc_topology_load(topology.get());
  } else {
    // hwloc 2.9 has no per-topology fsroot setter (hwloc_topology_set_fsroot was
    // removed in 2.0); the Linux backend reads HWLOC_FSROOT when the topology loads.
    if (hwloc_topology_set_components(topology.get(), HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "x86") != 0) {
      return absl::InternalError("hwloc: cannot disable the x86 backend for a fsroot");
    }
    absl::MutexLock lock(&env_mu);
    ScopedEnv env("HWLOC_FSROOT", std::string(fsroot));
    load_result = hwloc_topology_load(topology.get());
  }
  if (load_result != 0) {
    return absl::InternalError(absl::StrCat("hwloc_topology_load failed, errno ", errno));
  }
  if (!fsroot.empty()) {
    // When the Linux backend cannot read the tree it gives up and hwloc falls back to
    // its "noos" backend, which counts the *live* machine's CPUs: never use that.
    const char* backend = hwloc_obj_get_info_by_name(hwloc_get_root_obj(topology.get()), "Backend");
    if (backend == nullptr || std::string_view(backend) != "Linux") {
      return absl::FailedPreconditionError(absl::StrCat("hwloc could not read the recorded tree \"", fsroot,
                                                        "\" (no usable sys/devices/system/cpu; hwloc backend \"",
                                                        backend == nullptr ? "none" : backend, "\")"));
    }
  }
  TopologyView view;
  ReadLoaded(topology.get(), view);
  if (view.cores.empty()) {
    return absl::NotFoundError(
        absl::StrCat("hwloc found no processing unit in \"", fsroot.empty() ? "/" : fsroot, "\""));
  }
  return view;
}

}  // namespace fleetmark::engine::topology_internal
