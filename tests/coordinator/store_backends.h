// The backends the store conformance suite (store_conformance.h) runs on: PostgreSQL
// (a private TestDatabase per test) and memory.
#pragma once

#include <cstdlib>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "absl/time/clock.h"
#include "coordinator/store/memory_store.h"
#include "engine/common/clock.h"
#include "tests/coordinator/store_conformance.h"
#include "tests/coordinator/store_fixtures.h"
#include "tests/coordinator/test_database.h"

namespace fleetmark::store {

// A private PostgreSQL database (FLEETMARK_TEST_PG_URI); time is real.
class PgBackend final : public StoreBackend {
 public:
  bool ready() const override { return !db_.uri().empty(); }
  std::string error() const override { return db_.error(); }
  std::unique_ptr<Store> Open(StoreOptions options) override {
    options.connection.uri = db_.uri();
    options.connection.pool_size = 4;
    auto store = Store::Open(options);
    EXPECT_TRUE(store.ok()) << store.status();
    if (!store.ok()) return nullptr;
    absl::Status migrated = (*store)->Migrate();
    EXPECT_TRUE(migrated.ok()) << migrated;
    return migrated.ok() ? *std::move(store) : nullptr;
  }
  bool has_sql() const override { return true; }
  std::string pg_uri() const override { return db_.uri(); }
  int64_t Sql(const std::string& sql) override { return Count(db_.uri(), sql); }
  void Elapse(absl::Duration d) override { absl::SleepFor(d); }
  void SilenceAgents(absl::Duration d) override {
    pqxx::connection conn(db_.uri());
    pqxx::work txn(conn);
    txn.exec_params("UPDATE agents SET last_seen = now() - $1::interval",
                    absl::StrCat(absl::ToInt64Milliseconds(d), " milliseconds"));
    txn.commit();
  }
  std::string CreateRunAt(Store&, absl::Time t, const std::function<std::string()>& create) override {
    const std::string run_id = create();
    const std::string at = absl::FormatTime("%Y-%m-%d %H:%M:%E6S+00", t, absl::UTCTimeZone());
    pqxx::connection conn(db_.uri());
    pqxx::work txn(conn);
    txn.exec_params("SELECT fleetmark_ensure_result_partitions($1::timestamptz, $1::timestamptz)", at);
    txn.exec_params("UPDATE runs SET created_at = $1::timestamptz WHERE run_id = $2::uuid", at, run_id);
    txn.commit();
    return run_id;
  }
  void AddRunWithId(Store&, const v1::RunInfo& like, const std::string&, const std::string& run_id) override {
    pqxx::connection conn(db_.uri());
    pqxx::work txn(conn);
    txn.exec_params(
        "INSERT INTO runs (run_id, plan_id, plan_name) SELECT $1::uuid, plan_id, plan_name FROM runs "
        "WHERE run_id = $2::uuid",
        run_id, like.run_id());
    txn.commit();
  }

 private:
  ::fleetmark::testing::TestDatabase db_;
};

// MemoryStores on one MemoryDatabase whose clock is a FakeClock (starting now, so
// times the tests take from absl::Now() are near it); Elapse advances it.
class MemoryBackend final : public StoreBackend {
 public:
  MemoryBackend() : clock_(absl::Now()), db_(std::make_shared<MemoryDatabase>(clock_)) {
    db_->SetIdSource([this]() -> std::string {
      absl::MutexLock lock(&ids_mu_);
      if (ids_.empty()) return MemoryDatabase::RandomId();
      std::string id = ids_.front();
      ids_.pop_front();
      return id;
    });
  }
  bool ready() const override { return true; }
  std::string error() const override { return ""; }
  std::unique_ptr<Store> Open(StoreOptions options) override {
    auto store = std::make_unique<MemoryStore>(options, db_);
    EXPECT_TRUE(store->Migrate().ok());
    return store;
  }
  bool has_sql() const override { return false; }
  std::string pg_uri() const override { return ""; }
  int64_t Sql(const std::string& sql) override {
    ADD_FAILURE() << "no SQL on the memory backend: " << sql;
    return -1;
  }
  void Elapse(absl::Duration d) override { clock_.Advance(d); }
  void SilenceAgents(absl::Duration d) override { clock_.Advance(d); }
  std::string CreateRunAt(Store& store, absl::Time t, const std::function<std::string()>& create) override {
    const absl::Time now = clock_.Now();
    clock_.Set(t);
    EXPECT_TRUE(store.EnsureResultPartitions(0).ok());
    const std::string run_id = create();
    clock_.Set(now);
    return run_id;
  }
  void AddRunWithId(Store& store, const v1::RunInfo&, const std::string& agent_id, const std::string& run_id) override {
    {
      absl::MutexLock lock(&ids_mu_);
      ids_.push_back(run_id);
    }
    auto run = store.CreateRun(MakeRun({agent_id}));
    EXPECT_TRUE(run.ok()) << run.status();
    if (run.ok()) EXPECT_EQ(run->run_id(), run_id);
  }

 private:
  FakeClock clock_;
  std::shared_ptr<MemoryDatabase> db_;
  absl::Mutex ids_mu_;
  std::deque<std::string> ids_ ABSL_GUARDED_BY(ids_mu_);  // the next ids, chosen by a test
};

inline std::vector<BackendFactory> StoreBackends() {
  return {
      {"PostgreSQL", [] { return std::make_unique<PgBackend>(); }},
      {"Memory", [] { return std::make_unique<MemoryBackend>(); }},
  };
}

inline void StoreConformanceTest::SetUp() {
  backend_ = GetParam().make();
  if (!backend_->ready()) {
    if (GetParam().name == "PostgreSQL" && !::fleetmark::testing::TestDatabase::Required() &&
        std::getenv("FLEETMARK_TEST_PG_URI") == nullptr) {
      GTEST_SKIP() << "PostgreSQL test skipped: " << backend_->error();
    }
    FAIL() << GetParam().name << " backend unavailable: " << backend_->error();
  }
}

inline std::unique_ptr<Store> StoreConformanceTest::OpenStore(const std::string& coordinator_id) {
  StoreOptions options;
  options.coordinator_id = coordinator_id;
  return backend_->Open(options);
}

}  // namespace fleetmark::store
