// The store conformance suite's fixture (store_conformance_test.cc): one test body run
// against every Store implementation through a StoreBackend, the "database" the stores
// of one test share (several stores on one backend are several coordinators on one
// database; a store opened again on it is a restarted coordinator).
//
//   TEST_P(StoreConformanceTest, Something) {
//     auto store = OpenStore("c1");
//     ...
//     Elapse(absl::Milliseconds(20));                      // leases run out
//     EXPECT_SQL_EQ(Sql("SELECT count(*) FROM runs"), 1);  // PostgreSQL rows only
//   }
//
// Backends: PostgreSQL (a private TestDatabase; real sleeps) and memory (MemoryStore on
// one MemoryDatabase and a FakeClock that Elapse advances). Row checks written in SQL
// (EXPECT_SQL_EQ / EXPECT_SQL_TRUE) look at PostgreSQL's tables and run only on
// backends with SQL; every behaviour a caller of Store can see is asserted on all.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include <gtest/gtest.h>

#include "absl/time/time.h"
#include "coordinator/store/store.h"

namespace fleetmark::store {

// One database the stores of a test share. Not thread-safe except Open'ed stores.
class StoreBackend {
 public:
  virtual ~StoreBackend() = default;
  // Empty when the backend could not be set up; error() says why.
  virtual bool ready() const = 0;
  virtual std::string error() const = 0;
  // A store on this database with `options` (the backend fills the connection); null
  // (and a test failure) if it cannot be opened. Migrated.
  virtual std::unique_ptr<Store> Open(StoreOptions options) = 0;
  // Whether Sql() answers (PostgreSQL).
  virtual bool has_sql() const = 0;
  // The database's URI (PostgreSQL; "" for others), for PostgreSQL-only readers.
  virtual std::string pg_uri() const = 0;
  // The first column of the first row of `sql` (PostgreSQL only).
  virtual int64_t Sql(const std::string& sql) = 0;
  // `d` of time passes for the store (PostgreSQL: a real sleep; memory: the fake clock).
  virtual void Elapse(absl::Duration d) = 0;
  // Every agent was last heard `d` ago (their sessions fall silent).
  virtual void SilenceAgents(absl::Duration d) = 0;
  // Calls `create` (which creates one run through `store` and answers its id) so that
  // the run counts as created at `t` (in the past), with a result partition for t's
  // month; answers the run id. Results stored after it belong to that month.
  virtual std::string CreateRunAt(Store& store, absl::Time t, const std::function<std::string()>& create) = 0;
  // Adds a run with id `run_id` (lower-case UUID) sharing `like`'s plan, with no job
  // (PostgreSQL) or one queued job for `agent_id` (memory: created through the store
  // with that id), to make run id prefixes collide.
  virtual void AddRunWithId(Store& store, const v1::RunInfo& like, const std::string& agent_id,
                            const std::string& run_id) = 0;
};

struct BackendFactory {
  std::string name;
  std::function<std::unique_ptr<StoreBackend>()> make;
};
inline void PrintTo(const BackendFactory& factory, std::ostream* os) { *os << factory.name; }

class StoreConformanceTest : public ::testing::TestWithParam<BackendFactory> {
 protected:
  void SetUp() override;
  std::unique_ptr<Store> OpenStore(const std::string& coordinator_id = "c1");
  std::unique_ptr<Store> OpenStoreWith(StoreOptions options) { return backend_->Open(std::move(options)); }
  bool HasSql() const { return backend_->has_sql(); }
  int64_t Sql(const std::string& sql) { return backend_->Sql(sql); }
  void Elapse(absl::Duration d) { backend_->Elapse(d); }
  StoreBackend& backend() { return *backend_; }

 private:
  std::unique_ptr<StoreBackend> backend_;
};

// Row checks in SQL: asserted on backends with SQL, not evaluated on the others.
#define EXPECT_SQL_EQ(count, expected) \
  if (!HasSql()) {                     \
  } else                               \
    EXPECT_EQ(count, expected)
#define EXPECT_SQL_TRUE(condition) \
  if (!HasSql()) {                 \
  } else                           \
    EXPECT_TRUE(condition)

}  // namespace fleetmark::store
