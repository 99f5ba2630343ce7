// A fresh PostgreSQL database for one test program, created with psql on the server of
// FLEETMARK_TEST_PG_URI and dropped (WITH FORCE) when the object dies.
//
//   auto db = FreshDatabase::Create("webapi");
//   if (!db.ok()) GTEST_SKIP() or FAIL() (see RequirePg());
//   std::string uri = (*db)->uri();
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace fleetmark::testing {

class FreshDatabase {
 public:
  // FailedPrecondition if FLEETMARK_TEST_PG_URI is unset; Internal if psql fails.
  static absl::StatusOr<std::unique_ptr<FreshDatabase>> Create(const std::string& prefix);
  ~FreshDatabase();
  const std::string& uri() const { return uri_; }
  // Keeps the database after this object dies (for inspecting a benchmark's data).
  void Keep() { keep_ = true; }

 private:
  FreshDatabase(std::string admin_uri, std::string name, std::string uri)
      : admin_uri_(std::move(admin_uri)), name_(std::move(name)), uri_(std::move(uri)) {}
  std::string admin_uri_;
  std::string name_;
  std::string uri_;
  bool keep_ = false;
};

// True when tests needing PostgreSQL must fail rather than skip (FLEETMARK_TEST_REQUIRE_PG=1).
bool RequirePg();

// Runs `argv` (no shell), returns its stdout; Internal with stderr on a non-zero exit.
absl::StatusOr<std::string> RunCommand(const std::vector<std::string>& argv);

}  // namespace fleetmark::testing
