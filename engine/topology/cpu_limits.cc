#include "engine/topology/cpu_limits.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "engine/topology/sysfs.h"

namespace fleetmark::engine {
namespace {

using topology_internal::SysfsReader;

// cgroup v1 reports "no limit" as the largest page-aligned counter
// (0x7FFFFFFFFFFFF000 on 64-bit kernels); anything from 2^60 bytes on is no limit.
constexpr uint64_t kNoMemoryLimit = 1ull << 60;

struct Mount {
  int version = 0;                       // 1 or 2; 0 = a legacy "cpuset" filesystem
  std::string root;                      // the cgroup path mounted there ("/" normally)
  std::string mount_point;               // e.g. /sys/fs/cgroup/cpu
  std::vector<std::string> controllers;  // v1: from the super options
};

// mountinfo escapes space, tab, newline and backslash as \NNN (octal).
std::string Unescape(absl::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 3 < text.size()) {
      const absl::string_view digits = text.substr(i + 1, 3);
      if (std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '7'; })) {
        out.push_back(static_cast<char>((digits[0] - '0') * 64 + (digits[1] - '0') * 8 + (digits[2] - '0')));
        i += 3;
        continue;
      }
    }
    out.push_back(text[i]);
  }
  return out;
}

// The cgroup mounts of /proc/self/mountinfo:
// "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu".
std::vector<Mount> ParseMountInfo(absl::string_view text) {
  std::vector<Mount> mounts;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    const std::size_t dash = line.find(" - ");
    if (dash == absl::string_view::npos) continue;
    std::vector<absl::string_view> head = absl::StrSplit(line.substr(0, dash), ' ', absl::SkipEmpty());
    std::vector<absl::string_view> tail = absl::StrSplit(line.substr(dash + 3), ' ', absl::SkipEmpty());
    if (head.size() < 5 || tail.empty()) continue;
    Mount mount;
    if (tail[0] == "cgroup2") {
      mount.version = 2;
    } else if (tail[0] == "cgroup") {
      mount.version = 1;
      if (tail.size() >= 3) {
        for (absl::string_view option : absl::StrSplit(tail[2], ',')) {
          mount.controllers.emplace_back(option);
        }
      }
    } else {
      continue;
    }
    mount.root = Unescape(head[3]);
    mount.mount_point = Unescape(head[4]);
    mounts.push_back(std::move(mount));
  }
  return mounts;
}

// The cgroup mounts of proc/mounts (recorded trees often have no mountinfo):
// "cgroup /sys/fs/cgroup/cpuset cgroup rw,relatime,cpuset 0 0", "none /dev/cpuset cpuset rw 0 0".
std::vector<Mount> ParseProcMounts(absl::string_view text) {
  std::vector<Mount> mounts;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    std::vector<absl::string_view> words = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (words.size() < 3) continue;
    Mount mount;
    if (words[2] == "cgroup2") {
      mount.version = 2;
    } else if (words[2] == "cgroup") {
      mount.version = 1;
      if (words.size() >= 4) {
        for (absl::string_view option : absl::StrSplit(words[3], ',')) mount.controllers.emplace_back(option);
      }
    } else if (words[2] == "cpuset") {
      mount.version = 0;
      mount.controllers = {"cpuset"};
    } else {
      continue;
    }
    mount.root = "/";
    mount.mount_point = Unescape(words[1]);
    mounts.push_back(std::move(mount));
  }
  return mounts;
}

bool HasController(const std::vector<std::string>& list, absl::string_view name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

// The directory of the cgroup `path` below `mount`, and its ancestors up to the mount
// point, innermost first. A path outside the mount's root (another cgroup namespace)
// starts at the mount point.
std::vector<std::string> CgroupDirs(const SysfsReader& reader, const Mount& mount, absl::string_view path) {
  std::string rel(path);
  if (mount.root != "/" && (rel == mount.root || absl::StartsWith(rel, mount.root + "/"))) {
    rel = rel.substr(mount.root.size());
  }
  while (!rel.empty() && rel.back() == '/') rel.pop_back();
  std::string dir = absl::StrCat(mount.mount_point, rel);
  if (!reader.Exists(dir)) dir = mount.mount_point;
  std::vector<std::string> dirs;
  while (true) {
    dirs.push_back(dir);
    if (dir.size() <= mount.mount_point.size()) break;
    const std::size_t slash = dir.rfind('/');
    if (slash == std::string::npos || slash < mount.mount_point.size()) break;
    dir = dir.substr(0, slash);
  }
  return dirs;
}

void TakeQuota(int64_t quota_us, int64_t period_us, std::string source, CpuLimits& limits) {
  if (quota_us <= 0 || period_us <= 0) return;
  const double cpus = static_cast<double>(quota_us) / static_cast<double>(period_us);
  if (limits.quota_cpus == 0 || cpus < limits.quota_cpus) {
    limits.quota_cpus = cpus;
    limits.quota_us = quota_us;
    limits.period_us = period_us;
    limits.quota_source = std::move(source);
  }
}

void TakeMemory(uint64_t bytes, std::string source, CpuLimits& limits) {
  if (bytes == 0 || bytes >= kNoMemoryLimit) return;
  if (limits.memory_limit_bytes == 0 || bytes < limits.memory_limit_bytes) {
    limits.memory_limit_bytes = bytes;
    limits.memory_source = std::move(source);
  }
}

void ReadV2(const SysfsReader& reader, const std::vector<std::string>& dirs, CpuLimits& limits) {
  for (const std::string& dir : dirs) {
    const std::string cpu_max = absl::StrCat(dir, "/cpu.max");
    int64_t quota = 0;
    int64_t period = 0;
    if (std::optional<std::string> text = reader.Read(cpu_max); text && ParseCpuMax(*text, &quota, &period)) {
      TakeQuota(quota, period, absl::StrCat("cgroup v2 ", cpu_max), limits);
    }
    const std::string memory_max = absl::StrCat(dir, "/memory.max");
    if (std::optional<uint64_t> bytes = reader.ReadUint(memory_max)) {
      TakeMemory(*bytes, absl::StrCat("cgroup v2 ", memory_max), limits);
    }
  }
}

void ReadV1Cpu(const SysfsReader& reader, const std::vector<std::string>& dirs, CpuLimits& limits) {
  for (const std::string& dir : dirs) {
    const std::string quota_file = absl::StrCat(dir, "/cpu.cfs_quota_us");
    std::optional<int64_t> quota = reader.ReadInt(quota_file);
    std::optional<int64_t> period = reader.ReadInt(absl::StrCat(dir, "/cpu.cfs_period_us"));
    if (quota && period) {
      TakeQuota(*quota, *period, absl::StrCat("cgroup v1 ", quota_file), limits);
    }
  }
}

void ReadV1Memory(const SysfsReader& reader, const std::vector<std::string>& dirs, CpuLimits& limits) {
  for (const std::string& dir : dirs) {
    const std::string file = absl::StrCat(dir, "/memory.limit_in_bytes");
    if (std::optional<uint64_t> bytes = reader.ReadUint(file)) {
      TakeMemory(*bytes, absl::StrCat("cgroup v1 ", file), limits);
    }
  }
}

// The first mount of `version` (with `controller` for v1) from mountinfo, else the
// conventional location when it exists.
std::optional<Mount> FindMount(const SysfsReader& reader, const std::vector<Mount>& mounts, int version,
                               absl::string_view controller) {
  for (const Mount& m : mounts) {
    if (m.version == version && (version != 1 || HasController(m.controllers, controller))) {
      return m;
    }
  }
  std::vector<std::string> guesses;
  if (version == 0) {
    return std::nullopt;
  } else if (version == 2) {
    guesses = {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"};
  } else if (controller == "cpu") {
    guesses = {"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"};
  } else {
    guesses = {absl::StrCat("/sys/fs/cgroup/", controller)};
  }
  for (const std::string& guess : guesses) {
    const bool is_v2 = reader.Exists(absl::StrCat(guess, "/cgroup.controllers"));
    if (reader.Exists(guess) && is_v2 == (version == 2)) {
      return Mount{version, "/", guess, {std::string(controller)}};
    }
  }
  return std::nullopt;
}

CpuSet ReadCpuListFile(const SysfsReader& reader, const std::string& path) {
  const std::optional<std::string> text = reader.Read(path);
  if (!text || text->empty()) return {};
  absl::StatusOr<CpuSet> cpus = ParseCpuList(*text);
  return cpus.ok() ? *std::move(cpus) : CpuSet{};
}

// The cpuset of the cgroup at `dirs` (innermost first) of `mount`: its effective file,
// else the innermost non-empty list (v1 children are subsets of their parents; an
// empty v2 cpuset.cpus inherits the parent's).
void ReadCpusetDirs(const SysfsReader& reader, const Mount& mount, const std::vector<std::string>& dirs,
                    CpuLimits& limits) {
  const char* kind = mount.version == 2 ? "cgroup v2 " : mount.version == 1 ? "cgroup v1 " : "cpuset ";
  const std::string prefix = mount.version == 0 ? "" : "cpuset.";
  const std::string effective = mount.version == 2 ? "cpuset.cpus.effective" : prefix + "effective_cpus";
  const std::string plain = prefix + "cpus";
  for (const std::string& name : {effective, plain}) {
    for (const std::string& dir : dirs) {
      const std::string path = absl::StrCat(dir, "/", name);
      CpuSet cpus = ReadCpuListFile(reader, path);
      if (!cpus.empty()) {
        limits.cpuset = std::move(cpus);
        limits.cpuset_source = absl::StrCat(kind, path);
        return;
      }
      if (name == effective) break;  // only the cgroup's own effective set counts
    }
  }
}

// The process's cpuset cgroup: the path from a "N:cpuset:/path" (v1) or "0::/path"
// (v2) line of proc/self/cgroup, else proc/self/cpuset; the mount that holds it.
void ReadCpuset(const SysfsReader& reader, const std::vector<Mount>& mounts, absl::string_view cgroups,
                CpuLimits& limits) {
  for (absl::string_view line : absl::StrSplit(cgroups, '\n')) {
    std::vector<absl::string_view> parts = absl::StrSplit(line, absl::MaxSplits(':', 2));
    if (parts.size() != 3) continue;
    const std::vector<std::string> controllers = absl::StrSplit(parts[1], ',');
    std::optional<Mount> mount;
    if (parts[0] == "0" && parts[1].empty()) {
      mount = FindMount(reader, mounts, 2, "");
    } else if (HasController(controllers, "cpuset")) {
      mount = FindMount(reader, mounts, 1, "cpuset");
    }
    if (!mount) continue;
    ReadCpusetDirs(reader, *mount, CgroupDirs(reader, *mount, parts[2]), limits);
    if (!limits.cpuset.empty()) return;
  }
  const std::optional<std::string> path = reader.Read("/proc/self/cpuset");
  if (!path || path->empty()) return;
  for (int version : {1, 0, 2}) {
    if (std::optional<Mount> mount = FindMount(reader, mounts, version, "cpuset")) {
      ReadCpusetDirs(reader, *mount, CgroupDirs(reader, *mount, *path), limits);
      if (!limits.cpuset.empty()) return;
    }
  }
}

CpuSet ReadAffinity(const SysfsReader& reader) {
  if (reader.fsroot().empty()) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CpuSet cpus;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
      for (int cpu = 0; cpu < kMaxCpuId && cpu < CPU_SETSIZE; ++cpu) {
        if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
      }
    }
    return cpus;
  }
  // "Cpus_allowed_list:\t0-3" in a recorded proc/self/status.
  const std::string status = reader.Read("/proc/self/status").value_or("");
  for (absl::string_view line : absl::StrSplit(status, '\n')) {
    if (!absl::ConsumePrefix(&line, "Cpus_allowed_list:")) continue;
    const absl::string_view list = absl::StripAsciiWhitespace(line);
    absl::StatusOr<CpuSet> cpus = ParseCpuList(std::string_view(list.data(), list.size()));
    if (cpus.ok()) return *std::move(cpus);
  }
  return {};
}

}  // namespace

bool ParseCpuMax(std::string_view text, int64_t* quota_us, int64_t* period_us) {
  std::vector<absl::string_view> words =
      absl::StrSplit(absl::StripAsciiWhitespace(absl::string_view(text.data(), text.size())), ' ', absl::SkipEmpty());
  if (words.empty() || words[0] == "max") return false;
  int64_t quota = 0;
  int64_t period = 100000;  // the kernel's default when only the quota is written
  if (!absl::SimpleAtoi(words[0], &quota) || quota <= 0) return false;
  if (words.size() >= 2 && (!absl::SimpleAtoi(words[1], &period) || period <= 0)) return false;
  *quota_us = quota;
  *period_us = period;
  return true;
}

int CpuLimits::EffectiveCpus(int machine_cpus) const {
  int cpus = allowed.empty() ? machine_cpus : static_cast<int>(allowed.size());
  if (quota_cpus > 0) {
    cpus = std::min<int>(cpus, static_cast<int>(std::ceil(quota_cpus - 1e-9)));
  }
  return std::max(1, cpus);
}

CpuLimits ReadCpuLimits(std::string_view fsroot) {
  SysfsReader reader{std::string(fsroot)};
  CpuLimits limits;
  limits.affinity = ReadAffinity(reader);
  limits.online = topology_internal::ReadSysfsOnlineCpus(reader);
  std::vector<Mount> mounts = ParseMountInfo(reader.Read("/proc/self/mountinfo").value_or(""));
  if (mounts.empty()) mounts = ParseProcMounts(reader.Read("/proc/mounts").value_or(""));
  const std::optional<std::string> cgroups = reader.Read("/proc/self/cgroup");
  ReadCpuset(reader, mounts, cgroups.value_or(""), limits);
  // Allowed: every known restriction at once.
  std::optional<CpuSet> allowed;
  for (const CpuSet* known : {&limits.online, &limits.affinity, &limits.cpuset}) {
    if (known->empty()) continue;
    allowed = allowed ? topology_internal::IntersectCpus(*allowed, *known) : *known;
  }
  if (allowed && allowed->empty()) {
    limits.notes.push_back(absl::StrCat("allowed CPUs: affinity ", FormatCpuList(limits.affinity), ", cpuset ",
                                        FormatCpuList(limits.cpuset), " and online ", FormatCpuList(limits.online),
                                        " have no CPU in common: taken as unknown"));
  } else if (allowed) {
    limits.allowed = *std::move(allowed);
  }
  if (!cgroups) {
    limits.notes.push_back("cgroup: no /proc/self/cgroup: CPU quota and memory limit unknown");
    return limits;
  }
  // "0::/user.slice/app" (v2), "4:cpu,cpuacct:/ci/job" (v1).
  for (absl::string_view line : absl::StrSplit(*cgroups, '\n')) {
    std::vector<absl::string_view> parts = absl::StrSplit(line, absl::MaxSplits(':', 2));
    if (parts.size() != 3) continue;
    const absl::string_view path = parts[2];
    if (parts[0] == "0" && parts[1].empty()) {
      if (std::optional<Mount> mount = FindMount(reader, mounts, 2, "")) {
        ReadV2(reader, CgroupDirs(reader, *mount, path), limits);
      }
      continue;
    }
    std::vector<std::string> controllers = absl::StrSplit(parts[1], ',');
    for (absl::string_view controller : {"cpu", "memory"}) {
      if (!HasController(controllers, controller)) continue;
      std::optional<Mount> mount = FindMount(reader, mounts, 1, controller);
      if (!mount) continue;
      const std::vector<std::string> dirs = CgroupDirs(reader, *mount, path);
      if (controller == "cpu") {
        ReadV1Cpu(reader, dirs, limits);
      } else {
        ReadV1Memory(reader, dirs, limits);
      }
    }
  }
  return limits;
}

int EffectiveCpuCount() {
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  return ReadCpuLimits().EffectiveCpus(online > 0 ? static_cast<int>(online) : 1);
}

}  // namespace fleetmark::engine
