// The device artifacts of deploy/dist.sh (dist/fleetmark-VERSION-linux-ARCH.tar.gz),
// one test suite per foreign architecture (DEVICE_ARCH), run under qemu-user:
//  * the binaries are static executables for the right machine (no interpreter),
//    at most 25 MiB stripped;
//  * in an empty root (tests/device/empty_root.sh: a new mount namespace, only the
//    artifact, the qemu binary and bind-mounted /proc, /sys, /dev/null, /dev/urandom)
//    the agent enrolls with the x86_64 coordinator on loopback by IP, runs a reduced S1
//    plan (work_stealing, fiber, coroutine, event_loop, and the parallel constructs
//    openmp_for and std_par), survives a kill -9 mid-job and a restart on its spool, and
//    every case lands once in PostgreSQL with its architecture and emulated = true;
//  * `fleetmark run` of the same plan works in that root;
//  * the parallel constructs run there: openmp_for on the static libgomp.a linked into
//    the artifact, std_par on libstdc++'s parallel algorithms over the static oneTBB,
//    each OK with its threads_used.
// The artifacts are built by deploy/test.sh (deploy/dist.sh ARCH) before ctest.
#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "engine/report/json.h"
#include "tests/integration/fleet_harness.h"

namespace fleetmark::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::string kArch = DEVICE_ARCH;                 // arm64 | armhf
const std::string kUnameMachine = DEVICE_UNAME;        // aarch64 | armv7l
const std::string kFileMachine = DEVICE_FILE_MACHINE;  // `file` wording
const std::string kQemu = DEVICE_QEMU;                 // host path of qemu-*-static
constexpr int64_t kMaxBinaryBytes = 25 << 20;

std::string Tarball() {
  return absl::StrCat(FLEETMARK_SOURCE_DIR, "/dist/fleetmark-", FLEETMARK_VERSION, "-linux-", kArch, ".tar.gz");
}

std::string Tail(const std::string& text) { return text.size() > 4000 ? text.substr(text.size() - 4000) : text; }

// The reduced S1 plan of the issue: the four strategies a device build must carry, plus
// the parallel constructs of issue 35 (OpenMP's parallel for, the standard parallel
// algorithms) on one workload only (each case costs seconds under qemu). Every strategy
// that uses `threads` is given 2.
v1::Plan DevicePlan() {
  return WithReducedS1Block(
      ReducedS1Plan({"work_stealing", "fiber", "coroutine", "event_loop"}, {"arithmetic", "mixed"}, 16, 3),
      {"openmp_for", "std_par"}, {"arithmetic"});
}

// The artifact links libgomp statically (deploy/dist.sh's -static build) and says so.
auto OpenMpNote() { return ::testing::AllOf(HasSubstr("openmp_*: libgomp, OpenMP"), HasSubstr("(static libgomp.a")); }

// A parallel construct's result tells how many threads ran the batch: openmp_for's
// team is exactly the 2 asked for (omp_get_num_threads, dynamic adjustment off);
// std_par's oneTBB arena has 2 slots, which workers fill by arrival (at least 1).
void ExpectThreadsUsed(const std::string& strategy, int64_t threads_used, const std::string& where) {
  if (strategy == "openmp_for") {
    EXPECT_EQ(threads_used, 2) << where;
  } else if (strategy == "std_par") {
    EXPECT_GE(threads_used, 1) << where;
    EXPECT_LE(threads_used, 2) << where;
  }
}

class DeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(std::filesystem::exists(Tarball()))
        << Tarball() << " missing: run deploy/dist.sh " << kArch << " (deploy/test.sh does)";
    dir_ = MakeTempDir("fleetmark-device");
    // The agent's directory is the empty root (AgentConfig.chroot_into_dir).
    root_ = dir_ + "/agent-dev-" + kArch;
    std::filesystem::create_directories(root_);
    auto unpacked = RunCommand({"/bin/tar", "-xzf", Tarball(), "-C", root_, "--strip-components=1", "--wildcards",
                                "*/fleetmark-agent", "*/fleetmark"});
    ASSERT_TRUE(unpacked.ok()) << unpacked.status();
    std::filesystem::copy_file(kQemu, root_ + "/qemu", std::filesystem::copy_options::overwrite_existing);
  }

  void TearDown() override {
    if (HasFailure()) {
      if (coordinator_) std::cerr << "---- coordinator log\n" << Tail(coordinator_->Log()) << "\n";
      if (agent_) std::cerr << "---- agent log\n" << Tail(agent_->Log()) << "\n";
    }
    agent_.reset();
    coordinator_.reset();
    database_.reset();
    RemoveTree(dir_);
  }

  int64_t Sql(const std::string& query) {
    absl::StatusOr<int64_t> value = PsqlInt(database_->uri(), query);
    EXPECT_TRUE(value.ok()) << value.status();
    return value.ok() ? *value : -1;
  }

  std::string dir_, root_;
  std::unique_ptr<TestDatabase> database_;
  std::unique_ptr<CoordinatorProcess> coordinator_;
  std::unique_ptr<AgentProcess> agent_;
};

TEST_F(DeviceTest, BinariesAreStaticExecutablesOfTheRightMachine) {
  for (const std::string name : {"fleetmark-agent", "fleetmark"}) {
    const std::string path = root_ + "/" + name;
    auto file = RunCommand({"/usr/bin/file", "-b", path});
    ASSERT_TRUE(file.ok()) << file.status();
    EXPECT_THAT(*file, HasSubstr(kFileMachine)) << name;
    EXPECT_THAT(*file, HasSubstr("statically linked")) << name;
    auto headers = RunCommand({"/usr/bin/readelf", "-lW", path});
    ASSERT_TRUE(headers.ok()) << headers.status();
    EXPECT_THAT(*headers, Not(HasSubstr("INTERP"))) << name << " asks for a dynamic loader";
    auto dynamic = RunCommand({"/usr/bin/readelf", "-dW", path});
    ASSERT_TRUE(dynamic.ok()) << dynamic.status();
    EXPECT_THAT(*dynamic, Not(HasSubstr("NEEDED"))) << name << " needs shared libraries";
    const int64_t size = static_cast<int64_t>(std::filesystem::file_size(path));
    EXPECT_LE(size, kMaxBinaryBytes) << name;
    std::cout << "[ size ] " << kArch << " " << name << " " << size << " bytes\n";
  }
}

TEST_F(DeviceTest, LocalRunInTheEmptyRoot) {
  std::string text;
  ASSERT_TRUE(google::protobuf::TextFormat::PrintToString(DevicePlan(), &text));
  { std::ofstream(root_ + "/plan.txtpb") << text; }
  // No binfmt_misc handler here: the case children (fiber) run through qemu too.
  auto out = RunCommand({"/usr/bin/env", "FLEETMARK_CHILD_EMULATOR=/qemu", FLEETMARK_EMPTY_ROOT_SH, root_, "/qemu",
                         "/fleetmark", "run", "/plan.txtpb", "--format=json"},
                        absl::Minutes(15));
  ASSERT_TRUE(out.ok()) << out.status();
  absl::StatusOr<v1::RunReport> report = report::ParseJson(*out);
  ASSERT_TRUE(report.ok()) << report.status() << "\n" << Tail(*out);
  // Every case once, each OK, each marked as the emulator's number (the local run's
  // HostInfo says emulated).
  ASSERT_EQ(report->results_size(), CaseCount(DevicePlan())) << Tail(*out);
  std::set<std::string> strategies, case_ids;
  for (const v1::CaseResult& r : report->results()) {
    EXPECT_EQ(r.status(), v1::CASE_STATUS_OK) << r.spec().case_id() << ": " << r.message();
    EXPECT_TRUE(r.emulated()) << r.spec().case_id();
    // The counters are measured under qemu too (the emulator process's): qemu fakes
    // /proc/self/stat with num_threads 0, which made every case's counters all zero
    // (repetitions 0 beside its samples) before the /proc/self/status fallback.
    EXPECT_EQ(r.counters().repetitions(), static_cast<uint64_t>(r.samples_ns_size())) << r.spec().case_id();
    EXPECT_GT(r.counters().peak_threads(), 0u) << r.spec().case_id();
    EXPECT_GT(r.counters().peak_rss_bytes(), 0u) << r.spec().case_id();
    ExpectThreadsUsed(r.spec().strategy().name(), r.threads_used(), r.spec().case_id());
    strategies.insert(r.spec().strategy().name());
    case_ids.insert(r.spec().case_id());
  }
  EXPECT_EQ(static_cast<int>(case_ids.size()), report->results_size());
  EXPECT_THAT(strategies, ::testing::UnorderedElementsAre("work_stealing", "fiber", "coroutine", "event_loop",
                                                          "openmp_for", "std_par"));
  EXPECT_EQ(report->host().arch(), kUnameMachine);
  EXPECT_TRUE(report->host().emulated()) << report->host().ShortDebugString();
  // Which work-stealing implementation ran: the static oneTBB of the device build.
  EXPECT_THAT(report->host().notes(),
              ::testing::Contains(::testing::AllOf(HasSubstr("work_stealing: oneTBB 20"), HasSubstr("(static, "))))
      << report->host().ShortDebugString();
  EXPECT_THAT(report->host().notes(), ::testing::Contains(OpenMpNote())) << report->host().ShortDebugString();
}

TEST_F(DeviceTest, EmptyRootAgentRunsThePlanOnceAcrossAKill) {
  if (TestPgUri().empty()) {
    if (PgRequired()) FAIL() << "FLEETMARK_TEST_REQUIRE_PG is set but FLEETMARK_TEST_PG_URI is not";
    GTEST_SKIP() << "FLEETMARK_TEST_PG_URI not set";
  }
  auto database = TestDatabase::Create(TestPgUri());
  ASSERT_TRUE(database.ok()) << database.status();
  database_ = *std::move(database);
  CoordinatorConfig config;
  config.database_uri = database_->uri();
  config.job_lease = absl::Seconds(10);  // the killed attempt's job is requeued soon
  auto coordinator = CoordinatorProcess::Start(dir_, config);
  ASSERT_TRUE(coordinator.ok()) << coordinator.status();
  coordinator_ = *std::move(coordinator);
  ControlClient control(coordinator_->address(), config.admin_token);

  AgentConfig agent;
  agent.name = "dev-" + kArch;
  agent.labels = "device=" + kArch;
  agent.token = config.enrollment_token;
  agent.command = {FLEETMARK_EMPTY_ROOT_SH, "{dir}", "/qemu", "/fleetmark-agent"};
  agent.chroot_into_dir = true;
  // No binfmt_misc handler here: the agent's case children (fiber) run through qemu too.
  agent.extra_env = {"FLEETMARK_CHILD_EMULATOR=/qemu"};
  // By IP: the static binary has no NSS, and the root no /etc.
  auto started = AgentProcess::Start(dir_, absl::StrCat("127.0.0.1:", coordinator_->port()), agent);
  ASSERT_TRUE(started.ok()) << started.status();
  agent_ = *std::move(started);
  ASSERT_TRUE(control.WaitOnline(1, absl::Seconds(180)).ok());
  auto agents = control.ListAgents();
  ASSERT_TRUE(agents.ok()) << agents.status();
  ASSERT_EQ(agents->size(), 1u);
  EXPECT_EQ((*agents)[0].host().arch(), kUnameMachine);
  EXPECT_TRUE((*agents)[0].host().emulated()) << (*agents)[0].host().ShortDebugString();
  EXPECT_THAT((*agents)[0].host().notes(),
              ::testing::Contains(::testing::AllOf(HasSubstr("work_stealing: oneTBB 20"), HasSubstr("(static, "))))
      << (*agents)[0].host().ShortDebugString();
  EXPECT_THAT((*agents)[0].host().notes(), ::testing::Contains(OpenMpNote())) << (*agents)[0].host().ShortDebugString();

  const v1::Plan plan = DevicePlan();
  auto run = control.Submit(plan, "name=" + agent.name);
  ASSERT_TRUE(run.ok()) << run.status();
  const std::string where = absl::StrCat(" FROM case_results WHERE run_id = '", run->run_id(), "'");
  ASSERT_TRUE(WaitUntil([&] { return Sql("SELECT count(*)" + where) >= 1; }, absl::Seconds(600)));
  agent_->Kill9();
  auto at_kill = control.GetRun(run->run_id());
  ASSERT_TRUE(at_kill.ok()) << at_kill.status();
  ASSERT_NE(at_kill->status(), "done") << "the run ended before the kill; plan too short";
  ASSERT_TRUE(agent_->Restart().ok());

  auto ended = control.WaitRunEnded(run->run_id(), absl::Seconds(1200));
  ASSERT_TRUE(ended.ok()) << ended.status();
  EXPECT_EQ(ended->status(), "done") << ended->ShortDebugString();
  // Nothing lost: every case has a result. Nothing duplicated: each case once — the
  // restarted agent replays its spool in its hello (result ids make replays idempotent)
  // and the job's second attempt skips the cases already stored (stored_case_ids).
  const int64_t cases = CaseCount(plan);
  const int64_t rows = Sql("SELECT count(*)" + where);
  std::cout << "[ rows ] " << kArch << " " << rows << " results stored for " << cases << " cases\n";
  EXPECT_EQ(Sql("SELECT count(DISTINCT case_id)" + where), cases);
  EXPECT_EQ(rows, cases);
  // Every row measured by the emulated aarch64/armv7l agent, and marked so.
  EXPECT_EQ(Sql(absl::StrCat("SELECT count(*) FROM case_results r JOIN agents a USING (agent_id) "
                             "WHERE r.run_id = '",
                             run->run_id(), "' AND a.arch = '", kUnameMachine, "' AND a.emulated AND r.emulated")),
            rows);
  // The parallel constructs' results arrived OK with the threads that ran them.
  for (const std::string strategy : {"openmp_for", "std_par"}) {
    const std::string of = absl::StrCat(where, " AND strategy = '", strategy, "'");
    EXPECT_EQ(Sql("SELECT count(*)" + of + " AND status = 'ok'"), 1) << strategy;
    ExpectThreadsUsed(strategy, Sql("SELECT max(threads_used)" + of), strategy);
  }
}

}  // namespace
}  // namespace fleetmark::testing
