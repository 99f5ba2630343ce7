// The PostgreSQL store's own tests, about PostgreSQL itself rather than Store's
// contract (store_conformance_test.cc runs that against every implementation): error
// text from libpq, connecting and the connection pool, migrations, the triggers that
// replace foreign keys on jobs (migration 0016), row locks skipped by claims and by the
// liveness flush (FOR UPDATE SKIP LOCKED across connections), and the seeded_defaults
// migration. A real PostgreSQL (FLEETMARK_TEST_PG_URI), one private database per test.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <optional>
#include <set>
#include <thread>

#include <gtest/gtest.h>
#include <pqxx/pqxx>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "coordinator/store/connection_pool.h"
#include "coordinator/store/migrations.h"
#include "coordinator/store/store.h"
#include "tests/coordinator/store_fixtures.h"
#include "tests/coordinator/test_database.h"

namespace fleetmark::store {
namespace {

// libpq's multi-line messages become one line (no "\x0a" in a CLI error or a log line).
TEST(StoreTest, DatabaseErrorsAreOneLine) {
  const pqxx::sql_error e("ERROR:  relation \"runz\" does not exist\nLINE 1: SELECT * FROM runz\n  ^\n",
                          "SELECT * FROM runz", "42P01");
  absl::Status status = StatusFromPqxx(e, "list runs");
  EXPECT_EQ(status.message(), "list runs: ERROR:  relation \"runz\" does not exist; LINE 1: SELECT * FROM runz; ^");
  const pqxx::broken_connection down(
      "connection to server at \"127.0.0.1\", port 1 failed: Connection refused\n\tIs the server running on that "
      "host and accepting TCP/IP connections?\n");
  status = StatusFromPqxx(down, "connect");
  EXPECT_TRUE(absl::IsUnavailable(status)) << status;
  EXPECT_EQ(std::string(status.message()).find('\n'), std::string::npos) << status;
  EXPECT_EQ(std::string(status.message()).find('\t'), std::string::npos) << status;
}

// A refused connection (nothing listens on the port) is one line too: the CLI printed
// libpq's "\x0a\x09Is the server running ...?" while PostgreSQL was down (trial finding).
TEST(StoreTest, ARefusedConnectionIsOneLine) {
  const int probe = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(probe, 0);
  sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(probe, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  socklen_t length = sizeof(address);
  ASSERT_EQ(::getsockname(probe, reinterpret_cast<sockaddr*>(&address), &length), 0);
  ::close(probe);  // the port is free again: a connect is refused
  ConnectionOptions options;
  options.uri = absl::StrCat("postgresql://postgres@127.0.0.1:", ntohs(address.sin_port), "/fleetmark");
  auto conn = ConnectionPool::Connect(options);
  ASSERT_FALSE(conn.ok());
  EXPECT_TRUE(absl::IsUnavailable(conn.status())) << conn.status();
  const std::string message(conn.status().message());
  EXPECT_EQ(message.rfind("database: cannot connect: ", 0), 0u) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  EXPECT_EQ(message.find('\t'), std::string::npos) << message;
}

TEST(StoreTest, ConnectingToASilentServerTimesOut) {
  // A listener that completes TCP handshakes and never answers (a port taken by
  // another program): without libpq's connect_timeout a connect would block for good.
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(::listen(listener, 8), 0);
  socklen_t length = sizeof(address);
  ASSERT_EQ(::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length), 0);
  StoreOptions options;
  options.connection.uri = absl::StrFormat("postgresql://nobody@127.0.0.1:%d/none", ntohs(address.sin_port));
  options.connection.pool_size = 1;
  const absl::Time start = absl::Now();
  absl::Status status = absl::OkStatus();
  auto store = Store::Open(options);
  status = store.ok() ? (*store)->Migrate() : store.status();
  EXPECT_FALSE(status.ok());
  EXPECT_LT(absl::Now() - start, absl::Seconds(60)) << status;
  ::close(listener);
}

// The pool hands out at most pool_size connections: a waiter gets the one released
// while it waits, and DeadlineExceeded naming the pool size when none is released.
TEST(StoreTest, ConnectionPoolWaitsForAReleasedConnectionThenTimesOut) {
  FLEETMARK_TEST_DATABASE_OR_SKIP(db);
  ConnectionOptions options;
  options.uri = db.uri();
  options.pool_size = 1;
  options.acquire_timeout = absl::Milliseconds(300);
  auto pool = ConnectionPool::Create(options);
  ASSERT_TRUE(pool.ok()) << pool.status();
  auto first = (*pool)->Acquire();
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = (*pool)->Acquire();
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_NE(second.status().message().find("pool_size 1"), std::string::npos) << second.status();
  // A waiter is woken by the release (a generous timeout: only a hang guard).
  ConnectionOptions patient = options;
  patient.acquire_timeout = absl::Seconds(60);
  auto patient_pool = ConnectionPool::Create(patient);
  ASSERT_TRUE(patient_pool.ok()) << patient_pool.status();
  std::optional<ConnectionPool::Lease> held;
  held.emplace(*(*patient_pool)->Acquire());
  std::thread releaser([&] {
    absl::SleepFor(absl::Milliseconds(50));
    held.reset();
  });
  auto waited = (*patient_pool)->Acquire();
  releaser.join();
  ASSERT_TRUE(waited.ok()) << waited.status();
  pqxx::nontransaction txn(**waited);
  EXPECT_EQ(txn.exec("SELECT 1")[0][0].as<int>(), 1);
}

TEST(StoreTest, MigrationsApplyOnceEvenConcurrently) {
  FLEETMARK_TEST_DATABASE_OR_SKIP(db);
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 3; ++i) {
    threads.emplace_back([&] {
      StoreOptions options;
      options.connection.uri = db.uri();
      auto store = Store::Open(options);
      if (store.ok() && (*store)->Migrate().ok()) ++ok;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 3);
  auto store = OpenStore(db.uri());
  ASSERT_NE(store, nullptr);
  auto versions = store->AppliedMigrations();
  ASSERT_TRUE(versions.ok()) << versions.status();
  ASSERT_FALSE(versions->empty());
  EXPECT_EQ(versions->front(), 1);
  EXPECT_EQ(versions->size(), EmbeddedMigrations().size());
  EXPECT_EQ(Count(db.uri(), "SELECT count(*) FROM schema_migrations WHERE version = 1"), 1);
}

// Migration 0016: a job's run and agent are checked once per statement, not by foreign
// keys row by row; the triggers keep what the keys guaranteed. Each violation is
// SQLSTATE 23503 (foreign_key_violation) naming the missing row, and changes nothing.
TEST(StoreTest, JobReferencesAreKeptWithoutForeignKeys) {
  FLEETMARK_TEST_DATABASE_OR_SKIP(db);
  auto store = OpenStore(db.uri());
  ASSERT_NE(store, nullptr);
  const std::string a = Agent(*store, "ra"), b = Agent(*store, "rb");
  auto claimed = CreateAndClaim(*store, {a, b});
  ASSERT_TRUE(claimed.ok()) << claimed.status();
  const std::string run_id = claimed->run.run_id();
  const std::string job_a = claimed->job_of.at(a);
  EXPECT_EQ(Count(db.uri(), "SELECT count(*) FROM pg_constraint WHERE conrelid = 'jobs'::regclass AND contype = 'f'"),
            0);
  // SQLSTATE and message of `sql`, run in its own transaction ("" when it succeeds).
  auto refused = [&](const std::string& sql) -> std::string {
    pqxx::connection conn(db.uri());
    pqxx::work txn(conn);
    try {
      txn.exec(sql);
      txn.commit();
      return "";
    } catch (const pqxx::sql_error& e) {
      return e.sqlstate() + " " + e.what();
    }
  };
  const std::string nobody = "00000000-0000-4000-8000-0000000000ff";
  std::string error =
      refused(absl::StrCat("INSERT INTO jobs (job_id, run_id, agent_id) VALUES (gen_random_uuid(), '", run_id, "', '",
                           a, "'), (gen_random_uuid(), '", run_id, "', '", nobody, "')"));
  EXPECT_EQ(error.rfind("23503 ", 0), 0u) << error;
  EXPECT_NE(error.find("agent " + nobody + ", which does not exist"), std::string::npos) << error;
  error = refused(absl::StrCat("INSERT INTO jobs (job_id, run_id, agent_id) VALUES (gen_random_uuid(), '", nobody,
                               "', '", a, "')"));
  EXPECT_EQ(error.rfind("23503 ", 0), 0u) << error;
  EXPECT_NE(error.find("run " + nobody + ", which does not exist"), std::string::npos) << error;
  error = refused(absl::StrCat("UPDATE jobs SET agent_id = '", b, "' WHERE job_id = '", job_a, "'"));
  EXPECT_EQ(error.rfind("23503 ", 0), 0u) << error;
  EXPECT_EQ(refused(absl::StrCat("UPDATE jobs SET agent_id = agent_id, message = 'same' WHERE job_id = '", job_a, "'")),
            "")
      << "setting the same agent is no change";
  error = refused(absl::StrCat("DELETE FROM agents WHERE agent_id = '", a, "'"));
  EXPECT_EQ(error.rfind("23503 ", 0), 0u) << error;
  EXPECT_NE(error.find("still has jobs"), std::string::npos) << error;
  EXPECT_EQ(Count(db.uri(), absl::StrCat("SELECT count(*) FROM jobs WHERE run_id = '", run_id, "'")), 2);
  // Deleting the run deletes its jobs (prune relies on it).
  EXPECT_EQ(refused(absl::StrCat("DELETE FROM runs WHERE run_id = '", run_id, "'")), "");
  EXPECT_EQ(Count(db.uri(), absl::StrCat("SELECT count(*) FROM jobs WHERE run_id = '", run_id, "'")), 0);
  EXPECT_EQ(refused(absl::StrCat("DELETE FROM agents WHERE agent_id = '", a, "'")), "") << "no job left";
}

TEST(StoreTest, ClaimSkipsLockedRowsAcrossConnections) {
  FLEETMARK_TEST_DATABASE_OR_SKIP(db);
  auto store1 = OpenStore(db.uri(), "c1");
  auto store2 = OpenStore(db.uri(), "c2");
  ASSERT_NE(store1, nullptr);
  ASSERT_NE(store2, nullptr);
  std::vector<std::string> agents;
  for (int i = 0; i < 20; ++i) agents.push_back(Agent(*store1, "agent" + std::to_string(i)));
  ASSERT_TRUE(store1->CreateRun(MakeRun(agents)).ok());

  // Hold a row lock on agent0's job from a third connection: claims skip it at once.
  pqxx::connection locker(db.uri());
  pqxx::work lock_txn(locker);
  lock_txn.exec("SELECT job_id FROM jobs WHERE agent_id = '" + agents[0] + "' FOR UPDATE");
  const absl::Time start = absl::Now();
  auto skipped = store1->ClaimJobs({agents[0]}, absl::Seconds(30));
  ASSERT_TRUE(skipped.ok()) << skipped.status();
  EXPECT_TRUE(skipped->empty());
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));  // skipped, not blocked
  lock_txn.abort();

  // Two coordinators claiming for the same agents at once: each job claimed once.
  std::vector<ClaimedJob> c1, c2;
  std::thread t1([&] { c1 = store1->ClaimJobs(agents, absl::Seconds(30)).value_or(std::vector<ClaimedJob>{}); });
  std::thread t2([&] { c2 = store2->ClaimJobs(agents, absl::Seconds(30)).value_or(std::vector<ClaimedJob>{}); });
  t1.join();
  t2.join();
  std::set<std::string> jobs;
  for (const auto& c : c1) jobs.insert(c.assignment.job_id());
  for (const auto& c : c2) jobs.insert(c.assignment.job_id());
  EXPECT_EQ(jobs.size(), c1.size() + c2.size());
  // Claims that lost a race leave jobs queued; a retry picks up the rest.
  auto rest = store1->ClaimJobs(agents, absl::Seconds(30));
  ASSERT_TRUE(rest.ok()) << rest.status();
  EXPECT_EQ(jobs.size() + rest->size(), agents.size());
  EXPECT_EQ(Count(db.uri(), "SELECT count(*) FROM jobs WHERE status = 'assigned' AND attempts = 1"), 20);
  // One job at a time per device: a second run's job waits while the first is active.
  ASSERT_TRUE(store1->CreateRun(MakeRun({agents[0]})).ok());
  auto none = store1->ClaimJobs({agents[0]}, absl::Seconds(30));
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  ASSERT_FALSE(c1.empty() && c2.empty() && rest->empty());
}

TEST(StoreTest, SeededDefaultsMigrationCountsAnExistingNightlyAsSeeded) {
  FLEETMARK_TEST_DATABASE_OR_SKIP(db);
  const std::vector<Migration>& all = EmbeddedMigrations();
  auto seeded = std::find_if(all.begin(), all.end(),
                             [](const Migration& m) { return std::string(m.name) == "0002_seeded_defaults"; });
  ASSERT_NE(seeded, all.end());
  {  // A database from before the migration, whose nightly schedule exists. Written in
     // that schema's SQL: today's Store writes columns later migrations added.
    pqxx::connection conn(db.uri());
    ASSERT_TRUE(ApplyMigrations(conn, std::vector<Migration>(all.begin(), seeded)).ok());
    pqxx::work txn(conn);
    txn.exec0(
        "INSERT INTO plans (plan_id, name, plan, plan_text) "
        "VALUES ('00000000-0000-4000-8000-000000000001', 'small', '', '')");
    txn.exec0(
        "INSERT INTO schedules (schedule_id, name, cron, plan_id) VALUES "
        "('00000000-0000-4000-8000-000000000002', 'nightly', '0 2 * * *', '00000000-0000-4000-8000-000000000001')");
    txn.commit();
  }
  StoreOptions options;
  options.connection.uri = db.uri();
  auto store = Store::Open(options);
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_TRUE((*store)->Migrate().ok());
  EXPECT_EQ(Count(db.uri(), "SELECT count(*) FROM seeded_defaults WHERE name = 'schedule:nightly'"), 1);
  // So deleting it after the upgrade sticks.
  ASSERT_TRUE((*store)->DeleteSchedule("nightly").ok());
  auto outcome = (*store)->SeedDefaultSchedule(Nightly("0 2 * * *"), absl::Now());
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(*outcome, Store::SeedOutcome::kLeftDeleted);
}

// The liveness flush never waits for a row lock: a job end holds its job row, then its
// agent row, then its run row, and a flush that waited for them (while holding other
// agents' rows) deadlocked against job ends in every 1 000-agent fan-out. Rows held
// elsewhere are skipped and written by the next flush.
TEST(StoreTest, LivenessFlushSkipsRowsAnotherTransactionHolds) {
  FLEETMARK_TEST_DATABASE_OR_SKIP(db);
  auto store = OpenStore(db.uri());
  ASSERT_NE(store, nullptr);
  const std::string held = Agent(*store, "held"), free = Agent(*store, "free");
  ASSERT_TRUE(store->CreateRun(MakeRun({held, free}, /*max_attempts=*/1)).ok());
  auto claimed = store->ClaimJobs({held, free}, absl::Seconds(5));
  ASSERT_TRUE(claimed.ok() && claimed->size() == 2u);
  const absl::Time seen = absl::Now();
  pqxx::connection other(db.uri());
  pqxx::work holder(other);
  holder.exec_params("SELECT 1 FROM jobs WHERE agent_id = $1::uuid FOR UPDATE", held);
  holder.exec_params("SELECT 1 FROM agents WHERE agent_id = $1::uuid FOR NO KEY UPDATE", held);
  // With the rows held, the flush returns (the old statements waited here until the
  // holder ended) and writes the free agent's row and lease only.
  std::atomic<bool> done{false};
  absl::Status flushed;
  std::thread flush([&] {
    flushed =
        store->RecordLiveness({{held, seen, 111, 1.0, "s-held"}, {free, seen, 222, 2.0, "s-free"}}, absl::Seconds(600));
    done = true;
  });
  for (int i = 0; i < 3000 && !done; ++i) absl::SleepFor(absl::Milliseconds(10));
  const bool returned_while_held = done.load();
  holder.commit();
  flush.join();
  ASSERT_TRUE(returned_while_held) << "the liveness flush waited for rows another transaction held";
  ASSERT_TRUE(flushed.ok()) << flushed;
  const std::string long_lease = "lease_expires_at > now() + interval '300 seconds'";
  EXPECT_EQ(
      Count(db.uri(), absl::StrCat("SELECT count(*) FROM agents WHERE rss_bytes = 222 AND agent_id = '", free, "'")),
      1);
  EXPECT_EQ(Count(db.uri(), absl::StrCat("SELECT count(*) FROM agents WHERE rss_bytes = 111")), 0);
  EXPECT_EQ(
      Count(db.uri(), absl::StrCat("SELECT count(*) FROM jobs WHERE ", long_lease, " AND agent_id = '", free, "'")), 1);
  EXPECT_EQ(
      Count(db.uri(), absl::StrCat("SELECT count(*) FROM jobs WHERE ", long_lease, " AND agent_id = '", held, "'")), 0);
  // The next flush, with the rows free again, writes the skipped ones.
  ASSERT_TRUE(store->RecordLiveness({{held, seen, 111, 1.0, "s-held"}}, absl::Seconds(600)).ok());
  EXPECT_EQ(Count(db.uri(), "SELECT count(*) FROM agents WHERE rss_bytes = 111"), 1);
  EXPECT_EQ(
      Count(db.uri(), absl::StrCat("SELECT count(*) FROM jobs WHERE ", long_lease, " AND agent_id = '", held, "'")), 1);
}
}  // namespace
}  // namespace fleetmark::store
