#include "engine/topology/placement.h"

#include <algorithm>
#include <cerrno>
#include <iterator>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"

namespace fleetmark::engine {
namespace {

CpuSet HostCpus(const v1::HostInfo& host) {
  CpuSet cpus;
  for (const v1::CoreInfo& core : host.cores()) {
    cpus.insert(cpus.end(), core.cpus().begin(), core.cpus().end());
  }
  std::sort(cpus.begin(), cpus.end());
  return cpus;
}

absl::Status Unsupported(const PlacementSpec& spec, absl::string_view why) {
  return absl::UnimplementedError(absl::StrCat("placement \"", spec.text, "\" cannot be honoured: ", why));
}

std::string ErrnoText(int err) { return std::generic_category().message(err); }

absl::Status PinError(const CpuSet& cpus, int err) {
  std::string message = absl::StrCat("sched_setaffinity to CPUs ", FormatCpuList(cpus), " failed: ", ErrnoText(err),
                                     " (errno ", err, ")");
  return absl::UnimplementedError(message);
}

cpu_set_t ToMask(const CpuSet& cpus) {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  for (int cpu : cpus) {
    if (cpu >= 0 && cpu < kMaxCpuId) CPU_SET(cpu, &mask);
  }
  return mask;
}

// The affinity this process started with (respects `taskset` and cgroups), captured
// before main so that no placement has pinned the capturing thread yet.
const cpu_set_t& InitialAffinity() {
  static const cpu_set_t mask = [] {
    cpu_set_t m;
    CPU_ZERO(&m);
    if (sched_getaffinity(0, sizeof(m), &m) != 0) {
      for (int cpu = 0; cpu < kMaxCpuId; ++cpu) CPU_SET(cpu, &m);
    }
    return m;
  }();
  return mask;
}
[[maybe_unused]] const cpu_set_t& kInitialAffinityAtLoad = InitialAffinity();

}  // namespace

absl::StatusOr<CpuSet> PlanPlacement(const PlacementSpec& spec, const v1::HostInfo& host, int threads) {
  if (threads <= 0) threads = static_cast<int>(host.logical_cpus());
  const CpuSet host_cpus = HostCpus(host);
  // What this process may use: every placement is planned inside it.
  CpuSet allowed(host.limits().allowed_cpu_ids().begin(), host.limits().allowed_cpu_ids().end());
  std::sort(allowed.begin(), allowed.end());
  if (allowed.empty()) allowed = host_cpus;  // unknown: the host's CPUs
  const std::string allowed_text = absl::StrCat("the CPUs this process may use (affinity/cgroup cpuset): ",
                                                allowed.empty() ? "unknown" : FormatCpuList(allowed));
  auto usable = [&](CpuSet cpus) {
    std::sort(cpus.begin(), cpus.end());
    CpuSet out;
    std::set_intersection(cpus.begin(), cpus.end(), allowed.begin(), allowed.end(), std::back_inserter(out));
    return out;
  };
  switch (spec.kind) {
    case PlacementKind::kAny:
      return CpuSet{};
    case PlacementKind::kClass: {
      for (const v1::CoreKind& c : host.core_classes()) {
        if (c.name() != spec.class_name) continue;
        const CpuSet machine = c.machine_cpus_size() > 0 ? CpuSet(c.machine_cpus().begin(), c.machine_cpus().end())
                                                         : CpuSet(c.cpus().begin(), c.cpus().end());
        if (machine.empty()) break;
        CpuSet cpus = usable(CpuSet(c.cpus().begin(), c.cpus().end()));
        if (cpus.empty()) {
          return Unsupported(spec, absl::StrCat("none of the host's ", spec.class_name, " CPUs (",
                                                FormatCpuList(machine), ") is among ", allowed_text));
        }
        return cpus;
      }
      std::string have;
      for (const v1::CoreKind& c : host.core_classes()) {
        absl::StrAppend(&have, have.empty() ? "" : ", ", c.name());
      }
      return Unsupported(spec, absl::StrCat("the host has no ", spec.class_name,
                                            " cores (its classes: ", have.empty() ? "none" : have, ")"));
    }
    case PlacementKind::kOnePerCore: {
      if (host.cores_size() == 0) return Unsupported(spec, "the host lists no physical cores");
      CpuSet cpus;
      for (const v1::CoreInfo& core : host.cores()) {
        const CpuSet mine = usable(CpuSet(core.cpus().begin(), core.cpus().end()));
        if (!mine.empty()) cpus.push_back(mine.front());
      }
      if (cpus.empty()) return Unsupported(spec, absl::StrCat("no core has a CPU among ", allowed_text));
      std::sort(cpus.begin(), cpus.end());
      return cpus;
    }
    case PlacementKind::kSmtPairs: {
      std::vector<CpuSet> smt_cores;
      bool any_smt = false;
      for (const v1::CoreInfo& core : host.cores()) {
        if (core.cpus_size() < 2) continue;
        any_smt = true;
        CpuSet mine = usable(CpuSet(core.cpus().begin(), core.cpus().end()));
        if (mine.size() >= 2) smt_cores.push_back(std::move(mine));
      }
      if (!any_smt) {
        return Unsupported(spec, "the host has no core with 2 or more hardware threads (no SMT)");
      }
      if (smt_cores.empty()) {
        return Unsupported(spec, absl::StrCat("no core has 2 or more hardware threads among ", allowed_text));
      }
      std::sort(smt_cores.begin(), smt_cores.end());
      // Fewest cores whose hardware threads cover `threads` (all SMT cores at most).
      CpuSet cpus;
      for (const CpuSet& core : smt_cores) {
        if (static_cast<int>(cpus.size()) >= threads) break;
        cpus.insert(cpus.end(), core.begin(), core.end());
      }
      std::sort(cpus.begin(), cpus.end());
      return cpus;
    }
    case PlacementKind::kCpus: {
      if (spec.cpus.empty()) return Unsupported(spec, "the CPU list is empty");
      for (int cpu : spec.cpus) {
        if (!std::binary_search(host_cpus.begin(), host_cpus.end(), cpu)) {
          return Unsupported(
              spec, absl::StrCat("CPU ", cpu, " is not one of the host's CPUs (", FormatCpuList(host_cpus), ")"));
        }
        if (!std::binary_search(allowed.begin(), allowed.end(), cpu)) {
          return Unsupported(spec, absl::StrCat("CPU ", cpu, " is not among ", allowed_text));
        }
      }
      return spec.cpus;
    }
  }
  return absl::InvalidArgumentError("placement: unknown kind");
}

bool IsPlacementUnsupported(const absl::Status& status) { return status.code() == absl::StatusCode::kUnimplemented; }

PlacementHooks::PlacementHooks(CpuSet cpus) : cpus_(std::move(cpus)), mask_(ToMask(cpus_)) {}

void PlacementHooks::OnThreadStart() {
  if (cpus_.empty()) {
    // `any`: undo a pin a reused thread (oneTBB's global workers) kept from an earlier
    // case. Best effort: `any` never fails.
    sched_setaffinity(0, sizeof(cpu_set_t), &InitialAffinity());
    return;
  }
  if (sched_setaffinity(0, sizeof(mask_), &mask_) == 0) {
    pinned_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  const int err = errno;
  absl::MutexLock lock(&mu_);
  if (status_.ok()) status_ = PinError(cpus_, err);  // keep the first failure
  failed_.store(true, std::memory_order_release);
}

void PlacementHooks::OnTaskStart(int /*task*/) {
  const int cpu = sched_getcpu();
  if (cpu < 0 || cpu >= kMaxCpuId) return;
  seen_[static_cast<std::size_t>(cpu) / 64].fetch_or(uint64_t{1} << (cpu % 64), std::memory_order_relaxed);
}

void PlacementHooks::Install(StrategyOptions& options) {
  options.on_thread_start = [this, previous = std::move(options.on_thread_start)] {
    if (previous) previous();
    OnThreadStart();
  };
  // `any` verifies nothing: no per-task hook (a sched_getcpu, an atomic and a
  // std::function call per task, ~6 ns, would sit inside every timed batch).
  if (cpus_.empty()) return;
  options.on_task_start = [this, previous = std::move(options.on_task_start)](int task) {
    if (previous) previous(task);
    OnTaskStart(task);
  };
}

CpuSet PlacementHooks::CpusSeen() const {
  CpuSet cpus;
  for (int word = 0; word < kWords; ++word) {
    const uint64_t bits = seen_[static_cast<std::size_t>(word)].load(std::memory_order_relaxed);
    for (int bit = 0; bit < 64; ++bit) {
      if ((bits >> bit) & 1) cpus.push_back(word * 64 + bit);
    }
  }
  return cpus;
}

void PlacementHooks::ResetSeen() {
  for (auto& word : seen_) word.store(0, std::memory_order_relaxed);
}

absl::Status PlacementHooks::status() const {
  if (!failed_.load(std::memory_order_acquire)) return absl::OkStatus();
  absl::MutexLock lock(&mu_);
  return status_;
}

ScopedThreadAffinity::ScopedThreadAffinity(const CpuSet& cpus) {
  if (cpus.empty()) return;
  if (sched_getaffinity(0, sizeof(saved_), &saved_) != 0) {
    status_ = absl::UnimplementedError(absl::StrCat("sched_getaffinity failed: ", ErrnoText(errno)));
    return;
  }
  const cpu_set_t mask = ToMask(cpus);
  if (sched_setaffinity(0, sizeof(mask), &mask) != 0) {
    status_ = PinError(cpus, errno);
    return;
  }
  restore_ = true;
}

ScopedThreadAffinity::~ScopedThreadAffinity() {
  if (restore_) sched_setaffinity(0, sizeof(saved_), &saved_);
}

}  // namespace fleetmark::engine
