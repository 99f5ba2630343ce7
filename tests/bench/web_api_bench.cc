// web_api_bench: latency of the web view's run and compare API calls with 1 000 000
// case results in PostgreSQL. Agents, plans, runs and jobs are created through the
// coordinator's Store; the case results are bulk-inserted with one INSERT ... SELECT
// (psql) over those jobs, since a million Store round trips would take the benchmark
// past its point. Requests go over loopback HTTP to fleetmark_http.
//
//   web_api_bench [--results=1000000] [--months=12] [--requests=200] [--max_p95_ms=100]
//                 [--keep_database | --reuse_database_uri=URI]
// --months spreads the runs' creation times evenly over that many months back from now,
// so the rows fill as many monthly case_results partitions (migration 0014).
// Needs FLEETMARK_TEST_PG_URI (a fresh database is created and dropped). Prints p50 /
// p95 / p99 per endpoint; exits 1 if an endpoint's p95 exceeds --max_p95_ms (0 = report only).
#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "coordinator/http/http_server.h"
#include "coordinator/http/json_codec.h"
#include "coordinator/store/store.h"
#include "coordinator/store/web_reader.h"
#include "engine/common/status_macros.h"
#include "tests/web/pg_database.h"

ABSL_FLAG(int, results, 1000000, "case results to seed");
ABSL_FLAG(int, months, 12, "months (back from now) the seeded runs' creation times spread over (1..240)");
ABSL_FLAG(int, requests, 200, "timed requests per endpoint");
ABSL_FLAG(double, max_p95_ms, 100, "fail if an endpoint's p95 exceeds this (0 = report only)");
ABSL_FLAG(bool, keep_database, false, "keep the seeded database (its URI is printed)");
ABSL_FLAG(std::string, reuse_database_uri, "", "measure a database kept by an earlier --keep_database run");

namespace {

using Clock = std::chrono::steady_clock;
namespace v1 = fleetmark::v1;

constexpr int kAgents = 8;
const std::vector<std::string> kStrategies = {
    "direct",  "single_thread", "fixed_pool",      "fixed_pool_io", "work_stealing", "work_stealing_io",
    "limited", "elastic_pool",  "thread_per_task", "async",         "coroutine",     "fiber"};
const std::vector<std::string> kWorkloads = {"arithmetic", "collections", "storage", "network", "mixed"};

absl::StatusOr<std::string> Psql(const std::string& uri, const std::string& sql) {
  return fleetmark::testing::RunCommand({"psql", uri, "-v", "ON_ERROR_STOP=1", "-qtA", "-c", sql});
}

// A realistic stored proto (40 samples) used as the `result` column of every row.
std::string TemplateResultHex() {
  v1::CaseResult r;
  r.set_result_id("00000000-0000-4000-8000-000000000000");
  r.mutable_spec()->mutable_strategy()->set_name("fixed_pool");
  r.mutable_spec()->set_scenario("batch");
  r.mutable_spec()->set_workload("arithmetic");
  r.set_status(v1::CASE_STATUS_OK);
  for (int i = 0; i < 40; ++i) r.add_samples_ns(95000 + i * 37);
  r.mutable_stats()->set_count(40);
  r.mutable_stats()->set_median_ns(95700);
  return absl::BytesToHexString(r.SerializeAsString());
}

struct Seeded {
  std::vector<std::string> agent_ids;
  std::vector<std::string> run_ids;
};

absl::StatusOr<Seeded> Seed(const std::string& uri, int results, int months) {
  fleetmark::store::StoreOptions options;
  options.connection.uri = uri;
  FLEETMARK_ASSIGN_OR_RETURN(auto store, fleetmark::store::Store::Open(options));
  FLEETMARK_RETURN_IF_ERROR(store->Migrate());
  Seeded seeded;
  for (int a = 0; a < kAgents; ++a) {
    fleetmark::store::AgentRegistration reg;
    reg.name = absl::StrCat("device-", a);
    reg.credential_sha256 = std::string(64, 'a');
    reg.host.set_arch(a % 2 ? "aarch64" : "x86_64");
    reg.host.set_logical_cpus(8);
    FLEETMARK_ASSIGN_OR_RETURN(std::string id, store->RegisterAgent(reg));
    seeded.agent_ids.push_back(id);
  }
  const int per_run = kAgents * kStrategies.size() * kWorkloads.size();
  const int runs = (results + per_run - 1) / per_run;
  for (int i = 0; i < runs; ++i) {
    fleetmark::store::NewRun run;
    run.plan.set_name("nightly");
    run.submitted_by = "schedule:nightly";
    run.agent_ids = seeded.agent_ids;
    FLEETMARK_ASSIGN_OR_RETURN(v1::RunInfo info, store->CreateRun(run));
    seeded.run_ids.push_back(info.run_id());
  }
  auto quoted = [](const std::vector<std::string>& v) { return absl::StrCat("'", absl::StrJoin(v, "','"), "'"); };
  const std::string sql = absl::StrCat(
      "UPDATE jobs SET status = 'done', cases_done = ", kStrategies.size() * kWorkloads.size(),
      ", cases_total = ", kStrategies.size() * kWorkloads.size(),
      ";"
      // Run i of n created (n - i) / n of `months` months ago, oldest first; then the
      // partitions of those months (the coordinator creates only the months ahead).
      "UPDATE runs r SET status = 'done', created_at = now() - make_interval(secs => (x.n - x.i) * ",
      months, " * 30 * 86400.0 / x.n), finished_at = now() - make_interval(secs => (x.n - x.i) * ", months,
      " * 30 * 86400.0 / x.n) + interval '1 hour' "
      "FROM (SELECT run_id, row_number() OVER (ORDER BY created_at, run_id) AS i, count(*) OVER () AS n FROM runs) x "
      "WHERE r.run_id = x.run_id;"
      "SELECT fleetmark_ensure_result_partitions(min(created_at), now()) FROM runs;"
      "INSERT INTO case_results (result_id, run_id, job_id, agent_id, case_id, scenario, workload, io_mode, "
      " strategy, strategy_label, threads, placement, status, stop_reason, sample_count, min_ns, median_ns, "
      " max_ns, mean_ns, stddev_ns, mad_ns, ci_low_ns, ci_high_ns, ci_half_width_percent, outliers, "
      " threads_used, cpu_user_seconds, cpu_system_seconds, allocations, allocated_bytes, peak_threads, "
      " rss_delta_bytes, samples_ns, started_at, finished_at, engine_version, result, run_created_at) "
      "SELECT gen_random_uuid(), j.run_id, j.job_id, j.agent_id, "
      " 'batch/' || w.name || '/blocking/' || s.name || '/any', 'batch', w.name, 'blocking', s.name, s.name, 0, "
      " 'any', 'ok', 'ci_target', 40, m.median * 0.95, m.median, m.median * 1.3, m.median * 1.01, m.median * 0.03, "
      " m.median * 0.02, m.median * 0.985, m.median * 1.015, 1.5, 1, 8, 0.01, 0.001, 200, 16384, 9, 4096, "
      " ARRAY(SELECT (m.median * (0.97 + 0.06 * ((g * 7919 + length(j.job_id::text)) % 100) / 100.0))::bigint "
      "       FROM generate_series(1, 40) g), r.finished_at, r.finished_at, '0.1.0', '\\x",
      TemplateResultHex(),
      "'::bytea, r.created_at "
      "FROM jobs j JOIN runs r ON r.run_id = j.run_id "
      "CROSS JOIN unnest(ARRAY[",
      quoted(kStrategies),
      "]) WITH ORDINALITY AS s(name, si) "
      "CROSS JOIN unnest(ARRAY[",
      quoted(kWorkloads),
      "]) WITH ORDINALITY AS w(name, wi) "
      "CROSS JOIN LATERAL (SELECT (1000.0 * w.wi * w.wi * (1 + s.si) * (1 + 0.1 * random()) "
      "  * (1 + (hashtext(j.agent_id::text) & 7)))::double precision AS median) m;"
      "ANALYZE;");
  FLEETMARK_RETURN_IF_ERROR(Psql(uri, sql).status());
  return seeded;
}

// Agents and (up to 1000 of the newest) runs of an already seeded database.
absl::StatusOr<Seeded> Existing(const std::string& uri) {
  fleetmark::store::WebReaderOptions options;
  options.uri = uri;
  FLEETMARK_ASSIGN_OR_RETURN(auto reader, fleetmark::store::OpenPgWebReader(options));
  Seeded seeded;
  FLEETMARK_ASSIGN_OR_RETURN(auto agents, reader->ListAgents());
  for (const auto& a : agents) seeded.agent_ids.push_back(a.agent_id);
  FLEETMARK_ASSIGN_OR_RETURN(auto runs, reader->ListRuns(1000));
  for (const auto& r : runs) seeded.run_ids.push_back(r.run_id);
  if (seeded.agent_ids.empty() || seeded.run_ids.empty()) return absl::FailedPreconditionError("database is empty");
  return seeded;
}

struct Latency {
  std::string name;
  double p50 = 0, p95 = 0, p99 = 0, max = 0;
  size_t bytes = 0;
};

Latency Measure(httplib::Client& client, const std::string& name, const std::vector<std::string>& paths, int requests,
                bool* ok) {
  for (int i = 0; i < 10; ++i) client.Get(paths[i % paths.size()].c_str());  // warm-up
  std::vector<double> ms;
  Latency out{name};
  for (int i = 0; i < requests; ++i) {
    const auto start = Clock::now();
    auto res = client.Get(paths[i % paths.size()].c_str());
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    if (!res || res->status != 200) {
      std::cerr << name << ": " << paths[i % paths.size()] << " -> " << (res ? res->status : -1) << "\n";
      *ok = false;
      return out;
    }
    out.bytes = res->body.size();
  }
  std::sort(ms.begin(), ms.end());
  auto pct = [&](double q) { return ms[std::min(ms.size() - 1, static_cast<size_t>(q * ms.size()))]; };
  out.p50 = pct(0.50);
  out.p95 = pct(0.95);
  out.p99 = pct(0.99);
  out.max = ms.back();
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  std::unique_ptr<fleetmark::testing::FreshDatabase> fresh;
  std::string uri = absl::GetFlag(FLAGS_reuse_database_uri);
  absl::StatusOr<Seeded> seeded;
  if (uri.empty()) {
    auto db = fleetmark::testing::FreshDatabase::Create("webbench");
    if (!db.ok()) {
      std::cerr << "web_api_bench: " << db.status() << "\n";
      return fleetmark::testing::RequirePg() ? 1 : 77;
    }
    fresh = std::move(*db);
    uri = fresh->uri();
    if (absl::GetFlag(FLAGS_keep_database)) {
      fresh->Keep();
      std::printf("database kept: %s\n", uri.c_str());
    }
    const auto seed_start = Clock::now();
    const int months = absl::GetFlag(FLAGS_months);
    if (months < 1 || months > 240) {
      std::cerr << "web_api_bench: --months: 1 <= months <= 240, got " << months << "\n";
      return 2;
    }
    seeded = Seed(uri, absl::GetFlag(FLAGS_results), months);
    if (!seeded.ok()) {
      std::cerr << "web_api_bench: seeding failed: " << seeded.status() << "\n";
      return 1;
    }
    std::printf("seeded in %.0f s\n", std::chrono::duration<double>(Clock::now() - seed_start).count());
  } else {
    seeded = Existing(uri);
    if (!seeded.ok()) {
      std::cerr << "web_api_bench: " << seeded.status() << "\n";
      return 1;
    }
  }
  auto count = Psql(uri, "SELECT count(*) FROM case_results");
  std::printf("%s case results (%zu runs sampled, %zu agents)\n",
              std::string(absl::StripAsciiWhitespace(count.ok() ? *count : "?")).c_str(), seeded->run_ids.size(),
              seeded->agent_ids.size());

  fleetmark::http::HttpServerOptions options;
  options.pg_uri = uri;
  auto server = fleetmark::http::StartHttpServer(options);
  if (!server.ok()) {
    std::cerr << "web_api_bench: " << server.status() << "\n";
    return 1;
  }
  httplib::Client client("127.0.0.1", (*server)->port());
  client.set_read_timeout(30, 0);
  std::mt19937 rng(42);
  const auto& runs = seeded->run_ids;
  const auto& agents = seeded->agent_ids;
  std::vector<std::string> run_paths, compare_paths, compare_newest, history_paths, cases_paths;
  for (int i = 0; i < 50; ++i) {
    const std::string run = runs[rng() % runs.size()];
    const std::string a = agents[rng() % agents.size()], b = agents[rng() % agents.size()];
    run_paths.push_back(absl::StrCat("/api/v1/runs/", run, "/results"));
    compare_paths.push_back(absl::StrCat("/api/v1/compare?agents=", a, ",", b, "&runs=", run, ",", run));
    compare_newest.push_back(absl::StrCat("/api/v1/compare?agents=", a, ",", b));
    cases_paths.push_back(absl::StrCat("/api/v1/cases?agents=", a, ",", b));
    history_paths.push_back(
        absl::StrCat("/api/v1/history?case=batch/storage/blocking/fiber/any&agents=", a, ",", b, "&limit=365"));
  }
  const int requests = absl::GetFlag(FLAGS_requests);
  bool ok = true;
  std::vector<Latency> table = {
      Measure(client, "run results (480 results)", run_paths, requests, &ok),
      Measure(client, "compare, 2 devices, given runs", compare_paths, requests, &ok),
      Measure(client, "compare, 2 devices, newest runs", compare_newest, requests, &ok),
      Measure(client, "history, 2 devices, 365 runs", history_paths, requests, &ok),
      Measure(client, "runs list (50)", {"/api/v1/runs?limit=50"}, requests, &ok),
      Measure(client, "case ids, 2 devices", cases_paths, requests, &ok),
  };
  // The same run query without HTTP/JSON, to split database time from serving time.
  {
    fleetmark::store::WebReaderOptions reader_options;
    reader_options.uri = uri;
    reader_options.pool_size = 1;
    auto reader = fleetmark::store::OpenPgWebReader(reader_options);
    if (reader.ok()) {
      std::vector<double> ms, encode_ms;
      for (int i = 0; i < requests; ++i) {
        const auto start = Clock::now();
        auto rows = (*reader)->RunResults(runs[rng() % runs.size()], "");
        ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
        if (!rows.ok()) {
          ok = false;
          continue;
        }
        const auto encode_start = Clock::now();
        nlohmann::json list = nlohmann::json::array();
        for (const auto& r : *rows) list.push_back(fleetmark::http::ResultJson(r, false));
        const std::string text = list.dump();
        encode_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - encode_start).count());
      }
      std::sort(encode_ms.begin(), encode_ms.end());
      if (!encode_ms.empty()) {
        Latency e{"  of which JSON encoding"};
        e.p50 = encode_ms[encode_ms.size() / 2];
        e.p95 = encode_ms[std::min(encode_ms.size() - 1, encode_ms.size() * 95 / 100)];
        e.p99 = encode_ms[std::min(encode_ms.size() - 1, encode_ms.size() * 99 / 100)];
        e.max = encode_ms.back();
        table.insert(table.begin() + 1, e);
      }
      std::sort(ms.begin(), ms.end());
      Latency l{"  of which store query (no HTTP)"};
      l.p50 = ms[ms.size() / 2];
      l.p95 = ms[std::min(ms.size() - 1, ms.size() * 95 / 100)];
      l.p99 = ms[std::min(ms.size() - 1, ms.size() * 99 / 100)];
      l.max = ms.back();
      table.insert(table.begin() + 1, l);
    }
  }
  std::printf("%-34s %9s %9s %9s %9s %10s\n", "endpoint", "p50 ms", "p95 ms", "p99 ms", "max ms", "bytes");
  const double limit = absl::GetFlag(FLAGS_max_p95_ms);
  for (const Latency& l : table) {
    std::printf("%-34s %9.1f %9.1f %9.1f %9.1f %10zu\n", l.name.c_str(), l.p50, l.p95, l.p99, l.max, l.bytes);
  }
  for (size_t i = 0; i < table.size(); ++i) {  // every endpoint (not the "of which" parts) carries the target
    if (absl::StartsWith(table[i].name, " ")) continue;
    if (limit > 0 && table[i].p95 > limit) {
      std::printf("FAIL: %s p95 %.1f ms > %.1f ms\n", table[i].name.c_str(), table[i].p95, limit);
      ok = false;
    }
  }
  (*server)->Stop();
  return ok ? 0 : 1;
}
