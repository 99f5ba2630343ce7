// The results store for years against a real PostgreSQL (FLEETMARK_TEST_PG_URI):
// migration 0014 partitions case_results by month keeping every row, a re-sent result
// is stored once, partitions are created ahead (and concurrently), and PruneResults
// drops only old months, refuses unexported or unfinished runs, obeys --force and
// changes nothing on a dry run (PruneTest: on every store, PostgreSQL and memory, store_conformance.h).
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <pqxx/pqxx>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/civil_time.h"
#include "absl/time/clock.h"
#include "coordinator/store/migrations.h"
#include "coordinator/store/store.h"
#include "tests/coordinator/store_backends.h"
#include "tests/coordinator/store_conformance.h"
#include "tests/coordinator/store_fixtures.h"
#include "tests/coordinator/test_database.h"

namespace fleetmark::store {
namespace {

void Exec(const std::string& uri, const std::string& sql) {
  pqxx::connection conn(uri);
  pqxx::work txn(conn);
  txn.exec(sql);
  txn.commit();
}

std::string Text(const std::string& uri, const std::string& sql) {
  pqxx::connection conn(uri);
  pqxx::work txn(conn);
  pqxx::result r = txn.exec(sql);
  return r.empty() || r[0][0].is_null() ? "" : r[0][0].as<std::string>();
}

// "case_results_y2026m03" for the UTC month `months` after this one.
std::string PartitionName(int months) {
  const absl::CivilSecond now = absl::ToCivilSecond(absl::Now(), absl::UTCTimeZone());
  const absl::CivilMonth month = absl::CivilMonth(now) + months;
  return absl::StrFormat("case_results_y%04dm%02d", month.year(), month.month());
}

bool TableExists(const std::string& uri, const std::string& name) {
  return Text(uri, absl::StrCat("SELECT to_regclass('", name, "')::text")) == name;
}

// Rows written before migration 0014 (the unpartitioned table, bigint[] samples) keep
// their ids and contents, each in its run's month, and the web indexes are on the parent.
TEST(ResultsStoreTest, MigrationKeepsEveryRowInItsRunsMonth) {
  FLEETMARK_TEST_DATABASE_OR_SKIP(db);
  std::vector<Migration> before;
  for (const Migration& m : EmbeddedMigrations()) {
    if (m.version < 14 || m.version == 50 || m.version == 51) before.push_back(m);
  }
  {
    pqxx::connection conn(db.uri());
    ASSERT_TRUE(ApplyMigrations(conn, before).ok());
  }
  Exec(db.uri(),
       "INSERT INTO agents (agent_id, name, credential_sha256, host) VALUES "
       " ('00000000-0000-4000-8000-00000000000a', 'a1', 'x', '\\x00');"
       "INSERT INTO plans (plan_id, name, plan, plan_text) VALUES "
       " ('00000000-0000-4000-8000-00000000000b', 'p', '\\x00', '');"
       "INSERT INTO runs (run_id, plan_id, plan_name, created_at) VALUES "
       " ('00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-00000000000b', 'p', '2025-03-05 10:00+00'),"
       " ('00000000-0000-4000-8000-000000000002', '00000000-0000-4000-8000-00000000000b', 'p', now());"
       "INSERT INTO jobs (job_id, run_id, agent_id) SELECT run_id, run_id, '00000000-0000-4000-8000-00000000000a' "
       " FROM runs;"
       "INSERT INTO case_results (result_id, run_id, job_id, agent_id, case_id, scenario, workload, io_mode,"
       " strategy, strategy_label, threads, placement, status, median_ns, samples_ns, result)"
       " SELECT gen_random_uuid(), r.run_id, r.run_id, '00000000-0000-4000-8000-00000000000a', 'c' || g, 'batch',"
       "  'arithmetic', 'blocking', 'direct', 'direct', 0, 'any', 'ok', g * 1.5, ARRAY[g, 2 * g, 3 * g]::bigint[],"
       "  decode(md5(g::text), 'hex') FROM runs r, generate_series(1, 50) g;");
  const std::string kContents =
      "SELECT md5(string_agg(result_id::text || run_id::text || case_id || median_ns::text ||"
      " samples_ns::bigint[]::text || encode(result, 'hex'), ',' ORDER BY result_id)) FROM case_results";
  const std::string before_contents = Text(db.uri(), kContents);
  ASSERT_EQ(Count(db.uri(), "SELECT count(*) FROM case_results"), 100);

  auto store = OpenStore(db.uri());
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(Count(db.uri(), "SELECT count(*) FROM case_results"), 100);
  EXPECT_EQ(Text(db.uri(), kContents), before_contents);
  EXPECT_EQ(Text(db.uri(), "SELECT relkind::text FROM pg_class WHERE relname = 'case_results'"), "p");
  EXPECT_EQ(Count(db.uri(), "SELECT count(*) FROM case_results_y2025m03"), 50);
  EXPECT_EQ(Count(db.uri(), absl::StrCat("SELECT count(*) FROM ", PartitionName(0))), 50);
  EXPECT_EQ(Count(db.uri(), "SELECT count(*) FROM case_results_default"), 0);
  EXPECT_EQ(Count(db.uri(),
                  "SELECT count(*) FROM case_results c JOIN runs r USING (run_id) "
                  "WHERE c.run_created_at <> r.created_at"),
            0);
  EXPECT_EQ(Text(db.uri(),
                 "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
                 "WHERE attrelid = 'case_results'::regclass AND attname = 'samples_ns'"),
            "real[]");
  EXPECT_EQ(Text(db.uri(),
                 "SELECT attcompression::text FROM pg_attribute "
                 "WHERE attrelid = 'case_results_y2025m03'::regclass AND attname = 'result'"),
            "l");
  // 0001's run index and 0052's history index, on the parent (so on every partition).
  for (const char* index :
       {"case_results_run", "case_results_web_history_newest", "case_results_pkey", "case_results_one_per_case"}) {
    EXPECT_EQ(Text(db.uri(), absl::StrCat("SELECT relkind::text FROM pg_class WHERE relname = '", index, "'")), "I")
        << index;
  }
  EXPECT_EQ(Count(db.uri(), "SELECT count(*) FROM pg_indexes WHERE tablename = 'case_results_y2025m03'"), 4);
}

// A result re-sent in a later batch (an agent's replay) is stored once, in the
// partition of its run's month, and answered as a duplicate.
TEST(ResultsStoreTest, ResentResultIsStoredOnce) {
  FLEETMARK_TEST_DATABASE_OR_SKIP(db);
  auto store = OpenStore(db.uri());
  ASSERT_NE(store, nullptr);
  const std::string agent = Agent(*store, "a1");
  auto run = CreateAndClaim(*store, {agent});
  ASSERT_TRUE(run.ok()) << run.status();
  const std::string id = "00000000-0000-4000-8000-0000000000f1";
  v1::CaseResult result = Result(id, run->job_of.at(agent), 100);
  auto first = store->InsertResults({{agent, &result}});
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE((*first)[0].stored);
  auto again = store->InsertResults({{agent, &result}, {agent, &result}});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE((*again)[0].duplicate);
  EXPECT_TRUE((*again)[1].duplicate);
  EXPECT_EQ(Count(db.uri(), "SELECT count(*) FROM case_results"), 1);
  EXPECT_EQ(
      Text(db.uri(), absl::StrCat("SELECT tableoid::regclass::text FROM case_results WHERE result_id = '", id, "'")),
      PartitionName(0));
  EXPECT_EQ(Count(db.uri(), absl::StrCat("SELECT count(*) FROM case_results c JOIN runs r USING (run_id) "
                                         "WHERE c.run_created_at = r.created_at AND c.result_id = '",
                                         id, "'")),
            1);
}

// Issue 32, item 2: one result per (job, case) whatever the attempt. A second
// attempt's result of a stored case (another id: a second process that ran the job, or
// a re-run) is answered as a duplicate and adds no row, on each ingestion path (COPY,
// ids looked up after a replay, staged) and within one batch; a `cancelled`
// placeholder does not count (the case is measured again), one real result does.
TEST(ResultsStoreTest, ASecondAttemptsResultOfAStoredCaseAddsNoRow) {
  FLEETMARK_TEST_DATABASE_OR_SKIP(db);
  auto store = OpenStore(db.uri());
  ASSERT_NE(store, nullptr);
  const std::string agent = Agent(*store, "a1");
  auto run = CreateAndClaim(*store, {agent});
  ASSERT_TRUE(run.ok()) << run.status();
  const std::string job = run->job_of.at(agent);
  const std::string rows = absl::StrCat("SELECT count(*) FROM case_results WHERE job_id = '", job, "'");
  auto result = [&](int n, const std::string& case_id, v1::CaseStatus status = v1::CASE_STATUS_OK) {
    v1::CaseResult r = Result(absl::StrFormat("00000000-0000-4000-8000-%012d", n), job, 100 + n);
    r.mutable_spec()->set_case_id(case_id);
    r.set_status(status);
    return r;
  };
  v1::CaseResult first = result(1, "case-1");
  auto stored = store->InsertResults({{agent, &first}});
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_TRUE((*stored)[0].stored);
  // The job claimed again (attempt 2) measures case-1 again: nothing is added.
  ASSERT_TRUE(store->ReleaseAgentJobs(agent, "").ok());
  auto again = store->ClaimJobs({agent}, absl::Seconds(30));
  ASSERT_TRUE(again.ok() && again->size() == 1u) << again.status();
  EXPECT_EQ((*again)[0].assignment.attempt(), 2u);
  v1::CaseResult second = result(2, "case-1");
  auto copied = store->InsertResults({{agent, &second}});  // COPY path: meets the unique index, redone staged
  ASSERT_TRUE(copied.ok()) << copied.status();
  EXPECT_TRUE((*copied)[0].duplicate);
  EXPECT_FALSE((*copied)[0].stored);
  EXPECT_EQ(Count(db.uri(), rows), 1);
  // Ids looked up first (the store met a duplicate just now): the same answer.
  v1::CaseResult third = result(3, "case-1");
  auto looked_up = store->InsertResults({{agent, &third}});
  ASSERT_TRUE(looked_up.ok()) << looked_up.status();
  EXPECT_TRUE((*looked_up)[0].duplicate);
  // Two results of a new case in one batch: the first is stored, the second is not.
  v1::CaseResult a = result(4, "case-2"), b = result(5, "case-2");
  auto batch = store->InsertResults({{agent, &a}, {agent, &b}});
  ASSERT_TRUE(batch.ok()) << batch.status();
  EXPECT_TRUE((*batch)[0].stored);
  EXPECT_TRUE((*batch)[1].duplicate);
  EXPECT_EQ(Count(db.uri(), rows), 2);
  // A cancelled placeholder of case-3, then its real result (stored), then another one (not).
  v1::CaseResult placeholder = result(6, "case-3", v1::CASE_STATUS_CANCELLED), real = result(7, "case-3"),
                 late = result(8, "case-3");
  for (const v1::CaseResult* r : {&placeholder, &real}) {
    auto one = store->InsertResults({{agent, r}});
    ASSERT_TRUE(one.ok()) << one.status();
    EXPECT_TRUE((*one)[0].stored) << r->result_id();
  }
  auto late_one = store->InsertResults({{agent, &late}});
  ASSERT_TRUE(late_one.ok()) << late_one.status();
  EXPECT_TRUE((*late_one)[0].duplicate);
  EXPECT_EQ(Count(db.uri(), rows + " AND status <> 'cancelled'"), 3);
  EXPECT_EQ(Count(db.uri(), absl::StrCat("SELECT count(DISTINCT case_id) FROM case_results WHERE job_id = '", job,
                                         "' AND status <> 'cancelled'")),
            3);
  // The first result of each case is the one kept.
  EXPECT_EQ(Count(db.uri(), "SELECT median_ns::bigint FROM case_results WHERE case_id = 'case-1'"), 101);
  EXPECT_EQ(Count(db.uri(), "SELECT median_ns::bigint FROM case_results WHERE case_id = 'case-2'"), 104);
}

// Migration 0017 on a database that holds a case stored twice (and a cancelled
// placeholder next to a real result): the row every reader shows (newest finished) is
// kept, the hidden copy deleted, the placeholder kept, other rows untouched.
TEST(ResultsStoreTest, MigrationKeepsTheShownResultOfACaseStoredTwice) {
  FLEETMARK_TEST_DATABASE_OR_SKIP(db);
  std::vector<Migration> before;
  for (const Migration& m : EmbeddedMigrations()) {
    if (m.version < 17) before.push_back(m);
  }
  {
    pqxx::connection conn(db.uri());
    ASSERT_TRUE(ApplyMigrations(conn, before).ok());
    // The columns later migrations add that today's Store reads to register an agent
    // (0018's agents.session_instance, 0019's host identity), run as plain SQL so 0017
    // still comes first; they are idempotent (IF NOT EXISTS), so the full migration
    // below applies them again.
    pqxx::work txn(conn);
    for (const Migration& m : EmbeddedMigrations()) {
      if (m.version > 17) txn.exec(m.sql);
    }
    txn.commit();
  }
  StoreOptions options;
  options.connection.uri = db.uri();
  options.connection.pool_size = 2;
  auto opened = Store::Open(options);  // not migrated further
  ASSERT_TRUE(opened.ok()) << opened.status();
  Store& store = **opened;
  const std::string agent = Agent(store, "a1");
  auto run = CreateAndClaim(store, {agent});
  ASSERT_TRUE(run.ok()) << run.status();
  const std::string job = run->job_of.at(agent);
  std::vector<v1::CaseResult> results;
  for (int n = 1; n <= 5; ++n) {
    v1::CaseResult r = Result(absl::StrFormat("00000000-0000-4000-8000-%012d", n), job, 100 + n);
    r.mutable_spec()->set_case_id(n <= 3 ? "case-1" : absl::StrCat("case-", n));
    r.set_finished_unix_ns(r.finished_unix_ns() + n * 1'000'000'000LL);
    if (n == 1) r.set_status(v1::CASE_STATUS_CANCELLED);
    results.push_back(r);
  }
  std::vector<Store::AgentResult> batch;
  for (const v1::CaseResult& r : results) batch.push_back({agent, &r});
  auto stored = store.InsertResults(batch);
  ASSERT_TRUE(stored.ok()) << stored.status();
  ASSERT_EQ(Count(db.uri(), "SELECT count(*) FROM case_results"), 5);
  {
    pqxx::connection conn(db.uri());
    ASSERT_TRUE(ApplyMigrations(conn, EmbeddedMigrations()).ok());
  }
  // case-1: the placeholder (1) stays, of the two real results the newer (3) is kept.
  EXPECT_EQ(Text(db.uri(), "SELECT string_agg(median_ns::bigint::text, ',' ORDER BY median_ns) FROM case_results"),
            "101,103,104,105");
}

// EnsureResultPartitions creates the months ahead once (also when coordinators race),
// and moves rows of a month that had no partition out of the DEFAULT one.
TEST(ResultsStoreTest, PartitionsAheadAreCreatedOnceAndTakeOverDefaultRows) {
  FLEETMARK_TEST_DATABASE_OR_SKIP(db);
  auto store = OpenStore(db.uri());
  ASSERT_NE(store, nullptr);
  // The migration made this month and the next.
  EXPECT_TRUE(TableExists(db.uri(), PartitionName(1)));
  EXPECT_FALSE(TableExists(db.uri(), PartitionName(2)));
  auto created = store->EnsureResultPartitions(3);
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_EQ(*created, 2);
  for (int m = 0; m <= 3; ++m) EXPECT_TRUE(TableExists(db.uri(), PartitionName(m))) << m;
  EXPECT_FALSE(TableExists(db.uri(), PartitionName(4)));
  created = store->EnsureResultPartitions(3);
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_EQ(*created, 0);

  // A row of month +8 (no partition yet) lands in DEFAULT; creating month +8 moves it.
  const absl::CivilMonth later = absl::CivilMonth(absl::ToCivilSecond(absl::Now(), absl::UTCTimeZone())) + 8;
  Exec(db.uri(), absl::StrFormat("INSERT INTO case_results (result_id, run_id, job_id, agent_id, case_id, scenario,"
                                 " workload, io_mode, strategy, strategy_label, threads, placement, status, result,"
                                 " run_created_at) VALUES (gen_random_uuid(), gen_random_uuid(), gen_random_uuid(),"
                                 " gen_random_uuid(), 'c', 'batch', 'w', 'blocking', 'direct', 'direct', 0, 'any',"
                                 " 'ok', '\\x00', '%04d-%02d-10 12:00+00')",
                                 later.year(), later.month()));
  EXPECT_EQ(Count(db.uri(), "SELECT count(*) FROM case_results_default"), 1);

  // Two coordinators at once: every month made exactly once, no error.
  auto other = OpenStore(db.uri(), "c2");
  ASSERT_NE(other, nullptr);
  absl::StatusOr<int> a = 0, b = 0;
  std::thread first([&] { a = store->EnsureResultPartitions(10); });
  std::thread second([&] { b = other->EnsureResultPartitions(10); });
  first.join();
  second.join();
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(*a + *b, 7);  // months +4 .. +10
  EXPECT_EQ(Count(db.uri(), "SELECT count(*) FROM case_results_default"), 0);
  EXPECT_EQ(Count(db.uri(), absl::StrCat("SELECT count(*) FROM ", PartitionName(8))), 1);
  EXPECT_TRUE(absl::IsInvalidArgument(store->EnsureResultPartitions(121).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(store->EnsureResultPartitions(-1).status()));
}

// PruneResults and RecordRunExported on every store (store_conformance.h): a run of
// January 2024 and one of now, each with one result, its job finished (`unfinished`:
// the old run's job still runs).
class PruneTest : public StoreConformanceTest {
 protected:
  void SetUp() override {
    StoreConformanceTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    store_ = OpenStore();
    ASSERT_NE(store_, nullptr);
    agent_ = Agent(*store_, "a1");
  }
  // The runs, the old one finished unless `unfinished` (on agent a1; the new one on a2).
  void CreateRuns(bool unfinished = false) {
    const absl::Time january_2024 = absl::FromCivil(absl::CivilSecond(2024, 1, 15, 8, 0, 0), absl::UTCTimeZone());
    std::string old_job;
    old_run_ = backend().CreateRunAt(*store_, january_2024, [&] { return Claimed(agent_, &old_job); });
    StoreResult(agent_, old_job, "00000000-0000-4000-8000-0000000000a1", !unfinished);
    const std::string other = Agent(*store_, "a2");
    std::string new_job;
    new_run_ = Claimed(other, &new_job);
    StoreResult(other, new_job, "00000000-0000-4000-8000-0000000000a2", true);
    ASSERT_FALSE(old_run_.empty());
    ASSERT_FALSE(new_run_.empty());
  }
  // A run of `agent` with its job claimed: the run id and (`job`) the job id.
  std::string Claimed(const std::string& agent, std::string* job) {
    auto run = CreateAndClaim(*store_, {agent});
    EXPECT_TRUE(run.ok()) << run.status();
    if (!run.ok()) return "";
    *job = run->job_of.at(agent);
    return run->run.run_id();
  }
  // One stored result (id `result_id`) of the job, which then finishes if `finish`.
  void StoreResult(const std::string& agent, const std::string& job, const std::string& result_id, bool finish) {
    v1::CaseResult result = Result(result_id, job, 100);
    auto stored = store_->InsertResults({{agent, &result}});
    EXPECT_TRUE(stored.ok() && (*stored)[0].stored) << stored.status();
    if (finish) EXPECT_TRUE(store_->FinishJob(job, agent, JobOutcome{.ok = true}).ok());
  }
  // The stored results (of every run) and the runs, through the store.
  int64_t Rows() {
    int64_t rows = 0;
    const absl::StatusOr<std::vector<v1::RunInfo>> runs = store_->ListRuns(1000);
    EXPECT_TRUE(runs.ok()) << runs.status();
    for (const v1::RunInfo& run : runs.value_or(std::vector<v1::RunInfo>{})) {
      const absl::StatusOr<ResultExportIndex> index = store_->ListExportResults(run.run_id(), "");
      EXPECT_TRUE(index.ok()) << index.status();
      if (index.ok()) rows += static_cast<int64_t>(index->results.size());
    }
    return rows;
  }
  int64_t Runs() { return store_->ListRuns(1000)->size(); }
  bool January2024Exists() { return Sql("SELECT count(*) FROM pg_class WHERE relname = 'case_results_y2024m01'") == 1; }

  std::unique_ptr<Store> store_;
  std::string agent_, old_run_, new_run_;
};

TEST_P(PruneTest, DropsOnlyTheOldMonthsWithTheirRunsAndJobs) {
  CreateRuns();
  ASSERT_TRUE(store_->RecordRunExported(old_run_).ok());
  auto pruned = store_->PruneResults({.older_than = absl::Hours(24 * 365)});
  ASSERT_TRUE(pruned.ok()) << pruned.status();
  ASSERT_EQ(pruned->partitions.size(), 1u);
  EXPECT_EQ(pruned->partitions[0].name, "case_results_y2024m01");
  EXPECT_EQ(pruned->partitions[0].from, absl::FromCivil(absl::CivilMonth(2024, 1), absl::UTCTimeZone()));
  EXPECT_EQ(pruned->partitions[0].to, absl::FromCivil(absl::CivilMonth(2024, 2), absl::UTCTimeZone()));
  EXPECT_EQ(pruned->run_ids, std::vector<std::string>{old_run_});
  EXPECT_SQL_TRUE(!January2024Exists());
  EXPECT_EQ(Rows(), 1);
  EXPECT_EQ(Runs(), 1);
  EXPECT_SQL_EQ(Sql(absl::StrCat("SELECT count(*) FROM jobs WHERE run_id = '", old_run_, "'")), 0);
  EXPECT_TRUE(absl::IsNotFound(store_->GetRun(old_run_).status()));
  EXPECT_EQ(store_->ListExportResults(new_run_, "")->results.size(), 1u);
  // Nothing is that old any more.
  pruned = store_->PruneResults({.older_than = absl::Hours(24 * 365)});
  ASSERT_TRUE(pruned.ok()) << pruned.status();
  EXPECT_TRUE(pruned->partitions.empty());
  EXPECT_TRUE(pruned->run_ids.empty());
}

TEST_P(PruneTest, RefusesRunsNeverExportedUnlessForced) {
  CreateRuns();
  auto refused = store_->PruneResults({.older_than = absl::Hours(24 * 365)});
  ASSERT_TRUE(absl::IsFailedPrecondition(refused.status())) << refused.status();
  EXPECT_TRUE(absl::StrContains(refused.status().message(), old_run_)) << refused.status();
  EXPECT_TRUE(absl::StrContains(refused.status().message(), "never exported")) << refused.status();
  EXPECT_FALSE(absl::StrContains(refused.status().message(), new_run_)) << refused.status();
  EXPECT_SQL_TRUE(January2024Exists());
  EXPECT_EQ(Rows(), 2);
  EXPECT_EQ(Runs(), 2);

  auto forced = store_->PruneResults({.older_than = absl::Hours(24 * 365), .force = true});
  ASSERT_TRUE(forced.ok()) << forced.status();
  EXPECT_EQ(forced->run_ids, std::vector<std::string>{old_run_});
  EXPECT_SQL_TRUE(!January2024Exists());
  EXPECT_EQ(Rows(), 1);
  EXPECT_EQ(Runs(), 1);
}

TEST_P(PruneTest, RefusesUnfinishedRunsEvenWhenForced) {
  CreateRuns(/*unfinished=*/true);
  auto refused = store_->PruneResults({.older_than = absl::Hours(24 * 365), .force = true});
  ASSERT_TRUE(absl::IsFailedPrecondition(refused.status())) << refused.status();
  EXPECT_TRUE(absl::StrContains(refused.status().message(), "still queued or running")) << refused.status();
  EXPECT_TRUE(absl::StrContains(refused.status().message(), old_run_)) << refused.status();
  EXPECT_SQL_TRUE(January2024Exists());
  EXPECT_EQ(Runs(), 2);
}

TEST_P(PruneTest, DryRunAnswersTheSameAndChangesNothing) {
  CreateRuns();
  auto dry = store_->PruneResults({.older_than = absl::Hours(24 * 365), .force = true, .dry_run = true});
  ASSERT_TRUE(dry.ok()) << dry.status();
  ASSERT_EQ(dry->partitions.size(), 1u);
  EXPECT_EQ(dry->partitions[0].name, "case_results_y2024m01");
  EXPECT_EQ(dry->run_ids, std::vector<std::string>{old_run_});
  EXPECT_SQL_TRUE(January2024Exists());
  EXPECT_EQ(Rows(), 2);
  EXPECT_EQ(Runs(), 2);
  // The refusal too.
  auto refused = store_->PruneResults({.older_than = absl::Hours(24 * 365), .dry_run = true});
  EXPECT_TRUE(absl::IsFailedPrecondition(refused.status())) << refused.status();
  EXPECT_TRUE(absl::IsInvalidArgument(store_->PruneResults({.older_than = absl::ZeroDuration()}).status()));
}

TEST_P(PruneTest, ExportRecordNeedsAKnownRun) {
  CreateRuns();
  EXPECT_TRUE(absl::IsNotFound(store_->RecordRunExported("00000000-0000-4000-8000-00000000dead")));
  EXPECT_TRUE(absl::IsInvalidArgument(store_->RecordRunExported("not-a-uuid")));
  ASSERT_TRUE(store_->RecordRunExported(new_run_).ok());
  EXPECT_SQL_EQ(
      Sql(absl::StrCat("SELECT count(*) FROM runs WHERE exported_at IS NOT NULL AND run_id = '", new_run_, "'")), 1);
  // Exported, it may go with its month: its prune needs no --force.
  auto pruned = store_->PruneResults({.older_than = absl::Hours(24 * 365)});
  EXPECT_TRUE(absl::IsFailedPrecondition(pruned.status())) << "the old run was never exported: " << pruned.status();
}

INSTANTIATE_TEST_SUITE_P(Stores, PruneTest, ::testing::ValuesIn(StoreBackends()),
                         [](const ::testing::TestParamInfo<BackendFactory>& info) { return info.param.name; });

}  // namespace
}  // namespace fleetmark::store
