#include "engine/topology/core_classes.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "engine/topology/cpuinfo.h"

namespace fleetmark::engine::topology_internal {
namespace {

// Splits the cores `members` (one microarchitecture) into speed clusters.
std::vector<std::vector<int>> ClusterBySpeed(const std::vector<CoreTraits>& cores, std::vector<int> members) {
  const bool all_freq = std::all_of(members.begin(), members.end(), [&](int i) { return cores[i].max_khz > 0; });
  const bool all_capacity = std::all_of(members.begin(), members.end(), [&](int i) { return cores[i].capacity > 0; });
  auto speed = [&](int i) -> double {
    if (all_freq) return static_cast<double>(cores[i].max_khz);
    if (all_capacity) return static_cast<double>(cores[i].capacity);
    return 0;
  };
  std::stable_sort(members.begin(), members.end(), [&](int a, int b) { return speed(a) > speed(b); });
  std::vector<std::vector<int>> clusters;
  double top = 0;
  for (int i : members) {
    if (clusters.empty() || speed(i) < kSameClassRatio * top) {
      clusters.emplace_back();
      top = speed(i);
    }
    clusters.back().push_back(i);
  }
  return clusters;
}

// The max frequency most cores of a class reach (ties: the higher); favoured cores
// that turbo a little higher do not define the class.
uint64_t TypicalFrequency(const std::map<uint64_t, int>& votes) {
  uint64_t best = 0;
  int best_votes = 0;
  for (const auto& [khz, n] : votes) {
    if (khz > 0 && n >= best_votes) {
      best = khz;
      best_votes = n;
    }
  }
  return best;
}

}  // namespace

std::string ClassName(int rank, int count) {
  if (rank == 0) return std::string(kClassPerformance);
  if (rank == count - 1) return std::string(kClassEfficiency);
  if (count == 3) return std::string(kClassMid);
  return absl::StrCat(std::string(kClassMid), rank);
}

CoreClasses GroupCoreClasses(std::vector<CoreTraits> cores) {
  // A core with unknown max frequency takes its microarchitecture's known maximum.
  std::map<std::string, uint64_t> max_by_uarch;
  for (const CoreTraits& core : cores) {
    if (!core.microarchitecture.empty() && core.max_khz > 0) {
      uint64_t& m = max_by_uarch[core.microarchitecture];
      m = std::max(m, core.max_khz);
    }
  }
  for (CoreTraits& core : cores) {
    if (core.max_khz == 0) {
      auto it = max_by_uarch.find(core.microarchitecture);
      if (it != max_by_uarch.end()) core.max_khz = it->second;
    }
  }

  std::map<std::string, std::vector<int>> by_uarch;
  for (int i = 0; i < static_cast<int>(cores.size()); ++i) {
    by_uarch[cores[i].microarchitecture].push_back(i);
  }
  std::vector<v1::CoreKind> classes;
  std::vector<std::vector<int>> members;
  for (auto& [uarch, indices] : by_uarch) {
    for (std::vector<int>& cluster : ClusterBySpeed(cores, indices)) {
      v1::CoreKind kind;
      kind.set_microarchitecture(uarch);
      CpuSet cpus;
      uint32_t threads = 0;
      int efficiency = -1;
      std::map<uint64_t, int> frequency_votes;
      for (int i : cluster) {
        const CoreTraits& core = cores[i];
        cpus.insert(cpus.end(), core.cpus.begin(), core.cpus.end());
        threads = std::max<uint32_t>(threads, static_cast<uint32_t>(core.cpus.size()));
        ++frequency_votes[core.max_khz];
        kind.set_capacity(std::max(kind.capacity(), core.capacity));
        efficiency = std::max(efficiency, core.hwloc_efficiency);
      }
      kind.set_max_frequency_khz(TypicalFrequency(frequency_votes));
      std::sort(cpus.begin(), cpus.end());
      for (int cpu : cpus) kind.add_cpus(static_cast<uint32_t>(cpu));
      kind.set_cores(static_cast<uint32_t>(cluster.size()));
      kind.set_threads_per_core(threads);
      kind.set_efficiency(efficiency);  // hwloc's for now; replaced by the rank below
      classes.push_back(std::move(kind));
      members.push_back(std::move(cluster));
    }
  }

  // Ranking criteria per class, each used only when every class knows it.
  struct Key {
    double capacity, frequency, efficiency, rank, l2, l1d;
  };
  std::vector<Key> keys;
  for (std::size_t i = 0; i < classes.size(); ++i) {
    Key k{static_cast<double>(classes[i].capacity()),
          static_cast<double>(classes[i].max_frequency_khz()),
          static_cast<double>(classes[i].efficiency()),
          static_cast<double>(CoreRank(classes[i].microarchitecture())),
          0,
          0};
    for (int core : members[i]) {
      k.l2 = std::max(k.l2, static_cast<double>(cores[core].l2_share_bytes));
      k.l1d = std::max(k.l1d, static_cast<double>(cores[core].l1d_bytes));
    }
    keys.push_back(k);
  }
  auto mask = [&](double Key::*field, double unknown) {
    const bool all = std::all_of(keys.begin(), keys.end(), [&](const Key& k) { return k.*field > unknown; });
    if (!all) {
      for (Key& k : keys) k.*field = 0;
    }
  };
  mask(&Key::capacity, 0);
  mask(&Key::frequency, 0);
  mask(&Key::efficiency, -1);
  mask(&Key::rank, 0);
  mask(&Key::l2, 0);
  mask(&Key::l1d, 0);
  std::vector<int> order(classes.size());
  for (int i = 0; i < static_cast<int>(order.size()); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    const auto key = [&](int i) {
      const Key& k = keys[i];
      return std::tuple(k.capacity, k.frequency, k.efficiency, k.rank, k.l2, k.l1d);
    };
    if (key(a) != key(b)) return key(a) > key(b);
    return classes[a].microarchitecture() < classes[b].microarchitecture();
  });

  CoreClasses result;
  result.class_of_core.assign(cores.size(), 0);
  for (const CoreTraits& core : cores) result.core_max_khz.push_back(core.max_khz);
  const int count = static_cast<int>(order.size());
  for (int rank = 0; rank < count; ++rank) {
    v1::CoreKind kind = std::move(classes[order[rank]]);
    kind.set_name(ClassName(rank, count));
    kind.set_efficiency(count - 1 - rank);
    for (int core : members[order[rank]]) result.class_of_core[core] = rank;
    result.classes.push_back(std::move(kind));
  }
  return result;
}

}  // namespace fleetmark::engine::topology_internal
