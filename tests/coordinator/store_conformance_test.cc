// The store conformance suite: what every Store implementation must do, one test body
// per behaviour, run against each backend (store_conformance.h): PostgreSQL (a private
// database per test, FLEETMARK_TEST_PG_URI) and the in-memory store. Tests about
// PostgreSQL itself (connections, migrations, row locks, triggers) live in
// store_pg_test.cc.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <thread>

#include <gtest/gtest.h>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "coordinator/store/store.h"
#include "coordinator/store/web_reader.h"
#include "engine/common/status_macros.h"
#include "engine/topology/fingerprint.h"
#include "tests/coordinator/store_backends.h"
#include "tests/coordinator/store_conformance.h"
#include "tests/coordinator/store_fixtures.h"

namespace fleetmark::store {

namespace {

TEST_P(StoreConformanceTest, EnrollmentTokensAreHashedAndRevocable) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->CreateEnrollmentToken("t1", "abc123", "lab").ok());
  EXPECT_EQ(store->CreateEnrollmentToken("t1", "other", "dup").code(), absl::StatusCode::kAlreadyExists);
  auto found = store->FindEnrollmentToken("abc123");
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(*found, "t1");
  EXPECT_EQ(store->FindEnrollmentToken("nope").status().code(), absl::StatusCode::kNotFound);
  ASSERT_TRUE(store->RevokeEnrollmentToken("t1").ok());
  EXPECT_EQ(store->FindEnrollmentToken("abc123").status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(store->RevokeEnrollmentToken("missing").code(), absl::StatusCode::kNotFound);
  // Only the hash is stored.
  EXPECT_SQL_EQ(Sql("SELECT count(*) FROM enrollment_tokens WHERE token_sha256 = 'abc123'"), 1);
}

// A result's device fingerprint comes back as the agent sent it, while the hash the
// store keys it by (fingerprint_hash: change series, health) is the one it computes
// itself: an agent's "forged" hash is not trusted (cli_fingerprint_test reads it back
// through the CLI).
TEST_P(StoreConformanceTest, AResultsFingerprintIsKeptAndItsHashRecomputed) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const std::string a = Agent(*store, "board-a");
  auto claimed = CreateAndClaim(*store, {a});
  ASSERT_TRUE(claimed.ok()) << claimed.status();
  v1::CaseResult r = Result("33333333-3333-4333-8333-333333333333", claimed->job_of.at(a), 100);
  r.mutable_fingerprint()->set_kernel("6.1.0-18-arm64");
  r.mutable_fingerprint()->set_governor("schedutil");
  r.mutable_fingerprint()->set_hash("forged");
  auto stored = store->InsertResults({{a, &r}});
  ASSERT_TRUE(stored.ok()) << stored.status();
  ASSERT_TRUE((*stored)[0].stored) << (*stored)[0].message;
  auto exported = store->ExportResults(claimed->run.run_id(), "board-a");
  ASSERT_TRUE(exported.ok()) << exported.status();
  ASSERT_EQ(exported->results_size(), 1);
  EXPECT_EQ(exported->results(0).fingerprint().kernel(), "6.1.0-18-arm64");
  EXPECT_EQ(exported->results(0).fingerprint().governor(), "schedutil");
  const std::string hash = engine::FingerprintHash(r.fingerprint());
  ASSERT_NE(hash, "forged");
  EXPECT_SQL_EQ(Sql("SELECT count(*) FROM case_results WHERE fingerprint_hash = '" + hash + "'"), 1);
  EXPECT_SQL_EQ(Sql("SELECT count(*) FROM case_results WHERE fingerprint_hash = 'forged'"), 0);
}

// A store that has met no replay lately COPYs a batch without looking its ids up; a
// replay then meets the primary key, and the batch is written again staged: the new id
// is stored once, the replayed one is a duplicate, also in a batch where the same id
// comes twice (the second store here has seen nothing).
TEST_P(StoreConformanceTest, AReplayToAStoreThatLooksNothingUpIsFoundByThePrimaryKey) {
  auto one = OpenStore("c1");
  auto two = OpenStore("c2");
  ASSERT_NE(one, nullptr);
  ASSERT_NE(two, nullptr);
  const std::string a = Agent(*one, "a1");
  auto claimed = CreateAndClaim(*one, {a});
  ASSERT_TRUE(claimed.ok()) << claimed.status();
  const std::string job = claimed->job_of.at(a);
  const v1::CaseResult r1 = Result("11111111-1111-4111-8111-111111111111", job, 100);
  v1::CaseResult r2 = Result("22222222-2222-4222-8222-222222222222", job, 200);
  r2.mutable_spec()->set_case_id("batch/collections/blocking/direct/any");  // one result per case
  auto first = one->InsertResults({{a, &r1}});
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE((*first)[0].stored);
  auto replay = two->InsertResults({{a, &r2}, {a, &r1}, {a, &r2}});
  ASSERT_TRUE(replay.ok()) << replay.status();
  EXPECT_TRUE((*replay)[0].stored);
  EXPECT_TRUE((*replay)[1].duplicate);
  EXPECT_FALSE((*replay)[1].stored);
  EXPECT_TRUE((*replay)[2].duplicate);
  EXPECT_SQL_EQ(Sql("SELECT count(*) FROM case_results"), 2);
  EXPECT_SQL_EQ(Sql("SELECT median_ns::bigint FROM case_results WHERE result_id = '" + r1.result_id() + "'"), 100);
  // After the replay the same store looks ids up first: the outcome is the same.
  auto again = two->InsertResults({{a, &r1}});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE((*again)[0].duplicate);
  EXPECT_SQL_EQ(Sql("SELECT count(*) FROM case_results"), 2);
}

TEST_P(StoreConformanceTest, ResultInsertIsIdempotent) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const std::string a = Agent(*store, "a1");
  const std::string b = Agent(*store, "b1");
  auto claimed = CreateAndClaim(*store, {a, b});
  ASSERT_TRUE(claimed.ok()) << claimed.status();
  const v1::RunInfo& run = claimed->run;
  ASSERT_EQ(run.jobs_size(), 2);
  const std::string job_a = claimed->job_of.at(a);
  const std::string id1 = "11111111-1111-4111-8111-111111111111";
  const std::string id2 = "22222222-2222-4222-8222-222222222222";
  v1::CaseResult r1 = Result(id1, job_a, 100), r2 = Result(id2, job_a, 200), r1_again = Result(id1, job_a, 999);
  r2.mutable_spec()->set_case_id("batch/collections/blocking/direct/any");
  // COPY's text format escapes: every special character survives the round trip.
  const std::string awkward = "tab\there\nnew line\\back\\\\slashes\rCR \\N \\x41";
  r2.set_message(awkward);
  r2.set_engine_version("v\\1\t2");
  v1::CaseResult bad_id = Result("not-a-uuid", job_a, 1);
  v1::CaseResult foreign = Result("33333333-3333-4333-8333-333333333333", job_a, 1);
  auto first = store->InsertResults({{a, &r1}, {a, &r2}, {a, &r1_again}, {a, &bad_id}, {b, &foreign}});
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ(first->size(), 5u);
  EXPECT_TRUE((*first)[0].stored);
  EXPECT_TRUE((*first)[1].stored);
  EXPECT_TRUE((*first)[2].duplicate);  // same id twice in one batch
  EXPECT_TRUE((*first)[3].rejected);
  EXPECT_NE((*first)[3].message.find("result.result_id"), std::string::npos);
  EXPECT_TRUE((*first)[4].rejected);  // agent b sending a result of a's job
  // A replay (after a reconnect) is acknowledged as a duplicate and not stored twice.
  auto replay = store->InsertResults({{a, &r1}});
  ASSERT_TRUE(replay.ok());
  EXPECT_TRUE((*replay)[0].duplicate);
  EXPECT_FALSE((*replay)[0].stored);
  EXPECT_SQL_EQ(Sql("SELECT count(*) FROM case_results"), 2);
  EXPECT_SQL_EQ(Sql("SELECT median_ns::bigint FROM case_results WHERE result_id = '" + id1 + "'"), 100);
  EXPECT_SQL_EQ(Sql("SELECT samples_ns[3] FROM case_results WHERE result_id = '" + id1 + "'"), 3);
  // A re-run of the job measures r1's case again later (another result id): one
  // result per (job, case) whatever the attempt, so it is a duplicate and the first stays.
  v1::CaseResult rerun = Result("55555555-5555-4555-8555-555555555555", job_a, 300);
  rerun.set_finished_unix_ns(1'700'000'900'000'000'000);
  auto rerun_outcome = store->InsertResults({{a, &rerun}});
  ASSERT_TRUE(rerun_outcome.ok()) << rerun_outcome.status();
  EXPECT_TRUE((*rerun_outcome)[0].duplicate);
  EXPECT_SQL_EQ(Sql("SELECT count(*) FROM case_results"), 2);
  auto exported = store->ExportResults(run.run_id(), "a1");
  ASSERT_TRUE(exported.ok()) << exported.status();
  ASSERT_EQ(exported->results_size(), 2);
  for (const auto& r : exported->results()) {
    if (r.spec().case_id() == r1.spec().case_id()) {
      EXPECT_EQ(r.stats().median_ns(), 100);
    }
  }
  // The same text as a PostgreSQL E'' literal.
  EXPECT_SQL_EQ(Sql("SELECT count(*) FROM case_results WHERE message = E'" +
                    std::string("tab\\there\\nnew line\\\\back\\\\\\\\slashes\\rCR \\\\N \\\\x41") +
                    "' AND engine_version = E'v\\\\1\\t2'"),
                1);
  // The same through the store, on every backend.
  for (const auto& r : exported->results()) {
    if (r.result_id() != id2) continue;
    EXPECT_EQ(r.message(), awkward);
    EXPECT_EQ(r.engine_version(), "v\\1\t2");
  }
  auto loaded = store->LoadResults({id1});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ((*loaded)[0].stats().median_ns(), 100);
  ASSERT_EQ((*loaded)[0].samples_ns_size(), 3);
  EXPECT_EQ((*loaded)[0].samples_ns(2), 3);
  EXPECT_EQ(exported->hosts().count("a1"), 1u);
  // RunInfo.results counts cases with a result (newest per job and case), not attempts.
  EXPECT_EQ(exported->run().results(), 2u);
  auto got = store->GetRun(run.run_id());
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->results(), 2u);
  auto listed = store->ListRuns(10);
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].results(), 2u);
}

// An export lists a sweep's points by value (natural order of case ids: cpu_ns=3000,
// 20000, 100000), not as text, where cpu_ns=100000 came before cpu_ns=20000.
TEST_P(StoreConformanceTest, ExportOrdersSweepPointsByValue) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const std::string a = Agent(*store, "a1");
  auto claimed = CreateAndClaim(*store, {a});
  ASSERT_TRUE(claimed.ok()) << claimed.status();
  const std::string job = claimed->job_of.at(a);
  const std::vector<std::string> cpu = {"100000", "20000", "3000"};
  std::vector<v1::CaseResult> results;
  for (size_t i = 0; i < cpu.size(); ++i) {
    results.push_back(Result(absl::StrCat("4444444", i, "-4444-4444-8444-444444444444"), job, 100));
    results.back().mutable_spec()->set_case_id(
        absl::StrCat("batch/synthetic[cpu_ns=", cpu[i], "]/blocking/direct/any"));
  }
  ASSERT_TRUE(store->InsertResults({{a, &results[0]}, {a, &results[1]}, {a, &results[2]}}).ok());
  auto exported = store->ExportResults(claimed->run.run_id(), "");
  ASSERT_TRUE(exported.ok()) << exported.status();
  std::vector<std::string> order;
  for (const v1::CaseResult& r : exported->results()) order.push_back(r.spec().case_id());
  EXPECT_EQ(order, (std::vector<std::string>{"batch/synthetic[cpu_ns=3000]/blocking/direct/any",
                                             "batch/synthetic[cpu_ns=20000]/blocking/direct/any",
                                             "batch/synthetic[cpu_ns=100000]/blocking/direct/any"}));
}

TEST_P(StoreConformanceTest, EmulatedAgentAndTheResultsItMeasuredAreMarked) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  AgentRegistration reg;
  reg.name = "qemu1";
  reg.credential_sha256 = "hash-qemu1";
  reg.host.set_arch("aarch64");
  reg.host.set_emulated(true);
  reg.host.set_emulation_evidence("binary aarch64, uname aarch64, /proc/cpuinfo x86 (vendor_id X)");
  reg.session_id = "s-qemu1";
  auto a = store->RegisterAgent(reg);
  ASSERT_TRUE(a.ok()) << a.status();
  const std::string native = Agent(*store, "native1");
  EXPECT_SQL_EQ(Sql("SELECT count(*) FROM agents WHERE emulated"), 1);
  auto claimed = CreateAndClaim(*store, {*a, native});
  ASSERT_TRUE(claimed.ok()) << claimed.status();
  v1::CaseResult emulated = Result("66666666-6666-4666-8666-666666666666", claimed->job_of.at(*a), 100);
  v1::CaseResult hardware = Result("77777777-7777-4777-8777-777777777777", claimed->job_of.at(native), 100);
  ASSERT_TRUE(store->InsertResults({{*a, &emulated}, {native, &hardware}}).ok());
  EXPECT_SQL_EQ(Sql("SELECT count(*) FROM case_results WHERE emulated AND result_id = '"
                    "66666666-6666-4666-8666-666666666666'"),
                1);
  EXPECT_SQL_EQ(Sql("SELECT count(*) FROM case_results WHERE NOT emulated AND result_id = '"
                    "77777777-7777-4777-8777-777777777777'"),
                1);
  // The agent comes back natively: it is no longer marked, what it measured under
  // emulation stays marked; the evidence stays in the host snapshots.
  reg.host.set_emulated(false);
  reg.host.clear_emulation_evidence();
  reg.agent_id = *a;  // its reconnect with its credential (a new enrollment of the name is refused)
  ASSERT_TRUE(store->RegisterAgent(reg).ok());
  EXPECT_SQL_EQ(Sql("SELECT count(*) FROM agents WHERE emulated"), 0);
  EXPECT_SQL_EQ(Sql("SELECT count(*) FROM case_results WHERE emulated"), 1);
  auto agents = store->ListAgents();
  ASSERT_TRUE(agents.ok()) << agents.status();
  for (const auto& agent : *agents) EXPECT_FALSE(agent.host().emulated()) << agent.name();
  // The results keep the mark they were stored with (LoadResults: the store's record).
  auto marked = store->LoadResults({"66666666-6666-4666-8666-666666666666", "77777777-7777-4777-8777-777777777777"});
  ASSERT_TRUE(marked.ok()) << marked.status();
  EXPECT_TRUE((*marked)[0].emulated());
  EXPECT_FALSE((*marked)[1].emulated());
  EXPECT_SQL_EQ(Sql("SELECT count(*) FROM host_snapshots"), 3);
}

TEST_P(StoreConformanceTest, ConcurrentReplaysStoreEachResultOnce) {
  // Batches racing on the same ids (an agent's replay next to its original, two
  // coordinators): every id is stored by exactly one batch, the others see duplicates,
  // and no batch fails.
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const std::string a = Agent(*store, "a1");
  ASSERT_TRUE(store->CreateRun(MakeRun({a})).ok());
  auto claimed = store->ClaimJobs({a}, absl::Seconds(30));
  ASSERT_TRUE(claimed.ok()) << claimed.status();
  ASSERT_EQ(claimed->size(), 1u);
  const std::string job = (*claimed)[0].assignment.job_id();
  constexpr int kResults = 200, kWriters = 4, kRounds = 5;
  std::vector<v1::CaseResult> results;
  for (int i = 0; i < kResults; ++i) {
    char id[37];
    std::snprintf(id, sizeof(id), "%08x-0000-4000-8000-%012x", i, i);
    results.push_back(Result(id, job, 100 + i));
    results.back().mutable_spec()->set_case_id(absl::StrCat("case-", i));  // one result per case
  }
  for (int round = 0; round < kRounds; ++round) {
    std::vector<Store::AgentResult> batch;
    // Each round stores a fresh slice; the writers send it in different orders.
    for (int i = round * kResults / kRounds; i < (round + 1) * kResults / kRounds; ++i) {
      batch.push_back({a, &results[i]});
    }
    std::atomic<int> stored{0}, duplicates{0}, failures{0};
    std::vector<std::thread> writers;
    for (int w = 0; w < kWriters; ++w) {
      writers.emplace_back([&, w] {
        std::vector<Store::AgentResult> mine = batch;
        if (w % 2 == 1) std::reverse(mine.begin(), mine.end());
        auto outcomes = store->InsertResults(mine);
        // Aborted (serialization/deadlock) means nothing was committed: the ingestor
        // retries such a batch.
        for (int retry = 0; retry < 20 && absl::IsAborted(outcomes.status()); ++retry) {
          outcomes = store->InsertResults(mine);
        }
        if (!outcomes.ok()) {
          ADD_FAILURE() << outcomes.status();
          ++failures;
          return;
        }
        for (const ResultOutcome& o : *outcomes) {
          EXPECT_FALSE(o.rejected) << o.message;
          if (o.stored) ++stored;
          if (o.duplicate) ++duplicates;
        }
      });
    }
    for (std::thread& t : writers) t.join();
    EXPECT_EQ(failures.load(), 0);
    EXPECT_EQ(stored.load(), static_cast<int>(batch.size()));
    EXPECT_EQ(duplicates.load(), static_cast<int>(batch.size()) * (kWriters - 1));
  }
  EXPECT_SQL_EQ(Sql("SELECT count(*) FROM case_results"), kResults);
  EXPECT_SQL_EQ(
      Sql("SELECT median_ns::bigint FROM case_results WHERE result_id = '00000007-0000-4000-8000-000000000007'"), 107);
}

TEST_P(StoreConformanceTest, ExpiredLeasesRequeueThenFailAsInfrastructure) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const std::string a = Agent(*store, "lost-agent");
  auto run = store->CreateRun(MakeRun({a}, /*max_attempts=*/2));
  ASSERT_TRUE(run.ok()) << run.status();
  for (int attempt = 1; attempt <= 2; ++attempt) {
    auto claimed = store->ClaimJobs({a}, absl::Milliseconds(1));
    ASSERT_TRUE(claimed.ok()) << claimed.status();
    ASSERT_EQ(claimed->size(), 1u) << "attempt " << attempt;
    EXPECT_EQ((*claimed)[0].assignment.attempt(), static_cast<uint32_t>(attempt));
    EXPECT_EQ((*claimed)[0].assignment.plan().name(), "small");
    Elapse(absl::Milliseconds(20));
    auto expired = store->ExpireLeases();
    ASSERT_TRUE(expired.ok()) << expired.status();
    ASSERT_EQ(expired->size(), 1u);
    EXPECT_EQ((*expired)[0].failed, attempt == 2);
  }
  auto final_run = store->GetRun(run->run_id());
  ASSERT_TRUE(final_run.ok());
  EXPECT_EQ(final_run->status(), "failed");
  ASSERT_EQ(final_run->jobs_size(), 1);
  EXPECT_EQ(final_run->jobs(0).status(), "failed");
  EXPECT_EQ(final_run->jobs(0).message().rfind("infrastructure: ", 0), 0u) << final_run->jobs(0).message();
  EXPECT_SQL_EQ(Sql("SELECT count(*) FROM jobs WHERE failure_kind = 'infrastructure'"), 1);
  // Nothing left to claim or expire.
  EXPECT_TRUE(store->ClaimJobs({a}, absl::Seconds(1))->empty());
  EXPECT_TRUE(store->ExpireLeases()->empty());
}

// Issue 32, item 3: a job re-queued after its lease expired waits for its agent at most
// the re-queue timeout; an agent that never comes back then fails it as infrastructure
// (attempts left or not) and its run ends. Before, it stayed queued and its run running
// for ever. An agent that takes it back in time keeps it.
TEST_P(StoreConformanceTest, ARequeuedJobNotTakenBackInTimeFailsAndItsRunEnds) {
  StoreOptions options;
  options.requeue_timeout = absl::Milliseconds(300);
  std::unique_ptr<Store> store = OpenStoreWith(options);
  ASSERT_NE(store, nullptr);
  const std::string lost = Agent(*store, "lost-for-good"), back = Agent(*store, "comes-back");
  auto run = store->CreateRun(MakeRun({lost}, /*max_attempts=*/3));
  auto other = store->CreateRun(MakeRun({back}, /*max_attempts=*/3));
  ASSERT_TRUE(run.ok() && other.ok());
  ASSERT_EQ(store->ClaimJobs({lost, back}, absl::Milliseconds(1))->size(), 2u);
  Elapse(absl::Milliseconds(20));
  auto expired = store->ExpireLeases();
  ASSERT_TRUE(expired.ok()) << expired.status();
  ASSERT_EQ(expired->size(), 2u);
  for (const ExpiredJob& job : *expired) EXPECT_FALSE(job.failed);
  EXPECT_EQ(store->GetRun(run->run_id())->status(), "running");
  // One agent takes its job back (attempt 2) within the timeout; the other never does.
  auto again = store->ClaimJobs({back}, absl::Seconds(30));
  ASSERT_TRUE(again.ok() && again->size() == 1u);
  EXPECT_TRUE(store->ExpireLeases()->empty());  // still within the timeout
  Elapse(absl::Milliseconds(400));
  expired = store->ExpireLeases();
  ASSERT_TRUE(expired.ok()) << expired.status();
  ASSERT_EQ(expired->size(), 1u);
  EXPECT_TRUE((*expired)[0].failed);
  EXPECT_EQ((*expired)[0].agent_id, lost);
  auto ended = store->GetRun(run->run_id());
  ASSERT_TRUE(ended.ok()) << ended.status();
  EXPECT_EQ(ended->status(), "failed");
  ASSERT_EQ(ended->jobs_size(), 1);
  EXPECT_EQ(ended->jobs(0).status(), "failed");
  EXPECT_EQ(ended->jobs(0).message().rfind("infrastructure: agent lost-for-good lost (lease expired), re-queued after "
                                           "attempt 1 of 3; not taken back by ",
                                           0),
            0u)
      << ended->jobs(0).message();
  EXPECT_NE(ended->jobs(0).message().find("(coordinator --requeue_timeout)"), std::string::npos);
  EXPECT_SQL_EQ(Sql("SELECT count(*) FROM jobs WHERE status = 'failed' AND failure_kind = 'infrastructure'"), 1);
  EXPECT_EQ(store->GetRun(other->run_id())->jobs(0).status(), "assigned");
  EXPECT_TRUE(store->ExpireLeases()->empty());
}

// Issue 32, item 4: a job whose lease expires with every case of its run stored (only
// its report is missing: e.g. its coordinator was stopped as it came) is done, whatever
// its attempts; one with a case stored only as a cancelled placeholder is not.
TEST_P(StoreConformanceTest, AnExpiredJobWithEveryCaseStoredIsDone) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const std::string whole = Agent(*store, "measured-all"), partial = Agent(*store, "measured-some");
  std::map<std::string, std::string> run_of, job_of;
  for (const std::string& agent : {whole, partial}) {
    NewRun new_run = MakeRun({agent}, /*max_attempts=*/1);
    new_run.case_ids = {"case-1", "case-2"};
    new_run.cases_total = 2;
    auto run = store->CreateRun(new_run);
    ASSERT_TRUE(run.ok()) << run.status();
    run_of[agent] = run->run_id();
  }
  auto claimed = store->ClaimJobs({whole, partial}, absl::Milliseconds(1));
  ASSERT_TRUE(claimed.ok() && claimed->size() == 2u);
  for (const ClaimedJob& c : *claimed) job_of[c.agent_id] = c.assignment.job_id();
  std::vector<v1::CaseResult> rows;
  std::vector<Store::AgentResult> batch;
  int n = 0;
  for (const auto& [agent, status] :
       {std::pair{whole, v1::CASE_STATUS_OK}, std::pair{partial, v1::CASE_STATUS_CANCELLED}}) {
    for (int c = 1; c <= 2; ++c) {
      v1::CaseResult r = Result(absl::StrFormat("%08d-0000-4000-8000-00000000000f", ++n), job_of[agent], 1);
      r.mutable_spec()->set_case_id(absl::StrCat("case-", c));
      r.set_status(c == 1 ? v1::CASE_STATUS_OK : status);
      rows.push_back(r);
    }
  }
  for (size_t i = 0; i < rows.size(); ++i) batch.push_back({i < 2 ? whole : partial, &rows[i]});
  ASSERT_TRUE(store->InsertResults(batch).ok());
  Elapse(absl::Milliseconds(20));
  auto expired = store->ExpireLeases();
  ASSERT_TRUE(expired.ok()) << expired.status();
  ASSERT_EQ(expired->size(), 2u);
  for (const ExpiredJob& job : *expired) {
    EXPECT_EQ(job.done, job.agent_id == whole) << job.agent_id;
    EXPECT_EQ(job.failed, job.agent_id == partial) << job.agent_id;
  }
  auto done = store->GetRun(run_of[whole]);
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(done->status(), "done");
  EXPECT_EQ(done->jobs(0).status(), "done");
  EXPECT_EQ(done->jobs(0).cases_done(), 2u);
  EXPECT_EQ(done->jobs(0).message(),
            "every case stored; agent measured-all lost (lease expired) before its report came, after attempt 1 of 1");
  EXPECT_EQ(store->GetRun(run_of[partial])->status(), "failed");
}

TEST_P(StoreConformanceTest, ADeferredJobFailsAsInfrastructureNotAsABenchmark) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const std::string a = Agent(*store, "phone");
  auto run = store->CreateRun(MakeRun({a}));
  ASSERT_TRUE(run.ok());
  auto claimed = store->ClaimJobs({a}, absl::Seconds(30));
  ASSERT_EQ(claimed->size(), 1u);
  const std::string job = (*claimed)[0].assignment.job_id();
  const std::string reason = "deferred: battery: 12 % < 20 % and not charging (3 checks, 60 s of cool-down)";
  ASSERT_TRUE(
      store->FinishJob(job, a, JobOutcome{.ok = false, .cancelled = false, .message = reason, .deferred = true}).ok());
  auto ended = store->GetRun(run->run_id());
  ASSERT_TRUE(ended.ok());
  ASSERT_EQ(ended->jobs_size(), 1);
  EXPECT_EQ(ended->jobs(0).status(), "failed");
  EXPECT_EQ(ended->jobs(0).message(), reason);
  EXPECT_SQL_EQ(Sql("SELECT count(*) FROM jobs WHERE failure_kind = 'infrastructure'"), 1);
  EXPECT_SQL_EQ(Sql("SELECT count(*) FROM jobs WHERE failure_kind = 'benchmark'"), 0);
}

TEST_P(StoreConformanceTest, JobLifecycleAndRestartRelease) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const std::string a = Agent(*store, "worker");
  auto run = store->CreateRun(MakeRun({a}));
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->status(), "queued");
  auto claimed = store->ClaimJobs({a}, absl::Seconds(30));
  ASSERT_EQ(claimed->size(), 1u);
  const std::string job = (*claimed)[0].assignment.job_id();
  // The agent restarted running nothing: the job is re-queued at once.
  auto released = store->ReleaseAgentJobs(a, "");
  ASSERT_TRUE(released.ok()) << released.status();
  ASSERT_EQ(released->size(), 1u);
  EXPECT_FALSE((*released)[0].failed);
  claimed = store->ClaimJobs({a}, absl::Seconds(30));
  ASSERT_EQ(claimed->size(), 1u);
  EXPECT_EQ((*claimed)[0].assignment.attempt(), 2u);
  ASSERT_TRUE(store->MarkJobRunning(job, a, absl::Seconds(30)).ok());
  ASSERT_TRUE(store->UpdateJobProgress(job, a, 1, 1, absl::Seconds(30)).ok());
  EXPECT_EQ(store->UpdateJobProgress(job, a, 5, 1, absl::Seconds(30)).code(), absl::StatusCode::kInvalidArgument);
  // Reconnect while still running: resumed, not released.
  EXPECT_TRUE(*store->ResumeJob(job, a, absl::Seconds(30)));
  EXPECT_TRUE(store->ReleaseAgentJobs(a, job)->empty());
  ASSERT_TRUE(store->FinishJob(job, a, JobOutcome{true, false, ""}).ok());
  auto done = store->GetRun(run->run_id());
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->status(), "done");
  EXPECT_GT(done->finished_unix_ns(), 0);
  EXPECT_FALSE(*store->ResumeJob(job, a, absl::Seconds(30)));  // ended
  EXPECT_EQ(store->FinishJob(job, "00000000-0000-4000-8000-000000000000", JobOutcome{}).code(),
            absl::StatusCode::kNotFound);
  // Cancelling an ended run is refused; listing shows it.
  EXPECT_EQ(store->CancelRun(run->run_id()).status().code(), absl::StatusCode::kFailedPrecondition);
  auto runs = store->ListRuns(10);
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ(store->GetRun("bad").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store->GetRun("00000000-0000-4000-8000-000000000000").status().code(), absl::StatusCode::kNotFound);
}

TEST_P(StoreConformanceTest, CreatedRunInfoMatchesReadBack) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const std::string busy = Agent(*store, "c-busy");
  const std::string idle = Agent(*store, "a-idle");
  const std::string other = Agent(*store, "b-other");
  // c-busy runs a job already: its job in the new run stays queued.
  ASSERT_TRUE(store->CreateRunAndClaim(MakeRun({busy}), {busy}, absl::Seconds(30)).ok());
  NewRun run = MakeRun({busy, idle, other});
  run.quick = true;
  run.selector = "label:rack=b";
  auto created = store->CreateRunAndClaim(run, {busy, idle}, absl::Seconds(30));
  ASSERT_TRUE(created.ok()) << created.status();
  ASSERT_EQ(created->claimed.size(), 1u);
  EXPECT_EQ(created->claimed[0].agent_id, idle);
  auto read = store->GetRun(created->run_id);
  ASSERT_TRUE(read.ok()) << read.status();
  // The RunInfo built from the inserted rows is what GetRun reads back.
  EXPECT_EQ(created->run.SerializeAsString(), read->SerializeAsString()) << "built:\n"
                                                                         << created->run.DebugString() << "read:\n"
                                                                         << read->DebugString();
  EXPECT_EQ(created->run.status(), "running");
  ASSERT_EQ(created->run.jobs_size(), 3);
  EXPECT_EQ(created->run.jobs(0).agent_name(), "a-idle");
  EXPECT_EQ(created->run.jobs(0).status(), "assigned");
  EXPECT_EQ(created->run.jobs(2).status(), "queued");
  if (HasSql()) {  // PostgreSQL's web view (web_reader.h) reads the same tables
    // The web reader reads the same run (one read model: internal::RunColumns/JobColumns).
    auto reader = OpenPgWebReader({.uri = backend().pg_uri(), .pool_size = 1});
    ASSERT_TRUE(reader.ok()) << reader.status();
    auto web = (*reader)->GetRun(created->run_id);
    ASSERT_TRUE(web.ok()) << web.status();
    EXPECT_EQ(web->run_id, read->run_id());
    EXPECT_EQ(web->plan_name, read->plan_name());
    EXPECT_EQ(web->status, read->status());
    EXPECT_EQ(web->selector, read->selector());
    EXPECT_EQ(web->submitted_by, read->submitted_by());
    EXPECT_EQ(web->quick, read->quick());
    EXPECT_EQ(web->created_unix_ns, read->created_unix_ns());
    EXPECT_EQ(web->finished_unix_ns, read->finished_unix_ns());
    EXPECT_EQ(web->results, read->results());
    ASSERT_EQ(web->jobs.size(), static_cast<size_t>(read->jobs_size()));
    for (int i = 0; i < read->jobs_size(); ++i) {
      EXPECT_EQ(web->jobs[i].job_id, read->jobs(i).job_id());
      EXPECT_EQ(web->jobs[i].agent_name, read->jobs(i).agent_name());
      EXPECT_EQ(web->jobs[i].status, read->jobs(i).status());
      EXPECT_EQ(web->jobs[i].attempts, read->jobs(i).attempts());
      EXPECT_EQ(web->jobs[i].cases_total, read->jobs(i).cases_total());
    }
    EXPECT_EQ(web->jobs[0].agent_id, idle);
  }
  // No idle agent: the run stays queued.
  auto queued = store->CreateRunAndClaim(MakeRun({busy}), {}, absl::Seconds(30));
  ASSERT_TRUE(queued.ok()) << queued.status();
  EXPECT_EQ(queued->run.SerializeAsString(), store->GetRun(queued->run_id)->SerializeAsString());
  EXPECT_EQ(queued->run.status(), "queued");
}

TEST_P(StoreConformanceTest, JobUpdatesInOneBatch) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const std::string a = Agent(*store, "ua");
  const std::string b = Agent(*store, "ub");
  auto claimed = CreateAndClaim(*store, {a, b});
  ASSERT_TRUE(claimed.ok()) << claimed.status();
  const std::string job_a = claimed->job_of.at(a), job_b = claimed->job_of.at(b);
  using Update = Store::JobUpdate;
  // Accepts and progress of two agents in one statement; a's last progress wins and a
  // later accept keeps it; agent a naming b's job changes nothing.
  ASSERT_TRUE(
      store
          ->UpdateJobs({Update{.job_id = job_a, .agent_id = a},
                        Update{.job_id = job_a, .agent_id = a, .has_progress = true, .cases_done = 1, .cases_total = 3},
                        Update{.job_id = job_b, .agent_id = b},
                        Update{.job_id = job_b, .agent_id = a, .has_progress = true, .cases_done = 3, .cases_total = 3},
                        Update{.job_id = job_a, .agent_id = a, .has_progress = true, .cases_done = 2, .cases_total = 3},
                        Update{.job_id = job_a, .agent_id = a}},
                       absl::Seconds(30))
          .ok());
  EXPECT_SQL_EQ(Sql("SELECT cases_done FROM jobs WHERE job_id = '" + job_a + "'"), 2);
  EXPECT_SQL_EQ(Sql("SELECT cases_done FROM jobs WHERE job_id = '" + job_b + "'"), 0);
  EXPECT_SQL_EQ(Sql("SELECT count(*) FROM jobs WHERE status = 'running'"), 2);
  // The same through GetRun, on every backend.
  auto job_info = [&](const std::string& job_id) {
    v1::JobInfo found;
    auto run = store->GetRun(claimed->run.run_id());
    EXPECT_TRUE(run.ok()) << run.status();
    if (run.ok()) {
      for (const v1::JobInfo& job : run->jobs()) {
        if (job.job_id() == job_id) found = job;
      }
    }
    return found;
  };
  EXPECT_EQ(job_info(job_a).cases_done(), 2u);
  EXPECT_EQ(job_info(job_b).cases_done(), 0u);
  EXPECT_EQ(job_info(job_a).status(), "running");
  EXPECT_EQ(job_info(job_b).status(), "running");
  // One bad update refuses the batch, naming the field; nothing of it is written.
  absl::Status bad = store->UpdateJobs(
      {Update{.job_id = job_a, .agent_id = a, .has_progress = true, .cases_done = 3, .cases_total = 3},
       Update{.job_id = job_b, .agent_id = b, .has_progress = true, .cases_done = 4, .cases_total = 3}},
      absl::Seconds(30));
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("cases_done"), std::string::npos) << bad;
  EXPECT_SQL_EQ(Sql("SELECT cases_done FROM jobs WHERE job_id = '" + job_a + "'"), 2);
  EXPECT_EQ(job_info(job_a).cases_done(), 2u);
  EXPECT_EQ(store->UpdateJobs({Update{.job_id = "nope", .agent_id = a}}, absl::Seconds(30)).code(),
            absl::StatusCode::kInvalidArgument);
  // A job that ended ignores late updates.
  ASSERT_TRUE(store->FinishJob(job_b, b, JobOutcome{true, false, ""}).ok());
  ASSERT_TRUE(store->UpdateJobs({Update{.job_id = job_b, .agent_id = b}}, absl::Seconds(30)).ok());
  EXPECT_SQL_EQ(Sql("SELECT count(*) FROM jobs WHERE job_id = '" + job_b + "' AND status = 'done'"), 1);
  EXPECT_EQ(job_info(job_b).status(), "done");
}

// Issue 17: job ends are group-committed (Store::FinishJobs): one transaction for many
// agents' ends, one status per item, one recount per run. The bad items of a batch
// (not a UUID, not the agent's job) get their own error and the rest is written.
TEST_P(StoreConformanceTest, JobEndsInOneBatch) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const std::string a = Agent(*store, "ea"), b = Agent(*store, "eb"), c = Agent(*store, "ec");
  auto claimed = CreateAndClaim(*store, {a, b, c});
  ASSERT_TRUE(claimed.ok()) << claimed.status();
  const std::string job_a = claimed->job_of.at(a), job_b = claimed->job_of.at(b), job_c = claimed->job_of.at(c);
  using End = Store::JobEnd;
  // A benchmark failure's message longer than the 4096 bytes kept, cut inside a
  // two-byte character.
  const std::string long_message = std::string(4095, 'x') + "\xc3\xa9" + "tail";
  auto statuses =
      store->FinishJobs({End{job_a, a, {.ok = true}}, End{job_b, b, {.ok = false, .message = long_message}},
                         End{job_a, c, {.ok = true}},  // c naming a's job
                         End{"nope", a, {.ok = true}}, End{job_a, a, {.ok = false, .message = "a repeat, ignored"}}});
  ASSERT_TRUE(statuses.ok()) << statuses.status();
  ASSERT_EQ(statuses->size(), 5u);
  EXPECT_TRUE((*statuses)[0].ok()) << (*statuses)[0];
  EXPECT_TRUE((*statuses)[1].ok()) << (*statuses)[1];
  EXPECT_EQ((*statuses)[2].code(), absl::StatusCode::kNotFound) << (*statuses)[2];
  EXPECT_EQ((*statuses)[3].code(), absl::StatusCode::kInvalidArgument) << (*statuses)[3];
  EXPECT_NE((*statuses)[3].message().find("job_id"), std::string::npos) << (*statuses)[3];
  EXPECT_TRUE((*statuses)[4].ok()) << "already ended: nothing to do";
  auto run = store->GetRun(claimed->run.run_id());
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->status(), "running") << "c still runs";
  std::map<std::string, v1::JobInfo> jobs;
  for (const v1::JobInfo& j : run->jobs()) jobs[j.job_id()] = j;
  EXPECT_EQ(jobs[job_a].status(), "done");
  EXPECT_EQ(jobs[job_a].message(), "") << "the first end of a job wins";
  EXPECT_EQ(jobs[job_b].status(), "failed");
  EXPECT_EQ(jobs[job_b].message(), std::string(4095, 'x')) << "cut at the character boundary";
  EXPECT_EQ(jobs[job_c].status(), "assigned");
  EXPECT_SQL_EQ(Sql("SELECT count(*) FROM jobs WHERE failure_kind = 'benchmark'"), 1);
  // The last end recounts the run once more: failed (b failed).
  ASSERT_TRUE(store->FinishJob(job_c, c, {.ok = true}).ok());
  run = store->GetRun(claimed->run.run_id());
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->status(), "failed");
  EXPECT_GT(run->finished_unix_ns(), 0);
  // Only bad items: nothing to write, no transaction, each its error.
  statuses = store->FinishJobs({End{job_a, "bad", {}}});
  ASSERT_TRUE(statuses.ok()) << statuses.status();
  EXPECT_EQ((*statuses)[0].code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE((*statuses)[0].message().find("agent_id"), std::string::npos) << (*statuses)[0];
}

TEST_P(StoreConformanceTest, ScheduleSlotFiresOnceWithTwoCoordinators) {
  auto store1 = OpenStore("c1");
  auto store2 = OpenStore("c2");
  ASSERT_NE(store1, nullptr);
  ASSERT_NE(store2, nullptr);
  const std::string a = Agent(*store1, "nightly-box");
  v1::Schedule schedule;
  schedule.set_name("nightly");
  schedule.set_cron("0 2 * * *");
  *schedule.mutable_plan() = SmallPlan();
  ASSERT_TRUE(store1->CreateSchedule(schedule, absl::Now()).ok());
  EXPECT_EQ(store2->CreateSchedule(schedule, absl::Now()).status().code(), absl::StatusCode::kAlreadyExists);
  const absl::Time slot = absl::FromCivil(absl::CivilMinute(2026, 11, 30, 2, 0), absl::UTCTimeZone());
  std::atomic<int> fired{0}, skipped{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      Store& store = i % 2 == 0 ? *store1 : *store2;
      auto result = store.FireSchedule("nightly", slot, MakeRun({a}));
      ASSERT_TRUE(result.ok()) << result.status();
      (result->has_value() ? fired : skipped)++;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(fired.load(), 1);
  EXPECT_EQ(skipped.load(), 3);
  EXPECT_SQL_EQ(Sql("SELECT count(*) FROM runs"), 1);
  EXPECT_SQL_EQ(Sql("SELECT count(*) FROM schedule_fires WHERE run_id IS NOT NULL"), 1);
  auto last = store2->LastFiredSlot("nightly");
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(**last, slot);
  // The next slot fires again; deleting the schedule removes it.
  auto next = store2->FireSchedule("nightly", slot + absl::Hours(24), MakeRun({a}));
  ASSERT_TRUE(next.ok());
  EXPECT_TRUE(next->has_value());
  auto listed = store1->ListSchedules();
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].plan().name(), "small");
  ASSERT_TRUE(store1->DeleteSchedule("nightly").ok());
  EXPECT_EQ(store1->DeleteSchedule("nightly").code(), absl::StatusCode::kNotFound);
}

TEST_P(StoreConformanceTest, AgentsListAndOfflineOnlyFromOwnSession) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const std::string a = Agent(*store, "pixel-7", "aarch64");
  // Liveness heard on another stream than the one holding the session counts for nothing.
  ASSERT_TRUE(store->RecordLiveness({{a, absl::Now(), 99, 0.5, "an-older-session"}}, absl::Seconds(30)).ok());
  EXPECT_EQ((*store->ListAgents())[0].rss_bytes(), 0u);
  ASSERT_TRUE(store->RecordLiveness({{a, absl::Now(), 1234, 0.5, "s-pixel-7"}}, absl::Seconds(30)).ok());
  auto agents = store->ListAgents();
  ASSERT_TRUE(agents.ok()) << agents.status();
  ASSERT_EQ(agents->size(), 1u);
  EXPECT_EQ((*agents)[0].state(), "online");
  EXPECT_EQ((*agents)[0].rss_bytes(), 1234u);
  EXPECT_EQ((*agents)[0].labels().at("rack"), "b");
  EXPECT_EQ((*agents)[0].host().arch(), "aarch64");
  // A stale stream's end does not mark the reconnected agent offline.
  ASSERT_TRUE(store->SetAgentOffline(a, "an-older-session").ok());
  EXPECT_EQ((*store->ListAgents())[0].state(), "online");
  ASSERT_TRUE(store->SetAgentOffline(a, "s-pixel-7").ok());
  EXPECT_EQ((*store->ListAgents())[0].state(), "offline");
  auto identity = store->FindAgentByName("pixel-7");
  ASSERT_TRUE(identity.ok());
  EXPECT_EQ(identity->credential_sha256, "hash-pixel-7");
  EXPECT_SQL_EQ(Sql("SELECT count(*) FROM host_snapshots"), 1);
}

// Issue 32, item 2: one identity has one live session fleet-wide. A second process with
// the agent's credential (another instance id) is refused through any coordinator while
// the session lives, writing nothing; the same process reconnecting (its old stream
// stale) takes the session at once; so does anyone once the session ended where it was
// opened, went offline, or fell silent for the online window. A displaced stream is
// found by AgentsToDisconnect and its liveness is not recorded.
TEST_P(StoreConformanceTest, OneIdentityHasOneLiveSessionAcrossCoordinators) {
  auto c1 = OpenStore("c1");
  auto c2 = OpenStore("c2");
  ASSERT_NE(c1, nullptr);
  ASSERT_NE(c2, nullptr);
  AgentRegistration reg;
  reg.name = "a1";
  reg.credential_sha256 = "hash-a1";
  reg.session_id = "s1";
  reg.instance_id = "11111111-0000-4000-8000-000000000001";
  auto id = c1->RegisterAgent(reg);
  ASSERT_TRUE(id.ok()) << id.status();
  const std::string row = absl::StrCat(" FROM agents WHERE agent_id = '", *id, "'");
  auto held_by = [&](const std::string& session, const std::string& coordinator) {
    return Sql(absl::StrCat("SELECT count(*)", row, " AND session_id = '", session, "' AND coordinator_id = '",
                            coordinator, "' AND state = 'online'")) == 1;
  };
  reg.agent_id = *id;  // reconnects authenticated by the credential

  AgentRegistration copy = reg;
  copy.session_id = "s2";
  copy.instance_id = "22222222-0000-4000-8000-000000000002";
  copy.host.set_arch("riscv64");
  for (Store* store : {c2.get(), c1.get()}) {
    auto refused = store->RegisterAgent(copy);
    ASSERT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition) << refused.status();
    EXPECT_EQ(refused.status().message().rfind(kIdentityInUsePrefix, 0), 0u) << refused.status();
    EXPECT_NE(refused.status().message().find("coordinator c1"), std::string::npos) << refused.status();
  }
  EXPECT_SQL_TRUE(held_by("s1", "c1"));
  EXPECT_SQL_EQ(Sql("SELECT count(*) FROM host_snapshots"), 1);  // nothing written
  EXPECT_EQ((*c1->ListAgents())[0].state(), "online");
  // The copy's heartbeats would not count; the session's do.
  ASSERT_TRUE(c2->RecordLiveness({{*id, absl::Now(), 7, 0, "s2"}}, absl::Seconds(30)).ok());
  EXPECT_SQL_EQ(Sql("SELECT rss_bytes" + row), 0);
  ASSERT_TRUE(c1->RecordLiveness({{*id, absl::Now(), 9, 0, "s1"}}, absl::Seconds(30)).ok());
  EXPECT_SQL_EQ(Sql("SELECT rss_bytes" + row), 9);
  auto none = c1->AgentsToDisconnect({*id}, {"s1"});
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_TRUE(none->empty());

  // The same process reconnects through c2 while its stream on c1 looks alive.
  AgentRegistration back = reg;
  back.session_id = "s3";
  ASSERT_TRUE(c2->RegisterAgent(back).ok());
  EXPECT_SQL_TRUE(held_by("s3", "c2"));
  auto displaced = c1->AgentsToDisconnect({*id}, {"s1"});
  ASSERT_TRUE(displaced.ok()) << displaced.status();
  ASSERT_EQ(displaced->size(), 1u);
  EXPECT_TRUE((*displaced)[0].identity_in_use);
  EXPECT_NE((*displaced)[0].reason.find("coordinator c2"), std::string::npos) << (*displaced)[0].reason;
  EXPECT_EQ(c1->AgentsToDisconnect({*id}, {"s1", "s9"}).status().code(), absl::StatusCode::kInvalidArgument);
  // Refused again; taken once the session ended on the coordinator that opened it.
  copy.session_id = "s4";
  EXPECT_EQ(c1->RegisterAgent(copy).status().code(), absl::StatusCode::kFailedPrecondition);
  copy.session_ended_here = [](const std::string& session) { return session == "s3"; };
  ASSERT_TRUE(c2->RegisterAgent(copy).ok());
  EXPECT_SQL_TRUE(held_by("s4", "c2"));
  // Taken once it went offline, or fell silent for the online window.
  reg.session_id = "s5";
  EXPECT_EQ(c1->RegisterAgent(reg).status().code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(c2->SetAgentOffline(*id, "s4").ok());
  ASSERT_TRUE(c1->RegisterAgent(reg).ok());
  EXPECT_SQL_TRUE(held_by("s5", "c1"));
  copy.session_ended_here = nullptr;
  copy.session_id = "s6";
  EXPECT_EQ(c2->RegisterAgent(copy).status().code(), absl::StatusCode::kFailedPrecondition);
  backend().SilenceAgents(absl::Hours(1));
  ASSERT_TRUE(c2->RegisterAgent(copy).ok());
  EXPECT_SQL_TRUE(held_by("s6", "c2"));
  // An agent without an instance id (built before it) is never the same process.
  AgentRegistration old_agent = reg;
  old_agent.instance_id = "";
  old_agent.session_id = "s7";
  EXPECT_EQ(c2->RegisterAgent(old_agent).status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST_P(StoreConformanceTest, TokensListedWithoutSecretsAndRevokingTwiceSaysSo) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->CreateEnrollmentToken("tok-lab", "hash-lab-0123456789", "lab boards").ok());
  ASSERT_TRUE(store->CreateEnrollmentToken("tok-phones", "hash-phones-0123456789", "").ok());
  AgentRegistration reg;
  reg.name = "board-1";
  reg.credential_sha256 = "cred";
  reg.token_id = "tok-lab";
  reg.session_id = "s1";
  ASSERT_TRUE(store->RegisterAgent(reg).ok());
  reg.name = "board-2";
  ASSERT_TRUE(store->RegisterAgent(reg).ok());

  auto tokens = store->ListEnrollmentTokens();
  ASSERT_TRUE(tokens.ok()) << tokens.status();
  ASSERT_EQ(tokens->size(), 2u);
  EXPECT_EQ((*tokens)[0].token_id(), "tok-lab");  // oldest first
  EXPECT_EQ((*tokens)[0].description(), "lab boards");
  EXPECT_EQ((*tokens)[0].agents(), 2u);
  EXPECT_EQ((*tokens)[1].token_id(), "tok-phones");
  EXPECT_EQ((*tokens)[1].agents(), 0u);
  for (const v1::TokenInfo& token : *tokens) {
    EXPECT_EQ(token.revoked_unix_ns(), 0);
    EXPECT_LT(std::abs(absl::ToDoubleSeconds(absl::FromUnixNanos(token.created_unix_ns()) - absl::Now())), 600);
    EXPECT_EQ(token.DebugString().find("hash-"), std::string::npos) << token.DebugString();
  }

  ASSERT_TRUE(store->RevokeEnrollmentToken("tok-lab").ok());
  tokens = store->ListEnrollmentTokens();
  ASSERT_TRUE(tokens.ok()) << tokens.status();
  EXPECT_GE((*tokens)[0].revoked_unix_ns(), (*tokens)[0].created_unix_ns());
  EXPECT_EQ((*tokens)[1].revoked_unix_ns(), 0);
  // A second revoke is not a silent success, and changes nothing.
  const int64_t revoked_at = (*tokens)[0].revoked_unix_ns();
  absl::Status again = store->RevokeEnrollmentToken("tok-lab");
  EXPECT_EQ(again.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(again.message().find("\"tok-lab\" was already revoked at 20"), std::string::npos) << again;
  EXPECT_EQ((*store->ListEnrollmentTokens())[0].revoked_unix_ns(), revoked_at);
  absl::Status unknown = store->RevokeEnrollmentToken("tok-nope");
  EXPECT_EQ(unknown.code(), absl::StatusCode::kNotFound);
  EXPECT_NE(unknown.message().find("\"tok-nope\""), std::string::npos) << unknown;
}

TEST_P(StoreConformanceTest, RunIdPrefixesResolveToOneRun) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const std::string a = Agent(*store, "a1");
  auto run = store->CreateRun(MakeRun({a}));
  ASSERT_TRUE(run.ok()) << run.status();
  // Runs with chosen ids (sharing the first run's plan) to make prefixes collide.
  const std::string one = "abcdef01-1111-4111-8111-111111111111";
  const std::string two = "abcdef02-2222-4222-8222-222222222222";
  for (const std::string& id : {one, two}) backend().AddRunWithId(*store, *run, a, id);
  EXPECT_EQ(*store->ResolveRunId(run->run_id().substr(0, 8)), run->run_id());
  EXPECT_EQ(*store->ResolveRunId(run->run_id()), run->run_id());
  EXPECT_EQ(*store->ResolveRunId("abcdef01"), one);
  EXPECT_EQ(*store->ResolveRunId("ABCDEF02-22"), two);  // any case, dashes where the id has them
  EXPECT_EQ(*store->ResolveRunId("ABCDEF01-1111-4111-8111-111111111111"), one);
  // An unknown full UUID is itself: NotFound where it is used.
  EXPECT_EQ(*store->ResolveRunId("00000000-0000-4000-8000-000000000000"), "00000000-0000-4000-8000-000000000000");
  // Issue 32, item 12: `agents list` shows the job an agent runs, and `runs show` refused
  // that id. A job's id (any case) names its run.
  ASSERT_GE(run->jobs_size(), 1);
  EXPECT_EQ(*store->ResolveRunId(run->jobs(0).job_id()), run->run_id());
  EXPECT_EQ(*store->ResolveRunId(absl::AsciiStrToUpper(run->jobs(0).job_id())), run->run_id());

  auto ambiguous = store->ResolveRunId("abcdef");
  EXPECT_EQ(ambiguous.status().code(), absl::StatusCode::kInvalidArgument);
  // Exactly two matches: both named, no "..." (there are no more).
  EXPECT_EQ(ambiguous.status().message(),
            "run id prefix abcdef is ambiguous (matches " + one + ", " + two + "): give more characters")
      << ambiguous.status();
  backend().AddRunWithId(*store, *run, a, "abcdef03-3333-4333-8333-333333333333");
  ambiguous = store->ResolveRunId("abcdef");
  EXPECT_EQ(ambiguous.status().message(),
            "run id prefix abcdef is ambiguous (matches " + one + ", " + two + ", ...): give more characters")
      << ambiguous.status();

  auto none = store->ResolveRunId("123456");
  EXPECT_EQ(none.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(none.status().message(), "no run with id prefix 123456");

  for (const std::string bad :
       {"", "abcde", "abcdeg", "abcdef011", "abcdef'%", "abcdef01-1111-4111-8111-1111111111111"}) {
    auto refused = store->ResolveRunId(bad);
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(refused.status().message().find("run_id: a run id (UUID) or a unique prefix of it with at least 6 hex"),
              std::string::npos)
        << refused.status();
  }
  EXPECT_NE(store->ResolveRunId("abcde").status().message().find("(5 hex digits)"), std::string::npos);
  EXPECT_NE(store->ResolveRunId("abcdef011").status().message().find("expected '-' at offset 8"), std::string::npos);
}

TEST_P(StoreConformanceTest, DefaultScheduleSeededOncePerDatabase) {
  auto store1 = OpenStore("c1");
  auto store2 = OpenStore("c2");
  ASSERT_NE(store1, nullptr);
  ASSERT_NE(store2, nullptr);
  // Coordinators starting together: one creates it, the others update it, none fails.
  std::atomic<int> created{0}, updated{0}, failed{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      auto outcome = (i % 2 == 0 ? *store1 : *store2).SeedDefaultSchedule(Nightly("0 2 * * *"), absl::Now());
      if (!outcome.ok()) {
        ADD_FAILURE() << outcome.status();
        ++failed;
      } else if (*outcome == Store::SeedOutcome::kCreated) {
        ++created;
      } else if (*outcome == Store::SeedOutcome::kUpdated) {
        ++updated;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(created.load(), 1);
  EXPECT_EQ(updated.load(), 3);
  EXPECT_SQL_EQ(Sql("SELECT count(*) FROM schedules"), 1);
  EXPECT_SQL_EQ(Sql("SELECT count(*) FROM seeded_defaults WHERE name = 'schedule:nightly'"), 1);

  // A restart with other flags updates it.
  auto outcome = store2->SeedDefaultSchedule(Nightly("30 3 * * 1"), absl::Now());
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(*outcome, Store::SeedOutcome::kUpdated);
  auto listed = store1->ListSchedules();
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].cron(), "30 3 * * 1");

  // Deleted by a user: later starts leave it deleted.
  ASSERT_TRUE(store1->DeleteSchedule("nightly").ok());
  for (int restart = 0; restart < 2; ++restart) {
    outcome = store1->SeedDefaultSchedule(Nightly("0 2 * * *"), absl::Now());
    ASSERT_TRUE(outcome.ok()) << outcome.status();
    EXPECT_EQ(*outcome, Store::SeedOutcome::kLeftDeleted);
  }
  EXPECT_SQL_EQ(Sql("SELECT count(*) FROM schedules"), 0);

  // Re-created by a user: the flags update it again.
  ASSERT_TRUE(store1->CreateSchedule(Nightly("0 4 * * *"), absl::Now()).ok());
  outcome = store2->SeedDefaultSchedule(Nightly("0 2 * * *"), absl::Now());
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(*outcome, Store::SeedOutcome::kUpdated);
  EXPECT_EQ((*store1->ListSchedules())[0].cron(), "0 2 * * *");
  EXPECT_EQ(store1->SeedDefaultSchedule(Nightly(""), absl::Now()).status().code(), absl::StatusCode::kInvalidArgument);
}

// A cancelled job reports its unmeasured cases as `cancelled` placeholders: they are
// not results. RunInfo.results (GetRun, ListRuns) and the web API count the same cases.
TEST_P(StoreConformanceTest, CancelledPlaceholdersAreNotCountedAsResults) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const std::string a = Agent(*store, "a1");
  const std::string b = Agent(*store, "b1");
  auto claimed = CreateAndClaim(*store, {a, b});
  ASSERT_TRUE(claimed.ok()) << claimed.status();
  const v1::RunInfo& run = claimed->run;
  std::map<std::string, std::string> job_of = claimed->job_of;
  std::vector<v1::CaseResult> rows;
  auto add = [&](const std::string& agent, int n, v1::CaseStatus status) {
    v1::CaseResult r = Result(absl::StrFormat("%08d-0000-4000-8000-000000000000", rows.size() + 1), job_of[agent], 1);
    r.mutable_spec()->set_case_id(absl::StrCat("case-", n));
    r.set_status(status);
    rows.push_back(r);
  };
  add(a, 1, v1::CASE_STATUS_OK);
  add(a, 2, v1::CASE_STATUS_FAILED);  // a real result: measured and failed
  add(a, 3, v1::CASE_STATUS_CANCELLED);
  add(a, 4, v1::CASE_STATUS_CANCELLED);
  add(b, 1, v1::CASE_STATUS_CANCELLED);
  std::vector<Store::AgentResult> batch;
  for (const v1::CaseResult& r : rows) batch.push_back({r.job_id() == job_of[a] ? a : b, &r});
  auto stored = store->InsertResults(batch);
  ASSERT_TRUE(stored.ok()) << stored.status();
  for (const ResultOutcome& o : *stored) EXPECT_TRUE(o.stored) << o.message;

  auto got = store->GetRun(run.run_id());
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->results(), 2u);
  auto listed = store->ListRuns(10);
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].results(), 2u);
  auto cancelled = store->CancelRun(run.run_id());
  ASSERT_TRUE(cancelled.ok()) << cancelled.status();
  EXPECT_EQ(cancelled->run.results(), 2u);

  if (HasSql()) {  // PostgreSQL's web view (web_reader.h) counts the same cases
    auto reader = OpenPgWebReader({.uri = backend().pg_uri(), .pool_size = 2});
    ASSERT_TRUE(reader.ok()) << reader.status();
    auto web_run = (*reader)->GetRun(run.run_id());
    ASSERT_TRUE(web_run.ok()) << web_run.status();
    EXPECT_EQ(web_run->results, 2u);
    auto web_runs = (*reader)->ListRuns(10);
    ASSERT_TRUE(web_runs.ok()) << web_runs.status();
    ASSERT_EQ(web_runs->size(), 1u);
    EXPECT_EQ((*web_runs)[0].results, 2u);
  }
}

// Issue 10, item 8: results are checked before they are stored. A case id the run's
// plan does not have, NaN/Infinity statistics and negative samples are rejected with a
// message naming the field (the agent drops them: do not retry); the rest of the batch
// is stored. +Infinity in ci_half_width_percent is the engine's "CI not achieved".
TEST_P(StoreConformanceTest, ResultsForUnknownCasesOrWithImplausibleValuesAreRejected) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const std::string a = Agent(*store, "checked");
  NewRun new_run = MakeRun({a});
  const std::string kCase = "batch/arithmetic/blocking/direct/any";
  const std::string kOtherCase = "batch/collections/blocking/direct/any";
  new_run.case_ids = {kCase, kOtherCase};
  auto run = store->CreateRun(new_run);
  ASSERT_TRUE(run.ok()) << run.status();
  auto claimed = store->ClaimJobs({a}, absl::Seconds(30));
  ASSERT_TRUE(claimed.ok() && claimed->size() == 1u);
  const std::string job = (*claimed)[0].assignment.job_id();
  std::vector<v1::CaseResult> rows;
  auto add = [&](const std::function<void(v1::CaseResult&)>& change) {
    v1::CaseResult r = Result(absl::StrFormat("%08d-0000-4000-8000-00000000000c", rows.size() + 1), job, 100);
    change(r);
    rows.push_back(r);
  };
  constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
  constexpr double kInf = std::numeric_limits<double>::infinity();
  add([](v1::CaseResult&) {});  // 1 fine
  add([&](v1::CaseResult& r) {  // 2 fine (another case: one result per case)
    r.mutable_stats()->set_ci_half_width_percent(kInf);
    r.mutable_spec()->set_case_id(kOtherCase);
  });
  add([](v1::CaseResult& r) { r.mutable_spec()->set_case_id("batch/arithmetic/blocking/fiber/any"); });
  add([](v1::CaseResult& r) { r.mutable_stats()->set_median_ns(kNan); });
  add([](v1::CaseResult& r) { r.mutable_stats()->set_mean_ns(kInf); });
  add([](v1::CaseResult& r) { r.mutable_stats()->set_min_ns(-kInf); });
  add([](v1::CaseResult& r) { r.mutable_stats()->set_ci_half_width_percent(kNan); });
  add([](v1::CaseResult& r) { r.set_samples_ns(1, -5); });
  add([](v1::CaseResult& r) { r.mutable_counters()->set_cpu_user_seconds(kNan); });
  add([](v1::CaseResult& r) { r.mutable_memory()->set_slope_kib_per_task(kInf); });
  add([](v1::CaseResult& r) { r.mutable_spec()->set_case_id(std::string("batch/arith\0metic", 17)); });
  const std::vector<std::string> expected_field = {"",
                                                   "",
                                                   "result.spec.case_id",
                                                   "result.stats.median_ns",
                                                   "result.stats.mean_ns",
                                                   "result.stats.min_ns",
                                                   "result.stats.ci_half_width_percent",
                                                   "result.samples_ns[1]",
                                                   "result.counters.cpu_user_seconds",
                                                   "result.memory.slope_kib_per_task",
                                                   "result.spec.case_id"};
  std::vector<Store::AgentResult> batch;
  for (const v1::CaseResult& r : rows) batch.push_back({a, &r});
  auto outcomes = store->InsertResults(batch);
  ASSERT_TRUE(outcomes.ok()) << outcomes.status();
  ASSERT_EQ(outcomes->size(), rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const ResultOutcome& o = (*outcomes)[i];
    if (expected_field[i].empty()) {
      EXPECT_TRUE(o.stored) << i << ": " << o.message;
      continue;
    }
    EXPECT_TRUE(o.rejected) << i;
    EXPECT_FALSE(o.stored) << i;
    EXPECT_EQ(o.message.rfind(expected_field[i], 0), 0u) << i << ": " << o.message;
  }
  EXPECT_SQL_EQ(Sql(absl::StrCat("SELECT count(*) FROM case_results WHERE job_id = '", job, "'")), 2);
  auto got = store->GetRun(run->run_id());
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->results(), 2u);  // the two cases of the plan
  // A replay of a rejected result is rejected again, never stored.
  auto again = store->InsertResults({batch[2]});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE((*again)[0].rejected);
}

// Issue 32, item 1: a job reported done is done only when each of its cases has a
// stored result (a cancelled placeholder counts); with results missing (lost on the
// agent) it fails as infrastructure naming how many, and its run is never done.
// Before, the job and the run were done with 1 of 3 results.
TEST_P(StoreConformanceTest, AJobReportedDoneWithResultsMissingIsNeverDone) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const std::string lossy = Agent(*store, "lossy"), whole = Agent(*store, "whole");
  NewRun new_run = MakeRun({lossy, whole});
  new_run.case_ids = {"case-1", "case-2", "case-3"};
  new_run.cases_total = 3;
  auto run = store->CreateRun(new_run);
  ASSERT_TRUE(run.ok()) << run.status();
  auto claimed = store->ClaimJobs({lossy, whole}, absl::Seconds(30));
  ASSERT_TRUE(claimed.ok() && claimed->size() == 2u);
  std::map<std::string, std::string> job_of;
  for (const ClaimedJob& c : *claimed) job_of[c.agent_id] = c.assignment.job_id();
  std::vector<v1::CaseResult> rows;
  int n = 0;
  auto add = [&](const std::string& agent, int case_number, v1::CaseStatus status) {
    v1::CaseResult r = Result(absl::StrFormat("%08d-0000-4000-8000-00000000000e", ++n), job_of[agent], 1);
    r.mutable_spec()->set_case_id(absl::StrCat("case-", case_number));
    r.set_status(status);
    rows.push_back(r);
  };
  add(lossy, 1, v1::CASE_STATUS_OK);  // cases 2 and 3 lost
  add(whole, 1, v1::CASE_STATUS_OK);
  add(whole, 2, v1::CASE_STATUS_FAILED);
  add(whole, 3, v1::CASE_STATUS_CANCELLED);
  std::vector<Store::AgentResult> batch;
  for (size_t i = 0; i < rows.size(); ++i) batch.push_back({i == 0 ? lossy : whole, &rows[i]});
  auto inserted = store->InsertResults(batch);
  ASSERT_TRUE(inserted.ok()) << inserted.status();
  for (const ResultOutcome& o : *inserted) ASSERT_TRUE(o.stored) << o.message;

  auto ends = store->FinishJobs(
      {{job_of[lossy], lossy, JobOutcome{.ok = true}}, {job_of[whole], whole, JobOutcome{.ok = true}}});
  ASSERT_TRUE(ends.ok()) << ends.status();
  for (const absl::Status& status : *ends) EXPECT_TRUE(status.ok()) << status;
  auto ended = store->GetRun(run->run_id());
  ASSERT_TRUE(ended.ok()) << ended.status();
  EXPECT_EQ(ended->status(), "failed");
  for (const v1::JobInfo& job : ended->jobs()) {
    if (job.job_id() == job_of[whole]) {
      EXPECT_EQ(job.status(), "done") << job.message();
      continue;
    }
    EXPECT_EQ(job.status(), "failed");
    EXPECT_EQ(job.message(),
              "infrastructure: the agent reported the job done, but 2 of its 3 cases have no stored result (lost "
              "before the coordinator stored them)");
  }
  EXPECT_SQL_EQ(Sql("SELECT count(*) FROM jobs WHERE status = 'failed' AND failure_kind = 'infrastructure'"), 1);
}

// Issue 10, item 9: a job claimed again (its agent restarted) carries the case ids of
// its stored results, so they are not measured twice; its progress never goes back.
TEST_P(StoreConformanceTest, AJobClaimedAgainCarriesItsStoredCasesAndProgressNeverGoesBack) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const std::string a = Agent(*store, "restarter");
  NewRun new_run = MakeRun({a});
  new_run.case_ids = {"case-1", "case-2", "case-3"};
  new_run.cases_total = 3;
  auto run = store->CreateRun(new_run);
  ASSERT_TRUE(run.ok()) << run.status();
  auto claimed = store->ClaimJobs({a}, absl::Seconds(30));
  ASSERT_TRUE(claimed.ok() && claimed->size() == 1u);
  const std::string job = (*claimed)[0].assignment.job_id();
  EXPECT_EQ((*claimed)[0].assignment.stored_case_ids_size(), 0);
  std::vector<v1::CaseResult> rows;
  for (auto [n, status] : {std::pair{1, v1::CASE_STATUS_OK}, std::pair{2, v1::CASE_STATUS_FAILED},
                           std::pair{3, v1::CASE_STATUS_CANCELLED}}) {
    v1::CaseResult r = Result(absl::StrFormat("%08d-0000-4000-8000-00000000000d", n), job, 1);
    r.mutable_spec()->set_case_id(absl::StrCat("case-", n));
    r.set_status(status);
    rows.push_back(r);
  }
  std::vector<Store::AgentResult> batch;
  for (const v1::CaseResult& r : rows) batch.push_back({a, &r});
  ASSERT_TRUE(store->InsertResults(batch).ok());
  ASSERT_TRUE(store->UpdateJobProgress(job, a, 2, 3, absl::Seconds(30)).ok());
  ASSERT_EQ(store->ReleaseAgentJobs(a, "")->size(), 1u);  // the agent restarted
  claimed = store->ClaimJobs({a}, absl::Seconds(30));
  ASSERT_TRUE(claimed.ok() && claimed->size() == 1u);
  const v1::JobAssignment& again = (*claimed)[0].assignment;
  EXPECT_EQ(again.attempt(), 2u);
  // The measured cases (ok and failed alike), not the cancelled placeholder.
  EXPECT_EQ(std::vector<std::string>(again.stored_case_ids().begin(), again.stored_case_ids().end()),
            (std::vector<std::string>{"case-1", "case-2"}));
  auto progress = [&] {
    auto got = store->GetRun(run->run_id());
    EXPECT_TRUE(got.ok()) << got.status();
    return got.ok() ? got->jobs(0).cases_done() : 0u;
  };
  EXPECT_EQ(progress(), 2u);
  ASSERT_TRUE(store->MarkJobRunning(job, a, absl::Seconds(30)).ok());
  ASSERT_TRUE(store->UpdateJobProgress(job, a, 1, 3, absl::Seconds(30)).ok());  // a late, older report
  EXPECT_EQ(progress(), 2u);
  ASSERT_TRUE(store->UpdateJobProgress(job, a, 3, 3, absl::Seconds(30)).ok());
  EXPECT_EQ(progress(), 3u);
}

// Issue 10, item 5: the first flush after a database outage renews the leases of the
// agents whose renewals failed meanwhile (their streams may have ended), and a flush
// with nothing to record still reaches the database.
TEST_P(StoreConformanceTest, LivenessFlushRenewsLeasesOfAgentsItCouldNotRecord) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const std::string a = Agent(*store, "cut-off");
  ASSERT_TRUE(store->CreateRun(MakeRun({a}, /*max_attempts=*/1)).ok());
  auto claimed = store->ClaimJobs({a}, absl::Milliseconds(1));
  ASSERT_TRUE(claimed.ok() && claimed->size() == 1u);
  Elapse(absl::Milliseconds(20));  // the lease ran out (the outage)
  ASSERT_TRUE(store->RecordLiveness({}, absl::Seconds(30), {a}).ok());
  auto expired = store->ExpireLeases();
  ASSERT_TRUE(expired.ok()) << expired.status();
  EXPECT_TRUE(expired->empty());
  EXPECT_SQL_EQ(Sql("SELECT count(*) FROM jobs WHERE lease_expires_at > now() + interval '20 seconds'"), 1);
  EXPECT_EQ(store->RecordLiveness({}, absl::Seconds(30), {"not-a-uuid"}).code(), absl::StatusCode::kInvalidArgument);
}

TEST_P(StoreConformanceTest, ScheduleNamesFollowTheAgentNameRule) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  v1::Schedule schedule;
  schedule.set_cron("0 2 * * *");
  *schedule.mutable_plan() = SmallPlan();
  for (const std::string& bad : {std::string("bad name!"), std::string(""), std::string(65, 'x'),
                                 std::string("sched/1"), std::string("caf\xc3\xa9")}) {
    schedule.set_name(bad);
    auto created = store->CreateSchedule(schedule, absl::Now());
    EXPECT_EQ(created.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(created.status().message().find("schedule.name: 1 to 64 characters of [A-Za-z0-9._-]"), std::string::npos)
        << created.status();
  }
  schedule.set_name("bad name!");
  EXPECT_NE(store->CreateSchedule(schedule, absl::Now()).status().message().find("got \"bad name!\""),
            std::string::npos);
  // Valid UTF-8 is shown as its characters and counted in characters (a trial saw
  // "sch\xf0\x9f\x98\x80" (7 characters) for a 4-character name).
  schedule.set_name("sch\xf0\x9f\x98\x80");
  EXPECT_NE(store->CreateSchedule(schedule, absl::Now())
                .status()
                .message()
                .find("got \"sch\xf0\x9f\x98\x80\" (4 characters)"),
            std::string::npos);
  EXPECT_SQL_EQ(Sql("SELECT count(*) FROM schedules"), 0);

  for (const std::string& good : {std::string("nightly.v2_arm-64"), std::string(64, 'y')}) {
    schedule.set_name(good);
    auto created = store->CreateSchedule(schedule, absl::Now());
    EXPECT_TRUE(created.ok()) << created.status();
  }
  schedule.set_name("nightly.v2_arm-64");
  auto again = store->CreateSchedule(schedule, absl::Now());
  EXPECT_EQ(again.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(again.status().message(),
            "schedule \"nightly.v2_arm-64\" already exists; to replace it, delete it first: "
            "fleetmark schedules delete nightly.v2_arm-64");
}

// Agents enrolled with a revoked token, and removed agents: found among connected ones
// (so their streams can be ended) and never online for selection, whatever their state
// column says.
TEST_P(StoreConformanceTest, AgentsToDisconnectAreFoundAndNotSelectable) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->CreateEnrollmentToken("tok-a", "hash-a", "").ok());
  ASSERT_TRUE(store->CreateEnrollmentToken("tok-b", "hash-b", "").ok());
  auto enroll = [&](const std::string& name, const std::string& token) {
    AgentRegistration reg;
    reg.name = name;
    reg.credential_sha256 = "cred-" + name;
    reg.token_id = token;
    reg.session_id = "s-" + name;
    auto id = store->RegisterAgent(reg);
    EXPECT_TRUE(id.ok()) << id.status();
    return id.ok() ? *id : "";
  };
  const std::string a = enroll("box-a", "tok-a");
  const std::string b = enroll("box-b", "tok-b");
  const std::string c = enroll("box-c", "");  // enrolled before tokens were recorded
  const std::string d = enroll("box-d", "tok-b");
  auto none = store->AgentsToDisconnect({a, b, c, d});
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_TRUE(none->empty());

  ASSERT_TRUE(store->RevokeEnrollmentToken("tok-a").ok());
  ASSERT_TRUE(store->RemoveAgent("box-d").ok());
  auto found = store->AgentsToDisconnect({a, b, c, d});
  ASSERT_TRUE(found.ok()) << found.status();
  std::map<std::string, std::string> reasons;
  for (const Store::Disconnect& x : *found) reasons[x.agent_id] = x.reason;
  ASSERT_EQ(reasons.size(), 2u);
  EXPECT_EQ(reasons[a], "enrollment token tok-a revoked");
  EXPECT_EQ(reasons[d], kAgentRemovedReason);
  auto empty = store->AgentsToDisconnect({});
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
  auto bad = store->AgentsToDisconnect({a, "box-a"});
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("agent_ids[]"), std::string::npos) << bad.status();

  auto summaries = store->ListAgentSummaries();
  ASSERT_TRUE(summaries.ok()) << summaries.status();
  ASSERT_EQ(summaries->size(), 3u);  // box-d is removed: not even listed
  for (const AgentSummary& s : *summaries) EXPECT_EQ(s.online, s.agent_id != a) << s.name;
}

// Issue 17: ListAgentSummaries keeps the parsed profiles (host, labels) it read and reads
// again only the agents whose profile a registration changed, also one made through
// another coordinator's store; a summary never shows a stale profile.
TEST_P(StoreConformanceTest, AgentSummariesFollowEveryRegistrationAcrossCoordinators) {
  auto one = OpenStore("c1");
  auto two = OpenStore("c2");
  ASSERT_NE(one, nullptr);
  ASSERT_NE(two, nullptr);
  const std::string a = Agent(*one, "pa"), b = Agent(*one, "pb");
  auto profile_of = [&](Store& store, const std::string& id) -> std::shared_ptr<const AgentProfile> {
    auto summaries = store.ListAgentSummaries();
    EXPECT_TRUE(summaries.ok()) << summaries.status();
    if (!summaries.ok()) return nullptr;
    for (const AgentSummary& s : *summaries) {
      if (s.agent_id == id) return s.profile;
    }
    return nullptr;
  };
  const auto first_a = profile_of(*one, a), first_b = profile_of(*one, b);
  ASSERT_NE(first_a, nullptr);
  ASSERT_NE(first_b, nullptr);
  EXPECT_EQ(first_a->host.arch(), "x86_64");
  EXPECT_EQ(first_a->labels.at("rack"), "b");
  EXPECT_EQ(profile_of(*one, a), first_a) << "unchanged: the cached profile, not read again";
  // `a` reconnects through the other coordinator as another machine with other labels.
  AgentRegistration again;
  again.agent_id = a;
  again.name = "pa";
  again.credential_sha256 = "hash-pa";
  again.host.set_arch("aarch64");
  again.host.set_logical_cpus(4);
  again.labels["rack"] = "c";
  again.session_id = "s-pa-2";
  again.session_ended_here = [](const std::string& session) { return session == "s-pa"; };  // its old stream ended
  again.instance_id = "33333333-0000-4000-8000-000000000003";  // the reconnects below come from this process
  ASSERT_TRUE(two->RegisterAgent(again).ok());
  const auto second_a = profile_of(*one, a);
  ASSERT_NE(second_a, nullptr);
  EXPECT_EQ(second_a->host.arch(), "aarch64");
  EXPECT_EQ(second_a->labels.at("rack"), "c");
  EXPECT_EQ(first_a->host.arch(), "x86_64") << "a profile handed out never changes";
  EXPECT_EQ(profile_of(*one, b), first_b) << "b did not change";
  // The same hello again (same host and labels, a new session) still re-reads it: every
  // registration moves the version.
  again.session_id = "s-pa-3";
  ASSERT_TRUE(two->RegisterAgent(again).ok());
  const auto third_a = profile_of(*one, a);
  ASSERT_NE(third_a, nullptr);
  EXPECT_NE(third_a, second_a);
  EXPECT_EQ(third_a->host.arch(), "aarch64");
  // A removed agent leaves the listing.
  ASSERT_TRUE(two->RemoveAgent("pb").ok());
  EXPECT_EQ(profile_of(*one, b), nullptr);
}

// Issue 17: a submit naming one agent reads that agent only. The named listing is the
// full listing's entry (same profile, online state), empty for an unknown or removed
// name, and it keeps the other agents' cached profiles.
TEST_P(StoreConformanceTest, TheNamedAgentSummaryIsTheListingsEntry) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const std::string a = Agent(*store, "na"), b = Agent(*store, "nb");
  auto all = store->ListAgentSummaries();
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->size(), 2u);
  auto named = store->ListAgentSummariesNamed("nb");
  ASSERT_TRUE(named.ok()) << named.status();
  ASSERT_EQ(named->size(), 1u);
  EXPECT_EQ((*named)[0].agent_id, b);
  EXPECT_EQ((*named)[0].name, "nb");
  EXPECT_EQ((*named)[0].online, (*all)[1].online);
  EXPECT_EQ((*named)[0].profile, (*all)[1].profile) << "the cached profile, not read again";
  EXPECT_EQ((*named)[0].profile->labels.at("rack"), "b");
  auto again = store->ListAgentSummaries();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)[0].profile, (*all)[0].profile) << "the named listing kept a's cached profile";
  EXPECT_TRUE(store->ListAgentSummariesNamed("nobody")->empty());
  EXPECT_TRUE(store->ListAgentSummariesNamed("n%")->empty()) << "a name, not a pattern";
  ASSERT_TRUE(store->RemoveAgent("na").ok());
  EXPECT_TRUE(store->ListAgentSummariesNamed("na")->empty());
  EXPECT_NE(a, b);
}

// A name belongs to the agent holding its credential: a second enrollment under it is
// refused (online or offline, through any store on the database), naming the command
// that frees it; a reconnect of the agent itself (by id) keeps its id.
TEST_P(StoreConformanceTest, EnrollingATakenNameIsRefusedAcrossCoordinators) {
  auto store1 = OpenStore("c1");
  auto store2 = OpenStore("c2");
  ASSERT_NE(store1, nullptr);
  ASSERT_NE(store2, nullptr);
  const std::string id = Agent(*store1, "rel-a2");
  ASSERT_FALSE(id.empty());
  AgentRegistration intruder;
  intruder.name = "rel-a2";
  intruder.credential_sha256 = "intruder-hash";
  intruder.session_id = "s-intruder";
  for (bool offline : {false, true}) {
    if (offline) ASSERT_TRUE(store1->SetAgentOffline(id, "s-rel-a2").ok());
    for (Store* store : {store1.get(), store2.get()}) {
      auto taken = store->RegisterAgent(intruder);
      EXPECT_EQ(taken.status().code(), absl::StatusCode::kAlreadyExists) << taken.status();
      EXPECT_NE(taken.status().message().find("fleetmark agents remove rel-a2"), std::string::npos) << taken.status();
      EXPECT_NE(taken.status().message().find(id), std::string::npos) << taken.status();
    }
  }
  auto identity = store2->FindAgentByName("rel-a2");
  ASSERT_TRUE(identity.ok()) << identity.status();
  EXPECT_EQ(identity->agent_id, id);
  EXPECT_EQ(identity->credential_sha256, "hash-rel-a2");  // never replaced

  // Enrollments racing for one new name through two stores: exactly one wins.
  std::vector<absl::StatusOr<std::string>> outcomes(8, absl::UnknownError("not run"));
  std::vector<std::thread> threads;
  for (size_t i = 0; i < outcomes.size(); ++i) {
    threads.emplace_back([&, i] {
      AgentRegistration reg;
      reg.name = "raced";
      reg.credential_sha256 = absl::StrCat("hash-", i);
      reg.session_id = absl::StrCat("s-", i);
      outcomes[i] = (i % 2 == 0 ? store1 : store2)->RegisterAgent(reg);
    });
  }
  for (std::thread& t : threads) t.join();
  int won = 0;
  for (const auto& outcome : outcomes) {
    if (outcome.ok()) {
      ++won;
    } else {
      EXPECT_EQ(outcome.status().code(), absl::StatusCode::kAlreadyExists) << outcome.status();
    }
  }
  EXPECT_EQ(won, 1);
  EXPECT_SQL_EQ(Sql("SELECT count(*) FROM agents WHERE name = 'raced'"), 1);

  // The agent's own reconnect (authenticated by the caller) updates it in place.
  AgentRegistration again;
  again.agent_id = id;
  again.name = "rel-a2";
  again.host.set_arch("aarch64");
  again.session_id = "s-again";
  auto same = store2->RegisterAgent(again);
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_EQ(*same, id);
  auto listed = store2->ListAgents();
  ASSERT_TRUE(listed.ok()) << listed.status();
  for (const v1::AgentInfo& agent : *listed) {
    if (agent.name() == "rel-a2") EXPECT_EQ(agent.host().arch(), "aarch64");
  }
  EXPECT_EQ(store2->FindAgentByName("rel-a2")->credential_sha256, "hash-rel-a2");
}

// `agents remove`: the agent's history stays readable, its unfinished jobs fail (their
// runs end), its credential is no longer found, it is listed only on request and never
// selected, and its name can be enrolled again as a new agent; its own reconnect is
// refused (NotFound).
TEST_P(StoreConformanceTest, RemovedAgentKeepsItsHistoryAndFreesItsName) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const std::string old_id = Agent(*store, "board");
  auto claimed = CreateAndClaim(*store, {old_id});
  ASSERT_TRUE(claimed.ok()) << claimed.status();
  const std::string job = claimed->job_of.at(old_id);
  v1::CaseResult result = Result("66666666-6666-4666-8666-666666666666", job, 123);
  ASSERT_TRUE(store->InsertResults({{old_id, &result}}).ok());
  auto queued = store->CreateRun(MakeRun({old_id}));  // waits behind the first job
  ASSERT_TRUE(queued.ok()) << queued.status();

  auto removed = store->RemoveAgent("board");
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_EQ(removed->agent_id, old_id);
  EXPECT_EQ(removed->failed_jobs.size(), 2u);
  for (const std::string& run_id : {claimed->run.run_id(), queued->run_id()}) {
    auto run = store->GetRun(run_id);
    ASSERT_TRUE(run.ok()) << run.status();
    EXPECT_EQ(run->status(), "failed") << run_id;
    ASSERT_EQ(run->jobs_size(), 1);
    EXPECT_EQ(run->jobs(0).message(), "infrastructure: agent board removed (fleetmark agents remove)");
  }
  auto again = store->RemoveAgent("board");
  EXPECT_EQ(again.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(again.status().message().find("already removed"), std::string::npos) << again.status();
  EXPECT_EQ(store->RemoveAgent("nobody").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store->FindAgentByName("board").status().code(), absl::StatusCode::kNotFound);
  AgentRegistration reconnect;
  reconnect.agent_id = old_id;
  reconnect.name = "board";
  EXPECT_EQ(store->RegisterAgent(reconnect).status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(store->ListAgents()->empty());
  EXPECT_TRUE(store->ListAgentSummaries()->empty());

  const std::string new_id = Agent(*store, "board");
  ASSERT_FALSE(new_id.empty());
  EXPECT_NE(new_id, old_id);
  auto listed = store->ListAgents();
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].agent_id(), new_id);
  auto all = store->ListAgents(/*include_removed=*/true);
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].agent_id(), new_id);  // the current holder of the name first
  EXPECT_EQ((*all)[1].agent_id(), old_id);
  EXPECT_EQ((*all)[1].state(), "removed");
  EXPECT_GT((*all)[1].removed_unix_ns(), 0);
  EXPECT_EQ((*all)[0].removed_unix_ns(), 0);
  auto summaries = store->ListAgentSummaries();
  ASSERT_EQ(summaries->size(), 1u);
  EXPECT_EQ((*summaries)[0].agent_id, new_id);

  // The old agent's results are still read back with its run.
  auto exported = store->ExportResults(claimed->run.run_id(), "");
  ASSERT_TRUE(exported.ok()) << exported.status();
  ASSERT_EQ(exported->results_size(), 1);
  EXPECT_EQ(exported->results(0).result_id(), result.result_id());
  EXPECT_EQ(exported->run().jobs(0).agent_name(), "board");
}

// --- confirmed changes (change_records.h) ---

// A nightly run of `agent` (submitted by a schedule) whose job stores one ok result of
// `case_id` at `median` and finishes: the run id.
std::string NightlyRun(Store& store, const std::string& agent, const std::string& result_id, double median) {
  NewRun run = MakeRun({agent});
  run.submitted_by = "schedule:nightly";
  auto created = store.CreateRun(run);
  EXPECT_TRUE(created.ok()) << created.status();
  auto claimed = store.ClaimJobs({agent}, absl::Seconds(30));
  EXPECT_TRUE(claimed.ok() && claimed->size() == 1u);
  if (!created.ok() || !claimed.ok() || claimed->size() != 1u) return "";
  const std::string job = (*claimed)[0].assignment.job_id();
  v1::CaseResult result = Result(result_id, job, median);
  auto stored = store.InsertResults({{agent, &result}});
  EXPECT_TRUE(stored.ok() && (*stored)[0].stored);
  EXPECT_TRUE(store.FinishJob(job, agent, JobOutcome{.ok = true}).ok());
  return created->run_id();
}

// The flow of the change monitor: a scan of an ended nightly run records what the
// detector finds as suspected changes (once per run and agent), a confirmation run over
// budget leaves them unconfirmed, one within budget is recorded and, once it ended, is
// listed with its median, and the verdict is taken once.
TEST_P(StoreConformanceTest, ChangesAreScannedConfirmedAndDecidedOnce) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const std::string a = Agent(*store, "board");
  const std::string kCase = "batch/arithmetic/blocking/direct/any";
  std::vector<ChangeScan> scans;
  const ChangeDetector detect = [&](const ChangeScan& scan) {
    scans.push_back(scan);
    std::vector<DetectedChange> found;
    for (const CaseSeries& s : scan.series) found.push_back({s.case_id, 90, s.medians_ns.back(), 0.05});
    return found;
  };
  const std::string night1 = NightlyRun(*store, a, "c0000001-0000-4000-8000-000000000001", 100);
  ASSERT_FALSE(night1.empty());
  ASSERT_TRUE(store->CreateRun(MakeRun({a})).ok());  // not a nightly run: never scanned
  auto found = store->ScanNightlyRuns(detect, 10);
  ASSERT_TRUE(found.ok()) << found.status();
  ASSERT_EQ(found->size(), 1u);
  EXPECT_EQ((*found)[0].run_id, night1);
  EXPECT_EQ((*found)[0].agent_name, "board");
  EXPECT_EQ((*found)[0].case_ids, std::vector<std::string>{kCase});
  ASSERT_EQ(scans.size(), 1u);
  ASSERT_EQ(scans[0].series.size(), 1u);
  EXPECT_EQ(scans[0].series[0].medians_ns, std::vector<double>{100});
  EXPECT_EQ(scans[0].series[0].newest_result_id, "c0000001-0000-4000-8000-000000000001");
  EXPECT_TRUE(store->ScanNightlyRuns(detect, 10)->empty()) << "scanned once";

  auto listed = store->ListChanges(ChangeFilter{});
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].state, "suspected");
  EXPECT_EQ((*listed)[0].agent_name, "board");
  EXPECT_EQ((*listed)[0].new_level_ns, 100);
  EXPECT_EQ((*listed)[0].min_change_percent, 5);
  EXPECT_TRUE(absl::IsNotFound(store->ListChanges(ChangeFilter{.agent_name = "nobody"}).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(store->ListChanges(ChangeFilter{.limit = 0}).status()));

  // Over budget: unconfirmed, no run.
  int builds = 0;
  const Store::ConfirmationBuilder build = [&](const v1::Plan& plan, bool quick) -> absl::StatusOr<NewRun> {
    ++builds;
    NewRun run = MakeRun({a});
    run.plan = plan;
    run.quick = quick;
    run.submitted_by = "confirm";
    return run;
  };
  v1::RunInfo confirmation;
  auto why = store->SubmitConfirmation((*found)[0], /*budget_per_day=*/0, build, &confirmation);
  ASSERT_TRUE(why.ok()) << why.status();
  EXPECT_EQ(*why, "over the confirmation budget (0 per agent per day)");
  EXPECT_EQ(builds, 0);
  EXPECT_EQ((*store->ListChanges(ChangeFilter{}))[0].state, "unconfirmed");
  EXPECT_EQ(store->ListChanges(ChangeFilter{.state = "suspected"})->size(), 0u);

  // The next night: a new suspected change, confirmed by a run.
  ASSERT_TRUE(store->CancelRun((*store->ListRuns(10))[0].run_id()).ok());  // the ordinary run
  const std::string night2 = NightlyRun(*store, a, "c0000002-0000-4000-8000-000000000002", 130);
  ASSERT_FALSE(night2.empty());
  found = store->ScanNightlyRuns(detect, 10);
  ASSERT_TRUE(found.ok() && found->size() == 1u);
  EXPECT_EQ(scans.back().series[0].medians_ns, (std::vector<double>{100, 130})) << "the series up to the run";
  why = store->SubmitConfirmation((*found)[0], /*budget_per_day=*/1, build, &confirmation);
  ASSERT_TRUE(why.ok()) << why.status();
  EXPECT_EQ(*why, "");
  EXPECT_EQ(builds, 1);
  ASSERT_FALSE(confirmation.run_id().empty());
  EXPECT_EQ(confirmation.submitted_by(), "confirm");
  EXPECT_TRUE(store->EndedConfirmations(10)->empty()) << "its run has not ended";
  auto claimed = store->ClaimJobs({a}, absl::Seconds(30));
  ASSERT_TRUE(claimed.ok() && claimed->size() == 1u);
  const std::string job = (*claimed)[0].assignment.job_id();
  v1::CaseResult measured = Result("c0000003-0000-4000-8000-000000000003", job, 128);
  ASSERT_TRUE(store->InsertResults({{a, &measured}}).ok());
  ASSERT_TRUE(store->FinishJob(job, a, JobOutcome{.ok = true}).ok());
  auto ended = store->EndedConfirmations(10);
  ASSERT_TRUE(ended.ok()) << ended.status();
  ASSERT_EQ(ended->size(), 1u);
  EXPECT_EQ((*ended)[0].change.change_id, (*found)[0].change_ids[0]);
  EXPECT_EQ((*ended)[0].change.confirmation_run_id, confirmation.run_id());
  EXPECT_EQ((*ended)[0].run_status, "done");
  EXPECT_EQ((*ended)[0].job_status, "done");
  ASSERT_TRUE((*ended)[0].median_ns.has_value());
  EXPECT_EQ(*(*ended)[0].median_ns, 128);

  auto decided = store->DecideChange((*found)[0].change_ids[0], "confirmed", "reproduced", 128.0);
  ASSERT_TRUE(decided.ok()) << decided.status();
  ASSERT_TRUE(decided->has_value());
  EXPECT_EQ((*decided)->state, "confirmed");
  EXPECT_EQ((*decided)->agent_name, "board");
  EXPECT_GT((*decided)->decided_at, absl::InfinitePast());
  auto again = store->DecideChange((*found)[0].change_ids[0], "not_reproduced", "late", std::nullopt);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(again->has_value()) << "decided once";
  EXPECT_TRUE(store->EndedConfirmations(10)->empty());
  EXPECT_EQ(store->ListChanges(ChangeFilter{.state = "confirmed"})->size(), 1u);
}

// --- fleet health: noise score and quarantine (issue 14, items 3 and 4) ---

// One "night" on `agent`: a run whose job stores the three calibration cases of
// plans/nightly.txtpb at `factor` × their base medians (plus one ordinary case, which
// never counts) and finishes.
void CalibrationNight(Store& store, const std::string& agent, double factor, int* next_id) {
  auto claimed = CreateAndClaim(store, {agent});
  ASSERT_TRUE(claimed.ok()) << claimed.status();
  const std::string job = claimed->job_of.at(agent);
  std::vector<v1::CaseResult> results;
  const std::vector<std::pair<std::string, double>> cases = {
      {"calibration_direct", 8e3}, {"calibration_single_thread", 60e3}, {"calibration_fixed_pool_2", 30e3}};
  for (const auto& [label, base] : cases) {
    v1::CaseResult r = Result(absl::StrFormat("%08x-ca1b-4000-8000-%012x", *next_id, *next_id), job, base * factor);
    ++*next_id;
    r.mutable_spec()->mutable_strategy()->set_label(label);
    r.mutable_spec()->set_case_id(absl::StrCat("batch/arithmetic/blocking/", label, "/any"));
    results.push_back(r);
  }
  // An ordinary case 5x slower every other night: not calibration, never counted.
  v1::CaseResult other =
      Result(absl::StrFormat("%08x-ca1b-4000-8000-%012x", *next_id, *next_id), job, *next_id % 2 == 0 ? 1e6 : 5e6);
  ++*next_id;
  results.push_back(other);
  std::vector<Store::AgentResult> batch;
  for (const v1::CaseResult& r : results) batch.push_back({agent, &r});
  auto stored = store.InsertResults(batch);
  ASSERT_TRUE(stored.ok()) << stored.status();
  for (const ResultOutcome& o : *stored) ASSERT_TRUE(o.stored) << o.message;
  ASSERT_TRUE(store.FinishJob(job, agent, JobOutcome{.ok = true}).ok());
}

v1::AgentInfo AgentNamed(Store& store, const std::string& name) {
  auto agents = store.ListAgents();
  EXPECT_TRUE(agents.ok()) << agents.status();
  for (const v1::AgentInfo& a : *agents) {
    if (a.name() == name) return a;
  }
  ADD_FAILURE() << "no agent " << name;
  return {};
}

constexpr double kQuietNights[] = {1.0, 1.01, 0.99, 1.005, 0.995, 1.0};

TEST_P(StoreConformanceTest, CalibrationNightsGiveANoiseScoreAndADriftQuarantinesUntilReleased) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const std::string board = Agent(*store, "board");
  const std::string host = Agent(*store, "host");
  int id = 1;
  for (int night = 0; night < 6; ++night) {
    CalibrationNight(*store, board, kQuietNights[night], &id);
    const v1::AgentInfo a = AgentNamed(*store, "board");
    EXPECT_EQ(a.noise_nights(), static_cast<uint32_t>(night + 1));
    EXPECT_EQ(a.has_noise_percent(), night + 1 >= kMinNoiseNights) << "night " << night;
    EXPECT_EQ(a.health(), "ok");
  }
  v1::AgentInfo quiet = AgentNamed(*store, "board");
  // ln-MAD x 1.4826 of {1, 1.01, 0.99, 1.005, 0.995, 1}: ~0.74 %.
  EXPECT_NEAR(quiet.noise_percent(), 0.74, 0.05);
  EXPECT_EQ(AgentNamed(*store, "host").health(), "ok");
  EXPECT_FALSE(AgentNamed(*store, "host").has_noise_percent()) << "no calibration: no score";

  // The newest night 40 % slower than the median of its 6 earlier nights: quarantined.
  CalibrationNight(*store, board, 1.4, &id);
  const v1::AgentInfo drifted = AgentNamed(*store, "board");
  EXPECT_EQ(drifted.health(), "quarantined");
  EXPECT_NE(drifted.quarantine_reason().find("calibration drift: the newest night is 40.0 % slower than the median "
                                             "of its 6 earlier nights"),
            std::string::npos)
      << drifted.quarantine_reason();
  EXPECT_GT(drifted.quarantined_unix_ns(), 0);
  auto summaries = store->ListAgentSummaries();
  ASSERT_TRUE(summaries.ok());
  for (const AgentSummary& s : *summaries) EXPECT_EQ(s.quarantined, s.name == "board") << s.name;

  // Stored: a restarted coordinator and a second one on the same database see it.
  store.reset();
  auto restarted = OpenStore("c1");
  auto other = OpenStore("c2");
  ASSERT_NE(restarted, nullptr);
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(AgentNamed(*other, "board").quarantine_reason(), drifted.quarantine_reason());
  // A good night through the other coordinator does not end it; reason and since stay.
  CalibrationNight(*other, board, 1.0, &id);
  const v1::AgentInfo still = AgentNamed(*restarted, "board");
  EXPECT_EQ(still.health(), "quarantined");
  EXPECT_EQ(still.quarantined_unix_ns(), drifted.quarantined_unix_ns());

  EXPECT_TRUE(absl::IsNotFound(restarted->ReleaseAgent("nobody").status()));
  EXPECT_TRUE(absl::IsFailedPrecondition(restarted->ReleaseAgent("host").status()));
  auto released = restarted->ReleaseAgent("board");
  ASSERT_TRUE(released.ok()) << released.status();
  EXPECT_EQ(released->agent_id, board);
  EXPECT_EQ(released->reason, drifted.quarantine_reason());
  EXPECT_EQ(absl::ToUnixNanos(released->quarantined_at), drifted.quarantined_unix_ns());
  auto again = other->ReleaseAgent("board");
  EXPECT_TRUE(absl::IsFailedPrecondition(again.status())) << again.status();
  EXPECT_NE(again.status().message().find("is not quarantined"), std::string::npos);
  const v1::AgentInfo ok = AgentNamed(*other, "board");
  EXPECT_EQ(ok.health(), "ok");
  EXPECT_EQ(ok.quarantine_reason(), "");
  EXPECT_EQ(ok.quarantined_unix_ns(), 0);
  // A new baseline: the nights before the release no longer count.
  CalibrationNight(*other, board, 1.4, &id);
  EXPECT_EQ(AgentNamed(*other, "board").noise_nights(), 1u);
  EXPECT_EQ(AgentNamed(*other, "board").health(), "ok");
}

TEST_P(StoreConformanceTest, NoiseAboveTheLimitQuarantines) {
  StoreOptions options;
  options.health.noise_limit_percent = 5;
  options.health.drift_percent = 0;  // only the noise rule
  std::unique_ptr<Store> opened = OpenStoreWith(options);
  ASSERT_NE(opened, nullptr);
  Store& store = *opened;
  const std::string phone = Agent(store, "phone");
  int id = 1;
  const double factors[] = {1.0, 1.3, 0.8, 1.2, 0.75, 1.25};
  for (int night = 0; night < 6; ++night) {
    CalibrationNight(store, phone, factors[night], &id);
    EXPECT_EQ(AgentNamed(store, "phone").health(), night + 1 >= kMinNoiseLimitNights ? "quarantined" : "ok")
        << "night " << night;
  }
  const v1::AgentInfo a = AgentNamed(store, "phone");
  EXPECT_GT(a.noise_percent(), 5);
  EXPECT_NE(a.quarantine_reason().find("exceeds the limit of 5 %"), std::string::npos) << a.quarantine_reason();
}

TEST_P(StoreConformanceTest, PreflightGatesDeferringNJobsInARowQuarantine) {
  auto store = OpenStore();  // default: 3 in a row
  ASSERT_NE(store, nullptr);
  const std::string phone = Agent(*store, "phone");
  auto finish = [&](bool deferred) {
    auto claimed = CreateAndClaim(*store, {phone});
    ASSERT_TRUE(claimed.ok()) << claimed.status();
    JobOutcome outcome;
    outcome.ok = !deferred;
    outcome.deferred = deferred;
    outcome.message = deferred ? "deferred: battery: 12 % < 20 % and not charging" : "";
    ASSERT_TRUE(store->FinishJob(claimed->job_of.at(phone), phone, outcome).ok());
  };
  finish(true);
  finish(true);
  finish(false);  // a job that ran resets the streak
  finish(true);
  finish(true);
  EXPECT_EQ(AgentNamed(*store, "phone").health(), "ok");
  finish(true);
  const v1::AgentInfo a = AgentNamed(*store, "phone");
  EXPECT_EQ(a.health(), "quarantined");
  EXPECT_EQ(a.quarantine_reason(),
            "preflight gates deferred 3 jobs in a row (--quarantine_deferred_jobs 3); last: deferred: battery: 12 % "
            "< 20 % and not charging");
  ASSERT_TRUE(store->ReleaseAgent("phone").ok());
  finish(true);
  EXPECT_EQ(AgentNamed(*store, "phone").health(), "ok") << "the release restarted the streak";
}

INSTANTIATE_TEST_SUITE_P(Stores, StoreConformanceTest, ::testing::ValuesIn(StoreBackends()),
                         [](const ::testing::TestParamInfo<BackendFactory>& info) { return info.param.name; });

}  // namespace
}  // namespace fleetmark::store
