#include "engine/health/preflight.h"

#include <algorithm>
#include <cstdint>
#include <optional>

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "engine/plan/plan.h"
#include "engine/topology/environment.h"
#include "engine/topology/sysfs.h"
#include "engine/common/steady_wait.h"

namespace fleetmark::engine {
namespace {

using topology_internal::SysfsReader;

constexpr absl::string_view kDeferredPayload = "type.fleetmark.dev/fleetmark.deferred";

// Sum of the ticks of proc/stat's aggregate "cpu" line (total) and of its busy part
// (all but idle and iowait).
struct CpuTicks {
  uint64_t total = 0;
  uint64_t busy = 0;
};

std::optional<CpuTicks> ReadCpuTicks(const SysfsReader& reader) {
  const std::string stat = reader.Read("/proc/stat").value_or("");
  for (absl::string_view line : absl::StrSplit(stat, '\n')) {
    std::vector<absl::string_view> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (f.size() < 5 || f[0] != "cpu") continue;
    CpuTicks ticks;
    for (size_t i = 1; i < f.size(); ++i) {
      uint64_t v = 0;
      if (!absl::SimpleAtoi(f[i], &v)) return std::nullopt;
      // user nice system idle iowait irq softirq steal guest guest_nice; guest time is
      // already counted in user and nice.
      if (i > 8) break;
      ticks.total += v;
      if (i != 4 && i != 5) ticks.busy += v;
    }
    return ticks;
  }
  return std::nullopt;
}

// utime + stime + cutime + cstime of proc/self/stat (fields 14-17, after the comm in
// parentheses, which may hold spaces).
std::optional<uint64_t> ReadSelfTicks(const SysfsReader& reader) {
  const std::string stat = reader.Read("/proc/self/stat").value_or("");
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::vector<absl::string_view> f = absl::StrSplit(absl::string_view(stat).substr(close + 1), ' ', absl::SkipEmpty());
  // f[0] is field 3 (state): fields 14..17 are f[11..14].
  if (f.size() < 15) return std::nullopt;
  uint64_t sum = 0;
  for (size_t i = 11; i <= 14; ++i) {
    int64_t v = 0;
    if (!absl::SimpleAtoi(f[i], &v) || v < 0) return std::nullopt;
    sum += static_cast<uint64_t>(v);
  }
  return sum;
}

double CooldownSeconds(const v1::Preconditions& p) {
  return p.has_cooldown_seconds() ? p.cooldown_seconds() : kDefaultGateCooldownSeconds;
}
uint32_t MaxChecks(const v1::Preconditions& p) { return p.has_max_checks() ? p.max_checks() : kDefaultGateChecks; }
double CpuSampleSeconds(const v1::Preconditions& p) {
  return p.has_cpu_sample_seconds() ? p.cpu_sample_seconds() : kDefaultGateCpuSampleSeconds;
}

bool Cancelled(const std::atomic<bool>* cancelled) { return cancelled != nullptr && cancelled->load(); }

}  // namespace

std::vector<std::string> GateFailures(const v1::Preconditions& p, const v1::EnvSnapshot& snap) {
  std::vector<std::string> failures;
  if (p.has_min_battery_percent() && snap.battery_level_percent() >= 0 && !snap.battery_charging() &&
      static_cast<uint32_t>(snap.battery_level_percent()) < p.min_battery_percent()) {
    failures.push_back(absl::StrCat("battery: ", snap.battery_level_percent(), " % < ", p.min_battery_percent(),
                                    " % and not charging"));
  }
  if (p.has_max_temperature_c()) {
    // The hottest reading: a thermal zone or the battery.
    std::optional<double> hottest;
    std::string where;
    for (int i = 0; i < snap.temperatures_c_size(); ++i) {
      if (!hottest || snap.temperatures_c(i) > *hottest) {
        hottest = snap.temperatures_c(i);
        where = absl::StrCat("thermal zone ", i < snap.thermal_zone_types_size() ? snap.thermal_zone_types(i) : "");
      }
    }
    if (snap.battery_temperature_known() && (!hottest || snap.battery_temperature_c() > *hottest)) {
      hottest = snap.battery_temperature_c();
      where = "battery";
    }
    if (hottest && *hottest > p.max_temperature_c()) {
      failures.push_back(absl::StrFormat("temperature: %s %.1f °C > %g °C", where, *hottest, p.max_temperature_c()));
    }
  }
  if (p.has_max_other_cpu_percent() && snap.other_cpu_measured() &&
      snap.other_cpu_percent() > p.max_other_cpu_percent()) {
    failures.push_back(absl::StrFormat("other CPU: %.1f %% > %g %% of all CPUs over %g s", snap.other_cpu_percent(),
                                       p.max_other_cpu_percent(), CpuSampleSeconds(p)));
  }
  if (p.has_max_load_average() && snap.load_average_1m() > p.max_load_average()) {
    failures.push_back(absl::StrFormat("load average: %.2f > %g", snap.load_average_1m(), p.max_load_average()));
  }
  if (p.has_required_governor() && !snap.governor().empty() && snap.governor() != p.required_governor()) {
    failures.push_back(absl::StrCat("governor: ", snap.governor(), ", required ", p.required_governor()));
  }
  if (p.has_min_free_memory_mib() && snap.free_memory_bytes() > 0 &&
      snap.free_memory_bytes() < p.min_free_memory_mib() * (uint64_t{1} << 20)) {
    failures.push_back(
        absl::StrCat("free memory: ", snap.free_memory_bytes() >> 20, " MiB < ", p.min_free_memory_mib(), " MiB"));
  }
  return failures;
}

bool SampleOtherCpuPercent(absl::string_view fsroot, absl::Duration window, double* percent) {
  const SysfsReader reader{std::string(fsroot)};
  const std::optional<CpuTicks> t0 = ReadCpuTicks(reader);
  const std::optional<uint64_t> s0 = ReadSelfTicks(reader);
  absl::SleepFor(window);
  const std::optional<CpuTicks> t1 = ReadCpuTicks(reader);
  const std::optional<uint64_t> s1 = ReadSelfTicks(reader);
  if (!t0 || !t1 || t1->total <= t0->total) return false;
  const double total = static_cast<double>(t1->total - t0->total);
  double busy = t1->busy >= t0->busy ? static_cast<double>(t1->busy - t0->busy) : 0;
  if (s0 && s1 && *s1 >= *s0) busy -= static_cast<double>(*s1 - *s0);
  *percent = std::clamp(100.0 * busy / total, 0.0, 100.0);
  return true;
}

std::vector<std::string> GatesNotChecked(const v1::Preconditions& p, const v1::EnvSnapshot& snap) {
  std::vector<std::string> unchecked;
  // The same unknowns GateFailures passes, in its order.
  if (p.has_min_battery_percent() && snap.battery_level_percent() < 0 && !snap.battery_charging()) {
    unchecked.push_back(
        absl::StrCat("battery: no battery level readable, min ", p.min_battery_percent(), " % not checked"));
  }
  if (p.has_max_temperature_c() && snap.temperatures_c_size() == 0 && !snap.battery_temperature_known()) {
    unchecked.push_back(
        absl::StrFormat("temperature: no thermal zone or battery gave a plausible reading, max %g °C not checked",
                        p.max_temperature_c()));
  }
  if (p.has_max_other_cpu_percent() && !snap.other_cpu_measured()) {
    unchecked.push_back(absl::StrFormat("other CPU: not measured, max %g %% not checked", p.max_other_cpu_percent()));
  }
  if (p.has_required_governor() && snap.governor().empty()) {
    unchecked.push_back(
        absl::StrCat("governor: no cpufreq governor readable, ", p.required_governor(), " not checked"));
  }
  if (p.has_min_free_memory_mib() && snap.free_memory_bytes() == 0) {
    unchecked.push_back(
        absl::StrCat("free memory: MemAvailable not readable, min ", p.min_free_memory_mib(), " MiB not checked"));
  }
  return unchecked;
}

v1::EnvSnapshot CheckPreconditions(const v1::Preconditions& p, const PreflightEnv& env) {
  v1::EnvSnapshot snap = TakeEnvSnapshot(env.fsroot);
  if (p.has_max_other_cpu_percent()) {
    double percent = 0;
    if (SampleOtherCpuPercent(env.fsroot, absl::Seconds(CpuSampleSeconds(p)), &percent)) {
      snap.set_other_cpu_percent(percent);
      snap.set_other_cpu_measured(true);
    } else {
      snap.add_notes("other CPU: proc/stat unreadable or did not advance, gate not checked");
    }
  }
  for (std::string& failure : GateFailures(p, snap)) snap.add_gate_failures(std::move(failure));
  for (std::string& unchecked : GatesNotChecked(p, snap)) snap.add_gates_not_checked(std::move(unchecked));
  return snap;
}

PreflightOutcome RunPreflight(const v1::Preconditions& p, const PreflightEnv& env, const std::atomic<bool>* cancelled) {
  PreflightOutcome outcome;
  const uint32_t max_checks = std::max<uint32_t>(1, MaxChecks(p));
  const absl::Duration cooldown = absl::Seconds(CooldownSeconds(p));
  for (uint32_t check = 1;; ++check) {
    outcome.conditions = CheckPreconditions(p, env);
    outcome.checks = static_cast<int>(check);
    if (outcome.conditions.gate_failures_size() == 0) return outcome;
    if (check >= max_checks) break;
    if (Cancelled(cancelled)) break;
    if (env.sleep) {
      env.sleep(cooldown);
    } else {
      // Steady time: a wall clock set back must not stretch the cool-down.
      for (absl::Time end = SteadyNow() + cooldown; SteadyNow() < end && !Cancelled(cancelled);) {
        absl::SleepFor(std::min(absl::Milliseconds(100), end - SteadyNow()));
      }
    }
    outcome.cooldown_seconds += absl::ToDoubleSeconds(cooldown);
    if (Cancelled(cancelled)) break;
  }
  outcome.passed = false;
  if (Cancelled(cancelled)) {
    outcome.cancelled = true;
    return outcome;
  }
  outcome.deferred_reason = absl::StrFormat("deferred: %s (%d checks, %g s of cool-down)",
                                            absl::StrJoin(outcome.conditions.gate_failures(), "; "), outcome.checks,
                                            outcome.cooldown_seconds);
  return outcome;
}

absl::Status DeferredError(absl::string_view reason) {
  absl::Status status = absl::UnavailableError(reason);
  status.SetPayload(kDeferredPayload, absl::Cord("1"));
  return status;
}

bool IsDeferred(const absl::Status& status) { return status.GetPayload(kDeferredPayload).has_value(); }

}  // namespace fleetmark::engine
