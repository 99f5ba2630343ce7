// Preflight gates: each gate against a fixture sysfs/procfs tree, the cool-down and
// re-check loop, the deferral message, the CPU-of-other-processes sample against a real
// CPU hog, Plan.preconditions validation, and RunPlan deferring instead of measuring.
#include "engine/health/preflight.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "engine/plan/plan.h"
#include "engine/topology/conditions_text.h"
#include "engine/runner/runner.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace fleetmark::engine {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// A phone-like tree: 2 CPUs (powersave), a hot SoC zone, a discharging battery at 12 %,
// 800 MiB available, load 9.5.
class PhoneTree {
 public:
  PhoneTree() : root_(std::filesystem::temp_directory_path() / ("fleetmark-preflight-" + std::to_string(getpid()))) {
    Write("sys/devices/system/cpu/online", "0-1\n");
    Write("sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "powersave\n");
    Write("sys/devices/system/cpu/cpu1/cpufreq/scaling_governor", "powersave\n");
    Write("sys/class/thermal/thermal_zone0/type", "soc-thermal\n");
    Write("sys/class/thermal/thermal_zone0/temp", "47500\n");
    Write("sys/class/thermal/thermal_zone1/type", "bogus\n");
    Write("sys/class/thermal/thermal_zone1/temp", "-263200\n");  // a driver's sentinel: left out
    Write("sys/class/power_supply/battery/type", "Battery\n");
    Write("sys/class/power_supply/battery/capacity", "12\n");
    Write("sys/class/power_supply/battery/status", "Discharging\n");
    Write("sys/class/power_supply/battery/temp", "331\n");  // 33.1 °C
    Write("proc/meminfo", "MemTotal:        3900000 kB\nMemAvailable:     819200 kB\n");
    Write("proc/loadavg", "9.50 8.00 7.00 3/400 999\n");
  }
  ~PhoneTree() { std::filesystem::remove_all(root_); }
  void Write(const std::string& path, const std::string& text) {
    std::filesystem::create_directories((root_ / path).parent_path());
    std::ofstream(root_ / path) << text;
  }
  void Remove(const std::string& path) { std::filesystem::remove_all(root_ / path); }
  std::string root() const { return root_.string(); }

 private:
  std::filesystem::path root_;
};

v1::Preconditions Gates(const std::string& text) {
  v1::Preconditions p;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &p)) << text;
  return p;
}

TEST(PreflightTest, EachGateNamesItsValueAndLimit) {
  PhoneTree tree;
  const v1::Preconditions p = Gates(
      "min_battery_percent: 20 max_temperature_c: 45 max_load_average: 4 required_governor: 'performance' "
      "min_free_memory_mib: 1024");
  v1::EnvSnapshot snap = CheckPreconditions(p, {.fsroot = tree.root()});
  EXPECT_EQ(snap.battery_level_percent(), 12);
  EXPECT_FALSE(snap.battery_charging());
  EXPECT_DOUBLE_EQ(snap.battery_temperature_c(), 33.1);
  EXPECT_EQ(snap.free_memory_bytes(), 819200u * 1024);
  EXPECT_EQ(snap.governor(), "powersave");
  EXPECT_THAT(snap.gate_failures(),
              ElementsAre("battery: 12 % < 20 % and not charging",
                          "temperature: thermal zone soc-thermal 47.5 °C > 45 °C", "load average: 9.50 > 4",
                          "governor: powersave, required performance", "free memory: 800 MiB < 1024 MiB"));
  // The sentinel zone is left out by the sensor range, with a note, not taken as -263 °C.
  EXPECT_THAT(snap.temperatures_c(), ElementsAre(47.5));
  EXPECT_THAT(absl::StrJoin(snap.notes(), "\n"), HasSubstr("outside -40..150"));

  // Healthy again: charging passes the battery gate whatever the level; cooler; idle;
  // the right governor on every CPU; enough memory.
  tree.Write("sys/class/power_supply/battery/status", "Charging\n");
  tree.Write("sys/class/thermal/thermal_zone0/temp", "41000\n");
  tree.Write("proc/loadavg", "0.50 0.40 0.30 1/400 999\n");
  tree.Write("sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "performance\n");
  tree.Write("sys/devices/system/cpu/cpu1/cpufreq/scaling_governor", "performance\n");
  tree.Write("proc/meminfo", "MemAvailable:    2097152 kB\n");
  EXPECT_THAT(CheckPreconditions(p, {.fsroot = tree.root()}).gate_failures(), IsEmpty());

  // One CPU on another governor fails the gate: both are named.
  tree.Write("sys/devices/system/cpu/cpu1/cpufreq/scaling_governor", "schedutil\n");
  EXPECT_THAT(CheckPreconditions(p, {.fsroot = tree.root()}).gate_failures(),
              ElementsAre("governor: performance,schedutil, required performance"));
}

TEST(PreflightTest, TheBatteryCountsAsATemperature) {
  PhoneTree tree;
  tree.Write("sys/class/power_supply/battery/temp", "462\n");  // 46.2 °C, hotter than the SoC
  tree.Write("sys/class/thermal/thermal_zone0/temp", "40000\n");
  EXPECT_THAT(CheckPreconditions(Gates("max_temperature_c: 45"), {.fsroot = tree.root()}).gate_failures(),
              ElementsAre("temperature: battery 46.2 °C > 45 °C"));
}

TEST(PreflightTest, UnknownReadingsPassTheirGates) {
  PhoneTree tree;
  tree.Remove("sys/class/power_supply");
  tree.Remove("sys/class/thermal");
  tree.Remove("sys/devices/system/cpu/cpu0/cpufreq");
  tree.Remove("sys/devices/system/cpu/cpu1/cpufreq");
  tree.Remove("proc/meminfo");
  const v1::EnvSnapshot snap = CheckPreconditions(
      Gates("min_battery_percent: 50 max_temperature_c: 30 required_governor: 'performance' min_free_memory_mib: 1"),
      {.fsroot = tree.root()});
  EXPECT_EQ(snap.battery_level_percent(), -1);
  EXPECT_EQ(snap.free_memory_bytes(), 0u);
  EXPECT_THAT(snap.gate_failures(), IsEmpty());
  // Each passed unchecked, and the snapshot says so (issue 32, item 11).
  EXPECT_THAT(snap.gates_not_checked(),
              ElementsAre("battery: no battery level readable, min 50 % not checked",
                          "temperature: no thermal zone or battery gave a plausible reading, max 30 °C not checked",
                          "governor: no cpufreq governor readable, performance not checked",
                          "free memory: MemAvailable not readable, min 1 MiB not checked"));
}

// The temperature gate with no plausible reading (issue 32, item 11: every zone at a
// sentinel, no battery: the run went through and nothing said the gate was not
// checked). It passes, saying it could not check; with one plausible zone it checks.
TEST(PreflightTest, ATemperatureGateWithNoPlausibleReadingSaysItCouldNotCheck) {
  PhoneTree tree;
  tree.Remove("sys/class/power_supply");
  tree.Write("sys/class/thermal/thermal_zone0/temp", "-263200\n");
  const v1::Preconditions p = Gates("max_temperature_c: 45");
  const v1::EnvSnapshot snap = CheckPreconditions(p, {.fsroot = tree.root()});
  EXPECT_THAT(snap.temperatures_c(), IsEmpty());
  EXPECT_THAT(snap.gate_failures(), IsEmpty());
  EXPECT_THAT(snap.gates_not_checked(),
              ElementsAre("temperature: no thermal zone or battery gave a plausible reading, max 45 °C not checked"));
  EXPECT_THAT(FormatConditions(snap), HasSubstr("gates not checked: temperature: no thermal zone or battery"));
  EXPECT_THAT(FormatConditionsRange({&snap, &snap}), HasSubstr("gates not checked in 2 of 2"));

  // No thermal zone at all (a VM, a container without sys/class/thermal): the same.
  tree.Remove("sys/class/thermal");
  EXPECT_THAT(CheckPreconditions(p, {.fsroot = tree.root()}).gates_not_checked(),
              ElementsAre(HasSubstr("temperature: no thermal zone or battery gave a plausible reading")));

  tree.Write("sys/class/thermal/thermal_zone1/temp", "41000\n");
  EXPECT_THAT(CheckPreconditions(p, {.fsroot = tree.root()}).gates_not_checked(), IsEmpty());
  // The battery's temperature is a reading too.
  tree.Remove("sys/class/thermal");
  tree.Write("sys/class/power_supply/battery/type", "Battery\n");
  tree.Write("sys/class/power_supply/battery/temp", "331\n");
  EXPECT_THAT(CheckPreconditions(p, {.fsroot = tree.root()}).gates_not_checked(), IsEmpty());
  // A gate that is not set is never "not checked".
  tree.Remove("sys/class/thermal");
  EXPECT_THAT(CheckPreconditions(Gates("max_load_average: 100"), {.fsroot = tree.root()}).gates_not_checked(),
              IsEmpty());
}

TEST(PreflightTest, CoolsDownAndRechecksUntilTheGatePasses) {
  PhoneTree tree;
  std::vector<absl::Duration> slept;
  PreflightEnv env{.fsroot = tree.root(), .sleep = [&](absl::Duration d) {
                     slept.push_back(d);
                     if (slept.size() == 2) tree.Write("sys/class/thermal/thermal_zone0/temp", "39000\n");
                   }};
  const PreflightOutcome o =
      RunPreflight(Gates("max_temperature_c: 45 cooldown_seconds: 20 max_checks: 5"), env, nullptr);
  EXPECT_TRUE(o.passed);
  EXPECT_EQ(o.checks, 3);
  EXPECT_THAT(slept, ElementsAre(absl::Seconds(20), absl::Seconds(20)));
  EXPECT_DOUBLE_EQ(o.cooldown_seconds, 40);
  EXPECT_THAT(o.conditions.temperatures_c(), ElementsAre(39.0));
  EXPECT_TRUE(o.deferred_reason.empty());
}

TEST(PreflightTest, DefersAfterTheLastCheckNamingTheGate) {
  PhoneTree tree;
  int sleeps = 0;
  PreflightEnv env{.fsroot = tree.root(), .sleep = [&](absl::Duration) { ++sleeps; }};
  const PreflightOutcome o = RunPreflight(Gates("min_battery_percent: 20"), env, nullptr);  // defaults: 3 checks, 30 s
  EXPECT_FALSE(o.passed);
  EXPECT_FALSE(o.cancelled);
  EXPECT_EQ(o.checks, 3);
  EXPECT_EQ(sleeps, 2);
  EXPECT_EQ(o.deferred_reason, "deferred: battery: 12 % < 20 % and not charging (3 checks, 60 s of cool-down)");
  const absl::Status status = DeferredError(o.deferred_reason);
  EXPECT_TRUE(IsDeferred(status));
  EXPECT_EQ(status.message(), o.deferred_reason);
  EXPECT_FALSE(IsDeferred(absl::UnavailableError(o.deferred_reason)));
  EXPECT_FALSE(IsDeferred(absl::OkStatus()));
}

TEST(PreflightTest, CancellationEndsTheCoolDownWithoutDeferring) {
  PhoneTree tree;
  std::atomic<bool> cancelled{false};
  PreflightEnv env{.fsroot = tree.root(), .sleep = [&](absl::Duration) { cancelled = true; }};
  const PreflightOutcome o = RunPreflight(Gates("min_battery_percent: 20 max_checks: 10"), env, &cancelled);
  EXPECT_FALSE(o.passed);
  EXPECT_TRUE(o.cancelled);
  EXPECT_EQ(o.checks, 1);
  EXPECT_TRUE(o.deferred_reason.empty());
}

// Busy-loops in a child process per online CPU until killed.
class CpuHogs {
 public:
  explicit CpuHogs(long n) {
    for (long i = 0; i < n; ++i) {
      const pid_t pid = fork();
      if (pid == 0) {
        for (volatile uint64_t x = 0;; x = x + 1) {
        }
      }
      if (pid > 0) pids_.push_back(pid);
    }
  }
  ~CpuHogs() {
    for (pid_t pid : pids_) kill(pid, SIGKILL);
    for (pid_t pid : pids_) waitpid(pid, nullptr, 0);
  }
  size_t size() const { return pids_.size(); }

 private:
  std::vector<pid_t> pids_;
};

TEST(PreflightTest, ARealCpuHogFailsTheOtherCpuGate) {
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  ASSERT_GT(cpus, 0);
  CpuHogs hogs(cpus);
  ASSERT_EQ(hogs.size(), static_cast<size_t>(cpus));
  const v1::EnvSnapshot snap =
      CheckPreconditions(Gates("max_other_cpu_percent: 10 cpu_sample_seconds: 1"), {.fsroot = ""});
  ASSERT_TRUE(snap.other_cpu_measured()) << absl::StrJoin(snap.notes(), "\n");
  // One hog per CPU keeps the machine busy whatever else runs; the hogs are other
  // processes (not children this process has reaped), so they all count.
  EXPECT_GT(snap.other_cpu_percent(), 50) << snap.other_cpu_percent();
  ASSERT_EQ(snap.gate_failures_size(), 1);
  EXPECT_THAT(snap.gate_failures(0), HasSubstr("other CPU: "));
  EXPECT_THAT(snap.gate_failures(0), HasSubstr(" % > 10 % of all CPUs over 1 s"));
}

TEST(PreflightTest, AFixtureProcStatThatDoesNotAdvanceIsNotMeasured) {
  PhoneTree tree;
  tree.Write("proc/stat", "cpu  100 0 100 800 0 0 0 0 0 0\n");
  double percent = -1;
  EXPECT_FALSE(SampleOtherCpuPercent(tree.root(), absl::Milliseconds(10), &percent));
  const v1::EnvSnapshot snap =
      CheckPreconditions(Gates("max_other_cpu_percent: 10 cpu_sample_seconds: 0.1"), {.fsroot = tree.root()});
  EXPECT_FALSE(snap.other_cpu_measured());
  EXPECT_THAT(snap.gate_failures(), IsEmpty());
  EXPECT_THAT(absl::StrJoin(snap.notes(), "\n"), HasSubstr("other CPU: proc/stat unreadable or did not advance"));
}

v1::Plan PlanWith(const std::string& preconditions) {
  v1::Plan plan;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"pb(name: "gated"
           matrix {
             strategies { name: "direct" }
             workloads: [ "arithmetic" ]
             batch { tasks: 10 }
           }
           measurement { warmup_seconds: 0 min_repetitions: 3 max_repetitions: 5 rounds: 1 processes: 1 })pb",
      &plan));
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(preconditions, plan.mutable_preconditions()));
  return plan;
}

TEST(PreconditionsValidationTest, NamesTheFieldAndItsRange) {
  struct Case {
    std::string text, message;
  };
  for (const Case& c : std::vector<Case>{
           {"min_battery_percent: 0",
            "plan.preconditions.min_battery_percent: 1 <= min_battery_percent <= 100 (%), got 0"},
           {"min_battery_percent: 101", "min_battery_percent <= 100 (%), got 101"},
           {"max_temperature_c: 151",
            "plan.preconditions.max_temperature_c: -40 <= max_temperature_c <= 150 (°C), got 151"},
           {"max_temperature_c: nan", "max_temperature_c <= 150 (°C), got nan"},
           {"max_other_cpu_percent: -1", "plan.preconditions.max_other_cpu_percent: 0 <= max_other_cpu_percent <= 100"},
           {"max_load_average: 5000", "plan.preconditions.max_load_average: 0 <= max_load_average <= 4096, got 5000"},
           {"required_governor: 'Perf ormance'", "plan.preconditions.required_governor: [a-z0-9_]{1,32}"},
           {"required_governor: ''", "plan.preconditions.required_governor: [a-z0-9_]{1,32}"},
           {"min_free_memory_mib: 0", "plan.preconditions.min_free_memory_mib: 1 <= min_free_memory_mib"},
           {"cooldown_seconds: 3601", "plan.preconditions.cooldown_seconds: 0 <= cooldown_seconds <= 3600 (seconds)"},
           {"max_checks: 0", "plan.preconditions.max_checks: 1 <= max_checks <= 100, got 0"},
           {"cpu_sample_seconds: 0.01", "plan.preconditions.cpu_sample_seconds: 0.1 <= cpu_sample_seconds <= 60"},
       }) {
    const absl::Status status = ValidatePlan(PlanWith(c.text));
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << c.text;
    EXPECT_THAT(std::string(status.message()), HasSubstr(c.message)) << c.text;
  }
  EXPECT_TRUE(ValidatePlan(PlanWith("min_battery_percent: 20 max_temperature_c: 45 max_other_cpu_percent: 0 "
                                    "max_load_average: 0 required_governor: 'performance' min_free_memory_mib: 512 "
                                    "cooldown_seconds: 0 max_checks: 1 cpu_sample_seconds: 2"))
                  .ok());
  // The coordinator's flag is checked by the same rules under its own name.
  EXPECT_EQ(ValidatePreconditions(Gates("max_checks: 0"), "default_preconditions").message(),
            "default_preconditions.max_checks: 1 <= max_checks <= 100, got 0");
}

TEST(PreflightRunnerTest, AFailingGateDefersTheRunInsteadOfMeasuring) {
  PhoneTree tree;
  RunOptions options;
  options.preflight = {.fsroot = tree.root(), .sleep = [](absl::Duration) {}};
  std::vector<v1::CaseResult> results;
  absl::StatusOr<RunSummary> summary = RunPlan(
      PlanWith("min_battery_percent: 20 max_checks: 2"), options,
      [&](const v1::CaseResult& r) { results.push_back(r); }, nullptr);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->deferred, "deferred: battery: 12 % < 20 % and not charging (2 checks, 30 s of cool-down)");
  EXPECT_EQ(summary->deferred_conditions.battery_level_percent(), 12);
  EXPECT_EQ(summary->cases, 0);
  EXPECT_EQ(summary->failed, 0);  // never a benchmark failure
  EXPECT_THAT(results, IsEmpty());
}

TEST(PreflightRunnerTest, APassingGateStoresTheConditionsWithTheResult) {
  PhoneTree tree;
  tree.Write("sys/class/power_supply/battery/status", "Charging\n");
  RunOptions options;
  options.preflight = {.fsroot = tree.root(), .sleep = [](absl::Duration) {}};
  std::vector<v1::CaseResult> results;
  absl::StatusOr<RunSummary> summary = RunPlan(
      PlanWith("min_battery_percent: 20"), options, [&](const v1::CaseResult& r) { results.push_back(r); }, nullptr);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_TRUE(summary->deferred.empty());
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].status(), v1::CASE_STATUS_OK) << results[0].message();
  // Start of the case: what the gate saw (the fixture's battery, charging).
  EXPECT_EQ(results[0].env_before().battery_level_percent(), 12);
  EXPECT_TRUE(results[0].env_before().battery_charging());
  EXPECT_EQ(results[0].env_before().governor(), "powersave");
  EXPECT_THAT(results[0].env_before().gate_failures(), IsEmpty());
  // End of the case: the live machine's snapshot, with the same condition fields.
  EXPECT_GT(results[0].env_after().unix_time_ns(), results[0].env_before().unix_time_ns());
}

// A temperature gate on a device without thermal zones (issue 32, item 11: the run was
// measured as if gated and nothing said the gate was never checked). The case runs
// (the gate cannot fail), and its start conditions say the gate was not checked.
TEST(PreflightRunnerTest, AGateWithoutAReadingRunsAndIsStoredAsNotChecked) {
  PhoneTree tree;
  tree.Remove("sys/class/thermal");
  tree.Remove("sys/class/power_supply");
  RunOptions options;
  options.preflight = {.fsroot = tree.root(), .sleep = [](absl::Duration) {}};
  std::vector<v1::CaseResult> results;
  absl::StatusOr<RunSummary> summary = RunPlan(
      PlanWith("max_temperature_c: 45"), options, [&](const v1::CaseResult& r) { results.push_back(r); }, nullptr);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_TRUE(summary->deferred.empty());
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].status(), v1::CASE_STATUS_OK) << results[0].message();
  EXPECT_THAT(results[0].env_before().gate_failures(), IsEmpty());
  EXPECT_THAT(results[0].env_before().gates_not_checked(),
              ElementsAre("temperature: no thermal zone or battery gave a plausible reading, max 45 °C not checked"));
  EXPECT_THAT(FormatConditions(results[0].env_before()), HasSubstr("gates not checked: temperature"));
  EXPECT_THAT(GatesNotCheckedLines({&results[0].env_before()}),
              ElementsAre("temperature: no thermal zone or battery gave a plausible reading, max 45 °C not checked "
                          "(1 of 1)"));
}

}  // namespace
}  // namespace fleetmark::engine
