// The web view's JSON API over a real PostgreSQL (a fresh database seeded by web_seed
// through the Store) and a real HTTP server on loopback: status codes, the compare and
// history answers, the token rule, and hostile input.
#include <httplib.h>

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "coordinator/http/http_server.h"
#include "gtest/gtest.h"
#include "tests/web/pg_database.h"

namespace fleetmark::http {
namespace {

using nlohmann::json;

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
  EXPECT_EQ(full["result"]["counters"]["repetitions"], 40);
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
    } else {
      EXPECT_EQ(cell["winner"], 0) << cell.dump();  // the host is 2.5x faster
      EXPECT_NEAR(cell["ratios"][1]["ratio"].get<double>(), 0.4, 1e-9);
    }
  }
  EXPECT_EQ(ties, 1);
  EXPECT_LT(body["overall"]["ratios"][1]["ratio"].get<double>(), 1.0);
  // Without runs, each device's newest run with results (here the nightly ones).
  auto [s2, newest] = Get("/api/v1/compare?agents=" + a + "," + b);
  ASSERT_EQ(s2, 200);
  EXPECT_NE(newest["devices"][0]["run_id"], run);
  EXPECT_EQ(newest["cells"].size(), 2u);
}

TEST_F(WebApiTest, HistoryMarksTheStep) {
  const std::string a = AgentId("x86-host"), b = AgentId("pixel-8");
  auto [status, body] = Get("/api/v1/history?case=batch/arithmetic/blocking/fixed_pool/any&nightly=1&agents=" +
                            a + "," + b);
  ASSERT_EQ(status, 200);
  ASSERT_EQ(body["series"].size(), 2u);
  EXPECT_EQ(body["series"][0]["points"].size(), 14u);
  EXPECT_EQ(body["series"][0]["change_points"], json::array({8}));
  EXPECT_EQ(body["series"][1]["change_points"], json::array());
}

TEST_F(WebApiTest, MissingWrongAndHostileIdsAre404Or400) {
  for (const std::string path :
       {"/api/v1/runs/00000000-0000-4000-8000-000000000000", "/api/v1/runs/not-a-uuid",
        "/api/v1/runs/x'%20OR%201=1--/results", "/api/v1/results/1;DROP%20TABLE%20runs",
        "/api/v1/compare?agents=00000000-0000-4000-8000-000000000000", "/api/v1/cases?agent=nope",
        "/api/v1/nothing/here"}) {
    auto [status, body] = Get(path);
    EXPECT_EQ(status, 404) << path;
    EXPECT_TRUE(body.contains("error")) << path;
  }
  for (const std::string path : {"/api/v1/runs?limit=abc", "/api/v1/runs?limit=5000", "/api/v1/history?agents=x",
                                 "/api/v1/compare?agents=a,b&runs=x"}) {
    auto [status, body] = Get(path);
    EXPECT_EQ(status, 400) << path;
  }
  auto [status, body] = Get("/api/v1/runs?limit=1000");
  EXPECT_EQ(status, 200);
  EXPECT_EQ(body["runs"].size(), 18u) << "tables intact";
  httplib::Client client("127.0.0.1", server_->port());
  auto page = client.Get("/runs/00000000-0000-4000-8000-000000000000");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 404);
  EXPECT_NE(page->body.find("/assets/app.js"), std::string::npos);
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
  options.web_root = "/nonexistent";
  EXPECT_FALSE(StartHttpServer(options).ok());
}

}  // namespace
}  // namespace fleetmark::http
