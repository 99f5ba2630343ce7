// RunPlan with measurement.energy (engine/runner/case_energy_probe.h): a fake executor
// (no child process) busy at 12 W on a clock-driven fake RAPL counter idling at 2 W
// (RunOptions::energy_files) gives each process's energy per repetition, gross and net
// of its idle baseline; a host without a readable source, or under emulation, says why,
// never 0; a plan without the setting has no energy.
#include <chrono>
#include <cstdint>
#include <vector>

#include "absl/time/clock.h"
#include "engine/energy/energy_sampler.h"
#include "engine/runner/case_energy_probe.h"
#include "engine/runner/runner.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/engine/energy/test_files.h"
#include "tests/engine/runner/plan_text.h"

namespace fleetmark::engine {
namespace {

using energy::test_support::FakeFiles;
using energy::test_support::PoweredRaplFiles;
using ::testing::HasSubstr;

constexpr char kEnergyPlan[] = R"pb(
  name: "energy"
  matrix {
    strategies { name: "direct" }
    workloads: [ "arithmetic" ]
    batch { tasks: 4 }
  }
  measurement { warmup_seconds: 0 max_seconds_per_case: 0.3 shuffle_seed: 3 energy: true }
)pb";

int64_t MonoNanos(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

// One process: 12 W from 20 ms before its timed span (100 ms, 10 repetitions) to 20 ms
// after it, as a child's warm-up and exit would; the fake idles at 2 W otherwise.
runner::SliceResponse BusyProcess(PoweredRaplFiles& files) {
  files.SetWatts(12);
  absl::SleepFor(absl::Milliseconds(20));
  const auto start = std::chrono::steady_clock::now();
  absl::SleepFor(absl::Milliseconds(100));
  const auto end = std::chrono::steady_clock::now();
  absl::SleepFor(absl::Milliseconds(20));
  files.SetWatts(2);
  runner::SliceResponse response;
  response.set_status(v1::CASE_STATUS_OK);
  for (int i = 0; i < 10; ++i) response.add_samples_ns(10'000'000);
  response.set_measured_seconds(std::chrono::duration<double>(end - start).count());
  response.set_timed_start_mono_ns(MonoNanos(start));
  response.set_timed_end_mono_ns(MonoNanos(end));
  response.set_stop_reason(v1::STOP_REASON_MAX_TIME);
  return response;
}

std::vector<v1::CaseResult> RunEnergyPlan(const v1::Plan& plan, RunOptions options) {
  std::vector<v1::CaseResult> results;
  absl::StatusOr<RunSummary> summary = RunPlan(
      plan, options, [&](const v1::CaseResult& r) { results.push_back(r); }, nullptr);
  EXPECT_TRUE(summary.ok()) << summary.status();
  return results;
}

TEST(RunnerEnergyTest, EachProcessIsMeasuredAgainstAnIdleBaselineBeforeIt) {
  PoweredRaplFiles files(/*watts=*/2, /*range_uj=*/uint64_t{1} << 40);
  RunOptions options;
  options.energy_files = &files;
  options.batch_slice_executor = [&](const runner::SliceRequest&, absl::Duration) { return BusyProcess(files); };
  const std::vector<v1::CaseResult> results = RunEnergyPlan(PlanFrom(kEnergyPlan), options);
  ASSERT_EQ(results.size(), 1u);
  const v1::CaseEnergy& e = results[0].energy();
  ASSERT_TRUE(results[0].has_energy());
  EXPECT_EQ(e.unavailable(), "");
  ASSERT_FALSE(e.unresolved()) << e.unresolved_reason();
  EXPECT_EQ(e.source(), "rapl:package-0");
  EXPECT_EQ(e.processes(), 3u);
  EXPECT_EQ(e.process_joules_per_repetition_size(), 3);
  // 12 W over ~10 ms per repetition: 0.12 J gross, 0.10 J net of the 2 W idle. The fake
  // is exact; what moves is the spans' length as slept (and the sampler's timing).
  const double per_repetition_s = e.seconds() / 30;
  EXPECT_NEAR(e.mean_power_watts(), 12, 0.2);
  EXPECT_NEAR(e.baseline_power_watts(), 2, 0.2);
  EXPECT_NEAR(e.joules_per_repetition(), 12 * per_repetition_s, 0.003);
  EXPECT_NEAR(e.net_joules_per_repetition(), 10 * per_repetition_s, 0.003);
  EXPECT_NEAR(e.net_joules_per_task(), e.net_joules_per_repetition() / 4, 1e-12);
  EXPECT_LT(e.joules_per_repetition_low(), e.joules_per_repetition());
  EXPECT_GT(e.joules_per_repetition_high(), e.joules_per_repetition());
  // The first baseline is the process's quota (0.1 s), the later ones the previous span.
  EXPECT_NEAR(e.baseline_seconds(), 0.3, 0.06);
}

TEST(RunnerEnergyTest, WithoutAReadableSourceEveryCaseSaysWhyNeverZero) {
  FakeFiles none;  // no RAPL, hwmon or battery
  RunOptions options;
  options.energy_files = &none;
  options.batch_slice_executor = [&](const runner::SliceRequest&, absl::Duration) {
    runner::SliceResponse response;
    response.set_status(v1::CASE_STATUS_OK);
    for (int i = 0; i < 10; ++i) response.add_samples_ns(1000);
    response.set_measured_seconds(0.001);
    return response;
  };
  const std::vector<v1::CaseResult> results = RunEnergyPlan(PlanFrom(kEnergyPlan), options);
  ASSERT_EQ(results.size(), 1u);
  ASSERT_TRUE(results[0].has_energy());
  EXPECT_THAT(results[0].energy().unavailable(), HasSubstr("no RAPL zone in /sys/class/powercap"));
  EXPECT_EQ(results[0].energy().joules_per_repetition(), 0);
  EXPECT_EQ(results[0].energy().source(), "");

  // The same plan without measurement.energy: no energy at all.
  v1::Plan plain = PlanFrom(kEnergyPlan);
  plain.mutable_measurement()->set_energy(false);
  EXPECT_FALSE(RunEnergyPlan(plain, options)[0].has_energy());
}

TEST(RunnerEnergyTest, UnderEmulationThereIsNeverEnergyEvenWithASource) {
  PoweredRaplFiles files(5, uint64_t{1} << 40);
  v1::HostInfo emulated;
  emulated.set_emulated(true);
  emulated.set_energy_unavailable("this binary runs under user-mode emulation: its numbers measure the emulator");
  const CaseEnergyProbe probe(emulated, &files);
  EXPECT_THAT(probe.unavailable(), HasSubstr("user-mode emulation"));
  const CaseEnergyProbe native(v1::HostInfo(), &files);
  EXPECT_EQ(native.unavailable(), "");
  EXPECT_EQ(native.choice().id, "rapl:package-0");
}

TEST(RunnerEnergyTest, APlanAskingForEnergyNeedsABatchCase) {
  const absl::StatusOr<RunSummary> refused = RunPlan(PlanFrom(R"pb(
                                                       name: "memory only"
                                                       matrix {
                                                         strategies { name: "thread_per_task" }
                                                         workloads: [ "storage" ]
                                                         memory {}
                                                       }
                                                       measurement { energy: true }
                                                     )pb"),
                                                     RunOptions{}, nullptr, nullptr);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("measurement.energy: true needs a batch matrix"));
}

}  // namespace
}  // namespace fleetmark::engine
