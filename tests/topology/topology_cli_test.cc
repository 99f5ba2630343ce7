// `fleetmark topology` as users run it: the real binary on the recorded trees and on
// this machine, its JSON read back as the HostInfo agents send.
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "engine/report/json.h"
#include "fleetmark/v1/host.pb.h"
#include "fleetmark/v1/result.pb.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "tests/topology/fixtures.h"

namespace fleetmark::engine {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

struct Output {
  int exit_code = -1;
  std::string text;
};

// Runs `[launcher] fleetmark <args>` (launcher: e.g. "taskset -c 0", shell words).
Output RunFleetmark(const std::string& args, const std::string& launcher = "") {
  const std::string command =
      launcher + (launcher.empty() ? "" : " ") + std::string(FLEETMARK_CLI_BINARY) + " " + args + " 2>&1";
  Output out;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), &pclose);
  if (!pipe) return out;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe.get())) > 0) out.text.append(buffer, n);
  const int status = pclose(pipe.release());
  out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

v1::HostInfo ParseHost(const std::string& json) {
  v1::HostInfo host;
  const auto status = google::protobuf::util::JsonStringToMessage(json, &host);
  EXPECT_TRUE(status.ok()) << status.ToString() << "\n" << json;
  return host;
}

TEST(TopologyCliTest, HybridFixtureJson) {
  const std::string root = testing::FixtureRoot("20em64t-hybrid-1p6c2t+2ca4co1t");
  Output out = RunFleetmark("topology --format json --fsroot '" + root + "'");
  ASSERT_EQ(out.exit_code, 0) << out.text;
  v1::HostInfo host = ParseHost(out.text);
  EXPECT_TRUE(host.smt());
  ASSERT_EQ(host.core_classes_size(), 2);
  EXPECT_EQ(host.core_classes(0).name(), "performance");
  EXPECT_EQ(host.core_classes(0).cores(), 6u);
  EXPECT_EQ(host.core_classes(0).threads_per_core(), 2u);
  EXPECT_EQ(host.core_classes(1).name(), "efficiency");
  EXPECT_EQ(host.core_classes(1).cores(), 8u);
  EXPECT_EQ(host.core_classes(1).threads_per_core(), 1u);
}

TEST(TopologyCliTest, FixturesAsText) {
  Output four = RunFleetmark("topology --fsroot '" + testing::FixtureRoot("16em64t-4s2c2t") + "'");
  ASSERT_EQ(four.exit_code, 0) << four.text;
  EXPECT_THAT(four.text, HasSubstr("16 logical, 8 physical cores, 4 packages"));
  EXPECT_THAT(four.text, HasSubstr("yes (cpu 0 siblings: 0,8)"));
  Output arm = RunFleetmark("topology --format text --fsroot '" + testing::FixtureRoot("2arm-2c") + "'");
  ASSERT_EQ(arm.exit_code, 0) << arm.text;
  EXPECT_THAT(arm.text, HasSubstr("Cortex-A9"));
  EXPECT_THAT(arm.text, HasSubstr("2 logical, 2 physical cores"));
}

TEST(TopologyCliTest, LiveMachineAndBadInput) {
  Output live = RunFleetmark("topology --format json");
  ASSERT_EQ(live.exit_code, 0) << live.text;
  v1::HostInfo host = ParseHost(live.text);
  EXPECT_GE(host.logical_cpus(), 1u);
  EXPECT_EQ(host.topology_source(), "hwloc");
  ASSERT_GE(host.core_classes_size(), 1);
  EXPECT_EQ(host.core_classes(0).name(), "performance");

  EXPECT_EQ(RunFleetmark("topology --format csv").exit_code, 2);
  Output missing = RunFleetmark("topology --fsroot /nonexistent/fleetmark-root");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.text, HasSubstr("/nonexistent/fleetmark-root"));
}

// A plan whose pools take their default size ("logical CPUs").
constexpr char kDefaultPoolsPlan[] = R"pb(name: "limits"
                                          matrix {
                                            strategies { name: "fixed_pool" }
                                            strategies { name: "work_stealing" }
                                            workloads: [ "arithmetic" ]
                                            batch { tasks: 20 }
                                          }
                                          measurement { warmup_seconds: 0.01 max_repetitions: 5 rounds: 1 }
)pb";

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

class LimitsCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::ScratchRoot(::testing::UnitTest::GetInstance()->current_test_info()->name());
    plan_ = dir_ + "/limits.txtpb";
    std::ofstream(plan_) << kDefaultPoolsPlan;
  }

  // `fleetmark run` under `launcher` as JSON, CSV and gbench-json: every one must say
  // `logical` CPUs, `allowed` of the machine's; the pools defaulted to `logical`.
  void ExpectRunUnder(const std::string& launcher, uint32_t logical, uint32_t allowed, double quota) {
    const std::string json = dir_ + "/run.json";
    Output run = RunFleetmark("run " + plan_ + " --format json --out " + json, launcher);
    ASSERT_EQ(run.exit_code, 0) << run.text;
    // The results document (docs/results-schema.md) of the one local device.
    const absl::StatusOr<v1::RunReport> parsed = report::ParseJson(Slurp(json));
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    const v1::RunReport& report = *parsed;
    const long machine = sysconf(_SC_NPROCESSORS_ONLN);
    EXPECT_EQ(report.host().logical_cpus(), logical);
    EXPECT_EQ(report.host().limits().allowed_cpus(), allowed);
    EXPECT_EQ(report.host().limits().machine_cpus(), static_cast<uint32_t>(machine));
    EXPECT_DOUBLE_EQ(report.host().limits().cpu_quota(), quota);
    ASSERT_EQ(report.results_size(), 2);
    for (const v1::CaseResult& r : report.results()) {
      EXPECT_EQ(r.status(), v1::CASE_STATUS_OK) << r.message();
      EXPECT_EQ(r.threads_used(), logical) << r.spec().case_id();
      EXPECT_EQ(r.limits().effective_cpus(), logical);
      EXPECT_EQ(r.limits().allowed_cpus(), allowed);
      EXPECT_DOUBLE_EQ(r.limits().cpu_quota(), quota);
    }
    Output table = RunFleetmark("run " + plan_, launcher);
    ASSERT_EQ(table.exit_code, 0) << table.text;
    EXPECT_THAT(table.text, HasSubstr(std::to_string(logical) + " CPUs (allowed " + std::to_string(allowed) + " of " +
                                      std::to_string(machine) + " machine CPUs"));
    Output csv = RunFleetmark("run " + plan_ + " --format csv", launcher);
    ASSERT_EQ(csv.exit_code, 0) << csv.text;
    EXPECT_THAT(csv.text, HasSubstr("logical_cpus,allowed_cpus,machine_cpus,cpu_quota"));
    const std::string gbench = dir_ + "/gbench.json";
    Output g = RunFleetmark("run " + plan_ + " --format gbench-json --out " + gbench, launcher);
    ASSERT_EQ(g.exit_code, 0) << g.text;
    const std::string doc = Slurp(gbench);
    EXPECT_THAT(doc, HasSubstr("\"num_cpus\": " + std::to_string(logical) + ","));
    EXPECT_THAT(doc, HasSubstr("\"fleetmark_allowed_cpus\": " + std::to_string(allowed) + ","));
    EXPECT_THAT(doc, HasSubstr("\"fleetmark_machine_cpus\": " + std::to_string(machine)));
  }

  std::string dir_;
  std::string plan_;
};

// Under `taskset -c N` (issue 13: topology, JSON, header and num_cpus said 2).
TEST_F(LimitsCliTest, TasksetOneCpu) {
  cpu_set_t set;
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  int cpu = 0;
  while (!CPU_ISSET(cpu, &set)) ++cpu;
  const std::string launcher = "taskset -c " + std::to_string(cpu);
  Output topology = RunFleetmark("topology --format json", launcher);
  ASSERT_EQ(topology.exit_code, 0) << topology.text;
  v1::HostInfo host = ParseHost(topology.text);
  EXPECT_EQ(host.logical_cpus(), 1u);
  EXPECT_EQ(host.limits().allowed_cpus(), 1u);
  EXPECT_THAT(host.limits().allowed_cpu_ids(), ElementsAre(static_cast<uint32_t>(cpu)));
  EXPECT_EQ(host.limits().machine_cpus(), static_cast<uint32_t>(sysconf(_SC_NPROCESSORS_ONLN)));
  ExpectRunUnder(launcher, 1, 1, 0);
}

// `taskset -c HI fleetmark run` of a plan placing on class:performance, one_per_core,
// any and cpus:LO, with a CPU-sized pool and a 4-thread pool (issue 32, item 8:
// class:performance ran on cpus_used [0, 1] and cpus:0 on [0], both ok, under
// `taskset -c 1`). Every result runs inside the allowed CPU or is unsupported saying
// why; cpus_used never names another CPU; the CPU-sized pool has 1 thread; the
// fingerprints name the allowed CPU.
TEST_F(LimitsCliTest, PlacementsStayInsideTheTasksetCpu) {
  cpu_set_t set;
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  ASSERT_GE(cpus.size(), 2u) << "needs two CPUs to leave one out";
  const int lo = cpus.front();
  const int hi = cpus.back();
  const uint32_t allowed = static_cast<uint32_t>(hi);
  const std::string plan = dir_ + "/placement.txtpb";
  std::ofstream(plan) << "name: \"placement-taskset\"\n"
                         "matrix {\n"
                         "  strategies { name: \"fixed_pool\" }\n"
                         "  strategies { name: \"fixed_pool\" threads: 4 }\n"
                         "  workloads: [ \"arithmetic\" ]\n"
                         "  placements: [ \"class:performance\", \"one_per_core\", \"any\", \"cpus:"
                      << lo
                      << "\" ]\n"
                         "  batch { tasks: 400 }\n"
                         "}\n"
                         "measurement { warmup_seconds: 0.01 max_repetitions: 20 rounds: 1 }\n";
  const std::string json = dir_ + "/placement.json";
  Output run = RunFleetmark("run " + plan + " --format json --out " + json, "taskset -c " + std::to_string(hi));
  // cpus:LO is unsupported: exit 0 still (an unsupported case is not a failure).
  ASSERT_EQ(run.exit_code, 0) << run.text;
  const absl::StatusOr<v1::RunReport> parsed = report::ParseJson(Slurp(json));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_THAT(parsed->host().limits().allowed_cpu_ids(), ElementsAre(allowed));
  EXPECT_EQ(parsed->host().logical_cpus(), 1u);
  EXPECT_EQ(parsed->fingerprint().allowed_cpu_list(), std::to_string(hi));
  ASSERT_EQ(parsed->results_size(), 8);
  int ran = 0;
  for (const v1::CaseResult& r : parsed->results()) {
    const std::string& placement = r.spec().placement();
    SCOPED_TRACE(r.spec().case_id() + ": " + r.message());
    EXPECT_EQ(r.fingerprint().allowed_cpu_list(), std::to_string(hi));
    EXPECT_THAT(r.limits().allowed_cpu_ids(), ElementsAre(allowed));
    for (uint32_t used : r.cpus_used()) EXPECT_EQ(used, allowed);
    if (placement == "cpus:" + std::to_string(lo)) {
      EXPECT_EQ(r.status(), v1::CASE_STATUS_UNSUPPORTED);
      EXPECT_THAT(r.message(), HasSubstr("CPU " + std::to_string(lo) + " is not among the CPUs this process may use"));
      EXPECT_THAT(r.cpus_used(), ::testing::IsEmpty());
      continue;
    }
    if (placement == "class:performance" && r.status() != v1::CASE_STATUS_OK) {
      // This machine's performance class does not hold `hi` (a hybrid machine with hi
      // an E-core): unsupported, naming the class.
      EXPECT_EQ(r.status(), v1::CASE_STATUS_UNSUPPORTED);
      EXPECT_THAT(r.message(), HasSubstr("none of the host's performance CPUs"));
      continue;
    }
    ASSERT_EQ(r.status(), v1::CASE_STATUS_OK);
    ++ran;
    // A pinned placement reports where it ran: only the allowed CPU.
    if (placement != "any") EXPECT_THAT(r.cpus_used(), ElementsAre(allowed));
    // The pool sized by the CPUs gets the one allowed CPU's thread; the explicit 4 stay 4.
    EXPECT_EQ(r.threads_used(), r.spec().strategy().threads() == 0 ? 1u : 4u);
  }
  EXPECT_GE(ran, 4);  // any and one_per_core, each with both pools
}

// In a child cgroup with cpu.max "50000 100000" (v2) or cfs_quota_us 50000 /
// cfs_period_us 100000 (v1): half a CPU, so every default pool has 1 thread. Needs a
// writable cgroup CPU controller (root); skipped, saying why, without one.
TEST_F(LimitsCliTest, CgroupHalfCpuQuota) {
  const std::string name = "fleetmark-limits-test-" + std::to_string(getpid());
  std::string dir;
  std::string why;
  auto writes = [](const std::string& path, const std::string& value) {
    std::ofstream out(path);
    out << value << std::flush;
    return static_cast<bool>(out);
  };
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists("/sys/fs/cgroup/cgroup.controllers")) {
    const std::string controllers = Slurp("/sys/fs/cgroup/cgroup.controllers");
    if (controllers.find("cpu") == std::string::npos) {
      why = "cgroup v2 without the cpu controller";
    } else {
      writes("/sys/fs/cgroup/cgroup.subtree_control", "+cpu");
      dir = "/sys/fs/cgroup/" + name;
      if (!fs::create_directory(dir, ec) || !writes(dir + "/cpu.max", "50000 100000")) {
        why = "cannot create " + dir + " with cpu.max: " + ec.message();
      }
    }
  } else {
    for (const char* mount : {"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"}) {
      if (!fs::exists(std::string(mount) + "/cpu.cfs_quota_us")) continue;
      dir = std::string(mount) + "/" + name;
      if (!fs::create_directory(dir, ec) || !writes(dir + "/cpu.cfs_period_us", "100000") ||
          !writes(dir + "/cpu.cfs_quota_us", "50000")) {
        why = "cannot create " + dir + " with cfs_quota_us: " + ec.message();
      }
      break;
    }
    if (dir.empty()) why = "no cgroup v2 and no cgroup v1 cpu controller mounted";
  }
  if (!why.empty()) {
    if (!dir.empty()) fs::remove(dir, ec);
    std::printf("[  SKIPPED ] cgroup half: %s\n", why.c_str());
    GTEST_SKIP() << why;
  }
  // Each fleetmark process moves itself into the cgroup, then execs.
  const std::string launcher = "sh -c 'echo $$ > " + dir + "/cgroup.procs && exec \"$0\" \"$@\"'";
  Output topology = RunFleetmark("topology --format json", launcher);
  EXPECT_EQ(topology.exit_code, 0) << topology.text;
  v1::HostInfo host = ParseHost(topology.text);
  EXPECT_EQ(host.logical_cpus(), 1u);
  EXPECT_DOUBLE_EQ(host.limits().cpu_quota(), 0.5);
  EXPECT_EQ(host.limits().cpu_quota_us(), 50000);
  EXPECT_EQ(host.limits().cpu_period_us(), 100000);
  EXPECT_THAT(host.limits().cpu_quota_source(), HasSubstr(name));
  const uint32_t allowed = host.limits().allowed_cpus();
  ExpectRunUnder(launcher, 1, allowed, 0.5);
  // Every process has exited: the cgroup is empty and can go.
  EXPECT_TRUE(fs::remove(dir, ec)) << dir << ": " << ec.message();
}

}  // namespace
}  // namespace fleetmark::engine
