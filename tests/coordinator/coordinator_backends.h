// The store an in-process test coordinator (service::Coordinator) runs on, chosen by
// one parameter: the in-memory store (every machine) or PostgreSQL (a private database
// on FLEETMARK_TEST_PG_URI). A test suite of coordinator logic is parameterised on
// CoordinatorBackends() and runs on both:
//
//   class MyTest : public ::testing::TestWithParam<StoreBackend> {
//     void SetUp() override {
//       db_ = std::make_unique<TestStoreDatabase>(GetParam());
//       FLEETMARK_TEST_STORE_DATABASE_OR_SKIP(*db_);
//       CoordinatorOptions options = ...;
//       db_->Use(options);  // database_uri, or the memory store and its database
//     }
//     std::unique_ptr<TestStoreDatabase> db_;
//   };
//   INSTANTIATE_TEST_SUITE_P(Stores, MyTest, CoordinatorBackends(), CoordinatorBackendName);
//
// The PostgreSQL variant skips only when FLEETMARK_TEST_PG_URI is unset and
// FLEETMARK_TEST_REQUIRE_PG is unset (as the store conformance suite,
// store_backends.h); the memory variant never skips. Both keep database time on the
// real clock (PostgreSQL's now(); the MemoryDatabase's SystemClock), whatever clock the
// coordinator itself is given.
//
// Thread-safety: a TestStoreDatabase is used from the test's thread.
#pragma once

#include <cstdlib>
#include <memory>
#include <string>

#include <gtest/gtest.h>
#include <pqxx/pqxx>

#include "coordinator/service/coordinator_options.h"
#include "coordinator/store/memory_store.h"
#include "tests/coordinator/test_database.h"

namespace fleetmark::service {

// One empty database of `backend` for the coordinators of a test: several coordinators
// given it share its rows, and a coordinator restarted on it finds them again.
class TestStoreDatabase {
 public:
  explicit TestStoreDatabase(StoreBackend backend) : backend_(backend) {
    if (backend_ == StoreBackend::kPostgres) {
      pg_ = std::make_unique<testing::TestDatabase>();
    } else {
      memory_ = std::make_shared<store::MemoryDatabase>();
    }
  }
  StoreBackend backend() const { return backend_; }
  // False when PostgreSQL is unavailable (error() says why); the memory one always is.
  bool ready() const { return pg_ == nullptr || !pg_->uri().empty(); }
  std::string error() const { return pg_ == nullptr ? "" : pg_->error(); }

  // Points `options` at this database (store, database_uri or memory_database).
  void Use(CoordinatorOptions& options) const {
    options.store = backend_;
    options.database_uri = pg_ == nullptr ? "" : pg_->uri();
    options.memory_database = memory_;
  }

  // True on PostgreSQL: the test may read or change rows with SQL (Count, uri()).
  bool has_sql() const { return pg_ != nullptr; }
  // The PostgreSQL database's URI ("" on memory).
  std::string uri() const { return pg_ == nullptr ? "" : pg_->uri(); }
  // The integer `sql` (one row, one column) answers; a test failure and -1 on memory.
  int64_t Count(const std::string& sql) const {
    if (pg_ == nullptr) {
      ADD_FAILURE() << "no SQL on the memory store: " << sql;
      return -1;
    }
    pqxx::connection conn(pg_->uri());
    pqxx::work txn(conn);
    const int64_t n = txn.exec1(sql)[0].as<int64_t>();
    txn.commit();
    return n;
  }

  // Skip (PostgreSQL without FLEETMARK_TEST_PG_URI, unless FLEETMARK_TEST_REQUIRE_PG)
  // or fail: what FLEETMARK_TEST_STORE_DATABASE_OR_SKIP does when !ready().
  bool ShouldSkip() const {
    return backend_ == StoreBackend::kPostgres && !testing::TestDatabase::Required() &&
           std::getenv("FLEETMARK_TEST_PG_URI") == nullptr;
  }

 private:
  StoreBackend backend_;
  std::unique_ptr<testing::TestDatabase> pg_;      // kPostgres
  std::shared_ptr<store::MemoryDatabase> memory_;  // kMemory
};

// The backends a coordinator suite runs on: memory first (it never skips).
inline auto CoordinatorBackends() { return ::testing::Values(StoreBackend::kMemory, StoreBackend::kPostgres); }

// "Memory" / "PostgreSQL": the suffix of each test's name (--gtest_filter='*/Memory').
inline std::string CoordinatorBackendName(const ::testing::TestParamInfo<StoreBackend>& info) {
  return info.param == StoreBackend::kMemory ? "Memory" : "PostgreSQL";
}

}  // namespace fleetmark::service

// Skips or fails the current test when `db` (a TestStoreDatabase) is not ready.
#define FLEETMARK_TEST_STORE_DATABASE_OR_SKIP(db)                                                               \
  if (!(db).ready()) {                                                                                          \
    if ((db).ShouldSkip()) GTEST_SKIP() << "PostgreSQL test skipped: " << (db).error();                         \
    FAIL() << "PostgreSQL required (FLEETMARK_TEST_PG_URI or FLEETMARK_TEST_REQUIRE_PG set): " << (db).error(); \
  }
