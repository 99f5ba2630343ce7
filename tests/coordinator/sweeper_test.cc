// The coordinator's sweeper (coordinator/service/sweeper.h) over the in-memory store on
// a fake clock: the database's health follows its liveness flushes (NOT_SERVING from a
// failed flush to the next that succeeds), and a requested sweep fires a due schedule.
// No PostgreSQL, no gRPC server; waits are on conditions with a generous hang guard.
#include "coordinator/service/sweeper.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "coordinator/scheduler/scheduler.h"
#include "coordinator/service/agent_registry.h"
#include "coordinator/service/change_monitor.h"
#include "coordinator/service/dispatcher.h"
#include "coordinator/service/executor.h"
#include "coordinator/store/memory_store.h"
#include "engine/common/clock.h"
#include "gtest/gtest.h"
#include "tests/coordinator/schedule_fixtures.h"

namespace fleetmark::service {
namespace {

constexpr absl::Duration kHangGuard = absl::Seconds(60);

absl::Time Utc(int y, int mo, int d, int h, int mi) {
  return absl::FromCivil(absl::CivilSecond(y, mo, d, h, mi, 0), absl::UTCTimeZone());
}

// The in-memory store whose liveness flushes fail on request (a database outage).
class FlakyLivenessStore : public store::MemoryStore {
 public:
  FlakyLivenessStore(const store::StoreOptions& options, std::shared_ptr<store::MemoryDatabase> db)
      : MemoryStore(options, std::move(db)) {}
  absl::Status RecordLiveness(const std::vector<store::AgentLiveness>& agents, absl::Duration lease,
                              const std::vector<std::string>& renew_agents) override {
    {
      absl::MutexLock lock(&mu_);
      ++flushes_;
      if (!failure_.ok()) return failure_;
    }
    return MemoryStore::RecordLiveness(agents, lease, renew_agents);
  }
  void Fail(absl::Status status) {
    absl::MutexLock lock(&mu_);
    failure_ = std::move(status);
  }
  int flushes() const {
    absl::MutexLock lock(&mu_);
    return flushes_;
  }

 private:
  mutable absl::Mutex mu_;
  absl::Status failure_ ABSL_GUARDED_BY(mu_);
  int flushes_ ABSL_GUARDED_BY(mu_) = 0;
};

// gRPC's health statuses as the sweeper sets them: the last value for all services.
class RecordingHealth : public grpc::HealthCheckServiceInterface {
 public:
  void SetServingStatus(const std::string& service, bool serving) override {
    absl::MutexLock lock(&mu_);
    by_service_[service] = serving;
  }
  void SetServingStatus(bool serving) override {
    absl::MutexLock lock(&mu_);
    changes_.push_back(serving);
  }
  // Waits (real time, hang guard) until the statuses for all services changed `n` times.
  std::vector<bool> AwaitChanges(size_t n) {
    absl::MutexLock lock(&mu_);
    auto enough = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return changes_.size() >= n; };
    mu_.AwaitWithTimeout(absl::Condition(&enough), kHangGuard);
    return changes_;
  }

 private:
  absl::Mutex mu_;
  std::map<std::string, bool> by_service_ ABSL_GUARDED_BY(mu_);
  std::vector<bool> changes_ ABSL_GUARDED_BY(mu_);
};

class SweeperTest : public ::testing::Test {
 protected:
  SweeperTest()
      : clock_(Utc(2026, 11, 30, 1, 59)),
        db_(std::make_shared<store::MemoryDatabase>(clock_)),
        store_(store::StoreOptions{}, db_),
        executor_(1, clock_),
        dispatcher_(store_, registry_, executor_, absl::Seconds(30), nullptr),
        runs_(store_, clock_, RunBuilderOptions{}),
        changes_(store_, dispatcher_, runs_, nullptr, ChangeMonitorOptions{}) {}

  ~SweeperTest() override { executor_.Shutdown(); }

  // A sweeper over this fixture's parts with `schedules` (may be null: no schedule
  // runner), pausing at most 50 ms of real time between turns.
  std::unique_ptr<Sweeper> MakeSweeper(scheduler::ScheduleRunner* schedules) {
    SweeperParts parts;
    parts.tokens = &store_;
    parts.agents = &store_;
    parts.runs = &store_;
    parts.retention = &store_;
    parts.registry = &registry_;
    parts.dispatcher = &dispatcher_;
    parts.executor = &executor_;
    parts.schedules = schedules;
    parts.changes = &changes_;
    SweeperOptions options;
    options.heartbeat_interval = absl::Milliseconds(50);
    options.sweep_interval = absl::Milliseconds(50);
    options.job_lease = absl::Seconds(30);
    options.db_outage_grace = absl::Seconds(5);
    return std::make_unique<Sweeper>(parts, options, clock_);
  }

  FakeClock clock_;
  std::shared_ptr<store::MemoryDatabase> db_;
  FlakyLivenessStore store_;
  AgentRegistry registry_;
  Executor executor_;
  Dispatcher dispatcher_;
  RunBuilder runs_;
  ChangeMonitor changes_;
};

TEST_F(SweeperTest, HealthIsNotServingFromAFailedFlushToTheNextThatSucceeds) {
  scheduler::ScheduleRunner schedules(
      store_, clock_, [](const v1::Schedule&) -> absl::StatusOr<store::NewRun> { return absl::InternalError("none"); },
      {});
  std::unique_ptr<Sweeper> sweeper = MakeSweeper(&schedules);
  ASSERT_TRUE(sweeper->EnsurePartitions().ok());
  RecordingHealth health;
  store_.Fail(absl::UnavailableError("connection refused"));
  sweeper->Start(&health);
  EXPECT_EQ(health.AwaitChanges(1), std::vector<bool>({false}));  // the outage began
  const int failed_flushes = store_.flushes();
  store_.Fail(absl::OkStatus());
  EXPECT_EQ(health.AwaitChanges(2), std::vector<bool>({false, true}));  // and ended
  sweeper->Stop();
  sweeper->Stop();  // idempotent
  EXPECT_GE(failed_flushes, 1);
  // While the database failed, every turn flushed (not only every heartbeat interval),
  // and no further change was announced once it answered.
  EXPECT_EQ(health.AwaitChanges(2).size(), 2u);
}

TEST_F(SweeperTest, ARequestedSweepFiresADueSchedule) {
  store::AgentRegistration reg;
  reg.name = "board";
  reg.session_id = "s";
  absl::StatusOr<std::string> agent = store_.RegisterAgent(reg);
  ASSERT_TRUE(agent.ok()) << agent.status();
  v1::Schedule schedule;
  schedule.set_name("nightly");
  schedule.set_cron("0 2 * * *");
  schedule.mutable_plan()->set_name("nightly");
  ASSERT_TRUE(store_.CreateSchedule(schedule, clock_.Now()).ok());
  scheduler::ScheduleRunner schedules(store_, clock_, scheduler::BuildOnAgent(*agent), {.catch_up = absl::Minutes(10)});
  std::unique_ptr<Sweeper> sweeper = MakeSweeper(&schedules);
  RecordingHealth health;
  sweeper->Start(&health);
  clock_.Set(Utc(2026, 11, 30, 2, 0) + absl::Seconds(30));  // the 02:00 slot is due
  sweeper->RequestSweep();
  const absl::Time guard = absl::Now() + kHangGuard;
  absl::StatusOr<std::vector<v1::RunInfo>> runs;
  do {
    runs = store_.ListRuns(10);
    ASSERT_TRUE(runs.ok()) << runs.status();
    if (runs->size() == 1) break;
    absl::SleepFor(absl::Milliseconds(10));
  } while (absl::Now() < guard);
  sweeper->Stop();
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ((*runs)[0].submitted_by(), "schedule:nightly");
  EXPECT_TRUE(health.AwaitChanges(0).empty());  // the database answered every flush
}

}  // namespace
}  // namespace fleetmark::service
