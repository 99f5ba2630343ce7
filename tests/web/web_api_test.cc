// The web view's JSON API over a real PostgreSQL (a fresh database seeded by web_seed
// through the Store) and a real HTTP server on loopback: status codes, the compare and
// history answers, the token rule, hostile input, and a job re-run after its agent was
// lost (only the newest attempt's results show).
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "coordinator/http/http_server.h"
#include "coordinator/store/store.h"
#include "engine/report/recommend.h"
#include "engine/report/strategy_map.h"
#include "engine/report/units.h"
#include "gtest/gtest.h"
#include "tests/web/pg_database.h"

namespace fleetmark::http {
namespace {

using nlohmann::json;

// A client socket connected to 127.0.0.1:port (-1 on failure); the caller closes it.
int Connect(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    if (fd >= 0) ::close(fd);
    return -1;
  }
  timeval guard{30, 0};  // hang guard only
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &guard, sizeof(guard));
  return fd;
}

// Sends `request` as raw bytes on a new connection and returns the status line ("" if
// the server sent nothing before closing or the 30 s hang guard).
std::string RawStatusLine(int port, const std::string& request) {
  const int fd = Connect(port);
  if (fd < 0) return "";
  ::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string response;
  char buffer[4096];
  while (response.find("\r\n") == std::string::npos) {
    const ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
    if (n <= 0) break;
    response.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return response.substr(0, response.find("\r\n"));
}

// Reads from `fd` until the status line is in (or `timeout_ms` passes, or the server
// closes): the status line, "" if none came.
std::string ReadStatusLine(int fd, int timeout_ms) {
  std::string response;
  char buffer[4096];
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (response.find("\r\n") == std::string::npos) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd p{fd, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
    const ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
    if (n <= 0) break;
    response.append(buffer, static_cast<size_t>(n));
  }
  return response.substr(0, response.find("\r\n"));
}

// This process's resident set in bytes (the servers under test run in it).
int64_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * ::sysconf(_SC_PAGESIZE);
}

// GET /healthz on a new connection with a 1 s hang guard: the status, 0 when no answer
// came within it.
int HealthzWithin1s(int port) {
  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(1, 0);
  client.set_read_timeout(1, 0);
  client.set_write_timeout(1, 0);
  auto res = client.Get("/healthz");
  return res ? res->status : 0;
}

class WebApiTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto db = testing::FreshDatabase::Create("webapi");
    if (!db.ok()) {
      skip_reason_ = std::string(db.status().message());
      return;
    }
    db_ = std::move(*db).release();
    auto seeded = testing::RunCommand({FLEETMARK_WEB_SEED, "--database_uri=" + db_->uri()});
    ASSERT_TRUE(seeded.ok()) << seeded.status();
    manifest_ = new json(json::parse(*seeded));
    HttpServerOptions options;
    options.pg_uri = db_->uri();
    auto server = StartHttpServer(options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server).release();
  }
  static void TearDownTestSuite() {
    delete server_;
    delete manifest_;
    delete db_;
  }
  void SetUp() override {
    if (db_ == nullptr) {
      if (testing::RequirePg()) FAIL() << "PostgreSQL required: " << skip_reason_;
      GTEST_SKIP() << skip_reason_;
    }
    ASSERT_NE(server_, nullptr);
  }

  // A server of its own with /healthz (the shared one has none).
  static std::unique_ptr<HttpServer> HealthServer(HttpServerOptions options = {}) {
    options.pg_uri = db_->uri();
    options.health = [] { return absl::StatusOr<int>(7); };
    auto server = StartHttpServer(options);
    EXPECT_TRUE(server.ok()) << server.status();
    return server.ok() ? std::move(*server) : nullptr;
  }

  static std::pair<int, json> Get(const std::string& path) {
    httplib::Client client("127.0.0.1", server_->port());
    auto res = client.Get(path.c_str());
    if (!res) return {0, nullptr};
    return {res->status, json::parse(res->body, nullptr, /*allow_exceptions=*/false)};
  }
  static std::string AgentId(const std::string& name) {
    for (const auto& a : (*manifest_)["agents"]) {
      if (a["name"] == name) return a["agent_id"];
    }
    return "";
  }

  static inline testing::FreshDatabase* db_ = nullptr;
  static inline json* manifest_ = nullptr;
  static inline HttpServer* server_ = nullptr;
  static inline std::string skip_reason_;
};

TEST_F(WebApiTest, AgentsKeepHostileNamesVerbatim) {
  auto [status, body] = Get("/api/v1/agents");
  ASSERT_EQ(status, 200);
  ASSERT_EQ(body["agents"].size(), 3u);
  bool found = false;
  for (const auto& a : body["agents"]) found |= a["name"] == "<img src=x onerror=alert(1)>";
  EXPECT_TRUE(found);
}

// A core class keeps the machine's CPUs (machine_cpus) beside the allowed ones (cpus):
// the seeded host runs in a cpuset of its P-cores, so its E-core class has none allowed
// and 8 on the machine (the Fleet page's "not available here (8 machine CPUs ...)").
TEST_F(WebApiTest, CoreClassesCarryTheirMachineCpus) {
  auto [status, body] = Get("/api/v1/agents");
  ASSERT_EQ(status, 200);
  const json* host = nullptr;
  for (const auto& a : body["agents"]) {
    if (a["name"] == "x86-host") host = &a["host"];
  }
  ASSERT_NE(host, nullptr) << body.dump();
  const json& classes = (*host)["core_classes"];
  ASSERT_EQ(classes.size(), 2u) << host->dump();
  EXPECT_EQ(classes[0]["name"], "performance");
  EXPECT_EQ(classes[0]["cpus"].size(), 12u);
  EXPECT_EQ(classes[0]["machine_cpus"], classes[0]["cpus"]);
  EXPECT_EQ(classes[1]["name"], "efficiency");
  EXPECT_TRUE(classes[1]["cpus"].empty()) << classes[1].dump();
  EXPECT_EQ(classes[1]["machine_cpus"], json({12, 13, 14, 15, 16, 17, 18, 19})) << classes[1].dump();
  EXPECT_EQ(classes[1]["cores"], 0);
}

TEST_F(WebApiTest, RunResultsHaveNoSamplesButTheResultDoes) {
  const std::string run = (*manifest_)["study_run_id"];
  auto [status, body] = Get("/api/v1/runs/" + run + "/results?agent=" + AgentId("x86-host"));
  ASSERT_EQ(status, 200);
  ASSERT_EQ(body["results"].size(), 18u);
  EXPECT_FALSE(body["results"][0].contains("samples_ns"));
  const std::string id = body["results"][0]["result_id"];
  auto [s2, full] = Get("/api/v1/results/" + id);
  ASSERT_EQ(s2, 200);
  EXPECT_EQ(full["result"]["samples_ns"].size(), 40u);
  // The start conditions name the gate that passed unchecked (issue 32, item 11).
  EXPECT_EQ(full["result"]["env_before"]["gates_not_checked"],
            json::array({"temperature: no thermal zone or battery gave a plausible reading, max 45 °C not checked"}));
  EXPECT_TRUE(full["result"]["env_after"]["gates_not_checked"].empty());
  EXPECT_EQ(full["result"]["counters"]["repetitions"], 40);
}

// As the CLI: a run id or a unique prefix of at least 6 hex digits of it.
TEST_F(WebApiTest, RunRoutesAcceptAUniqueIdPrefix) {
  const std::string run = (*manifest_)["study_run_id"];
  auto [status, body] = Get("/api/v1/runs/" + run.substr(0, 8) + "/results?agent=" + AgentId("x86-host"));
  ASSERT_EQ(status, 200) << body.dump();
  EXPECT_EQ(body["run_id"], run);
  EXPECT_EQ(body["results"].size(), 18u);
  auto [run_status, one] = Get("/api/v1/runs/" + run.substr(0, 6));
  ASSERT_EQ(run_status, 200) << one.dump();
  EXPECT_EQ(one["run"]["run_id"], run);
  auto [short_status, short_body] = Get("/api/v1/runs/" + run.substr(0, 5) + "/results");
  EXPECT_EQ(short_status, 400);
  EXPECT_NE(short_body["error"].get<std::string>().find("run_id: a run id (UUID) or a unique prefix"),
            std::string::npos)
      << short_body.dump();
}

// Issue 16, item 6: an ambiguous prefix answers the runs it matches (300), so the page
// can list them; a unique longer prefix names its run; none is a clear 404.
TEST_F(WebApiTest, AnAmbiguousRunIdPrefixListsTheMatches) {
  const std::string prefix = (*manifest_)["ambiguous_prefix"];
  auto [status, body] = Get("/api/v1/runs/" + prefix);
  ASSERT_EQ(status, 300) << body.dump();
  EXPECT_EQ(body["error"], "run id prefix " + prefix + " is ambiguous: it matches 2 runs; give more characters");
  ASSERT_EQ(body["matches"].size(), 2u) << body.dump();
  EXPECT_EQ(body["matches"][0]["run_id"], (*manifest_)["ambiguous_run_ids"][0]);
  EXPECT_EQ(body["matches"][1]["run_id"], (*manifest_)["ambiguous_run_ids"][1]);
  EXPECT_EQ(body["matches"][0]["plan_name"], "s4-fanout");
  auto [one_status, one] = Get("/api/v1/runs/" + prefix + "-2");
  ASSERT_EQ(one_status, 200) << one.dump();
  EXPECT_EQ(one["run"]["run_id"], (*manifest_)["ambiguous_run_ids"][1]);
  auto [none_status, none] = Get("/api/v1/runs/abcdef0f");
  EXPECT_EQ(none_status, 404);
  EXPECT_EQ(none["error"], "no run with id prefix abcdef0f") << none.dump();
}

// History's case list: every case with a result of the chosen devices in any run, not
// only their newest run's (for the host: the nightly runs hold only two cases).
TEST_F(WebApiTest, CasesListEveryCaseWithHistoryForTheDevices) {
  auto [status, body] = Get("/api/v1/cases?agents=" + AgentId("x86-host") + "," + AgentId("pixel-8"));
  ASSERT_EQ(status, 200) << body.dump();
  const std::vector<std::string> ids = body["case_ids"];
  const std::set<std::string> set(ids.begin(), ids.end());
  EXPECT_EQ(set.size(), ids.size()) << "distinct";
  EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end()));
  for (const std::string id : {"batch/arithmetic/blocking/fixed_pool/any",     // nightly and study runs
                               "memory/network/blocking/thread_per_task/any",  // the memory run
                               "load/-/-/coroutine/any/users=1000",            // the host's load run
                               "batch/synthetic[cpu_ns=1000,wait_us=10]/blocking/fixed_pool_io/any"}) {
    EXPECT_EQ(set.count(id), 1u) << id << " in " << body.dump();
  }
  // The phone alone has no load run.
  auto [phone_status, phone] = Get("/api/v1/cases?agents=" + AgentId("pixel-8"));
  ASSERT_EQ(phone_status, 200);
  const std::vector<std::string> phone_ids = phone["case_ids"];
  EXPECT_EQ(std::count(phone_ids.begin(), phone_ids.end(), "load/-/-/coroutine/any/users=1000"), 0);
  EXPECT_EQ(std::count(phone_ids.begin(), phone_ids.end(), "memory/network/blocking/thread_per_task/any"), 1);
}

TEST_F(WebApiTest, SchedulesShowTheirFilterAndPausedState) {
  auto [status, body] = Get("/api/v1/schedules");
  ASSERT_EQ(status, 200) << body.dump();
  ASSERT_EQ(body["schedules"].size(), 2u) << body.dump();
  const json& paused = body["schedules"][0];
  EXPECT_EQ(paused["name"], "weekly-fanout");
  EXPECT_EQ(paused["paused"], true);
  EXPECT_EQ(paused["filter"], "^fanout/");
  EXPECT_EQ(paused["quick"], true);
  EXPECT_EQ(paused["cron"], "0 3 * * 0");
  EXPECT_EQ(paused["plan_name"], "s4-fanout");
  EXPECT_EQ(paused["selector"], "arch=aarch64");
  const json& active = body["schedules"][1];
  EXPECT_EQ(active["name"], "yearly-s1");
  EXPECT_EQ(active["paused"], false);
  EXPECT_EQ(active["filter"], "");
  EXPECT_GT(active["next_fire_unix_ms"].get<int64_t>(), 0);
  // The selector as `schedules list` shows it (service::SelectorText), the last fire's run.
  EXPECT_EQ(paused["selector_text"], "arch=aarch64");
  EXPECT_EQ(active["selector_text"], "(all online)");
  EXPECT_EQ(active["last_fire_run_id"], (*manifest_)["yearly_fire_run_id"]) << active.dump();
  EXPECT_EQ(paused["last_fire_run_id"], "");
}

// The run page's tables show the CLI's values: threads "48 of 100", CPU per repetition
// auto-scaled (the CLI table's cells), and fan-out rows their own metrics.
// GET /api/v1/changes: the coordinator's confirmed changes (one inserted here as the
// change monitor stores them), its filters and their errors.
TEST_F(WebApiTest, ChangesListTheConfirmedChangesWithFilters) {
  {
    pqxx::connection c(db_->uri());
    pqxx::work w(c);
    w.exec_params(
        "INSERT INTO changes (agent_id, case_id, run_id, old_level_ns, new_level_ns, noise_percent,"
        " min_change_percent, state, reason, confirmation_median_ns, decided_at) "
        "VALUES ($1::uuid, $2, $3::uuid, 95000, 123500, 1.0, 3.0, 'confirmed', 'confirmation 124 µs', 124000, now())",
        AgentId("x86-host"), std::string((*manifest_)["history_case_id"]),
        std::string((*manifest_)["nightly"][8]["run_id"]));
    w.commit();
  }
  auto [status, body] = Get("/api/v1/changes?agent=x86-host&state=confirmed&since=24h");
  ASSERT_EQ(status, 200) << body.dump();
  ASSERT_EQ(body["changes"].size(), 1u) << body.dump();
  const json& change = body["changes"][0];
  EXPECT_EQ(change["agent"], "x86-host");
  EXPECT_EQ(change["case_id"], (*manifest_)["history_case_id"]);
  EXPECT_EQ(change["run_id"], (*manifest_)["nightly"][8]["run_id"]);
  EXPECT_EQ(change["old_level"], "95.0 µs");
  EXPECT_EQ(change["new_level"], "124 µs");
  EXPECT_DOUBLE_EQ(change["ratio"].get<double>(), 1.3);
  EXPECT_EQ(change["confirmation_median_ns"], 124000);
  EXPECT_EQ(change["state"], "confirmed");
  EXPECT_EQ(Get("/api/v1/changes?agent=pixel-8").second["changes"].size(), 0u);
  auto [unknown, unknown_body] = Get("/api/v1/changes?agent=nosuch");  // a typo, not "no changes"
  EXPECT_EQ(unknown, 404);
  EXPECT_NE(unknown_body["error"].get<std::string>().find("no agent named \"nosuch\""), std::string::npos);
  EXPECT_EQ(Get("/api/v1/changes?state=not_reproduced").second["changes"].size(), 0u);
  EXPECT_EQ(Get("/api/v1/changes?since=2999-01-01").second["changes"].size(), 0u);
  auto [bad_state, bad_state_body] = Get("/api/v1/changes?state=gone");
  EXPECT_EQ(bad_state, 400);
  EXPECT_EQ(bad_state_body["error"], "state: one of suspected, confirmed, not_reproduced, unconfirmed, got \"gone\"");
  auto [bad_since, bad_since_body] = Get("/api/v1/changes?since=soon");
  EXPECT_EQ(bad_since, 400);
  EXPECT_NE(bad_since_body["error"].get<std::string>().find("since: a duration back from now"), std::string::npos);
  EXPECT_EQ(Get("/api/v1/changes?limit=0").first, 400);
}

// changes?since=48h counts back from the server's clock (HttpServerOptions::clock),
// not absl::Now() (issue 33 item 2): a change made 10 days ago is within 48h of a clock
// 9 days behind, and not within 12h of it. Before, both counted back from the real now
// and found nothing.
TEST_F(WebApiTest, ChangesSinceCountsBackFromTheServersClock) {
  {
    pqxx::connection c(db_->uri());
    pqxx::work w(c);
    w.exec_params(
        "INSERT INTO changes (agent_id, case_id, run_id, old_level_ns, new_level_ns, noise_percent,"
        " min_change_percent, state, reason, created_at, decided_at) "
        "VALUES ($1::uuid, $2, $3::uuid, 95000, 123500, 1.0, 3.0, 'unconfirmed', 'no confirmation',"
        " now() - interval '10 days', now() - interval '10 days')",
        AgentId("x86-host"), std::string((*manifest_)["history_case_id"]),
        std::string((*manifest_)["nightly"][7]["run_id"]));
    w.commit();
  }
  FakeClock clock(absl::Now() - absl::Hours(9 * 24));
  HttpServerOptions options;
  options.pg_uri = db_->uri();
  options.clock = &clock;
  auto server = StartHttpServer(options);
  ASSERT_TRUE(server.ok()) << server.status();
  httplib::Client client("127.0.0.1", (*server)->port());
  auto count = [&](const std::string& since) -> size_t {
    auto res = client.Get(("/api/v1/changes?state=unconfirmed&since=" + since).c_str());
    EXPECT_TRUE(res);
    if (!res) return 99;
    EXPECT_EQ(res->status, 200) << res->body;
    return json::parse(res->body)["changes"].size();
  };
  EXPECT_EQ(count("48h"), 1u);
  EXPECT_EQ(count("12h"), 0u);
}

// A parameter value that is not UTF-8 is refused by name before any query (PostgreSQL's
// "invalid byte sequence" error leaked before), on every endpoint.
TEST_F(WebApiTest, AParameterThatIsNotUtf8Is400NamingIt) {
  for (const char* path : {"/api/v1/changes?agent=%ff", "/api/v1/runs?limit=%c3%28", "/api/v1/cases?agent=a%ffb"}) {
    auto [status, body] = Get(path);
    EXPECT_EQ(status, 400) << path;
    const std::string error = body.value("error", "");
    EXPECT_NE(error.find(": parameter values are UTF-8 text, got \""), std::string::npos) << path << ": " << error;
    EXPECT_EQ(error.find("ERROR"), std::string::npos) << error;
    EXPECT_EQ(error.find("encoding"), std::string::npos) << error;
  }
  EXPECT_EQ(Get("/api/v1/changes?agent=%ff").second["error"],
            "agent: parameter values are UTF-8 text, got \"\\xff\" (invalid UTF-8 at byte 0)");
}

TEST_F(WebApiTest, ResultsCarryTheCliTablesCells) {
  auto [status, body] = Get("/api/v1/runs/" + std::string((*manifest_)["fanout_run_id"]) + "/results");
  ASSERT_EQ(status, 200) << body.dump();
  std::map<std::string, json> by_strategy;
  for (const json& r : body["results"]) by_strategy[r["strategy_name"]] = r;
  ASSERT_EQ(by_strategy.size(), 3u) << body.dump();
  EXPECT_EQ(by_strategy["fixed_pool"]["threads_text"], "48 of 100");
  EXPECT_EQ(by_strategy["fiber"]["threads_text"], "2");
  EXPECT_EQ(by_strategy["thread_per_task"]["threads_text"], "-");  // exhausted: nothing ran
  EXPECT_EQ(by_strategy["fixed_pool"]["fanout"]["timeouts"], 12);
  EXPECT_EQ(by_strategy["fixed_pool"]["fanout"]["latency_p99_ms"], 3001.0);
  EXPECT_EQ(by_strategy["fixed_pool"]["fanout"]["peak_threads"], 104);
  EXPECT_FALSE(by_strategy["thread_per_task"].contains("fanout"));

  auto [s2, study] =
      Get("/api/v1/runs/" + std::string((*manifest_)["study_run_id"]) + "/results?agent=" + AgentId("x86-host"));
  ASSERT_EQ(s2, 200);
  int with_transient = 0;
  for (const json& r : study["results"]) {
    const json& c = r["counters"];
    // The seed: 40 repetitions, CPU user + system = 1.1 × the median per repetition;
    // single_thread ran 100, 60 of them dropped as transient (40 samples): the CPU is
    // of all 100, so per repetition it is 1.1 × the median again, as the CLI shows it.
    const bool transient = r["strategy_name"] == "single_thread";
    with_transient += transient;
    const int repetitions = transient ? 100 : 40;
    EXPECT_EQ(c["repetitions"], repetitions) << r.dump();
    EXPECT_EQ(r["stats"]["count"], 40) << r.dump();
    const double cpu_s = c["cpu_user_seconds"].get<double>() + c["cpu_system_seconds"].get<double>();
    EXPECT_EQ(r["cpu_per_rep_text"], report::FormatNanos(cpu_s * 1e9 / repetitions)) << r.dump();
    const double median_ns = r["stats"]["median_ns"].get<double>();
    EXPECT_NEAR(cpu_s * 1e9 / repetitions, 1.1 * median_ns, 1e-6 * median_ns) << r.dump();
    // Dividing by the kept samples instead would show 2.5 times as much.
    if (transient) EXPECT_NE(r["cpu_per_rep_text"], report::FormatNanos(cpu_s * 1e9 / 40)) << r.dump();
  }
  EXPECT_GT(with_transient, 0) << study.dump();
}

TEST_F(WebApiTest, CasesWithoutAgentIs400NamingIt) {
  auto [status, body] = Get("/api/v1/cases");
  EXPECT_EQ(status, 400);
  EXPECT_EQ(body["error"].get<std::string>().rfind("agent: required", 0), 0u) << body.dump();
  auto [known, cases] = Get("/api/v1/cases?agent=" + AgentId("x86-host"));
  EXPECT_EQ(known, 200);
  EXPECT_FALSE(cases["case_ids"].empty());
}

// Every endpoint that takes agents= resolves names and ids by one rule, and an unknown
// agent is the same 404 naming it everywhere.
TEST_F(WebApiTest, EveryAgentsParameterTakesNamesAndIds) {
  const std::string ids = AgentId("x86-host") + "," + AgentId("pixel-8");
  const std::string names = "x86-host,pixel-8";
  const std::string run = (*manifest_)["study_run_id"];
  const std::string history = "/api/v1/history?case=batch/arithmetic/blocking/fixed_pool/any&nightly=1&agents=";
  const std::string runs = "&runs=" + run + "," + run;
  for (const std::string& prefix : {history, std::string("/api/v1/cases?agents="), std::string("/api/v1/map?agents="),
                                    std::string("/api/v1/compare?agents=")}) {
    const std::string suffix =
        prefix.find("map") != std::string::npos || prefix.find("compare") != std::string::npos ? runs : "";
    auto [by_id_status, by_id] = Get(prefix + ids + suffix);
    auto [by_name_status, by_name] = Get(prefix + names + suffix);
    ASSERT_EQ(by_id_status, 200) << prefix << by_id.dump();
    ASSERT_EQ(by_name_status, 200) << prefix << by_name.dump();
    EXPECT_EQ(by_name, by_id) << prefix;
    auto [unknown_status, unknown] = Get(prefix + "x86-host,nobody" + suffix);
    EXPECT_EQ(unknown_status, 404) << prefix << unknown.dump();
    EXPECT_EQ(unknown["error"], "agent nobody not found (agents: agent ids or names)") << prefix;
  }
  auto [series_status, series] = Get(history + names);
  ASSERT_EQ(series["series"].size(), 2u) << series.dump();
  EXPECT_EQ(series["series"][0]["points"].size(), 14u);
}

// Parameters are never silently ignored: one an endpoint does not read is 400 naming it
// with a did-you-mean and the endpoint's parameters (`results?agents=zzz` returned every
// result); a name given twice is 400 (the first one won); a control character is 400
// with the value escaped (`history?case=%00` was echoed back raw), and an agent= that
// names no agent is the 404 of agents= (it was an empty list).
TEST_F(WebApiTest, UnknownDuplicateAndControlParametersAre400) {
  const std::string run = (*manifest_)["study_run_id"];
  auto [typo, typo_body] = Get("/api/v1/runs/" + run + "/results?agents=zzz");
  EXPECT_EQ(typo, 400) << typo_body.dump();
  EXPECT_EQ(
      typo_body["error"],
      "unknown parameter \"agents\" of /api/v1/runs/<id>/results (did you mean \"agent\"?); its parameters: agent");
  auto [none, none_body] = Get("/api/v1/agents?limit=5");
  EXPECT_EQ(none, 400);
  EXPECT_EQ(none_body["error"], "unknown parameter \"limit\" of /api/v1/agents; it takes no parameters");
  auto [runs, runs_body] = Get("/api/v1/runs?limt=5");
  EXPECT_EQ(runs, 400);
  EXPECT_EQ(runs_body["error"],
            "unknown parameter \"limt\" of /api/v1/runs (did you mean \"limit\"?); its parameters: limit");
  auto [twice, twice_body] = Get("/api/v1/runs?limit=5&limit=6");
  EXPECT_EQ(twice, 400);
  EXPECT_EQ(twice_body["error"], "parameter \"limit\" is given twice; give it once");
  for (const char* path :
       {"/api/v1/history?case=%00&agents=x86-host", "/api/v1/cases?agent=a%1bb", "/api/v1/runs?limit=1%0a"}) {
    auto [status, body] = Get(path);
    EXPECT_EQ(status, 400) << path;
    const std::string error = body.value("error", "");
    EXPECT_NE(error.find(": parameter values are printable text (no control characters), got \""), std::string::npos)
        << path << ": " << error;
    for (char c : error) EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20) << path << ": " << error;
  }
  EXPECT_EQ(Get("/api/v1/history?case=%00&agents=x86-host").second["error"],
            "case: parameter values are printable text (no control characters), got \"\\x00\" (control character "
            "U+0000 at byte 0)");
  auto [nobody, nobody_body] = Get("/api/v1/runs/" + run + "/results?agent=zzz");
  EXPECT_EQ(nobody, 404) << nobody_body.dump();
  EXPECT_EQ(nobody_body["error"], "agent zzz not found (agents: agent ids or names)");
  // By name as by id, as agents= takes them.
  auto [by_name, by_name_body] = Get("/api/v1/runs/" + run + "/results?agent=x86-host");
  auto [by_id, by_id_body] = Get("/api/v1/runs/" + run + "/results?agent=" + AgentId("x86-host"));
  ASSERT_EQ(by_name, 200) << by_name_body.dump();
  EXPECT_FALSE(by_name_body["results"].empty());
  EXPECT_EQ(by_name_body, by_id_body);
}

// runs= of map and compare: a run id or a unique prefix (the 8 characters the pages
// show), the rule of /runs/<prefix>; a malformed one is 400 naming that rule.
TEST_F(WebApiTest, MapAndCompareRunsTakeIdPrefixes) {
  const std::string agents = "x86-host,pixel-8";
  for (const std::string key : {"study_run_id", "sweep_run_id"}) {
    const std::string run = (*manifest_)[key];
    for (const std::string endpoint : {"map", "compare"}) {
      auto [full_status, full] = Get("/api/v1/" + endpoint + "?agents=" + agents + "&runs=" + run + "," + run);
      auto [short_status, prefixed] =
          Get("/api/v1/" + endpoint + "?agents=" + agents + "&runs=" + run.substr(0, 8) + "," + run.substr(0, 8));
      ASSERT_EQ(full_status, 200) << endpoint << full.dump();
      ASSERT_EQ(short_status, 200) << endpoint << prefixed.dump();
      EXPECT_EQ(prefixed, full) << endpoint;
      EXPECT_EQ(prefixed["devices"][0]["run_id"], run) << endpoint;
      for (const std::string bad : {"zz", "abc", "abcdef_1"}) {
        auto [bad_status, body] = Get("/api/v1/" + endpoint + "?agents=" + agents + "&runs=" + run + "," + bad);
        EXPECT_EQ(bad_status, 400) << endpoint << " " << bad << body.dump();
        EXPECT_EQ(body["error"].get<std::string>().rfind("run_id: a run id (UUID) or a unique prefix", 0), 0u)
            << body.dump();
      }
      auto [none_status, none] = Get("/api/v1/" + endpoint + "?agents=" + agents + "&runs=" + run + ",ffffff00");
      EXPECT_EQ(none_status, 404) << none.dump();
    }
  }
}

TEST_F(WebApiTest, CompareFindsWinnersAndTheTie) {
  const std::string a = AgentId("x86-host"), b = AgentId("pixel-8");
  const std::string run = (*manifest_)["study_run_id"];
  auto [status, body] = Get("/api/v1/compare?agents=" + a + "," + b + "&runs=" + run + "," + run);
  ASSERT_EQ(status, 200);
  EXPECT_EQ(body["devices"][0]["run_id"], (*manifest_)["study_run_id"]);
  ASSERT_EQ(body["cells"].size(), 18u);
  int ties = 0;
  for (const auto& cell : body["cells"]) {
    if (cell["no_difference"]) {
      ++ties;
      EXPECT_EQ(cell["strategy"], "single_thread");
      EXPECT_TRUE(cell["ratios"][1]["no_difference"]);
      // 1.005x in every round (the drift is shared): within the 2 % margin, equivalent.
      EXPECT_EQ(cell["verdict"], "equivalent") << cell.dump();
    } else {
      EXPECT_EQ(cell["winner"], 0) << cell.dump();  // the host is 2.5x faster
      EXPECT_EQ(cell["verdict"], "decided") << cell.dump();
      EXPECT_NEAR(cell["ratios"][1]["ratio"].get<double>(), 0.4, 1e-9);
    }
  }
  EXPECT_EQ(ties, 1);
  EXPECT_LT(body["overall"]["ratios"][1]["ratio"].get<double>(), 1.0);
  // Without runs, each device's newest run with results (here the nightly ones).
  auto [s2, newest] = Get("/api/v1/compare?agents=" + a + "," + b);
  ASSERT_EQ(s2, 200);
  EXPECT_NE(newest["devices"][0]["run_id"], run);
  EXPECT_EQ(newest["cells"].size(), 5u);  // two cases and the three of the calibration block
}

// The answer first (issue 15, item 7): per workload and device the verdict of the one
// rule (engine/measure/verdict.h) with min_margin; the
// memory scenario by KiB/task per device; and the fleet A/B of two cases (item 6).
TEST_F(WebApiTest, CompareAnswersPerWorkloadAndDeviceAndAbOfTwoCases) {
  const std::string a = AgentId("x86-host"), b = AgentId("pixel-8");
  const std::string run = (*manifest_)["study_run_id"];
  const std::string both = "/api/v1/compare?agents=" + a + "," + b + "&runs=" + run + "," + run;
  auto [status, body] = Get(both);
  ASSERT_EQ(status, 200) << body.dump();
  const json& points = body["answers"]["points"];
  ASSERT_EQ(points.size(), 3u) << body["answers"].dump();
  EXPECT_EQ(body["answers"]["min_margin"], 0.02);
  const json* storage = nullptr;
  for (const json& p : points) {
    if (p["point"] == "batch/storage/blocking/any") storage = &p;
  }
  ASSERT_NE(storage, nullptr) << points.dump();
  // fixed_pool 9.8 ms vs work_stealing 10.4 ms in each of three processes that drift
  // ±1.5 % alike: the drift cancels in the paired ratios and leaves no residual spread
  // (margin 2 %): 1.061x with an interval of its own width, decided.
  const json& host = (*storage)["devices"][0];
  EXPECT_EQ(host["winner"], "fixed_pool") << host.dump();
  EXPECT_EQ(host["tie"], false);
  EXPECT_EQ(host["kind"], "decided");
  EXPECT_EQ(host["answer"], "fixed_pool wins (1.06x [1.06x, 1.06x] over work_stealing)") << host.dump();
  EXPECT_GT(host["ratio_low"].get<double>(), 1.02);
  // A stated minimum above the gap: equivalent within it, never a winner.
  auto [loose_status, loose] = Get(both + "&min_margin=0.1");
  ASSERT_EQ(loose_status, 200) << loose.dump();
  int loose_points = 0;
  for (const json& p : loose["answers"]["points"]) {
    if (p["point"] != "batch/storage/blocking/any") continue;
    ++loose_points;
    EXPECT_EQ(p["devices"][0]["tie"], true) << p.dump();
    EXPECT_EQ(p["devices"][0]["kind"], "equivalent") << p.dump();  // the others are out
    EXPECT_EQ(p["devices"][0]["answer"], "equivalent within 10.0 %: fixed_pool, work_stealing") << p.dump();
    EXPECT_DOUBLE_EQ(p["devices"][0]["margin"].get<double>(), 0.1) << p.dump();
  }
  EXPECT_EQ(loose_points, 1);
  auto [bad_status, bad] = Get(both + "&min_margin=2");
  EXPECT_EQ(bad_status, 400);
  EXPECT_EQ(bad["error"].get<std::string>().rfind("min_margin: a fraction 0 <= min_margin < 1", 0), 0u) << bad.dump();

  // Fleet A/B: work_stealing (B) against fixed_pool (A) on storage, on both devices.
  auto [ab_status, ab] = Get(both + "&cases=storage/blocking/fixed_pool,storage/blocking/work_stealing");
  ASSERT_EQ(ab_status, 200) << ab.dump();
  EXPECT_EQ(ab["ab"]["a"], "batch/storage/blocking/fixed_pool/any");
  ASSERT_EQ(ab["ab"]["devices"].size(), 2u);
  EXPECT_NEAR(ab["ab"]["devices"][0]["ratio"].get<double>(), 10.4 / 9.8, 1e-9);
  EXPECT_EQ(ab["ab"]["devices"][0]["verdict"], "slower");
  EXPECT_EQ(ab["ab"]["fleet"]["slower"], 2);
  auto [ambiguous_status, ambiguous] = Get(both + "&cases=fixed_pool,work_stealing");
  EXPECT_EQ(ambiguous_status, 400);
  EXPECT_NE(ambiguous["error"].get<std::string>().find("\"fixed_pool\" matches 3 cases"), std::string::npos)
      << ambiguous.dump();
  // The query parameter is named, not the CLI's flag (issue 34, small gaps).
  EXPECT_EQ(ambiguous["error"].get<std::string>().rfind("cases: \"fixed_pool\" matches 3 cases", 0), 0u)
      << ambiguous.dump();

  // The memory run: KiB/task per device (the phone's slopes are 0.65 of the host's).
  const std::string memory = (*manifest_)["memory_run_id"];
  auto [m_status, m] = Get("/api/v1/compare?agents=" + a + "," + b + "&runs=" + memory + "," + memory);
  ASSERT_EQ(m_status, 200) << m.dump();
  const json& scenarios = m["answers"]["scenarios"];
  ASSERT_EQ(scenarios.size(), 4u) << m["answers"].dump();
  const json* threads = nullptr;
  for (const json& row : scenarios) {
    if (row["case_id"] == "memory/network/blocking/thread_per_task/any") threads = &row;
  }
  ASSERT_NE(threads, nullptr) << scenarios.dump();
  EXPECT_EQ((*threads)["devices"][0]["metrics"]["KiB/task"]["value"], 64);
  EXPECT_NEAR((*threads)["devices"][1]["metrics"]["KiB/task"]["value"].get<double>(), 64 * 0.65, 1e-9);
  EXPECT_EQ((*threads)["devices"][1]["text"], "41.6 KiB/task");
}

// The seeded sweep (web_seed 3b): the map per device computed by the strategy map, the
// crossover of each device across devices, and compare / results keeping the points apart.
TEST_F(WebApiTest, MapGivesWinnersTiesAndTheCrossoverAcrossDevices) {
  const std::string a = AgentId("x86-host"), b = AgentId("pixel-8");
  const std::string run = (*manifest_)["sweep_run_id"];
  auto [status, body] = Get("/api/v1/map?agents=" + a + "," + b + "&runs=" + run + "," + run);
  ASSERT_EQ(status, 200) << body.dump();
  ASSERT_EQ(body["devices"].size(), 2u);
  EXPECT_EQ(body["devices"][0]["name"], "x86-host");
  EXPECT_EQ(body["devices"][0]["run_id"], run);
  const json& host = body["devices"][0]["map"]["points"];
  ASSERT_EQ(host.size(), 4u) << body.dump();
  EXPECT_EQ(host[0]["group"], "batch/synthetic[cpu_ns=1000]/blocking/any");
  EXPECT_EQ(host[0]["swept"], json::array({"wait_us"}));
  EXPECT_EQ(host[0]["point"]["wait_us"], 10);
  EXPECT_EQ(host[0]["winner"], "fixed_pool_cpu");
  EXPECT_EQ(host[0]["runner_up"], "fixed_pool_io");
  EXPECT_NEAR(host[0]["ratio"].get<double>(), 1.5, 1e-9);  // the paired ratio
  EXPECT_GT(host[0]["ratio_low"].get<double>(), 1.4);
  EXPECT_LT(host[0]["ratio_low"].get<double>(), 1.5);
  EXPECT_EQ(host[0]["tie"], false);
  EXPECT_EQ(host[0]["kind"], "decided");
  EXPECT_EQ(host[0]["pairs"], 3);
  EXPECT_EQ(host[2]["winner"], "fixed_pool_io");
  EXPECT_EQ(host[3]["ranked"].size(), 3u);
  const json& phone = body["devices"][1]["map"]["points"];
  ASSERT_EQ(phone.size(), 4u);
  // direct and the CPU-sized pool at 10 us: 1.01x in every round, the drift shared:
  // within the 2 % margin.
  EXPECT_EQ(phone[0]["tie"], true);
  EXPECT_EQ(phone[0]["kind"], "equivalent");
  EXPECT_EQ(phone[0]["tied"], json::array({"fixed_pool_cpu", "direct"}));  // the IO-sized pool is out
  EXPECT_EQ(phone[0]["verdict"], "equivalent within 2.0 %: fixed_pool_cpu, direct") << phone[0].dump();
  // One crossover (CPU-sized -> IO-sized pool) with both devices' intervals.
  ASSERT_EQ(body["crossovers"].size(), 1u) << body["crossovers"].dump();
  const json& c = body["crossovers"][0];
  EXPECT_EQ(c["param"], "wait_us");
  EXPECT_EQ(c["from"], "fixed_pool_cpu");
  EXPECT_EQ(c["to"], "fixed_pool_io");
  ASSERT_EQ(c["devices"].size(), 2u);
  EXPECT_EQ(c["devices"][0]["name"], "x86-host");
  EXPECT_EQ(c["devices"][0]["low"], 100);
  EXPECT_EQ(c["devices"][0]["high"], 1000);
  EXPECT_EQ(c["devices"][1]["low"], 1000);
  EXPECT_EQ(c["devices"][1]["high"], 10000);
  const double estimate = c["devices"][0]["estimate"];
  EXPECT_TRUE(estimate > 100 && estimate < 1000) << estimate;

  // Compare and the run's results label each sweep point apart (they were all "synthetic").
  auto [s2, compared] = Get("/api/v1/compare?agents=" + a + "," + b + "&runs=" + run + "," + run);
  ASSERT_EQ(s2, 200);
  ASSERT_EQ(compared["workloads"].size(), 4u) << compared["workloads"].dump();
  std::set<std::string> keys, labels;
  for (const json& w : compared["workloads"]) keys.insert(w["key"]), labels.insert(w["label"]);
  EXPECT_EQ(keys.count("batch/synthetic[cpu_ns=1000,wait_us=10]/blocking/any"), 1u) << compared["workloads"].dump();
  EXPECT_EQ(labels.count("synthetic[cpu_ns=1000,wait_us=10000]"), 1u) << compared["workloads"].dump();
  EXPECT_EQ(compared["cells"].size(), 12u);
  auto [s3, results] = Get("/api/v1/runs/" + run + "/results?agent=" + a);
  ASSERT_EQ(s3, 200);
  ASSERT_EQ(results["results"].size(), 12u);
  std::set<std::string> workloads;
  for (const json& r : results["results"]) {
    workloads.insert(r["workload"]);
    EXPECT_EQ(r["workload_name"], "synthetic");
  }
  EXPECT_EQ(workloads,
            (std::set<std::string>{"synthetic[cpu_ns=1000,wait_us=10]", "synthetic[cpu_ns=1000,wait_us=100]",
                                   "synthetic[cpu_ns=1000,wait_us=1000]", "synthetic[cpu_ns=1000,wait_us=10000]"}));

  // Bad input is named, as for compare.
  auto [s4, missing] = Get("/api/v1/map");
  EXPECT_EQ(s4, 400);
  EXPECT_NE(missing["error"].get<std::string>().find("agents: 1..16"), std::string::npos) << missing.dump();
  auto [s5, unknown] = Get("/api/v1/map?agents=00000000-0000-4000-8000-000000000000");
  EXPECT_EQ(s5, 404);
  EXPECT_NE(unknown["error"].get<std::string>().find("(agents: agent ids or names)"), std::string::npos);
  // Agent names work as the CLI's do: the same map as by id.
  auto [s7, by_name] = Get("/api/v1/map?agents=x86-host,pixel-8&runs=" + run + "," + run);
  ASSERT_EQ(s7, 200) << by_name.dump();
  EXPECT_EQ(by_name["devices"], body["devices"]);
  auto [s8, no_such] = Get("/api/v1/map?agents=no-such-agent");
  EXPECT_EQ(s8, 404);
  // A device without a sweep: an empty map, not an error.
  auto [s6, study] = Get("/api/v1/map?agents=" + a + "&runs=" + std::string((*manifest_)["study_run_id"]));
  ASSERT_EQ(s6, 200);
  EXPECT_EQ(study["devices"][0]["map"]["points"].size(), 3u);  // one point per fixed workload
  EXPECT_EQ(study["crossovers"].size(), 0u);
}

// The engine's answer for a run, as `fleetmark recommend --run RUN --format json` gives
// it: the run's results as the Store exports them (the CLI's path), per agent name.
json EngineRecommendation(const std::string& uri, const std::string& run_id, const std::string& profile_text) {
  store::StoreOptions options;
  options.connection.uri = uri;
  auto store = store::Store::Open(options);
  EXPECT_TRUE(store.ok()) << store.status();
  if (!store.ok()) return nullptr;
  auto exported = (*store)->ExportResults(run_id, "");
  EXPECT_TRUE(exported.ok()) << exported.status();
  if (!exported.ok()) return nullptr;
  std::map<std::string, std::string> agent_of_job;
  for (const auto& job : exported->run().jobs()) agent_of_job[job.job_id()] = job.agent_name();
  std::map<std::string, std::vector<fleetmark::v1::CaseResult>> devices;
  for (const auto& r : exported->results()) devices[agent_of_job[r.job_id()]].push_back(r);
  auto profile = report::ParseProfile(profile_text);
  EXPECT_TRUE(profile.ok()) << profile.status();
  std::vector<report::DeviceRecommendations> answers;
  for (const auto& [name, results] : devices) {
    answers.push_back({name, report::Recommend(report::BuildStrategyMap(results), *profile)});
  }
  return json::parse(report::RecommendationsJson(*profile, answers));
}

// "cpu_us=1,wait_us=5000" as a query value ('=' and ',' percent-encoded, as the page's
// URLSearchParams sends it).
std::string Encoded(const std::string& text) {
  std::string out;
  for (char c : text) out += c == '=' ? "%3D" : c == ',' ? "%2C" : std::string(1, c);
  return out;
}

TEST_F(WebApiTest, RecommendGivesTheEnginesAnswer) {
  const std::string run = (*manifest_)["sweep_run_id"];
  // At 500 us (between the measured 100 and 1000) the phone's CPU-sized pool wins at both
  // points and the host's winner changes; at 5000 us the host's 10000 us point rests on a
  // contended case; at 10 us the phone's point is undecided; cpu_us=50 was not measured
  // (the sweep holds cpu_ns=1000).
  for (const std::string profile :
       {"cpu_us=1,wait_us=500", "cpu_us=1,wait_us=5000", "cpu_ns=1000,wait_us=10", "cpu_us=50,wait_us=2000"}) {
    auto [status, body] = Get("/api/v1/recommend?profile=" + Encoded(profile) + "&run=" + run);
    ASSERT_EQ(status, 200) << profile << ": " << body.dump();
    EXPECT_EQ(body["run_id"], run);
    EXPECT_EQ(body["plan_name"], "crossover");
    const json engine = EngineRecommendation(db_->uri(), run, profile);
    for (const char* key : {"profile", "near", "devices"}) EXPECT_EQ(body[key], engine[key]) << profile << ": " << key;
  }
  auto [status, body] = Get("/api/v1/recommend?profile=" + Encoded("cpu_us=1,wait_us=500") + "&run=" + run);
  ASSERT_EQ(status, 200);
  ASSERT_EQ(body["devices"].size(), 2u);
  const json& phone = body["devices"][0];  // by name, as the CLI: pixel-8, x86-host
  const json& host = body["devices"][1];
  EXPECT_EQ(phone["device"], "pixel-8");
  EXPECT_EQ(host["answers"][0]["verdict"], "crossover");
  EXPECT_EQ(phone["answers"][0]["verdict"], "winner");
  EXPECT_EQ(phone["answers"][0]["best"], "fixed_pool_cpu");
  EXPECT_EQ(phone["answers"][0]["answer"].get<std::string>().rfind("Use fixed_pool_cpu: ", 0), 0u) << phone.dump();
  ASSERT_EQ(phone["answers"][0]["points"].size(), 2u);
  EXPECT_EQ(phone["answers"][0]["points"][0]["point"]["wait_us"], 100);
  EXPECT_EQ(phone["answers"][0]["points"][0]["kind"], "decided");
  EXPECT_EQ(phone["answers"][0]["points"][0]["ranked"][0]["contended"], false);
  // A verdict resting on a contended case says so, and the case carries its conditions.
  auto [s1, contended] = Get("/api/v1/recommend?profile=" + Encoded("cpu_us=1,wait_us=5000") + "&run=" + run);
  ASSERT_EQ(s1, 200);
  const json& answer = contended["devices"][1]["answers"][0];
  EXPECT_EQ(answer["verdict"], "undecided") << answer.dump();
  EXPECT_NE(answer["reason"].get<std::string>().find("wait_us=10000: undecided: contended: direct"), std::string::npos)
      << answer.dump();
  EXPECT_NE(answer["answer"].get<std::string>().find("contended"), std::string::npos) << answer.dump();
  bool found = false;
  for (const json& e : answer["points"][1]["ranked"]) {
    if (e["strategy"] != "direct") continue;
    found = true;
    EXPECT_EQ(e["contended"], true);
    EXPECT_DOUBLE_EQ(e["other_cpu_share"].get<double>(), 0.4);
    EXPECT_EQ(e["quick"], false);
  }
  EXPECT_TRUE(found) << answer.dump();
  // The profile as the CLI takes it, '=' and ',' not encoded: the same answer.
  auto [s5, plain] = Get("/api/v1/recommend?profile=cpu_us=1,wait_us=500&run=" + run);
  ASSERT_EQ(s5, 200) << plain.dump();
  EXPECT_EQ(plain["devices"], body["devices"]);
  // plan_latest names the same run; agents keeps the devices named (ids or names).
  auto [s2, by_plan] = Get("/api/v1/recommend?profile=" + Encoded("cpu_us=1,wait_us=500") + "&plan_latest=crossover");
  ASSERT_EQ(s2, 200) << by_plan.dump();
  EXPECT_EQ(by_plan["run_id"], run);
  EXPECT_EQ(by_plan["devices"], body["devices"]);
  auto [s3, one] =
      Get("/api/v1/recommend?profile=" + Encoded("cpu_us=1,wait_us=500") + "&run=" + run + "&agents=x86-host");
  ASSERT_EQ(s3, 200) << one.dump();
  ASSERT_EQ(one["devices"].size(), 1u);
  EXPECT_EQ(one["devices"][0], host);
  // Neither: the newest done run with batch results (here the last nightly run: the seed
  // stamps every run "now", so they are newer than the sweep).
  auto [s4, latest] = Get("/api/v1/recommend?profile=" + Encoded("cpu_us=1,wait_us=500"));
  ASSERT_EQ(s4, 200) << latest.dump();
  EXPECT_EQ(latest["run_id"], (*manifest_)["nightly"].back()["run_id"]);
  EXPECT_EQ(latest["devices"][0]["answers"][0]["verdict"], "not_measured");
}

TEST_F(WebApiTest, RecommendBadInputIs400NamingTheField) {
  const std::string run = (*manifest_)["sweep_run_id"];
  const std::string rest = "&run=" + run;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"/api/v1/recommend?run=" + run, "profile: empty; give key=value[,key=value] with keys cpu_ns, cpu_us"},
      {"/api/v1/recommend?profile=" + Encoded("cpus=1") + rest,
       "profile: unknown key \"cpus\"; allowed keys: cpu_ns, cpu_us, cpu_ms, wait_us"},
      {"/api/v1/recommend?profile=" + Encoded("cpu_us=-5") + rest, "profile: cpu_us: 0 <= cpu_us <= "},
      {"/api/v1/recommend?profile=" + Encoded("wait_us=1000000000000") + rest, "profile: wait_us: 0 <= wait_us <= "},
      // Plain decimals only, as the CLI's --profile (1e12 and 0x10 were read as numbers).
      {"/api/v1/recommend?profile=" + Encoded("wait_us=1e12") + rest,
       "profile: wait_us: a plain decimal number (e.g. 50 or 0.5) in 0 <= wait_us <= "},
      {"/api/v1/recommend?profile=" + Encoded("cpu_us=0x10") + rest, "profile: cpu_us: a plain decimal number"},
      {"/api/v1/recommend?profile=" + Encoded("cpu_us=1") + "&run=00000000-0000-4000-8000-000000000000", "run: "},
      {"/api/v1/recommend?profile=" + Encoded("cpu_us=1") + "&run=not-a-run", "run: "},
      {"/api/v1/recommend?profile=" + Encoded("cpu_us=1") + rest + "&plan_latest=crossover",
       "run, plan_latest: give one of them"},
      {"/api/v1/recommend?profile=" + Encoded("cpu_us=1") + "&plan_latest=no-such-plan",
       "plan_latest: no finished (done) run of plan \"no-such-plan\" (0 runs of it in any state)"},
  };
  for (const auto& [path, message] : cases) {
    auto [status, body] = Get(path);
    EXPECT_EQ(status, 400) << path << ": " << body.dump();
    EXPECT_NE(body["error"].get<std::string>().find(message), std::string::npos) << path << ": " << body.dump();
  }
  // The range is the CLI's, with the value echoed.
  auto [status, body] = Get("/api/v1/recommend?profile=" + Encoded("cpu_us=-5") + rest);
  EXPECT_NE(body["error"].get<std::string>().find("got \"-5\""), std::string::npos) << body.dump();
}

TEST_F(WebApiTest, CompareAndMapDefaultToTheNewestRunTheDevicesShare) {
  // The host's newest done run with results is the last nightly, the board's its
  // fan-out run; the newest run both hold results in is the batch study.
  const std::string host = AgentId("x86-host"), board = AgentId((*manifest_)["hostile_name"]);
  const std::string study = (*manifest_)["study_run_id"];
  for (const std::string endpoint : {"compare", "map"}) {
    auto [status, body] = Get("/api/v1/" + endpoint + "?agents=" + host + "," + board);
    ASSERT_EQ(status, 200) << body.dump();
    ASSERT_EQ(body["devices"].size(), 2u);
    EXPECT_EQ(body["devices"][0]["run_id"], study) << endpoint;
    EXPECT_EQ(body["devices"][1]["run_id"], study) << endpoint;
  }
  // One device: its own newest run, as before; a run given is kept.
  auto [s1, alone] = Get("/api/v1/compare?agents=" + board);
  ASSERT_EQ(s1, 200);
  EXPECT_EQ(alone["devices"][0]["run_id"], (*manifest_)["fanout_run_id"]);
  auto [s2, given] =
      Get("/api/v1/compare?agents=" + host + "," + board + "&runs=," + std::string((*manifest_)["live_run_id"]));
  ASSERT_EQ(s2, 200);
  EXPECT_EQ(given["devices"][1]["run_id"], (*manifest_)["live_run_id"]);
  EXPECT_EQ(given["devices"][0]["run_id"], (*manifest_)["nightly"].back()["run_id"]);
}

TEST_F(WebApiTest, HistoryMarksTheStep) {
  const std::string a = AgentId("x86-host"), b = AgentId("pixel-8");
  auto [status, body] =
      Get("/api/v1/history?case=batch/arithmetic/blocking/fixed_pool/any&nightly=1&agents=" + a + "," + b);
  ASSERT_EQ(status, 200);
  ASSERT_EQ(body["series"].size(), 2u);
  EXPECT_EQ(body["series"][0]["points"].size(), 14u);
  EXPECT_EQ(body["series"][0]["change_points"], json::array({8}));
  EXPECT_EQ(body["series"][0]["points"][0]["emulated"], false);
  EXPECT_EQ(body["series"][0]["fingerprint_changes"], json::array());
  // The phone's kernel update at night 10 (25% slower from then on) is a fingerprint
  // event starting a new segment, not a change point of the strategy.
  EXPECT_EQ(body["series"][1]["change_points"], json::array()) << body["series"][1].dump();
  const json& events = body["series"][1]["fingerprint_changes"];
  ASSERT_EQ(events.size(), 1u) << body["series"][1].dump();
  EXPECT_EQ(events[0]["index"], 10);
  EXPECT_EQ(events[0]["text"], "kernel 6.1.0-18-android14 → 6.1.0-21-android14");
  EXPECT_EQ(events[0]["changes"],
            json::array({{{"field", "kernel"}, {"before", "6.1.0-18-android14"}, {"after", "6.1.0-21-android14"}}}));
  EXPECT_NE(body["series"][1]["points"][9]["fingerprint_hash"], body["series"][1]["points"][10]["fingerprint_hash"]);
}

// Fleet health in the API: the seeded nightly calibration block gives both nightly
// devices a noise score of about 1 %; the host's last night drifted 40 %, so it is
// quarantined (reason, since); the board has no calibration nights (no score).
TEST_F(WebApiTest, AgentsCarryNoiseScoreAndQuarantine) {
  auto [status, body] = Get("/api/v1/agents");
  ASSERT_EQ(status, 200);
  std::map<std::string, json> by_name;
  for (const auto& a : body["agents"]) by_name[a["name"]] = a;
  const json& host = by_name.at((*manifest_)["quarantined_agent"]);
  EXPECT_EQ(host["health"], "quarantined");
  EXPECT_NE(host["quarantine_reason"].get<std::string>().find("calibration drift: the newest night is"),
            std::string::npos)
      << host.dump();
  EXPECT_GT(host["quarantined_unix_ms"].get<int64_t>(), 0);
  EXPECT_EQ(host["noise_nights"], 14);
  const json& phone = by_name.at((*manifest_)["quiet_agent"]);
  EXPECT_EQ(phone["health"], "ok");
  EXPECT_EQ(phone["quarantine_reason"], "");
  ASSERT_TRUE(phone["noise_percent"].is_number()) << phone.dump();
  EXPECT_GT(phone["noise_percent"].get<double>(), 0.1);
  EXPECT_LT(phone["noise_percent"].get<double>(), 2.0);
  EXPECT_TRUE(by_name.at((*manifest_)["hostile_name"])["noise_percent"].is_null());

  // History scales each device's change threshold with its noise score.
  const std::string a = AgentId("x86-host");
  auto [hs, history] = Get("/api/v1/history?case=batch/arithmetic/blocking/fixed_pool/any&nightly=1&agents=" + a);
  ASSERT_EQ(hs, 200);
  const json& series = history["series"][0];
  ASSERT_TRUE(series["noise_percent"].is_number()) << series.dump();
  EXPECT_DOUBLE_EQ(series["min_change_percent"].get<double>(),
                   std::max(3.0, 3 * series["noise_percent"].get<double>()));
}

// Issue 31, item 5: agents on one host (same machine id and boot id) carry the host's
// short id and each other's names (the Fleet page's host column), and Compare says they
// are one machine. On a database of its own: the shared seed's devices are apart.
TEST_F(WebApiTest, AgentsOnOneHostAreShownAndComparedAsOneMachine) {
  auto db = testing::FreshDatabase::Create("webhost");
  ASSERT_TRUE(db.ok()) << db.status();
  store::StoreOptions store_options;
  store_options.connection.uri = (*db)->uri();
  auto opened = store::Store::Open(store_options);
  ASSERT_TRUE(opened.ok()) << opened.status();
  ASSERT_TRUE((*opened)->Migrate().ok());
  for (const char* name : {"a1", "a2", "phone"}) {
    store::AgentRegistration reg;
    reg.name = name;
    reg.credential_sha256 = std::string(64, 'a');
    reg.session_id = std::string("s-") + name;
    if (std::string(name) != "phone") {
      reg.machine_id = "0f1e2d3c4b5a69788796a5b4c3d2e1f0";
      reg.boot_id = "6c5f1f3e-8a0d-4c1b-9a3e-2f4b5c6d7e8f";
      reg.exclusive_cpus = std::string(name) == "a2";
    }
    ASSERT_TRUE((*opened)->RegisterAgent(reg).ok());
  }
  HttpServerOptions options;
  options.pg_uri = (*db)->uri();
  auto server = StartHttpServer(options);
  ASSERT_TRUE(server.ok()) << server.status();
  httplib::Client client("127.0.0.1", (*server)->port());
  auto agents = client.Get("/api/v1/agents");
  ASSERT_TRUE(agents);
  ASSERT_EQ(agents->status, 200) << agents->body;
  std::map<std::string, json> by_name;
  const json listed = json::parse(agents->body);
  for (const auto& a : listed["agents"]) by_name[a["name"]] = a;
  EXPECT_EQ(by_name["a1"]["host_id"], "0f1e2d3c");
  EXPECT_EQ(by_name["a1"]["same_host_as"], json::array({"a2"}));
  EXPECT_EQ(by_name["a1"]["exclusive_cpus"], false);
  EXPECT_EQ(by_name["a2"]["same_host_as"], json::array({"a1"}));
  EXPECT_EQ(by_name["a2"]["exclusive_cpus"], true);
  EXPECT_EQ(by_name["phone"]["host_id"], "");
  EXPECT_EQ(by_name["phone"]["same_host_as"], json::array());
  auto compare = client.Get("/api/v1/compare?agents=a1,phone,a2");
  ASSERT_TRUE(compare);
  ASSERT_EQ(compare->status, 200) << compare->body;
  EXPECT_EQ(json::parse(compare->body)["one_machine"],
            json::array({"a1 and a2 are one machine (same machine-id and boot): their differences are not between "
                         "devices"}))
      << compare->body;
}

TEST_F(WebApiTest, CompareListsTheFingerprintFieldsThatDiffer) {
  const std::string a = AgentId("x86-host"), b = AgentId("pixel-8");
  auto [status, body] = Get("/api/v1/compare?agents=" + a + "," + b);
  ASSERT_EQ(status, 200);
  std::map<std::string, json> fields;
  for (const json& row : body["fingerprint_differences"]) fields[row["field"].get<std::string>()] = row["values"];
  EXPECT_EQ(fields["cpu"], json::array({"Intel(R) Core(TM) i7-12700H", "Google Tensor G3"})) << body.dump();
  EXPECT_EQ(fields["arch"], json::array({"x86_64", "aarch64"}));
  EXPECT_EQ(fields.count("governor"), 0u);  // schedutil on both: not a difference
  EXPECT_EQ(fields.count("compiler"), 0u);
  EXPECT_FALSE(body["devices"][0]["fingerprint"].is_null());
  EXPECT_EQ(body["devices"][0]["fingerprints"], 1);
}

TEST_F(WebApiTest, MissingWrongAndHostileIdsAre404Or400) {
  for (const std::string path :
       {"/api/v1/runs/00000000-0000-4000-8000-000000000000", "/api/v1/runs/ffffff00",
        "/api/v1/results/1;DROP%20TABLE%20runs", "/api/v1/compare?agents=00000000-0000-4000-8000-000000000000",
        "/api/v1/cases?agent=nope", "/api/v1/nothing/here"}) {
    auto [status, body] = Get(path);
    EXPECT_EQ(status, 404) << path;
    EXPECT_TRUE(body.contains("error")) << path;
  }
  // A run id that is neither a UUID nor a prefix of one is malformed (as in the CLI).
  for (const std::string path :
       {"/api/v1/runs/not-a-uuid", "/api/v1/runs/x'%20OR%201=1--/results", "/api/v1/runs?limit=abc",
        "/api/v1/runs?limit=5000", "/api/v1/history?agents=x", "/api/v1/compare?agents=a,b&runs=x"}) {
    auto [status, body] = Get(path);
    EXPECT_EQ(status, 400) << path;
  }
  auto [status, body] = Get("/api/v1/runs?limit=1000");
  EXPECT_EQ(status, 200);
  EXPECT_EQ(body["runs"].size(), 22u) << "tables intact";
  httplib::Client client("127.0.0.1", server_->port());
  auto page = client.Get("/runs/00000000-0000-4000-8000-000000000000");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 404);
  EXPECT_NE(page->body.find("/assets/app.js"), std::string::npos);
  auto malformed_page = client.Get("/runs/not-a-uuid");
  ASSERT_TRUE(malformed_page);
  EXPECT_EQ(malformed_page->status, 404) << "the page of a malformed id does not exist";
  auto post = client.Post("/api/v1/runs", "{}", "application/json");
  ASSERT_TRUE(post);
  EXPECT_NE(post->status, 200) << "the API is read-only";
}

TEST_F(WebApiTest, BearerTokenGuardsTheApiOnly) {
  HttpServerOptions options;
  options.pg_uri = db_->uri();
  options.bearer_token = "s3cret-token";
  auto server = StartHttpServer(options);
  ASSERT_TRUE(server.ok()) << server.status();
  httplib::Client client("127.0.0.1", (*server)->port());
  auto denied = client.Get("/api/v1/agents");
  ASSERT_TRUE(denied);
  EXPECT_EQ(denied->status, 401);
  auto wrong = client.Get("/api/v1/agents", {{"Authorization", "Bearer s3cret-tokex"}});
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 401);
  auto allowed = client.Get("/api/v1/agents", {{"Authorization", "Bearer s3cret-token"}});
  ASSERT_TRUE(allowed);
  EXPECT_EQ(allowed->status, 200);
  auto page = client.Get("/fleet");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_NE(page->get_header_value("Content-Security-Policy").find("script-src 'self'"), std::string::npos);
}

// Issue 32, item 12: the auth scheme is case-insensitive (RFC 7235 2.1), and one or
// more spaces may separate it from the token; "bearer <token>" was 401.
TEST_F(WebApiTest, TheBearerSchemeIsCaseInsensitive) {
  HttpServerOptions options;
  options.pg_uri = db_->uri();
  options.bearer_token = "s3cret-token";
  auto server = StartHttpServer(options);
  ASSERT_TRUE(server.ok()) << server.status();
  httplib::Client client("127.0.0.1", (*server)->port());
  for (const char* header : {"bearer s3cret-token", "BEARER s3cret-token", "bEaReR  s3cret-token"}) {
    auto res = client.Get("/api/v1/agents", {{"Authorization", header}});
    ASSERT_TRUE(res) << header;
    EXPECT_EQ(res->status, 200) << header;
  }
  for (const char* header : {"Basic s3cret-token", "Bearers3cret-token", "bearer", "bearer s3cret-toke"}) {
    auto res = client.Get("/api/v1/agents", {{"Authorization", header}});
    ASSERT_TRUE(res) << header;
    EXPECT_EQ(res->status, 401) << header;
  }
}

// DNS rebinding: a page of evil.example whose name now resolves to 127.0.0.1 sends
// "Host: evil.example"; the token-less server must not answer it, neither the API nor a
// page. localhost and IP literals (what a user types) are answered.
TEST_F(WebApiTest, WithoutATokenOnlyLocalhostAndIpHostHeadersAreAnswered) {
  httplib::Client client("127.0.0.1", server_->port());
  const std::string port = std::to_string(server_->port());
  for (const std::string& host : std::vector<std::string>{"evil.example", "evil.example:" + port,
                                                          "LOCALHOST.evil.example:" + port, "127.0.0.1.evil.example"}) {
    auto res = client.Get("/api/v1/agents", {{"Host", host}});
    ASSERT_TRUE(res) << host;
    EXPECT_EQ(res->status, 403) << host;
    EXPECT_NE(res->body.find("is not allowed"), std::string::npos) << host << ": " << res->body;
    auto page = client.Get("/fleet", {{"Host", host}});
    ASSERT_TRUE(page) << host;
    EXPECT_EQ(page->status, 403) << host;
  }
  for (const std::string& host :
       std::vector<std::string>{"127.0.0.1:" + port, "localhost:" + port, "LocalHost", "[::1]:" + port, "10.1.2.3"}) {
    auto res = client.Get("/api/v1/agents", {{"Host", host}});
    ASSERT_TRUE(res) << host;
    EXPECT_EQ(res->status, 200) << host;
  }
}

TEST_F(WebApiTest, OtherMethodsThanGetAre405WithAllow) {
  httplib::Client client("127.0.0.1", server_->port());
  httplib::Result results[] = {client.Post("/api/v1/runs", "{}", "application/json"),
                               client.Put("/fleet", "x", "text/plain"), client.Delete("/api/v1/agents"),
                               client.Patch("/api/v1/agents", "{}", "application/json")};
  for (const httplib::Result& res : results) {
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 405);
    EXPECT_EQ(res->get_header_value("Allow"), "GET, HEAD");
  }
  auto head = client.Head("/api/v1/agents");
  ASSERT_TRUE(head);
  EXPECT_EQ(head->status, 200);
}

// A request without a body (no Content-Length, no Transfer-Encoding: RFC 9112 6.3) is
// answered at once with 405; httplib would wait for the client to close the
// connection (the read timeout, then 400).
TEST_F(WebApiTest, OtherMethodsWithoutABodyAre405AtOnce) {
  for (const char* method : {"POST", "PUT", "PATCH", "DELETE"}) {
    EXPECT_EQ(RawStatusLine(server_->port(), absl::StrCat(method, " /api/v1/runs HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")),
              "HTTP/1.1 405 Method Not Allowed")
        << method;
  }
  EXPECT_EQ(RawStatusLine(server_->port(), "POST /fleet HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}"),
            "HTTP/1.1 405 Method Not Allowed");
}

// RFC 9112 3.2: one Host header; its port, if any, 1..65535. 6.3: Content-Length is
// decimal digits.
TEST_F(WebApiTest, MalformedHostAndContentLengthAre400) {
  const auto get = [&](const std::string& headers) {
    return RawStatusLine(server_->port(), "GET /api/v1/agents HTTP/1.1\r\n" + headers + "Connection: close\r\n\r\n");
  };
  EXPECT_EQ(get("Host: 127.0.0.1\r\n"), "HTTP/1.1 200 OK");
  EXPECT_EQ(get("Host: localhost:8080\r\nContent-Length: 0\r\n"), "HTTP/1.1 200 OK");
  EXPECT_EQ(get("Host: [::1]:65535\r\n"), "HTTP/1.1 200 OK");
  for (const std::string headers :
       {"Host: 127.0.0.1\r\nHost: 127.0.0.1\r\n", "Host: localhost:abc\r\n", "Host: localhost:\r\n",
        "Host: localhost:0\r\n", "Host: localhost:65536\r\n", "Host: 127.0.0.1:-1\r\n", "Host: [::1]:x\r\n",
        "Host: [::1\r\n", "Host: [::1]x\r\n", "Host: 127.0.0.1\r\nContent-Length: -1\r\n",
        "Host: 127.0.0.1\r\nContent-Length: 99999999999999999999\r\n", "Host: 127.0.0.1\r\nContent-Length: 1x\r\n",
        "Host: 127.0.0.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n"}) {
    EXPECT_EQ(get(headers), "HTTP/1.1 400 Bad Request") << headers;
  }
}

// New-user trial: a request line over httplib's limit was 414 with an empty body; it
// carries the JSON error body of the server's other errors, naming the limit.
TEST_F(WebApiTest, ATooLongRequestLineIs414WithAJsonErrorBody) {
  httplib::Client client("127.0.0.1", server_->port());
  for (const std::string& path : {"/api/v1/runs/" + std::string(9000, 'a'), "/fleet?x=" + std::string(9000, 'b')}) {
    auto res = client.Get(path);
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 414);
    EXPECT_EQ(res->get_header_value("Content-Type"), "application/json");
    const json body = json::parse(res->body, nullptr, /*allow_exceptions=*/false);
    ASSERT_TRUE(body.is_object()) << res->body;
    EXPECT_EQ(body.value("error", ""), "request line too long (at most 8192 bytes)") << res->body;
  }
  // Errors that have their own body keep it.
  auto [status, body] = Get("/api/v1/runs/not-a-uuid");
  EXPECT_EQ(status, 400);
  EXPECT_FALSE(body.value("error", "").empty()) << body.dump();
  EXPECT_NE(body.value("error", ""), "malformed request") << body.dump();
}

// Sockets that sent half a request (no blank line) wait in the gate (they held a worker
// each until the read timeout before it): twice as many of them as `threads` must not
// keep a GET waiting for them. Asserted while they are still open and unanswered.
TEST_F(WebApiTest, HalfRequestsDoNotStarveTheServer) {
  HttpServerOptions options;
  options.pg_uri = db_->uri();
  options.threads = 2;
  auto server = StartHttpServer(options);
  ASSERT_TRUE(server.ok()) << server.status();
  std::vector<int> idle;
  for (int i = 0; i < 2 * options.threads; ++i) {
    const int fd = Connect((*server)->port());
    ASSERT_GE(fd, 0);
    const std::string half = "GET /api/v1/agents HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    ASSERT_EQ(::send(fd, half.data(), half.size(), MSG_NOSIGNAL), static_cast<ssize_t>(half.size()));
    idle.push_back(fd);
  }
  httplib::Client client("127.0.0.1", (*server)->port());
  client.set_read_timeout(30, 0);  // hang guard
  auto res = client.Get("/api/v1/agents");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  // The half requests are still pending: the server has neither answered nor closed them.
  for (int fd : idle) {
    pollfd p{fd, POLLIN, 0};
    EXPECT_EQ(::poll(&p, 1, 0), 0) << "a half request was already timed out: the GET waited for it";
    ::close(fd);
  }
}

// Issue 32, item 6: cpp-httplib never reads a GET's body (it reads bodies of POST, PUT,
// PATCH and DELETE only), answers, and then reads the body as the next request: a body
// without a newline became one request line held in memory whole (1 GiB sent: RSS
// +1.1 GB). The 64 KiB cap applies to every method, from the Content-Length alone:
// 413 before any body byte is sent, and the 100 MB sent after it are not kept.
TEST_F(WebApiTest, ABodyOverTheCapIs413ForEveryMethodAndIsNotRead) {
  auto server = HealthServer();
  ASSERT_NE(server, nullptr);
  for (const char* method : {"HEAD", "POST", "OPTIONS"}) {
    const int fd = Connect(server->port());
    ASSERT_GE(fd, 0);
    const std::string head =
        absl::StrCat(method, " /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1073741824\r\n\r\n");
    ASSERT_EQ(::send(fd, head.data(), head.size(), MSG_NOSIGNAL), static_cast<ssize_t>(head.size()));
    EXPECT_EQ(ReadStatusLine(fd, 10000), "HTTP/1.1 413 Payload Too Large") << method;
    ::close(fd);
  }
  const int fd = Connect(server->port());
  ASSERT_GE(fd, 0);
  const std::string head = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1073741824\r\n\r\n";
  ASSERT_EQ(::send(fd, head.data(), head.size(), MSG_NOSIGNAL), static_cast<ssize_t>(head.size()));
  // Answered before a byte of the body is sent.
  EXPECT_EQ(ReadStatusLine(fd, 10000), "HTTP/1.1 413 Payload Too Large");
  const int64_t before = ResidentBytes();
  const std::string chunk(1 << 20, 'x');  // no newline: one "request line" to a reader of lines
  int64_t sent = 0;
  while (sent < 100 * (1 << 20)) {
    const ssize_t n = ::send(fd, chunk.data(), chunk.size(), MSG_NOSIGNAL);
    if (n <= 0) break;  // the server closed the connection: nothing more is read
    sent += n;
  }
  const int64_t grown = ResidentBytes() - before;
  ::close(fd);
  EXPECT_LT(grown, 8 << 20) << "RSS grew " << grown << " bytes while " << sent << " body bytes were sent";
  EXPECT_EQ(HealthzWithin1s(server->port()), 200);
}

// A body within the cap is read and skipped whatever the method, so the next request
// on the connection is read as sent (cpp-httplib read a GET's body as the next
// request line: 400).
TEST_F(WebApiTest, AGetBodyWithinTheCapIsSkippedNotReadAsTheNextRequest) {
  auto server = HealthServer();
  ASSERT_NE(server, nullptr);
  const int fd = Connect(server->port());
  ASSERT_GE(fd, 0);
  const std::string requests =
      "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n\r\nhello"
      "GET /nothing HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  ASSERT_EQ(::send(fd, requests.data(), requests.size(), MSG_NOSIGNAL), static_cast<ssize_t>(requests.size()));
  std::string responses;
  char buffer[4096];
  for (ssize_t n; (n = ::recv(fd, buffer, sizeof(buffer), 0)) > 0;) responses.append(buffer, static_cast<size_t>(n));
  ::close(fd);
  EXPECT_TRUE(absl::StartsWith(responses, "HTTP/1.1 200 OK\r\n")) << responses;
  EXPECT_NE(responses.find("HTTP/1.1 404 Not Found\r\n"), std::string::npos) << responses;
  EXPECT_EQ(responses.find("400 Bad Request"), std::string::npos) << responses;
}

// Issue 32, item 7: 33 connections sending one header line every second held every
// worker (cpp-httplib's read timeout is per line) and /healthz timed out for as long as
// they ran. Requests are read by one epoll thread: /healthz is answered (within a 1 s
// hang guard) while they are open.
TEST_F(WebApiTest, SlowSendersDoNotKeepOutARequest) {
  auto server = HealthServer();
  ASSERT_NE(server, nullptr);
  std::vector<int> slow;
  for (int i = 0; i < 33; ++i) {
    const int fd = Connect(server->port());
    ASSERT_GE(fd, 0);
    const std::string line = "GET /healthz HTTP/1.1\r\n";
    ::send(fd, line.data(), line.size(), MSG_NOSIGNAL);
    slow.push_back(fd);
  }
  std::atomic<bool> done{false};
  std::thread sender([&] {
    for (int i = 0; i < 4 && !done; ++i) {
      std::this_thread::sleep_for(std::chrono::seconds(1));
      const std::string line = absl::StrCat("X-Slow-", i, ": 1\r\n");
      for (int fd : slow) ::send(fd, line.data(), line.size(), MSG_NOSIGNAL);
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_EQ(HealthzWithin1s(server->port()), 200) << "with 33 slow senders open";
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  EXPECT_EQ(HealthzWithin1s(server->port()), 200) << "with 33 slow senders open";
  done = true;
  sender.join();
  for (int fd : slow) ::close(fd);
}

// docs/operations.md's "5 s from its first byte" is for the whole request: a connection
// sending one header line every second (each line well within a per-read timeout) gets
// 408 and is closed by ~5 s (cpp-httplib kept it open as long as lines came).
TEST_F(WebApiTest, ARequestNotSentWholeWithin5sIsClosed) {
  auto server = HealthServer();
  ASSERT_NE(server, nullptr);
  const int fd = Connect(server->port());
  ASSERT_GE(fd, 0);
  const auto start = std::chrono::steady_clock::now();
  std::string line = "GET /healthz HTTP/1.1\r\n";
  std::string answer;
  for (int i = 0; i < 10; ++i) {
    if (::send(fd, line.data(), line.size(), MSG_NOSIGNAL) < 0) break;
    answer = ReadStatusLine(fd, 1000);  // a second between lines, or the server's answer
    if (!answer.empty()) break;
    line = absl::StrCat("X-Line-", i, ": 1\r\n");
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(answer, "HTTP/1.1 408 Request Timeout");
  EXPECT_LE(seconds, 7.0) << "the connection was open for " << seconds << " s";
  char byte;
  pollfd p{fd, POLLIN, 0};
  EXPECT_EQ(::poll(&p, 1, 2000), 1);
  for (ssize_t n; (n = ::recv(fd, &byte, 1, 0)) > 0;) {
  }
  EXPECT_EQ(::recv(fd, &byte, 1, 0), 0) << "closed by the server";
  ::close(fd);
}

// Issue 32, item 7: 10 000 idle TCP connections made /healthz time out for ~80 s (each
// held a worker for the keep-alive wait). As many as this process can open quickly
// (both ends are in it) are opened and left idle; /healthz is answered meanwhile.
TEST_F(WebApiTest, ThousandsOfIdleConnectionsDoNotKeepOutARequest) {
  rlimit limit{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &limit), 0);
  if (limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &limit);
  }
  const int count = static_cast<int>(std::min<rlim_t>(2000, (limit.rlim_cur - 200) / 2));
  ASSERT_GE(count, 100) << "RLIMIT_NOFILE " << limit.rlim_cur;
  auto server = HealthServer();
  ASSERT_NE(server, nullptr);
  std::vector<int> idle;
  for (int i = 0; i < count; ++i) {
    const int fd = Connect(server->port());
    if (fd < 0) break;
    idle.push_back(fd);
  }
  EXPECT_EQ(static_cast<int>(idle.size()), count);
  EXPECT_EQ(HealthzWithin1s(server->port()), 200) << "with " << idle.size() << " idle connections open";
  for (int fd : idle) ::close(fd);
}

// The per-client cap: a new connection over it closes that client's oldest idle one,
// and its request is answered.
TEST_F(WebApiTest, ANewConnectionOverThePerClientCapClosesTheOldestIdleOne) {
  HttpServerOptions options;
  options.max_connections_per_client = 4;
  auto server = HealthServer(options);
  ASSERT_NE(server, nullptr);
  std::vector<int> idle;
  for (int i = 0; i < 4; ++i) {
    idle.push_back(Connect(server->port()));
    ASSERT_GE(idle.back(), 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // accepted in this order
  }
  EXPECT_EQ(HealthzWithin1s(server->port()), 200);
  pollfd p{idle[0], POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 1000), 1) << "the oldest idle connection is closed";
  char byte;
  EXPECT_EQ(::recv(idle[0], &byte, 1, 0), 0);
  for (size_t i = 1; i < idle.size(); ++i) {
    pollfd q{idle[i], POLLIN, 0};
    EXPECT_EQ(::poll(&q, 1, 0), 0) << "connection " << i << " stays";
  }
  for (int fd : idle) ::close(fd);
}

// Issue 10, item 10: a PostgreSQL restart ends every backend, so every pooled
// connection of the web view is dead; the first request afterwards must be answered
// (the broken connection is replaced and the read retried), not fail with "Could not
// obtain client encoding: not connected" until later requests used up the dead ones.
// The server side of a restart is what pg_terminate_backend does to each session.
TEST_F(WebApiTest, FirstRequestsAfterTheServerEndedEveryConnectionSucceed) {
  // Several pooled connections: concurrent requests open one each.
  std::vector<std::thread> clients;
  for (int i = 0; i < 4; ++i) clients.emplace_back([] { Get("/api/v1/runs?limit=5"); });
  for (std::thread& t : clients) t.join();
  auto psql = [&](const std::string& sql) {
    return testing::RunCommand({"psql", db_->uri(), "-v", "ON_ERROR_STOP=1", "-qtA", "-c", sql});
  };
  const std::string sessions =
      "FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'fleetmark-web'";
  auto ended = psql("SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) " + sessions);
  ASSERT_TRUE(ended.ok()) << ended.status();
  ASSERT_GE(std::stoi(*ended), 1) << "the web view held no connection";
  // pg_terminate_backend only signals: wait until the sessions are gone.
  for (int i = 0; i < 100; ++i) {
    auto left = psql("SELECT count(*) " + sessions);
    ASSERT_TRUE(left.ok()) << left.status();
    if (*left == "0") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  for (const char* path : {"/api/v1/runs", "/api/v1/agents", "/api/v1/runs", "/api/v1/agents"}) {
    auto [status, body] = Get(path);
    EXPECT_EQ(status, 200) << path << ": " << body.dump();
  }
}

// A job whose lease expired (agent lost) is re-queued and runs again: both attempts'
// results stay stored, the API shows each case's newest result only.
class WebApiReRunTest : public ::testing::Test {
 protected:
  static constexpr char kCaseA[] = "batch/arithmetic/blocking/fixed_pool/any";
  static constexpr char kCaseB[] = "batch/arithmetic/blocking/direct/any";
  static constexpr char kOldA[] = "0000000a-0001-4000-8000-000000000001";   // attempt 1, case A
  static constexpr char kOnlyB[] = "0000000a-0001-4000-8000-000000000002";  // attempt 1, case B
  static constexpr char kNewA[] = "0000000a-0002-4000-8000-000000000001";   // attempt 2, case A

  void SetUp() override {
    auto db = testing::FreshDatabase::Create("webrerun");
    if (!db.ok()) {
      if (testing::RequirePg()) FAIL() << "PostgreSQL required: " << db.status();
      GTEST_SKIP() << db.status();
    }
    db_ = std::move(*db);
    store::StoreOptions store_options;
    store_options.connection.uri = db_->uri();
    auto opened = store::Store::Open(store_options);
    ASSERT_TRUE(opened.ok()) << opened.status();
    store_ = std::move(*opened);
    ASSERT_TRUE(store_->Migrate().ok());
    store::AgentRegistration reg;
    reg.name = "flaky-board";
    reg.credential_sha256 = std::string(64, 'f');
    reg.host.set_arch("aarch64");
    auto agent = store_->RegisterAgent(reg);
    ASSERT_TRUE(agent.ok()) << agent.status();
    agent_id_ = *agent;
    HttpServerOptions options;
    options.pg_uri = db_->uri();
    auto server = StartHttpServer(options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
  }

  static fleetmark::v1::CaseResult Result(const std::string& id, const std::string& case_id, double median_ns,
                                          int64_t finished_unix_ns) {
    fleetmark::v1::CaseResult r;
    r.set_result_id(id);
    r.mutable_spec()->set_case_id(case_id);
    r.mutable_spec()->set_scenario("batch");
    r.mutable_spec()->set_workload("arithmetic");
    r.mutable_spec()->set_io_mode("blocking");
    r.mutable_spec()->set_placement("any");
    r.mutable_spec()->mutable_strategy()->set_name(case_id == kCaseA ? "fixed_pool" : "direct");
    r.set_status(fleetmark::v1::CASE_STATUS_OK);
    r.mutable_stats()->set_count(10);
    r.mutable_stats()->set_median_ns(median_ns);
    r.mutable_stats()->set_ci_low_ns(median_ns * 0.99);
    r.mutable_stats()->set_ci_high_ns(median_ns * 1.01);
    for (int i = 0; i < 10; ++i) r.add_samples_ns(static_cast<int64_t>(median_ns));
    r.set_started_unix_ns(finished_unix_ns - 1000000);
    r.set_finished_unix_ns(finished_unix_ns);
    return r;
  }

  // Stores `results` of the job as the agent would (claim, running, results).
  void RunAttempt(absl::Duration lease, std::vector<fleetmark::v1::CaseResult> results) {
    auto claimed = store_->ClaimJobs({agent_id_}, lease);
    ASSERT_TRUE(claimed.ok()) << claimed.status();
    ASSERT_EQ(claimed->size(), 1u);
    ASSERT_TRUE(store_->MarkJobRunning(job_id_, agent_id_, lease).ok());
    std::vector<store::Store::AgentResult> batch;
    for (auto& r : results) {
      r.set_run_id(run_id_);
      r.set_job_id(job_id_);
      batch.push_back({agent_id_, &r});
    }
    auto outcomes = store_->InsertResults(batch);
    ASSERT_TRUE(outcomes.ok()) << outcomes.status();
    for (const auto& o : *outcomes) ASSERT_TRUE(o.stored) << o.result_id << ": " << o.message;
  }

  std::pair<int, json> Get(const std::string& path) {
    httplib::Client client("127.0.0.1", server_->port());
    auto res = client.Get(path.c_str());
    if (!res) return {0, nullptr};
    return {res->status, json::parse(res->body, nullptr, /*allow_exceptions=*/false)};
  }

  std::unique_ptr<testing::FreshDatabase> db_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<HttpServer> server_;
  std::string agent_id_, run_id_, job_id_;
};

TEST_F(WebApiReRunTest, OnlyTheNewestAttemptOfACaseShows) {
  store::NewRun new_run;
  new_run.plan.set_name("rerun");
  new_run.submitted_by = "schedule:nightly";
  new_run.agent_ids = {agent_id_};
  new_run.cases_total = 2;
  auto run = store_->CreateRun(new_run);
  ASSERT_TRUE(run.ok()) << run.status();
  ASSERT_EQ(run->jobs_size(), 1);
  run_id_ = run->run_id();
  job_id_ = run->jobs(0).job_id();
  const int64_t t0 = 1700000000000000000;  // 2023-11-14, ns

  // Attempt 1 measures case B and is interrupted in case A (its cancelled placeholder is
  // stored), then the agent is lost: the lease runs out. A run with a case not measured
  // is re-queued (a job whose every case is stored would end done; and a case stored
  // once is never stored again for the job, so only a placeholder has a newer attempt).
  fleetmark::v1::CaseResult interrupted = Result(kOldA, kCaseA, 100e3, t0);
  interrupted.set_status(fleetmark::v1::CASE_STATUS_CANCELLED);
  ASSERT_NO_FATAL_FAILURE(RunAttempt(absl::Milliseconds(1), {interrupted, Result(kOnlyB, kCaseB, 9e3, t0)}));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  auto expired = store_->ExpireLeases();
  ASSERT_TRUE(expired.ok()) << expired.status();
  ASSERT_EQ(expired->size(), 1u);
  EXPECT_FALSE((*expired)[0].failed) << "re-queued, not failed";
  // Attempt 2 (same job) measures case A again, with another result id.
  ASSERT_NO_FATAL_FAILURE(RunAttempt(absl::Hours(1), {Result(kNewA, kCaseA, 250e3, t0 + 60000000000)}));
  store::JobOutcome done;
  done.ok = true;
  ASSERT_TRUE(store_->FinishJob(job_id_, agent_id_, done).ok());

  // Every attempt stays stored and reachable by id.
  auto [old_status, old_body] = Get(std::string("/api/v1/results/") + kOldA);
  EXPECT_EQ(old_status, 200);

  for (const std::string& query : {std::string(), "?agent=" + agent_id_}) {
    auto [status, body] = Get("/api/v1/runs/" + run_id_ + "/results" + query);
    ASSERT_EQ(status, 200) << query;
    ASSERT_EQ(body["results"].size(), 2u) << body.dump();
    EXPECT_EQ(body["results"][0]["result_id"], kOnlyB) << "case B (direct) sorts first";
    EXPECT_EQ(body["results"][1]["result_id"], kNewA);
    EXPECT_EQ(body["results"][1]["stats"]["median_ns"], 250e3);
    EXPECT_EQ(body.dump().find(kOldA), std::string::npos) << "older attempt listed: " << body.dump();
  }
  auto [run_status, run_body] = Get("/api/v1/runs/" + run_id_);
  ASSERT_EQ(run_status, 200);
  EXPECT_EQ(run_body["run"]["results"], 2) << "results counts cases, not attempts";

  for (const std::string& path :
       {"/api/v1/compare?agents=" + agent_id_, "/api/v1/compare?agents=" + agent_id_ + "&runs=" + run_id_}) {
    auto [status, body] = Get(path);
    ASSERT_EQ(status, 200) << path;
    EXPECT_EQ(body["cells"].size(), 2u) << body.dump();
    EXPECT_NE(body.dump().find(kNewA), std::string::npos) << body.dump();
    EXPECT_EQ(body.dump().find(kOldA), std::string::npos) << "older attempt compared: " << body.dump();
  }

  for (const char* nightly : {"0", "1"}) {
    auto [status, body] =
        Get(std::string("/api/v1/history?case=") + kCaseA + "&nightly=" + nightly + "&agents=" + agent_id_);
    ASSERT_EQ(status, 200);
    ASSERT_EQ(body["series"].size(), 1u) << body.dump();
    ASSERT_EQ(body["series"][0]["points"].size(), 1u) << "one point per run: " << body.dump();
    EXPECT_EQ(body["series"][0]["points"][0]["result_id"], kNewA);
    EXPECT_EQ(body["series"][0]["points"][0]["median_ns"], 250e3);
  }
}

// `fleetmark agents remove`: the Fleet page must not list a removed agent as offline
// (it would look like a device to fix); it says "removed", and its results stay.
TEST_F(WebApiReRunTest, ARemovedAgentIsListedAsRemovedAndItsResultsStay) {
  store::NewRun new_run;
  new_run.plan.set_name("before-removal");
  new_run.agent_ids = {agent_id_};
  new_run.cases_total = 1;
  auto run = store_->CreateRun(new_run);
  ASSERT_TRUE(run.ok()) << run.status();
  run_id_ = run->run_id();
  job_id_ = run->jobs(0).job_id();
  ASSERT_NO_FATAL_FAILURE(RunAttempt(absl::Minutes(5), {Result(kOnlyB, kCaseB, 100e3, 1700000000000000000)}));
  auto removed = store_->RemoveAgent("flaky-board");
  ASSERT_TRUE(removed.ok()) << removed.status();
  auto [status, body] = Get("/api/v1/agents");
  ASSERT_EQ(status, 200);
  ASSERT_EQ(body["agents"].size(), 1u) << body.dump();
  EXPECT_EQ(body["agents"][0]["state"], "removed") << body.dump();
  auto [result_status, result_body] = Get(std::string("/api/v1/results/") + kOnlyB);
  EXPECT_EQ(result_status, 200) << result_body.dump();
}

TEST_F(WebApiReRunTest, EmulatedResultsAreMarkedAndLeftOutOfCompareUnlessAsked) {
  // The board comes back under qemu-user: its host and what it measures are marked.
  store::AgentRegistration reg;
  reg.name = "flaky-board";
  reg.credential_sha256 = std::string(64, 'f');
  reg.host.set_arch("aarch64");
  reg.host.set_emulated(true);
  reg.host.set_emulation_evidence("binary aarch64, uname aarch64, /proc/cpuinfo x86 (vendor_id GenuineIntel)");
  reg.agent_id = agent_id_;  // its reconnect with its credential (a new enrollment of the name is refused)
  auto registered = store_->RegisterAgent(reg);
  ASSERT_TRUE(registered.ok()) << registered.status();
  store::NewRun new_run;
  new_run.plan.set_name("emulated");
  new_run.agent_ids = {agent_id_};
  new_run.cases_total = 2;
  auto run = store_->CreateRun(new_run);
  ASSERT_TRUE(run.ok()) << run.status();
  run_id_ = run->run_id();
  job_id_ = run->jobs(0).job_id();
  const int64_t t0 = 1700000000000000000;
  ASSERT_NO_FATAL_FAILURE(
      RunAttempt(absl::Hours(1), {Result(kOldA, kCaseA, 100e3, t0), Result(kOnlyB, kCaseB, 9e3, t0)}));

  auto [agents_status, agents] = Get("/api/v1/agents");
  ASSERT_EQ(agents_status, 200);
  ASSERT_EQ(agents["agents"].size(), 1u);
  EXPECT_EQ(agents["agents"][0]["host"]["emulated"], true);
  EXPECT_NE(agents["agents"][0]["host"]["emulation_evidence"].get<std::string>().find("GenuineIntel"),
            std::string::npos);
  auto [results_status, results] = Get("/api/v1/runs/" + run_id_ + "/results");
  ASSERT_EQ(results_status, 200);
  ASSERT_EQ(results["results"].size(), 2u);
  for (const auto& r : results["results"]) EXPECT_EQ(r["emulated"], true) << r.dump();
  auto [one_status, one] = Get(std::string("/api/v1/results/") + kOldA);
  ASSERT_EQ(one_status, 200);
  EXPECT_EQ(one["result"]["emulated"], true) << one.dump();

  auto [history_status, history] = Get(std::string("/api/v1/history?case=") + kCaseA + "&agents=" + agent_id_);
  ASSERT_EQ(history_status, 200);
  ASSERT_EQ(history["series"][0]["points"].size(), 1u) << history.dump();
  EXPECT_EQ(history["series"][0]["points"][0]["emulated"], true) << history.dump();

  // Compare leaves emulated numbers out unless asked.
  auto [left_status, left] = Get("/api/v1/compare?agents=" + agent_id_);
  ASSERT_EQ(left_status, 200);
  EXPECT_EQ(left["cells"].size(), 0u) << left.dump();
  EXPECT_EQ(left["devices"][0]["emulated"], true);
  EXPECT_EQ(left["devices"][0]["emulated_left_out"], 2);
  auto [kept_status, kept] = Get("/api/v1/compare?agents=" + agent_id_ + "&include_emulated=1");
  ASSERT_EQ(kept_status, 200);
  EXPECT_EQ(kept["cells"].size(), 2u) << kept.dump();
  EXPECT_EQ(kept["devices"][0]["emulated"], true);
  EXPECT_EQ(kept["devices"][0]["emulated_left_out"], 0);
}

TEST(WebServerOptionsTest, RefusesRemoteWithoutTokenAndBadInput) {
  HttpServerOptions options;
  options.address = "0.0.0.0:0";
  options.pg_uri = "postgresql://nobody@127.0.0.1:1/none";
  auto remote = StartHttpServer(options, nullptr);
  EXPECT_TRUE(absl::IsInvalidArgument(remote.status())) << remote.status();
  options.address = "127.0.0.1:0";
  options.threads = 0;
  EXPECT_TRUE(absl::IsInvalidArgument(StartHttpServer(options, nullptr).status()));
  options.threads = 4;
  options.bearer_token = "two words";
  auto spaced = ValidateHttpServerOptions(options);
  EXPECT_TRUE(absl::IsInvalidArgument(spaced)) << spaced;
  EXPECT_EQ(std::string(spaced.message()).find("two"), std::string::npos) << "the token is not echoed";
  options.address = "0.0.0.0:0";
  options.bearer_token = "s3cret";
  EXPECT_TRUE(ValidateHttpServerOptions(options).ok()) << "non-loopback with a token";
  options.address = "127.0.0.1:0";
  options.bearer_token.clear();
  options.web_root = "/nonexistent";
  EXPECT_FALSE(StartHttpServer(options).ok());
}

}  // namespace
}  // namespace fleetmark::http
