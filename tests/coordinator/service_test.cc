// The coordinator's services over real gRPC on loopback (port 0), each test on the
// in-memory store and on a real PostgreSQL (FLEETMARK_TEST_PG_URI; skipped without it,
// coordinator_backends.h): hello refusals, a malformed message refused while other
// agents keep being served, dispatch, idempotent result acks, control auth, tokens
// list/revoke, run id prefixes, the nightly schedule seeded once per database. Three
// checks need SQL from outside and run on PostgreSQL only (a row lock held by the test,
// a stored blob no agent could send, jobs.failure_kind).
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <atomic>
#include <memory>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "coordinator/service/agent_service.h"
#include "coordinator/service/control_service.h"
#include "coordinator/service/coordinator.h"
#include "coordinator/service/result_export.h"
#include "coordinator/service/run_builder.h"
#include "engine/common/clock.h"
#include "engine/common/message_limits.h"
#include "engine/plan/plan.h"
#include "fleetmark/v1/agent.grpc.pb.h"
#include "fleetmark/v1/control.grpc.pb.h"
#include "google/protobuf/text_format.h"
#include "tests/coordinator/coordinator_backends.h"

namespace fleetmark::service {
namespace {

constexpr char kAdminToken[] = "admin-secret";
constexpr char kEnrollToken[] = "enroll-secret";

// A hand-driven agent on the synchronous client API.
class TestAgent {
 public:
  explicit TestAgent(const std::shared_ptr<grpc::Channel>& channel) : stub_(v1::AgentService::NewStub(channel)) {
    context_.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    stream_ = stub_->Connect(&context_);
  }
  bool Send(const v1::AgentMessage& m) { return stream_->Write(m); }
  bool Read(v1::CoordinatorMessage* m) { return stream_->Read(m); }
  grpc::Status Finish() {
    stream_->WritesDone();
    v1::CoordinatorMessage drain;
    while (stream_->Read(&drain)) {
    }
    return stream_->Finish();
  }
  // Reads until the stream ends; returns the refusal seen (if any) and the status.
  std::pair<std::string, grpc::Status> ReadRefusal() {
    std::string reason;
    v1::CoordinatorMessage m;
    while (stream_->Read(&m)) {
      if (m.has_refusal()) reason = m.refusal().reason();
    }
    return {reason, stream_->Finish()};
  }

  // The welcome (agent id, credential), or the refusal (reason, retryable) and status.
  struct Answer {
    std::string agent_id, credential;
    std::string refusal;
    bool retryable = true;
    grpc::Status status;
  };
  // Sends `hello` and reads the first answer; after a refusal, reads to the end.
  Answer Greet(const v1::AgentMessage& hello) {
    Answer answer;
    v1::CoordinatorMessage m;
    if (!Send(hello) || !Read(&m)) {
      answer.status = stream_->Finish();
      return answer;
    }
    if (m.has_welcome()) {
      answer.agent_id = m.welcome().agent_id();
      answer.credential = m.welcome().agent_credential();
      return answer;
    }
    answer.refusal = m.refusal().reason();
    answer.retryable = m.refusal().retryable();
    while (stream_->Read(&m)) {
    }
    answer.status = stream_->Finish();
    return answer;
  }

  static v1::AgentMessage Hello(const std::string& name, uint32_t version, const std::string& token,
                                const std::string& credential = "") {
    v1::AgentMessage m;
    v1::Hello* h = m.mutable_hello();
    h->set_protocol_version(version);
    h->set_agent_name(name);
    h->set_enrollment_token(token);
    h->set_agent_credential(credential);
    h->mutable_host()->set_arch("x86_64");
    h->mutable_host()->set_logical_cpus(4);
    h->mutable_host()->set_physical_cores(2);
    (*h->mutable_labels())["rack"] = name == "agent-b" ? "b" : "a";
    return m;
  }

 private:
  std::unique_ptr<v1::AgentService::Stub> stub_;
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReaderWriter<v1::AgentMessage, v1::CoordinatorMessage>> stream_;
};

// Each test runs on the in-memory store and on PostgreSQL (coordinator_backends.h).
class ServiceTest : public ::testing::TestWithParam<StoreBackend> {
 protected:
  // The database outlives the coordinator (members are destroyed in reverse order).
  void SetUp() override {
    db_ = std::make_unique<TestStoreDatabase>(GetParam());
    FLEETMARK_TEST_STORE_DATABASE_OR_SKIP(*db_);
    StartCoordinator(Options());
  }
  // Options of the coordinators under test, on `db` (default: the test's database).
  CoordinatorOptions Options(const TestStoreDatabase* db = nullptr) const {
    CoordinatorOptions options;
    options.listen_address = "127.0.0.1:0";
    (db != nullptr ? db : db_.get())->Use(options);
    options.admin_token = kAdminToken;
    options.enrollment_tokens = {kEnrollToken};
    options.heartbeat_interval = absl::Seconds(1);
    options.job_lease = absl::Seconds(10);
    options.sweep_interval = absl::Milliseconds(200);
    options.executor_threads = 2;
    options.db_pool_size = 6;
    return options;
  }
  void StartCoordinator(const CoordinatorOptions& options) {
    auto coordinator = Coordinator::Start(options);
    ASSERT_TRUE(coordinator.ok()) << coordinator.status();
    coordinator_ = *std::move(coordinator);
    channel_ =
        grpc::CreateChannel("127.0.0.1:" + std::to_string(coordinator_->port()), grpc::InsecureChannelCredentials());
    control_ = v1::ControlService::NewStub(channel_);
  }
  void Authorize(grpc::ClientContext* context) {
    context->AddMetadata("authorization", std::string("Bearer ") + kAdminToken);
    context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  }
  // Agents as ListAgents returns them (removed ones too with `all`).
  std::vector<v1::AgentInfo> Agents(bool all = false) {
    grpc::ClientContext context;
    Authorize(&context);
    v1::ListAgentsRequest request;
    request.set_include_removed(all);
    v1::ListAgentsResponse response;
    grpc::Status status = control_->ListAgents(&context, request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return {response.agents().begin(), response.agents().end()};
  }
  grpc::Status RemoveAgent(const std::string& name, v1::RemoveAgentResponse* response) {
    grpc::ClientContext context;
    Authorize(&context);
    v1::RemoveAgentRequest request;
    request.set_name(name);
    return control_->RemoveAgent(&context, request, response);
  }
  std::unique_ptr<TestStoreDatabase> db_;
  std::unique_ptr<Coordinator> coordinator_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::ControlService::Stub> control_;
};

v1::Plan SmallPlan() {
  v1::Plan plan;
  plan.set_name("small");
  v1::Matrix* m = plan.add_matrix();
  m->add_strategies()->set_name("direct");
  m->add_workloads("arithmetic");
  m->mutable_batch()->set_tasks(10);
  return plan;
}

TEST_P(ServiceTest, HelloRefusals) {
  {
    TestAgent agent(channel_);
    ASSERT_TRUE(agent.Send(TestAgent::Hello("agent-a", 7, kEnrollToken)));
    auto [reason, status] = agent.ReadRefusal();
    EXPECT_NE(reason.find("protocol version 7 not in [1, 1]"), std::string::npos) << reason;
    EXPECT_NE(reason.find("too new"), std::string::npos) << reason;
    EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  }
  {
    TestAgent agent(channel_);
    ASSERT_TRUE(agent.Send(TestAgent::Hello("agent-a", 0, kEnrollToken)));
    auto [reason, status] = agent.ReadRefusal();
    EXPECT_NE(reason.find("too old"), std::string::npos) << reason;
  }
  {
    TestAgent agent(channel_);
    ASSERT_TRUE(agent.Send(TestAgent::Hello("agent-a", 1, "wrong-token")));
    auto [reason, status] = agent.ReadRefusal();
    EXPECT_EQ(reason, "enrollment token unknown");
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  }
  {
    TestAgent agent(channel_);
    ASSERT_TRUE(agent.Send(TestAgent::Hello("agent-a", 1, "", "forged-credential")));
    auto [reason, status] = agent.ReadRefusal();
    EXPECT_NE(reason.find("credential refused"), std::string::npos) << reason;
  }
  {
    TestAgent agent(channel_);
    ASSERT_TRUE(agent.Send(TestAgent::Hello("bad name!", 1, kEnrollToken)));
    auto [reason, status] = agent.ReadRefusal();
    EXPECT_NE(reason.find("hello.agent_name"), std::string::npos) << reason;
  }
  // A trial found these welcomed: label keys no --labels can give (empty,
  // whitespace-only, markup) and a running_job_id that is not a UUID.
  const std::vector<std::pair<std::function<void(v1::Hello*)>, std::string>> fields = {
      {[](v1::Hello* h) { (*h->mutable_labels())[""] = "x"; }, "hello.labels key \"\": 1 to 63 characters of"},
      {[](v1::Hello* h) { (*h->mutable_labels())["   "] = "x"; }, "hello.labels key \"   \": 1 to 63 characters of"},
      {[](v1::Hello* h) { (*h->mutable_labels())["<img src=x>"] = "x"; }, "hello.labels key \"<img src=x>\""},
      {[](v1::Hello* h) { h->set_running_job_id("job-1"); }, "hello.running_job_id: empty or a UUID"},
  };
  for (const auto& [mutate, field] : fields) {
    v1::AgentMessage hello = TestAgent::Hello("agent-a", 1, kEnrollToken);
    mutate(hello.mutable_hello());
    TestAgent agent(channel_);
    const TestAgent::Answer answer = agent.Greet(hello);
    EXPECT_TRUE(answer.agent_id.empty()) << field << ": welcomed";
    EXPECT_NE(answer.refusal.find(field), std::string::npos) << answer.refusal;
    EXPECT_FALSE(answer.retryable) << field;
    EXPECT_EQ(answer.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << answer.refusal;
  }
  EXPECT_TRUE(Agents(/*all=*/true).empty()) << "a refused hello registered an agent";
}

TEST_P(ServiceTest, MalformedMessageRefusedOthersKeepBeingServed) {
  TestAgent good(channel_);
  ASSERT_TRUE(good.Send(TestAgent::Hello("agent-good", 1, kEnrollToken)));
  v1::CoordinatorMessage welcome;
  ASSERT_TRUE(good.Read(&welcome));
  ASSERT_TRUE(welcome.has_welcome()) << welcome.DebugString();

  {  // First message not a hello.
    TestAgent bad(channel_);
    v1::AgentMessage m;
    m.mutable_heartbeat()->set_rss_bytes(1);
    ASSERT_TRUE(bad.Send(m));
    auto [reason, status] = bad.ReadRefusal();
    EXPECT_NE(reason.find("first message must be hello"), std::string::npos) << reason;
  }
  {  // An empty message after a welcome.
    TestAgent bad(channel_);
    ASSERT_TRUE(bad.Send(TestAgent::Hello("agent-bad", 1, kEnrollToken)));
    v1::CoordinatorMessage w;
    ASSERT_TRUE(bad.Read(&w));
    ASSERT_TRUE(w.has_welcome());
    ASSERT_TRUE(bad.Send(v1::AgentMessage()));
    auto [reason, status] = bad.ReadRefusal();
    EXPECT_NE(reason.find("malformed message"), std::string::npos) << reason;
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  }
  // A message protobuf cannot parse (a string field that is not UTF-8; the client's
  // protobuf logs and sends it anyway), first or after the Welcome: a Refusal naming
  // the problem and INVALID_ARGUMENT. Before, the stream ended with OK and no reason.
  {
    TestAgent bad(channel_);
    ASSERT_TRUE(bad.Send(TestAgent::Hello("agent-\xff", 1, kEnrollToken)));
    auto [reason, status] = bad.ReadRefusal();
    EXPECT_NE(reason.find("malformed message"), std::string::npos) << reason;
    EXPECT_NE(reason.find("not a valid fleetmark.v1.AgentMessage"), std::string::npos) << reason;
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  }
  {
    TestAgent bad(channel_);
    ASSERT_TRUE(bad.Send(TestAgent::Hello("agent-bad3", 1, kEnrollToken)));
    v1::CoordinatorMessage w;
    ASSERT_TRUE(bad.Read(&w));
    ASSERT_TRUE(w.has_welcome());
    v1::AgentMessage m;
    m.mutable_job_accepted()->set_job_id("\xc3\x28 not UTF-8");
    ASSERT_TRUE(bad.Send(m));
    auto [reason, status] = bad.ReadRefusal();
    EXPECT_NE(reason.find("not a valid fleetmark.v1.AgentMessage"), std::string::npos) << reason;
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  }
  {  // A job message naming a job id that is not a UUID.
    TestAgent bad(channel_);
    ASSERT_TRUE(bad.Send(TestAgent::Hello("agent-bad2", 1, kEnrollToken)));
    v1::CoordinatorMessage w;
    ASSERT_TRUE(bad.Read(&w));
    v1::AgentMessage m;
    m.mutable_job_accepted()->set_job_id("'; DROP TABLE jobs; --");
    ASSERT_TRUE(bad.Send(m));
    auto [reason, status] = bad.ReadRefusal();
    EXPECT_NE(reason.find("job_id"), std::string::npos) << reason;
  }
  // The good agent is still served: a run is pushed to it and its result acked.
  grpc::ClientContext context;
  Authorize(&context);
  v1::SubmitRunRequest submit;
  *submit.mutable_plan() = SmallPlan();
  submit.set_selector("name=agent-good");
  v1::SubmitRunResponse submitted;
  grpc::Status status = control_->SubmitRun(&context, submit, &submitted);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(submitted.run().jobs_size(), 1);
  v1::CoordinatorMessage assignment;
  ASSERT_TRUE(good.Read(&assignment));
  ASSERT_TRUE(assignment.has_assignment()) << assignment.DebugString();
  EXPECT_EQ(assignment.assignment().run_id(), submitted.run().run_id());
  EXPECT_EQ(assignment.assignment().plan().name(), "small");
  EXPECT_EQ(assignment.assignment().attempt(), 1u);
  const std::string job_id = assignment.assignment().job_id();

  v1::AgentMessage accepted;
  accepted.mutable_job_accepted()->set_job_id(job_id);
  ASSERT_TRUE(good.Send(accepted));
  v1::AgentMessage result;
  v1::CaseResult* r = result.mutable_result();
  r->set_result_id("44444444-4444-4444-8444-444444444444");
  r->set_job_id(job_id);
  r->mutable_spec()->set_case_id("batch/arithmetic/blocking/direct/any");
  r->mutable_stats()->set_median_ns(1000);
  for (int i = 0; i < 2; ++i) {  // the second is a replay
    ASSERT_TRUE(good.Send(result));
    v1::CoordinatorMessage ack;
    ASSERT_TRUE(good.Read(&ack));
    ASSERT_TRUE(ack.has_ack()) << ack.DebugString();
    EXPECT_EQ(ack.ack().result_id(), r->result_id());
    EXPECT_EQ(ack.ack().duplicate(), i == 1);
    EXPECT_FALSE(ack.ack().rejected());
  }
  // Issue 10, item 8: results the plan cannot have produced are acked rejected, with a
  // message naming the field, and not stored (the run keeps one result, its plan's one
  // case): a case id outside the plan, a NaN statistic, a negative sample.
  struct Bad {
    const char* result_id;
    std::function<void(v1::CaseResult&)> change;
    const char* field;
  };
  const std::vector<Bad> bad = {
      {"44444444-4444-4444-8444-000000000001",
       [](v1::CaseResult& b) { b.mutable_spec()->set_case_id("batch/arithmetic/blocking/fiber/any"); },
       "result.spec.case_id"},
      {"44444444-4444-4444-8444-000000000002",
       [](v1::CaseResult& b) { b.mutable_stats()->set_median_ns(std::numeric_limits<double>::quiet_NaN()); },
       "result.stats.median_ns"},
      {"44444444-4444-4444-8444-000000000003", [](v1::CaseResult& b) { b.add_samples_ns(-1); }, "result.samples_ns[0]"},
  };
  for (const Bad& b : bad) {
    v1::AgentMessage message = result;
    message.mutable_result()->set_result_id(b.result_id);
    b.change(*message.mutable_result());
    ASSERT_TRUE(good.Send(message));
    v1::CoordinatorMessage ack;
    ASSERT_TRUE(good.Read(&ack));
    ASSERT_TRUE(ack.has_ack()) << ack.DebugString();
    EXPECT_EQ(ack.ack().result_id(), b.result_id);
    EXPECT_TRUE(ack.ack().rejected()) << ack.DebugString();
    EXPECT_EQ(ack.ack().message().rfind(b.field, 0), 0u) << ack.ack().message();
  }
  v1::AgentMessage finished;
  finished.mutable_job_finished()->set_job_id(job_id);
  finished.mutable_job_finished()->set_ok(true);
  ASSERT_TRUE(good.Send(finished));

  // Watch the run until it ends: done, one result.
  grpc::ClientContext watch_context;
  Authorize(&watch_context);
  v1::WatchRunRequest watch;
  watch.set_run_id(submitted.run().run_id());
  auto reader = control_->WatchRun(&watch_context, watch);
  v1::RunInfo info, last;
  while (reader->Read(&info)) last = info;
  ASSERT_TRUE(reader->Finish().ok());
  EXPECT_EQ(last.status(), "done");
  EXPECT_EQ(last.results(), 1u);
  ASSERT_TRUE(good.Finish().ok() || true);
}

// Issue 14, item 1: the coordinator's --default_preconditions gate plans that set none
// (a plan's own gates win), and a job the agent reports deferred ends failed as
// infrastructure with the agent's message; a bad default is refused at start.
// `agent` reports job `job_id` deferred by its preflight gates (`reason`) and reads the ack.
void ReportDeferred(TestAgent& agent, const std::string& job_id, const std::string& reason) {
  v1::AgentMessage finished;
  finished.mutable_job_finished()->set_job_id(job_id);
  finished.mutable_job_finished()->set_deferred(true);
  finished.mutable_job_finished()->set_message(reason);
  ASSERT_TRUE(agent.Send(finished));
  v1::CoordinatorMessage ack;
  ASSERT_TRUE(agent.Read(&ack));
  ASSERT_TRUE(ack.has_job_finished_ack()) << ack.DebugString();
}

// A listen address that is not host:port with a port 0..65535 is refused at start,
// naming the flag: "127.0.0.1:99999" served on port 34463 (99999 - 65536) before.
// Issue 32, item 12: a raw SubmitRun whose plan held a 6 MB strategy name was refused
// with the whole value echoed (gRPC clients then fail on the trailer's size). Every
// gRPC error cuts what it echoes at 200 bytes (CutLongEchoes, engine/common/text.h).
TEST_P(ServiceTest, AnErrorCutsAHugeValueItEchoes) {
  grpc::ClientContext context;
  Authorize(&context);
  v1::SubmitRunRequest submit;
  *submit.mutable_plan() = SmallPlan();
  submit.mutable_plan()->mutable_matrix(0)->mutable_strategies(0)->set_name(std::string(3 << 20, 'x'));
  v1::SubmitRunResponse submitted;
  grpc::Status status = control_->SubmitRun(&context, submit, &submitted);
  ASSERT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message().substr(0, 300);
  EXPECT_LE(status.error_message().size(), 1024u) << status.error_message().substr(0, 300);
  EXPECT_NE(status.error_message().find("strategies[0].name"), std::string::npos)
      << status.error_message().substr(0, 300);
  EXPECT_NE(status.error_message().find("got \"" + std::string(200, 'x') + "...\""), std::string::npos)
      << status.error_message().substr(0, 300);
}

// The real clocks, with a wall clock a test can set back and forth (as `date -s`
// does): steady time is not affected.
class SteppableClock : public Clock {
 public:
  absl::Time Now() const override { return absl::Now() + absl::Nanoseconds(offset_ns_.load()); }
  absl::Time SteadyNow() const override { return ::fleetmark::SteadyNow(); }
  void SetWallOffset(absl::Duration offset) { offset_ns_ = absl::ToInt64Nanoseconds(offset); }

 private:
  std::atomic<int64_t> offset_ns_{0};
};

// Issue 32, item 5: with the wall clock set back an hour for a while, the coordinator
// recorded no liveness meanwhile (its next flush was due an hour later on the wall
// clock) and, once the clock was restored, dropped an idle agent that had kept sending
// heartbeats ("no heartbeat for 1h"). Liveness runs on steady time.
TEST_P(ServiceTest, AWallClockStepNeitherStallsLivenessNorDropsAnAgent) {
  SteppableClock clock;
  coordinator_.reset();
  CoordinatorOptions options = Options();
  options.clock = &clock;
  StartCoordinator(options);
  // The coordinator reads `clock` until it stops: stop it first, however the test ends.
  absl::Cleanup stop = [&] { coordinator_.reset(); };
  TestAgent agent(channel_);
  ASSERT_FALSE(agent.Greet(TestAgent::Hello("agent-clock", 1, kEnrollToken)).agent_id.empty());
  v1::AgentMessage heartbeat;
  heartbeat.mutable_heartbeat()->set_rss_bytes(1);
  // Heartbeats every 300 ms of real time for `d`.
  auto beat_for = [&](absl::Duration d) {
    for (const absl::Time end = absl::Now() + d; absl::Now() < end;) {
      ASSERT_TRUE(agent.Send(heartbeat)) << "the coordinator ended the stream";
      absl::SleepFor(absl::Milliseconds(300));
    }
  };
  ASSERT_NO_FATAL_FAILURE(beat_for(absl::Seconds(2)));
  std::vector<v1::AgentInfo> agents = Agents();
  ASSERT_EQ(agents.size(), 1u);
  const int64_t seen_before = agents[0].last_seen_unix_ns();
  ASSERT_GT(seen_before, 0);

  clock.SetWallOffset(-absl::Hours(1));
  ASSERT_NO_FATAL_FAILURE(beat_for(absl::Seconds(3)));
  agents = Agents();
  ASSERT_EQ(agents.size(), 1u);
  // Flushed meanwhile (every heartbeat interval, 1 s), with the wall time of the last
  // heartbeat on the clock as it now reads.
  EXPECT_LT(agents[0].last_seen_unix_ns(), seen_before - absl::ToInt64Nanoseconds(absl::Minutes(59)))
      << "no liveness flush while the wall clock was set back";

  // Restored, then an idle moment (2 s, well inside the 8 s silence limit) in which the
  // coordinator flushes before the next heartbeat: the last one was stamped an hour
  // earlier on the wall clock.
  clock.SetWallOffset(absl::ZeroDuration());
  absl::SleepFor(absl::Seconds(2));
  ASSERT_NO_FATAL_FAILURE(beat_for(absl::Seconds(2)));
  agents = Agents();
  ASSERT_EQ(agents.size(), 1u);
  EXPECT_EQ(agents[0].state(), "online");
  EXPECT_GT(agents[0].last_seen_unix_ns(), absl::ToUnixNanos(absl::Now() - absl::Seconds(3)));
  EXPECT_TRUE(agent.Send(heartbeat));
}

TEST_P(ServiceTest, ABadListenAddressIsRefusedAtStart) {
  for (const char* address : {"127.0.0.1:99999", "127.0.0.1:65536", "bogus", "", "127.0.0.1:-1"}) {
    CoordinatorOptions bad = Options();
    bad.listen_address = address;
    absl::StatusOr<std::unique_ptr<Coordinator>> refused = Coordinator::Start(bad);
    ASSERT_FALSE(refused.ok()) << address;
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument) << address;
    EXPECT_EQ(refused.status().message(),
              absl::StrCat("listen_address: expected host:port (IPv4, [IPv6] or localhost; port 0..65535), got \"",
                           address, "\""));
  }
}

TEST_P(ServiceTest, DefaultPreconditionsAndDeferredJobs) {
  CoordinatorOptions bad = Options();
  bad.default_preconditions.set_max_checks(0);
  absl::StatusOr<std::unique_ptr<Coordinator>> refused = Coordinator::Start(bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(), "default_preconditions.max_checks: 1 <= max_checks <= 100, got 0");

  coordinator_.reset();
  CoordinatorOptions options = Options();
  options.default_preconditions.set_min_battery_percent(20);
  options.default_preconditions.set_max_temperature_c(45);
  StartCoordinator(options);
  TestAgent phone(channel_);
  ASSERT_TRUE(phone.Send(TestAgent::Hello("phone-1", 1, kEnrollToken)));
  v1::CoordinatorMessage welcome;
  ASSERT_TRUE(phone.Read(&welcome));
  ASSERT_TRUE(welcome.has_welcome()) << welcome.DebugString();

  auto submit = [&](const v1::Plan& plan, v1::SubmitRunResponse* submitted) {
    grpc::ClientContext context;
    Authorize(&context);
    v1::SubmitRunRequest request;
    *request.mutable_plan() = plan;
    request.set_selector("name=phone-1");
    return control_->SubmitRun(&context, request, submitted);
  };
  v1::SubmitRunResponse submitted;
  grpc::Status status = submit(SmallPlan(), &submitted);
  ASSERT_TRUE(status.ok()) << status.error_message();
  v1::CoordinatorMessage assignment;
  ASSERT_TRUE(phone.Read(&assignment));
  ASSERT_TRUE(assignment.has_assignment()) << assignment.DebugString();
  const v1::Preconditions& gates = assignment.assignment().plan().preconditions();
  EXPECT_EQ(gates.min_battery_percent(), 20u);
  EXPECT_EQ(gates.max_temperature_c(), 45);
  EXPECT_FALSE(gates.has_max_load_average());

  const std::string reason = "deferred: battery: 12 % < 20 % and not charging (3 checks, 60 s of cool-down)";
  ASSERT_NO_FATAL_FAILURE(ReportDeferred(phone, assignment.assignment().job_id(), reason));
  {
    grpc::ClientContext context;
    Authorize(&context);
    v1::GetRunRequest request;
    request.set_run_id(submitted.run().run_id());
    v1::RunInfo run;
    ASSERT_TRUE(control_->GetRun(&context, request, &run).ok());
    ASSERT_EQ(run.jobs_size(), 1);
    EXPECT_EQ(run.jobs(0).status(), "failed");
    EXPECT_EQ(run.jobs(0).message(), reason);
  }
  if (db_->has_sql()) {  // the failure kind is no field of RunInfo
    EXPECT_EQ(db_->Count("SELECT count(*) FROM jobs WHERE failure_kind = 'infrastructure'"), 1);
    EXPECT_EQ(db_->Count("SELECT count(*) FROM jobs WHERE failure_kind = 'benchmark'"), 0);
  }

  // A plan with its own gates keeps them.
  v1::Plan own = SmallPlan();
  own.mutable_preconditions()->set_max_load_average(2);
  v1::SubmitRunResponse second;
  status = submit(own, &second);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_TRUE(phone.Read(&assignment));
  ASSERT_TRUE(assignment.has_assignment()) << assignment.DebugString();
  EXPECT_EQ(assignment.assignment().plan().preconditions().max_load_average(), 2);
  EXPECT_FALSE(assignment.assignment().plan().preconditions().has_min_battery_percent());
}

// Quarantine through the real services: an agent whose gates defer N jobs in a row is
// quarantined, selectors skip it unless they say health=any, a selection of only
// quarantined agents says so, and ReleaseAgent ends it.
TEST_P(ServiceTest, QuarantinedAgentsAreSkippedBySelectorsUntilReleased) {
  coordinator_.reset();
  CoordinatorOptions bad = Options();
  bad.health.deferred_jobs = -1;
  absl::StatusOr<std::unique_ptr<Coordinator>> refused = Coordinator::Start(bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(), "--quarantine_deferred_jobs: 0 <= quarantine_deferred_jobs <= 1000, got -1");
  CoordinatorOptions options = Options();
  options.health.deferred_jobs = 2;
  StartCoordinator(options);
  TestAgent phone(channel_), other(channel_);
  v1::CoordinatorMessage welcome;
  ASSERT_TRUE(phone.Send(TestAgent::Hello("phone-1", 1, kEnrollToken)));
  ASSERT_TRUE(phone.Read(&welcome));
  ASSERT_TRUE(welcome.has_welcome()) << welcome.DebugString();
  ASSERT_TRUE(other.Send(TestAgent::Hello("agent-b", 1, kEnrollToken)));
  ASSERT_TRUE(other.Read(&welcome));
  ASSERT_TRUE(welcome.has_welcome()) << welcome.DebugString();

  auto submit = [&](const std::string& selector, v1::SubmitRunResponse* submitted) {
    grpc::ClientContext context;
    Authorize(&context);
    v1::SubmitRunRequest request;
    *request.mutable_plan() = SmallPlan();
    request.set_selector(selector);
    return control_->SubmitRun(&context, request, submitted);
  };
  const std::string reason = "deferred: temperature: 47 °C > 45 °C (3 checks, 60 s of cool-down)";
  for (int i = 0; i < 2; ++i) {
    v1::SubmitRunResponse submitted;
    grpc::Status status = submit("name=phone-1", &submitted);
    ASSERT_TRUE(status.ok()) << status.error_message();
    v1::CoordinatorMessage assignment;
    ASSERT_TRUE(phone.Read(&assignment));
    ASSERT_TRUE(assignment.has_assignment()) << assignment.DebugString();
    ASSERT_NO_FATAL_FAILURE(ReportDeferred(phone, assignment.assignment().job_id(), reason));
  }
  std::string phone_reason;
  for (const v1::AgentInfo& a : Agents()) {
    EXPECT_EQ(a.health(), a.name() == "phone-1" ? "quarantined" : "ok") << a.name();
    if (a.name() == "phone-1") {
      phone_reason = a.quarantine_reason();
      EXPECT_GT(a.quarantined_unix_ns(), 0);
    }
  }
  EXPECT_EQ(phone_reason, "preflight gates deferred 2 jobs in a row (--quarantine_deferred_jobs 2); last: " + reason);

  // Only quarantined agents selected: refused, saying so and how to go on.
  v1::SubmitRunResponse none;
  grpc::Status status = submit("name=phone-1", &none);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(status.error_message(),
            "every online agent matching selector \"name=phone-1\" is quarantined: phone-1 (" + phone_reason +
                "). Release one with `fleetmark agents release NAME`, or add health=any to the selector to run on it "
                "anyway");
  // The whole fleet: the quarantined agent is skipped.
  v1::SubmitRunResponse all;
  status = submit("all", &all);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(all.run().jobs_size(), 1);
  EXPECT_EQ(all.run().jobs(0).agent_name(), "agent-b");
  // health=any takes it anyway; health=quarantined lists only it.
  v1::SubmitRunResponse any;
  status = submit("name=phone-1,health=any", &any);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(any.run().jobs_size(), 1);
  EXPECT_EQ(any.run().jobs(0).agent_name(), "phone-1");
  {
    grpc::ClientContext context;
    Authorize(&context);
    v1::ListAgentsRequest request;
    request.set_selector("health=quarantined");
    v1::ListAgentsResponse response;
    ASSERT_TRUE(control_->ListAgents(&context, request, &response).ok());
    ASSERT_EQ(response.agents_size(), 1);
    EXPECT_EQ(response.agents(0).name(), "phone-1");
  }

  // ReleaseAgent: admin only; then selected again.
  v1::ReleaseAgentRequest release;
  release.set_name("phone-1");
  v1::ReleaseAgentResponse released;
  {
    grpc::ClientContext context;
    EXPECT_EQ(control_->ReleaseAgent(&context, release, &released).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  }
  {
    grpc::ClientContext context;
    Authorize(&context);
    grpc::Status s = control_->ReleaseAgent(&context, release, &released);
    ASSERT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(released.reason(), phone_reason);
  }
  {
    grpc::ClientContext context;
    Authorize(&context);
    grpc::Status s = control_->ReleaseAgent(&context, release, &released);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
  }
  for (const v1::AgentInfo& a : Agents()) EXPECT_EQ(a.health(), "ok") << a.name();
  v1::SubmitRunResponse again;
  status = submit("name=phone-1", &again);
  ASSERT_TRUE(status.ok()) << status.error_message();
}

// An agent that comes back still running a job which ended meanwhile (cancelled while
// it was away) is busy until it reports that job finished: the cancellation comes after
// the Welcome, and its queued job is pushed only after the report (issue 10: it was
// shown idle and handed a job it refused as busy).
TEST_P(ServiceTest, AgentBackWithAnEndedJobStillRunningGetsNoJobUntilItReportsIt) {
  auto submit = [&](v1::SubmitRunResponse* submitted) {
    grpc::ClientContext context;
    Authorize(&context);
    v1::SubmitRunRequest request;
    *request.mutable_plan() = SmallPlan();
    request.set_selector("name=agent-busy");
    return control_->SubmitRun(&context, request, submitted);
  };
  // The job `agents list` shows for the agent ("" = idle).
  auto listed_job = [&]() -> std::string {
    grpc::ClientContext context;
    Authorize(&context);
    v1::ListAgentsRequest request;
    request.set_selector("name=agent-busy");
    v1::ListAgentsResponse response;
    EXPECT_TRUE(control_->ListAgents(&context, request, &response).ok());
    return response.agents_size() == 1 ? response.agents(0).running_job_id() : "(no agent)";
  };
  std::string credential, first_job;
  v1::SubmitRunResponse first, second;
  {
    TestAgent agent(channel_);
    ASSERT_TRUE(agent.Send(TestAgent::Hello("agent-busy", 1, kEnrollToken)));
    v1::CoordinatorMessage m;
    ASSERT_TRUE(agent.Read(&m));
    ASSERT_TRUE(m.has_welcome()) << m.DebugString();
    credential = m.welcome().agent_credential();
    ASSERT_TRUE(submit(&first).ok());
    ASSERT_TRUE(agent.Read(&m));
    ASSERT_TRUE(m.has_assignment()) << m.DebugString();
    first_job = m.assignment().job_id();
    v1::AgentMessage accepted;
    accepted.mutable_job_accepted()->set_job_id(first_job);
    ASSERT_TRUE(agent.Send(accepted));
    // Queued behind the running job.
    ASSERT_TRUE(submit(&second).ok());
    grpc::ClientContext context;
    Authorize(&context);
    v1::CancelRunRequest cancel;
    cancel.set_run_id(first.run().run_id());
    v1::RunInfo cancelled;
    ASSERT_TRUE(control_->CancelRun(&context, cancel, &cancelled).ok());
    EXPECT_EQ(cancelled.status(), "cancelled");
    ASSERT_TRUE(agent.Read(&m));
    ASSERT_TRUE(m.has_cancellation()) << m.DebugString();
    EXPECT_EQ(listed_job(), first_job);  // not idle: it has not said the job stopped
    agent.Finish();                      // gone before it could stop the job or report it
  }
  ASSERT_EQ(second.run().jobs_size(), 1);
  const std::string second_job = second.run().jobs(0).job_id();

  TestAgent back(channel_);
  v1::AgentMessage hello = TestAgent::Hello("agent-busy", 1, "", credential);
  hello.mutable_hello()->set_running_job_id(first_job);  // still running here
  ASSERT_TRUE(back.Send(hello));
  v1::CoordinatorMessage m;
  ASSERT_TRUE(back.Read(&m));
  ASSERT_TRUE(m.has_welcome()) << m.DebugString();
  ASSERT_TRUE(back.Read(&m));
  ASSERT_TRUE(m.has_cancellation()) << m.DebugString();
  EXPECT_EQ(m.cancellation().job_id(), first_job);
  EXPECT_EQ(listed_job(), first_job);
  // The job stops; only its report frees the agent for the queued job.
  v1::AgentMessage finished;
  finished.mutable_job_finished()->set_job_id(first_job);
  finished.mutable_job_finished()->set_cancelled(true);
  ASSERT_TRUE(back.Send(finished));
  ASSERT_TRUE(back.Read(&m));
  ASSERT_TRUE(m.has_job_finished_ack()) << m.DebugString();
  EXPECT_EQ(m.job_finished_ack().job_id(), first_job);
  ASSERT_TRUE(back.Read(&m));
  ASSERT_TRUE(m.has_assignment()) << m.DebugString();
  EXPECT_EQ(m.assignment().job_id(), second_job);
  back.Finish();
}

// A job end waiting for the database (slow, or a batch of a 10 000-job run's ends ahead
// of it) holds the stream's reads, so its heartbeats wait in TCP: the liveness
// flush must not end the stream for silence meanwhile (it did, for 3 806 of 10 000
// agents of a fan-out in fleet_bench).
TEST_P(ServiceTest, AJobEndWaitingForTheDatabaseIsNotSilence) {
  // The wait is a PostgreSQL row lock held by the test; the memory store holds none
  // between calls (memory_store.h).
  if (!db_->has_sql()) GTEST_SKIP() << "needs a row lock held from outside: PostgreSQL only";
  TestAgent agent(channel_);
  ASSERT_TRUE(agent.Send(TestAgent::Hello("agent-waits", 1, kEnrollToken)));
  v1::CoordinatorMessage m;
  ASSERT_TRUE(agent.Read(&m));
  ASSERT_TRUE(m.has_welcome()) << m.DebugString();
  grpc::ClientContext context;
  Authorize(&context);
  v1::SubmitRunRequest request;
  *request.mutable_plan() = SmallPlan();
  request.set_selector("name=agent-waits");
  v1::SubmitRunResponse submitted;
  ASSERT_TRUE(control_->SubmitRun(&context, request, &submitted).ok());
  ASSERT_TRUE(agent.Read(&m));
  ASSERT_TRUE(m.has_assignment()) << m.DebugString();
  const std::string job_id = m.assignment().job_id();
  {
    pqxx::connection sql(db_->uri());
    pqxx::work lock(sql);
    lock.exec_params("SELECT 1 FROM runs WHERE run_id = $1::uuid FOR UPDATE", submitted.run().run_id());
    v1::AgentMessage finished;
    finished.mutable_job_finished()->set_job_id(job_id);
    finished.mutable_job_finished()->set_ok(true);
    ASSERT_TRUE(agent.Send(finished));
    // Past the silence limit (3 heartbeat intervals + 5 s = 8 s), with flushes every 1 s.
    std::this_thread::sleep_for(std::chrono::seconds(10));
    lock.commit();
  }
  ASSERT_TRUE(agent.Read(&m)) << "the stream ended while its job end waited for the database";
  ASSERT_TRUE(m.has_job_finished_ack()) << m.DebugString();
  EXPECT_EQ(m.job_finished_ack().job_id(), job_id);
  agent.Finish();
}

// Issue 32, item 4: a coordinator that did not run for longer than the lease (SIGSTOP,
// a long pause: here its injected clock jumps 60 s) fails no job for its own absence.
// Its agent's stream is not ended for the heartbeats that waited meanwhile, the lease
// is renewed and none expires for a lease after the stall, so the job ends done on its
// first attempt with max_attempts = 1. Before, the first flush after the jump ended the
// stream ("no heartbeat for 1m"), the lease ran out and the job failed as infrastructure.
TEST_P(ServiceTest, ACoordinatorThatDidNotRunFailsNoJobForItsOwnAbsence) {
  coordinator_.reset();  // this test's own coordinator runs on a clock the test moves
  FakeClock clock(absl::Now());
  std::atomic<bool> ticking{true};
  std::thread ticker([&] {  // the clock keeps time, as a real one
    while (ticking.load()) {
      absl::SleepFor(absl::Milliseconds(20));
      clock.Advance(absl::Milliseconds(20));
    }
  });
  struct AtExit {
    std::function<void()> run;
    ~AtExit() { run(); }
  } stop_all{[&] {  // the coordinator goes before the clock it reads
    coordinator_.reset();
    ticking.store(false);
    ticker.join();
  }};
  CoordinatorOptions options = Options();
  options.clock = &clock;
  options.heartbeat_interval = absl::Milliseconds(500);
  options.job_lease = absl::Seconds(2);
  options.max_attempts = 1;
  ASSERT_NO_FATAL_FAILURE(StartCoordinator(options));

  TestAgent agent(channel_);
  ASSERT_TRUE(agent.Send(TestAgent::Hello("agent-frozen", 1, kEnrollToken)));
  v1::CoordinatorMessage m;
  ASSERT_TRUE(agent.Read(&m));
  ASSERT_TRUE(m.has_welcome()) << m.DebugString();
  grpc::ClientContext context;
  Authorize(&context);
  v1::SubmitRunRequest submit;
  *submit.mutable_plan() = SmallPlan();
  submit.set_selector("name=agent-frozen");
  v1::SubmitRunResponse submitted;
  ASSERT_TRUE(control_->SubmitRun(&context, submit, &submitted).ok());
  ASSERT_TRUE(agent.Read(&m));
  ASSERT_TRUE(m.has_assignment()) << m.DebugString();
  const std::string job_id = m.assignment().job_id();
  v1::AgentMessage accepted;
  accepted.mutable_job_accepted()->set_job_id(job_id);
  ASSERT_TRUE(agent.Send(accepted));
  auto job = [&]() -> v1::JobInfo {
    grpc::ClientContext get_context;
    Authorize(&get_context);
    v1::GetRunRequest request;
    request.set_run_id(submitted.run().run_id());
    v1::RunInfo run;
    EXPECT_TRUE(control_->GetRun(&get_context, request, &run).ok());
    return run.jobs_size() == 1 ? run.jobs(0) : v1::JobInfo();
  };
  // Past a lease since the start, so leases may expire; then the coordinator "stops"
  // for 60 s, and twice the lease (database time) passes after it.
  absl::SleepFor(absl::Seconds(3));
  EXPECT_EQ(job().status(), "running");
  clock.Advance(absl::Seconds(60));
  absl::SleepFor(absl::Seconds(4));
  EXPECT_EQ(job().status(), "running") << job().message();

  v1::AgentMessage heartbeat;
  heartbeat.mutable_heartbeat()->set_rss_bytes(1);
  ASSERT_TRUE(agent.Send(heartbeat));
  v1::AgentMessage result;
  v1::CaseResult* r = result.mutable_result();
  r->set_result_id("55555555-5555-4555-8555-555555555555");
  r->set_job_id(job_id);
  r->mutable_spec()->set_case_id("batch/arithmetic/blocking/direct/any");
  r->mutable_stats()->set_median_ns(1000);
  ASSERT_TRUE(agent.Send(result));
  ASSERT_TRUE(agent.Read(&m)) << "the stream was ended";
  ASSERT_TRUE(m.has_ack() || m.has_acks()) << m.DebugString();
  v1::AgentMessage finished;
  finished.mutable_job_finished()->set_job_id(job_id);
  finished.mutable_job_finished()->set_ok(true);
  ASSERT_TRUE(agent.Send(finished));
  ASSERT_TRUE(agent.Read(&m));
  ASSERT_TRUE(m.has_job_finished_ack()) << m.DebugString();
  const v1::JobInfo ended = job();
  EXPECT_EQ(ended.status(), "done") << ended.message();
  EXPECT_EQ(ended.attempts(), 1u);
  agent.Finish();
}

TEST_P(ServiceTest, ControlNeedsAdminTokenAndValidatesInput) {
  {
    grpc::ClientContext context;
    v1::ListAgentsResponse agents;
    grpc::Status status = control_->ListAgents(&context, v1::ListAgentsRequest(), &agents);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  }
  {
    grpc::ClientContext context;
    context.AddMetadata("authorization", "Bearer wrong");
    v1::ListAgentsResponse agents;
    EXPECT_EQ(control_->ListAgents(&context, v1::ListAgentsRequest(), &agents).error_code(),
              grpc::StatusCode::UNAUTHENTICATED);
  }
  {
    grpc::ClientContext context;
    Authorize(&context);
    v1::SubmitRunRequest submit;
    *submit.mutable_plan() = SmallPlan();
    submit.mutable_plan()->mutable_matrix(0)->mutable_strategies(0)->set_name("no_such_strategy");
    v1::SubmitRunResponse response;
    grpc::Status status = control_->SubmitRun(&context, submit, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(status.error_message().find("no_such_strategy"), std::string::npos) << status.error_message();
  }
  {
    grpc::ClientContext context;
    Authorize(&context);
    v1::SubmitRunRequest submit;
    *submit.mutable_plan() = SmallPlan();
    submit.set_selector("colour=blue");
    v1::SubmitRunResponse response;
    grpc::Status status = control_->SubmitRun(&context, submit, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(status.error_message().find("allowed keys"), std::string::npos) << status.error_message();
  }
  {
    grpc::ClientContext context;
    Authorize(&context);
    v1::SubmitRunRequest submit;
    *submit.mutable_plan() = SmallPlan();
    submit.set_selector("arch=arm64");
    v1::SubmitRunResponse response;
    grpc::Status status = control_->SubmitRun(&context, submit, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_NE(status.error_message().find("no online agent"), std::string::npos) << status.error_message();
  }
  // The coordinator checks --filter before creating a run (even with no agent online):
  // malformed RE2, a backreference RE2 lacks, or no matching case is InvalidArgument.
  for (const std::string filter : {"((", "nomatch", "(a)\\1"}) {
    grpc::ClientContext context;
    Authorize(&context);
    v1::SubmitRunRequest submit;
    *submit.mutable_plan() = SmallPlan();
    submit.set_filter(filter);
    v1::SubmitRunResponse response;
    grpc::Status status = control_->SubmitRun(&context, submit, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << filter << ": " << status.error_message();
    EXPECT_NE(status.error_message().find("--filter"), std::string::npos) << status.error_message();
  }
  {
    grpc::ClientContext context;
    Authorize(&context);
    v1::ListRunsResponse runs;
    ASSERT_TRUE(control_->ListRuns(&context, v1::ListRunsRequest(), &runs).ok());
    EXPECT_EQ(runs.runs_size(), 0);
  }
  {
    grpc::ClientContext context;
    Authorize(&context);
    v1::CreateScheduleRequest request;
    request.mutable_schedule()->set_name("bad");
    request.mutable_schedule()->set_cron("61 * * * *");
    *request.mutable_schedule()->mutable_plan() = SmallPlan();
    v1::Schedule response;
    grpc::Status status = control_->CreateSchedule(&context, request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(status.error_message().find("minute"), std::string::npos);
  }
}

// A schedule's first next fire is computed on the coordinator's clock, as the
// scheduler's later ones are (issue 33 item 2): before, CreateSchedule read
// absl::Now(), so a coordinator on a FakeClock stored the next 10:30 of the real day.
TEST_P(ServiceTest, AScheduleFirstFiresByTheCoordinatorsClock) {
  coordinator_.reset();  // this test's own coordinator runs on a fixed clock
  const absl::Time now = absl::FromCivil(absl::CivilSecond(2031, 3, 4, 10, 15, 0), absl::UTCTimeZone());
  FakeClock clock(now);
  struct AtExit {
    std::function<void()> run;
    ~AtExit() { run(); }
  } stop{[&] { coordinator_.reset(); }};  // the coordinator goes before the clock it reads
  CoordinatorOptions options = Options();
  options.clock = &clock;
  ASSERT_NO_FATAL_FAILURE(StartCoordinator(options));

  const absl::Time expected = now + absl::Minutes(15);  // "30 10 * * *" after 10:15 UTC
  {
    grpc::ClientContext context;
    Authorize(&context);
    v1::CreateScheduleRequest request;
    request.mutable_schedule()->set_name("morning");
    request.mutable_schedule()->set_cron("30 10 * * *");
    *request.mutable_schedule()->mutable_plan() = SmallPlan();
    v1::Schedule response;
    grpc::Status status = control_->CreateSchedule(&context, request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(absl::FromUnixNanos(response.next_fire_unix_ns()), expected);
  }
  grpc::ClientContext context;
  Authorize(&context);
  v1::ListSchedulesResponse listed;
  ASSERT_TRUE(control_->ListSchedules(&context, v1::ListSchedulesRequest(), &listed).ok());
  bool found = false;
  for (const v1::Schedule& s : listed.schedules()) {
    if (s.name() != "morning") continue;
    found = true;
    EXPECT_EQ(absl::FromUnixNanos(s.next_fire_unix_ns()), expected);
  }
  EXPECT_TRUE(found);
}

TEST_P(ServiceTest, TokensCredentialsAndRevocation) {
  v1::CreateTokenResponse token;
  {
    grpc::ClientContext context;
    Authorize(&context);
    v1::CreateTokenRequest request;
    request.set_description("test");
    ASSERT_TRUE(control_->CreateToken(&context, request, &token).ok());
    EXPECT_EQ(token.token().size(), 64u);
  }
  std::string credential;
  {
    TestAgent agent(channel_);
    ASSERT_TRUE(agent.Send(TestAgent::Hello("agent-t", 1, token.token())));
    v1::CoordinatorMessage welcome;
    ASSERT_TRUE(agent.Read(&welcome));
    ASSERT_TRUE(welcome.has_welcome()) << welcome.DebugString();
    credential = welcome.welcome().agent_credential();
    EXPECT_FALSE(credential.empty());
    EXPECT_EQ(welcome.welcome().heartbeat_interval_ms(), 1000u);
    agent.Finish();
  }
  {  // Reconnect with the credential alone.
    TestAgent agent(channel_);
    ASSERT_TRUE(agent.Send(TestAgent::Hello("agent-t", 1, "", credential)));
    v1::CoordinatorMessage welcome;
    ASSERT_TRUE(agent.Read(&welcome));
    ASSERT_TRUE(welcome.has_welcome()) << welcome.DebugString();
    EXPECT_EQ(welcome.welcome().agent_credential(), credential);
    agent.Finish();
  }
  {
    grpc::ClientContext context;
    Authorize(&context);
    v1::RevokeTokenRequest request;
    request.set_token_id(token.token_id());
    v1::Empty empty;
    ASSERT_TRUE(control_->RevokeToken(&context, request, &empty).ok());
  }
  for (bool with_credential : {false, true}) {
    TestAgent agent(channel_);
    ASSERT_TRUE(agent.Send(with_credential ? TestAgent::Hello("agent-t", 1, "", credential)
                                           : TestAgent::Hello("agent-t2", 1, token.token())));
    auto [reason, status] = agent.ReadRefusal();
    EXPECT_NE(reason.find("revoked"), std::string::npos) << reason;
    EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  }
  // Revoking it again says so; an unknown id is NotFound naming it.
  for (const std::string& id : {token.token_id(), std::string("tok-unknown")}) {
    grpc::ClientContext context;
    Authorize(&context);
    v1::RevokeTokenRequest request;
    request.set_token_id(id);
    v1::Empty empty;
    grpc::Status status = control_->RevokeToken(&context, request, &empty);
    if (id == token.token_id()) {
      EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << status.error_message();
      EXPECT_NE(status.error_message().find("already revoked at"), std::string::npos) << status.error_message();
    } else {
      EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND) << status.error_message();
      EXPECT_NE(status.error_message().find("\"tok-unknown\""), std::string::npos) << status.error_message();
    }
  }
}

// Revoking a token ends the streams of the agents enrolled with it that are connected
// now: at once on the coordinator that revoked it, at its next liveness flush on another
// coordinator of the same database. They get no new job; the job one was running is
// handled like a lost agent's (lease expiry, re-queued). Agents of other tokens stay.
TEST_P(ServiceTest, RevokingATokenDisconnectsItsAgentsOnEveryCoordinator) {
  CoordinatorOptions second_options = Options();
  second_options.coordinator_id = "coordinator-2";
  auto second = Coordinator::Start(second_options);
  ASSERT_TRUE(second.ok()) << second.status();
  auto second_channel =
      grpc::CreateChannel("127.0.0.1:" + std::to_string((*second)->port()), grpc::InsecureChannelCredentials());
  v1::CreateTokenResponse revoked_token, kept_token;
  for (v1::CreateTokenResponse* token : {&revoked_token, &kept_token}) {
    grpc::ClientContext context;
    Authorize(&context);
    ASSERT_TRUE(control_->CreateToken(&context, v1::CreateTokenRequest(), token).ok());
  }
  auto welcome = [](TestAgent& agent) {
    v1::CoordinatorMessage m;
    return agent.Read(&m) && m.has_welcome();
  };
  TestAgent here(channel_), there(second_channel), kept(channel_);
  ASSERT_TRUE(here.Send(TestAgent::Hello("box-here", 1, revoked_token.token())));
  ASSERT_TRUE(welcome(here));
  ASSERT_TRUE(there.Send(TestAgent::Hello("box-there", 1, revoked_token.token())));
  ASSERT_TRUE(welcome(there));
  ASSERT_TRUE(kept.Send(TestAgent::Hello("box-kept", 1, kept_token.token())));
  ASSERT_TRUE(welcome(kept));

  // box-here runs a job when its token is revoked.
  v1::SubmitRunResponse running;
  {
    grpc::ClientContext context;
    Authorize(&context);
    v1::SubmitRunRequest submit;
    *submit.mutable_plan() = SmallPlan();
    submit.set_selector("name=box-here");
    ASSERT_TRUE(control_->SubmitRun(&context, submit, &running).ok());
  }
  v1::CoordinatorMessage assignment;
  ASSERT_TRUE(here.Read(&assignment));
  ASSERT_TRUE(assignment.has_assignment()) << assignment.DebugString();
  v1::AgentMessage accepted;
  accepted.mutable_job_accepted()->set_job_id(assignment.assignment().job_id());
  ASSERT_TRUE(here.Send(accepted));

  {
    grpc::ClientContext context;
    Authorize(&context);
    v1::RevokeTokenRequest request;
    request.set_token_id(revoked_token.token_id());
    v1::Empty empty;
    grpc::Status status = control_->RevokeToken(&context, request, &empty);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }
  const std::string expected = "enrollment token " + revoked_token.token_id() + " revoked";
  const absl::Time revoked_at = absl::Now();
  for (TestAgent* agent : {&here, &there}) {
    auto [reason, status] = agent->ReadRefusal();
    EXPECT_EQ(reason, expected);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED) << status.error_message();
  }
  // Heartbeats every second: both streams end within seconds (generous bound), not at
  // the test agents' 60 s deadline.
  EXPECT_LT(absl::Now() - revoked_at, absl::Seconds(20));

  // Submissions reach only the agent of the other token.
  {
    grpc::ClientContext context;
    Authorize(&context);
    v1::SubmitRunRequest submit;
    *submit.mutable_plan() = SmallPlan();
    v1::SubmitRunResponse submitted;
    ASSERT_TRUE(control_->SubmitRun(&context, submit, &submitted).ok());
    ASSERT_EQ(submitted.run().jobs_size(), 1);
    EXPECT_EQ(submitted.run().jobs(0).agent_name(), "box-kept");
  }
  for (const std::string name : {"box-here", "box-there"}) {
    grpc::ClientContext context;
    Authorize(&context);
    v1::SubmitRunRequest submit;
    *submit.mutable_plan() = SmallPlan();
    submit.set_selector("name=" + name);
    v1::SubmitRunResponse submitted;
    EXPECT_EQ(control_->SubmitRun(&context, submit, &submitted).error_code(), grpc::StatusCode::FAILED_PRECONDITION)
        << name;
  }
  // The interrupted job is re-queued once its lease (10 s) expires, as for a lost agent.
  std::string job_status;
  uint32_t attempts = 0;
  for (absl::Time deadline = absl::Now() + absl::Seconds(60); absl::Now() < deadline;) {
    grpc::ClientContext context;
    Authorize(&context);
    v1::GetRunRequest request;
    request.set_run_id(running.run().run_id());
    v1::RunInfo run;
    ASSERT_TRUE(control_->GetRun(&context, request, &run).ok());
    ASSERT_EQ(run.jobs_size(), 1);
    job_status = run.jobs(0).status();
    attempts = run.jobs(0).attempts();
    if (job_status == "queued") break;
    absl::SleepFor(absl::Milliseconds(300));
  }
  EXPECT_EQ(job_status, "queued");
  EXPECT_EQ(attempts, 1u);
  kept.Finish();
}

TEST_P(ServiceTest, ListTokensShowsIdsDatesAndAgentsButNoSecret) {
  {
    grpc::ClientContext context;  // no admin token
    v1::ListTokensResponse response;
    EXPECT_EQ(control_->ListTokens(&context, v1::ListTokensRequest(), &response).error_code(),
              grpc::StatusCode::UNAUTHENTICATED);
  }
  v1::CreateTokenResponse created;
  {
    grpc::ClientContext context;
    Authorize(&context);
    v1::CreateTokenRequest request;
    request.set_description("lab phones");
    ASSERT_TRUE(control_->CreateToken(&context, request, &created).ok());
  }
  {
    TestAgent agent(channel_);
    ASSERT_TRUE(agent.Send(TestAgent::Hello("agent-l", 1, created.token())));
    v1::CoordinatorMessage welcome;
    ASSERT_TRUE(agent.Read(&welcome));
    ASSERT_TRUE(welcome.has_welcome()) << welcome.DebugString();
    agent.Finish();
  }
  grpc::ClientContext context;
  Authorize(&context);
  v1::ListTokensResponse response;
  grpc::Status status = control_->ListTokens(&context, v1::ListTokensRequest(), &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(response.tokens_size(), 2);  // the seeded one, then the created one
  EXPECT_EQ(response.tokens(0).token_id().rfind("seed-", 0), 0u) << response.tokens(0).token_id();
  EXPECT_EQ(response.tokens(0).description(), "seeded at start");
  EXPECT_EQ(response.tokens(0).agents(), 0u);
  EXPECT_EQ(response.tokens(1).token_id(), created.token_id());
  EXPECT_EQ(response.tokens(1).description(), "lab phones");
  EXPECT_EQ(response.tokens(1).agents(), 1u);
  EXPECT_EQ(response.tokens(1).revoked_unix_ns(), 0);
  EXPECT_GT(response.tokens(1).created_unix_ns(), 0);
  EXPECT_EQ(response.DebugString().find(created.token()), std::string::npos);
  EXPECT_EQ(response.DebugString().find(kEnrollToken), std::string::npos);
}

TEST_P(ServiceTest, RunIdPrefixesAcceptedByEveryRunCall) {
  TestAgent agent(channel_);
  ASSERT_TRUE(agent.Send(TestAgent::Hello("agent-p", 1, kEnrollToken)));
  v1::CoordinatorMessage welcome;
  ASSERT_TRUE(agent.Read(&welcome));
  ASSERT_TRUE(welcome.has_welcome()) << welcome.DebugString();
  v1::SubmitRunResponse submitted;
  {
    grpc::ClientContext context;
    Authorize(&context);
    v1::SubmitRunRequest submit;
    *submit.mutable_plan() = SmallPlan();
    grpc::Status status = control_->SubmitRun(&context, submit, &submitted);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }
  const std::string run_id = submitted.run().run_id();
  std::string upper_prefix = run_id.substr(0, 8);
  for (char& c : upper_prefix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  {
    grpc::ClientContext context;
    Authorize(&context);
    v1::GetRunRequest request;
    request.set_run_id(run_id.substr(0, 8));
    v1::RunInfo run;
    grpc::Status status = control_->GetRun(&context, request, &run);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(run.run_id(), run_id);
  }
  {
    grpc::ClientContext context;
    Authorize(&context);
    v1::CancelRunRequest request;
    request.set_run_id(upper_prefix);
    v1::RunInfo run;
    grpc::Status status = control_->CancelRun(&context, request, &run);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(run.run_id(), run_id);
    EXPECT_EQ(run.status(), "cancelled");
  }
  {
    grpc::ClientContext context;
    Authorize(&context);
    v1::ExportResultsRequest request;
    request.set_run_id(run_id.substr(0, 6));
    v1::ExportResultsResponse exported;
    grpc::Status status = control_->ExportResults(&context, request, &exported);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(exported.run().run_id(), run_id);
  }
  {
    grpc::ClientContext context;
    Authorize(&context);
    v1::WatchRunRequest request;
    request.set_run_id(run_id.substr(0, 13));
    auto reader = control_->WatchRun(&context, request);
    v1::RunInfo info, last;
    while (reader->Read(&info)) last = info;
    grpc::Status status = reader->Finish();
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(last.run_id(), run_id);
    EXPECT_EQ(last.status(), "cancelled");
  }
  // Bad prefixes: too short or not hex is InvalidArgument naming run_id, also for a watch.
  {
    grpc::ClientContext context;
    Authorize(&context);
    v1::GetRunRequest request;
    request.set_run_id(run_id.substr(0, 5));
    v1::RunInfo run;
    grpc::Status status = control_->GetRun(&context, request, &run);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(status.error_message().find("run_id: "), std::string::npos) << status.error_message();
  }
  {
    grpc::ClientContext context;
    Authorize(&context);
    v1::WatchRunRequest request;
    request.set_run_id("zzzzzzzz");
    auto reader = control_->WatchRun(&context, request);
    v1::RunInfo info;
    EXPECT_FALSE(reader->Read(&info));
    grpc::Status status = reader->Finish();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(status.error_message().find("not a hex digit"), std::string::npos) << status.error_message();
  }
  {  // No run has this prefix (the only run's id starts differently).
    const std::string other = run_id[0] == 'f' ? "eeeeee" : "ffffff";
    grpc::ClientContext context;
    Authorize(&context);
    v1::CancelRunRequest request;
    request.set_run_id(other);
    v1::RunInfo run;
    grpc::Status status = control_->CancelRun(&context, request, &run);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
    EXPECT_EQ(status.error_message(), "no run with id prefix " + other);
  }
  agent.Finish();
}

// A plan of `strategies` direct cases (labels of 60 characters) on arithmetic: about 74
// bytes serialized per strategy.
v1::Plan WidePlan(int strategies) {
  v1::Plan plan;
  plan.set_name("wide");
  v1::Matrix* m = plan.add_matrix();
  for (int i = 0; i < strategies; ++i) {
    v1::StrategySpec* s = m->add_strategies();
    s->set_name("direct");
    s->set_label(absl::StrFormat("s%06d_%s", i, std::string(52, 'x')));
  }
  m->add_workloads("arithmetic");
  m->mutable_batch()->set_tasks(1);
  return plan;
}

TEST(JobAssignmentBytesTest, IsTheSizeOfTheLargestAssignmentMessage) {
  for (const v1::Plan& plan : {SmallPlan(), WidePlan(1000), WidePlan(70000)}) {
    for (const std::string& filter : {std::string(), std::string(1000, 'f')}) {
      v1::CoordinatorMessage message;
      v1::JobAssignment* a = message.mutable_assignment();
      a->set_job_id("ffffffff-ffff-4fff-bfff-ffffffffffff");
      a->set_run_id("ffffffff-ffff-4fff-bfff-ffffffffffff");
      *a->mutable_plan() = plan;
      a->set_quick(true);
      a->set_filter(filter);
      a->set_attempt(std::numeric_limits<uint32_t>::max());
      EXPECT_EQ(JobAssignmentBytes(plan, true, filter), message.ByteSizeLong()) << plan.matrix(0).strategies_size();
    }
  }
}

TEST(CheckPlanDeliverableTest, RefusesAnAssignmentOverTheLimitNamingSizeAndLimit) {
  const v1::Plan plan = WidePlan(70000);  // ~5 MiB: over gRPC's 4 MiB default
  const size_t bytes = JobAssignmentBytes(plan, false, "");
  ASSERT_GT(bytes, size_t{4} << 20);
  EXPECT_TRUE(CheckPlanDeliverable(plan, false, "", "plan").ok());  // the agent stream's real limit
  EXPECT_TRUE(CheckPlanDeliverable(plan, false, "", "plan", bytes).ok());
  absl::Status refused = CheckPlanDeliverable(plan, false, "", "plan", size_t{4} << 20);
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(refused.message(),
            absl::StrCat("plan: a job of this plan is ", bytes,
                         " bytes serialized, over the agent stream's message "
                         "limit of 4 MiB (4194304 bytes): no agent could receive it; split the plan"));
  refused = CheckPlanDeliverable(plan, false, "", "plan", bytes - 1);
  EXPECT_NE(refused.message().find(absl::StrCat(bytes - 1, " bytes)")), std::string::npos) << refused;
  // Both ends of the agent stream carry what the check lets through.
  EXPECT_EQ(MaxJobAssignmentBytes(), static_cast<size_t>(std::min(kCoordinatorMaxMessageBytes, kAgentMaxMessageBytes)));
}

TEST(MessageLimitsTest, TheLargestResultFitsEveryEnd) {
  // A result at the repetition cap, every sample at the widest varint, and generous
  // strings: what an agent may send, the coordinator store and the CLI read back.
  v1::AgentMessage message;
  v1::CaseResult* r = message.mutable_result();
  r->set_result_id(std::string(36, 'f'));
  r->set_run_id(std::string(36, 'f'));
  r->set_job_id(std::string(36, 'f'));
  r->set_message(std::string(64 << 10, 'm'));
  for (int64_t i = 0; i < 1'000'000; ++i) r->add_samples_ns(std::numeric_limits<int64_t>::min());
  for (uint32_t cpu = 0; cpu < 4096; ++cpu) r->add_cpus_used(cpu);
  const size_t bytes = message.ByteSizeLong();
  EXPECT_LT(bytes, static_cast<size_t>(kAgentMaxMessageBytes) / 4);
  EXPECT_LT(bytes, static_cast<size_t>(kCoordinatorMaxMessageBytes) / 4);
  EXPECT_LT(bytes, static_cast<size_t>(kCliMaxMessageBytes) / 4);
  EXPECT_EQ(FormatMessageLimit(64 << 20), "64 MiB");
  EXPECT_EQ(FormatMessageLimit(1000), "1000 bytes");
}

TEST(PageResultsTest, PagesAreBoundedByBytesAndALargerResultTravelsAlone) {
  store::ResultExportIndex index;
  EXPECT_EQ(PageResults(index, 1000).size(), 1u);  // no results: one page (run and hosts)
  EXPECT_EQ(PageResults(index, 1000)[0].end, 0u);
  for (size_t bytes : {400, 400, 400, 5000, 10, 990}) index.results.push_back({"id", bytes});
  const std::vector<ResultPage> pages = PageResults(index, 1000);
  ASSERT_EQ(pages.size(), 5u);
  // 400 + 400 (+3 bytes of tag and length each) fit 1000; a third does not.
  EXPECT_EQ(pages[0].begin, 0u);
  EXPECT_EQ(pages[0].end, 2u);
  EXPECT_EQ(pages[1].begin, 2u);
  EXPECT_EQ(pages[1].end, 3u);
  EXPECT_EQ(pages[2].begin, 3u);  // 5000 alone
  EXPECT_EQ(pages[2].end, 4u);
  EXPECT_EQ(pages[3].begin, 4u);  // 10 + 990 + tags > 1000
  EXPECT_EQ(pages[3].end, 5u);
  EXPECT_EQ(pages[4].begin, 5u);
  EXPECT_EQ(pages[4].end, 6u);
}

// A run with ~13 MB of results (each of 4 large results beyond gRPC's 4 MiB-default
// client's reach in one message together), sent through the agent stream, reads back
// through StreamResults in pages that each fit a default client, byte-identical.
TEST_P(ServiceTest, ResultsOverFourMiBReadBackInPages) {
  TestAgent agent(channel_);
  ASSERT_TRUE(agent.Send(TestAgent::Hello("agent-big", 1, kEnrollToken)));
  v1::CoordinatorMessage welcome;
  ASSERT_TRUE(agent.Read(&welcome));
  ASSERT_TRUE(welcome.has_welcome()) << welcome.DebugString();
  v1::Plan plan = SmallPlan();
  plan.mutable_matrix(0)->add_strategies()->set_name("single_thread");
  plan.mutable_matrix(0)->add_workloads("collections");
  plan.mutable_matrix(0)->add_workloads("storage");
  const std::vector<v1::CaseSpec> cases = engine::ExpandCases(plan, false);
  ASSERT_EQ(cases.size(), 6u);
  v1::SubmitRunResponse submitted;
  {
    grpc::ClientContext context;
    Authorize(&context);
    v1::SubmitRunRequest submit;
    *submit.mutable_plan() = plan;
    submit.set_selector("name=agent-big");
    grpc::Status status = control_->SubmitRun(&context, submit, &submitted);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }
  v1::CoordinatorMessage assignment;
  ASSERT_TRUE(agent.Read(&assignment));
  ASSERT_TRUE(assignment.has_assignment()) << assignment.DebugString();
  const std::string job_id = assignment.assignment().job_id();
  v1::AgentMessage accepted;
  accepted.mutable_job_accepted()->set_job_id(job_id);
  ASSERT_TRUE(agent.Send(accepted));
  // Four cases at the repetition cap (3 MB each: samples of 1-2 ms), the two storage
  // cases small (adjacent in export order in any collation).
  std::map<std::string, std::string> sent;  // case id -> serialized result
  for (size_t i = 0; i < cases.size(); ++i) {
    v1::AgentMessage message;
    v1::CaseResult* r = message.mutable_result();
    r->set_result_id(absl::StrFormat("5555555%d-5555-4555-8555-555555555555", static_cast<int>(i)));
    r->set_run_id(submitted.run().run_id());
    r->set_job_id(job_id);
    *r->mutable_spec() = cases[i];
    r->set_status(v1::CASE_STATUS_OK);
    const int samples = cases[i].workload() == "storage" ? 100 : 1'000'000;
    for (int64_t k = 0; k < samples; ++k)
      r->add_samples_ns(1'000'000 + (k * 7919 + static_cast<int64_t>(i)) % 1'000'000);
    r->mutable_stats()->set_count(samples);
    r->mutable_stats()->set_min_ns(1'000'000);
    r->mutable_stats()->set_median_ns(1'500'000);
    r->mutable_stats()->set_max_ns(1'999'999);
    ASSERT_TRUE(agent.Send(message));
    v1::CoordinatorMessage ack;
    ASSERT_TRUE(agent.Read(&ack));
    ASSERT_TRUE(ack.has_ack()) << ack.DebugString();
    ASSERT_FALSE(ack.ack().rejected()) << ack.ack().message();
    sent[cases[i].case_id()] = r->SerializeAsString();
  }
  size_t total = 0;
  for (const auto& [id, bytes] : sent) total += bytes.size();
  ASSERT_GT(total, size_t{11} << 20);

  // The stream, on this test's channel (gRPC's default 4 MiB receive limit).
  grpc::ClientContext context;
  Authorize(&context);
  v1::ExportResultsRequest request;
  request.set_run_id(submitted.run().run_id().substr(0, 8));
  auto reader = control_->StreamResults(&context, request);
  v1::ExportResultsResponse page, merged;
  int pages = 0;
  while (reader->Read(&page)) {
    EXPECT_EQ(page.has_run(), pages == 0) << "page " << pages;
    EXPECT_EQ(page.hosts_size(), pages == 0 ? 1 : 0) << "page " << pages;
    EXPECT_GE(page.results_size(), 1) << "page " << pages;
    // Pages of small results stay under the page size; a large result travels alone.
    if (page.results_size() > 1) EXPECT_LE(page.ByteSizeLong(), kResultPageBytes + 4096);
    merged.MergeFrom(page);
    ++pages;
  }
  grpc::Status status = reader->Finish();
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(pages, 5);  // four large results alone, the two small ones together
  EXPECT_EQ(merged.run().run_id(), submitted.run().run_id());
  EXPECT_EQ(merged.hosts().count("agent-big"), 1u);
  ASSERT_EQ(merged.results_size(), 6);
  std::set<std::string> seen;
  for (const v1::CaseResult& r : merged.results()) {
    EXPECT_TRUE(seen.insert(r.spec().case_id()).second) << r.spec().case_id();
    EXPECT_EQ(r.SerializeAsString(), sent[r.spec().case_id()]) << r.spec().case_id();
  }

  // The unary ExportResults answers the same in one message, to a client that accepts it.
  grpc::ChannelArguments arguments;
  arguments.SetMaxReceiveMessageSize(kCliMaxMessageBytes);
  auto large = v1::ControlService::NewStub(grpc::CreateCustomChannel(
      "127.0.0.1:" + std::to_string(coordinator_->port()), grpc::InsecureChannelCredentials(), arguments));
  v1::ExportResultsResponse exported;
  {
    grpc::ClientContext unary;
    Authorize(&unary);
    status = large->ExportResults(&unary, request, &exported);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }
  EXPECT_EQ(exported.SerializeAsString(), merged.SerializeAsString());

  // One stored result grown past the coordinator's message limit (in the database: no
  // agent could send it): the unary answer is refused naming the limit, from the stored
  // sizes (the grown blob is no CaseResult; it is not loaded). PostgreSQL only: only SQL
  // can store a result no agent could send.
  if (db_->has_sql()) {
    pqxx::connection conn(db_->uri());
    pqxx::work txn(conn);
    txn.exec_params("UPDATE case_results SET result = convert_to(repeat('x', $1), 'UTF8') WHERE result_id = $2::uuid",
                    kCoordinatorMaxMessageBytes, "55555550-5555-4555-8555-555555555555");
    txn.commit();
    grpc::ClientContext unary;
    Authorize(&unary);
    status = large->ExportResults(&unary, request, &exported);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
    EXPECT_NE(status.error_message().find("over the 64 MiB limit of one ExportResults answer (67108864 bytes); "
                                          "read them with StreamResults"),
              std::string::npos)
        << status.error_message();
  }
  agent.Finish();
}

TEST_P(ServiceTest, NightlyScheduleSeededOncePerDatabase) {
  const std::string plan_file =
      (std::filesystem::temp_directory_path() / ("fleetmark_nightly_" + std::to_string(::getpid()) + ".txtpb"))
          .string();
  {
    std::string text;
    ASSERT_TRUE(google::protobuf::TextFormat::PrintToString(SmallPlan(), &text));
    std::ofstream(plan_file) << text;
  }
  auto schedules = [&]() {
    grpc::ClientContext context;
    Authorize(&context);
    v1::ListSchedulesResponse response;
    grpc::Status status = control_->ListSchedules(&context, v1::ListSchedulesRequest(), &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response;
  };
  CoordinatorOptions options = Options();
  options.nightly_plan_file = plan_file;
  auto restart = [&](const std::string& cron) {
    coordinator_.reset();
    options.nightly_cron = cron;
    StartCoordinator(options);
  };

  restart("0 2 * * *");
  ASSERT_EQ(schedules().schedules_size(), 1);
  EXPECT_EQ(schedules().schedules(0).name(), "nightly");
  EXPECT_EQ(schedules().schedules(0).plan().name(), "small");
  restart("30 3 * * *");  // flags changed: the schedule follows them
  ASSERT_EQ(schedules().schedules_size(), 1);
  EXPECT_EQ(schedules().schedules(0).cron(), "30 3 * * *");
  {
    grpc::ClientContext context;
    Authorize(&context);
    v1::DeleteScheduleRequest request;
    request.set_name("nightly");
    v1::Empty empty;
    ASSERT_TRUE(control_->DeleteSchedule(&context, request, &empty).ok());
  }
  // A user's delete survives the next start, which says how to re-create it.
  ::testing::internal::CaptureStderr();
  restart("30 3 * * *");
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(schedules().schedules_size(), 0);
  EXPECT_NE(log.find("schedule \"nightly\" was deleted from this database"), std::string::npos) << log;
  EXPECT_NE(log.find("fleetmark schedules create nightly " + plan_file + " --cron '30 3 * * *'"), std::string::npos)
      << log;

  // Two coordinators starting at once on a fresh database: both start, one schedule.
  TestStoreDatabase fresh(GetParam());
  ASSERT_TRUE(fresh.ready()) << fresh.error();
  CoordinatorOptions fresh_options = Options(&fresh);
  fresh_options.nightly_plan_file = plan_file;
  std::vector<absl::StatusOr<std::unique_ptr<Coordinator>>> started(2);
  std::vector<std::thread> threads;
  for (auto& slot : started)
    threads.emplace_back([&slot, &fresh_options] { slot = Coordinator::Start(fresh_options); });
  for (auto& t : threads) t.join();
  for (const auto& c : started) ASSERT_TRUE(c.ok()) << c.status();
  started.clear();
  coordinator_.reset();
  StartCoordinator(Options(&fresh));
  ASSERT_EQ(schedules().schedules_size(), 1);
  EXPECT_EQ(schedules().schedules(0).cron(), "0 2 * * *");
  coordinator_.reset();  // before `fresh` is dropped
  std::remove(plan_file.c_str());
}

// Issue 10 item 6: a name belongs to its credential. With two coordinators on one
// database, an enrollment under the name of an agent online on the other one, or
// offline, is refused (not retryable, naming `agents remove`); the agent itself keeps
// its id and reconnects with its credential through either coordinator.
TEST_P(ServiceTest, EnrollingATakenNameIsRefusedThroughEveryCoordinatorOnlineOrOffline) {
  CoordinatorOptions second_options = Options();
  second_options.coordinator_id = "coordinator-2";
  auto second = Coordinator::Start(second_options);
  ASSERT_TRUE(second.ok()) << second.status();
  auto second_channel =
      grpc::CreateChannel("127.0.0.1:" + std::to_string((*second)->port()), grpc::InsecureChannelCredentials());
  auto real = std::make_unique<TestAgent>(channel_);
  const TestAgent::Answer enrolled = real->Greet(TestAgent::Hello("rel-a2", 1, kEnrollToken));
  ASSERT_FALSE(enrolled.agent_id.empty()) << enrolled.refusal;
  auto expect_refused = [&](const std::shared_ptr<grpc::Channel>& channel, const std::string& when) {
    TestAgent intruder(channel);
    const TestAgent::Answer answer = intruder.Greet(TestAgent::Hello("rel-a2", 1, kEnrollToken));
    EXPECT_TRUE(answer.agent_id.empty()) << when << ": welcomed as " << answer.agent_id;
    EXPECT_FALSE(answer.retryable) << when;
    EXPECT_EQ(answer.status.error_code(), grpc::StatusCode::ALREADY_EXISTS) << when;
    EXPECT_NE(answer.refusal.find("agent name \"rel-a2\" is taken by enrolled agent " + enrolled.agent_id),
              std::string::npos)
        << when << ": " << answer.refusal;
    EXPECT_NE(answer.refusal.find("fleetmark agents remove rel-a2"), std::string::npos) << when;
  };
  expect_refused(second_channel, "online on the other coordinator");
  expect_refused(channel_, "online on this coordinator");
  std::vector<v1::AgentInfo> agents = Agents();
  ASSERT_EQ(agents.size(), 1u);
  EXPECT_EQ(agents[0].agent_id(), enrolled.agent_id);
  EXPECT_EQ(agents[0].state(), "online");

  real->Finish();
  real.reset();
  for (absl::Time deadline = absl::Now() + absl::Seconds(30); absl::Now() < deadline;) {
    if (Agents()[0].state() == "offline") break;
    absl::SleepFor(absl::Milliseconds(100));
  }
  ASSERT_EQ(Agents()[0].state(), "offline");
  expect_refused(second_channel, "offline");
  expect_refused(channel_, "offline");

  // The real agent's restart (its stored credential) is the same agent, anywhere.
  for (const auto& channel : {second_channel, channel_}) {
    TestAgent back(channel);
    const TestAgent::Answer again = back.Greet(TestAgent::Hello("rel-a2", 1, "", enrolled.credential));
    EXPECT_EQ(again.agent_id, enrolled.agent_id) << again.refusal;
    EXPECT_EQ(again.credential, enrolled.credential);
    back.Finish();
    // One identity has one live session fleet-wide (issue 32): the next restart, on the
    // other coordinator, is welcomed once this session's clean end is recorded.
    for (absl::Time deadline = absl::Now() + absl::Seconds(30); absl::Now() < deadline;) {
      if (Agents()[0].state() == "offline") break;
      absl::SleepFor(absl::Milliseconds(100));
    }
    ASSERT_EQ(Agents()[0].state(), "offline");
  }
  EXPECT_EQ(Agents().size(), 1u);
}

// An agent enrolled under a token that is then revoked cannot come back by enrolling
// its name again under another token: refused until an operator removes it; then the
// enrollment is a new agent (new id) and the old credential stays refused.
TEST_P(ServiceTest, RevokedTokensAgentCannotReEnrollUntilRemoved) {
  v1::CreateTokenResponse first, second;
  for (v1::CreateTokenResponse* token : {&first, &second}) {
    grpc::ClientContext context;
    Authorize(&context);
    ASSERT_TRUE(control_->CreateToken(&context, v1::CreateTokenRequest(), token).ok());
  }
  TestAgent::Answer enrolled;
  {
    TestAgent box(channel_);
    enrolled = box.Greet(TestAgent::Hello("rev-box", 1, first.token()));
    ASSERT_FALSE(enrolled.agent_id.empty()) << enrolled.refusal;
    box.Finish();
  }
  {
    grpc::ClientContext context;
    Authorize(&context);
    v1::RevokeTokenRequest request;
    request.set_token_id(first.token_id());
    v1::Empty empty;
    ASSERT_TRUE(control_->RevokeToken(&context, request, &empty).ok());
  }
  {
    TestAgent box(channel_);
    const TestAgent::Answer answer = box.Greet(TestAgent::Hello("rev-box", 1, second.token()));
    EXPECT_TRUE(answer.agent_id.empty()) << "came back as " << answer.agent_id << " despite the revocation";
    EXPECT_EQ(answer.status.error_code(), grpc::StatusCode::ALREADY_EXISTS);
    EXPECT_FALSE(answer.retryable);
    EXPECT_NE(answer.refusal.find("fleetmark agents remove rev-box"), std::string::npos) << answer.refusal;
  }
  v1::RemoveAgentResponse removed;
  grpc::Status status = RemoveAgent("rev-box", &removed);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(removed.agent_id(), enrolled.agent_id);
  {
    TestAgent box(channel_);
    const TestAgent::Answer answer = box.Greet(TestAgent::Hello("rev-box", 1, "", enrolled.credential));
    EXPECT_TRUE(answer.agent_id.empty());
    EXPECT_EQ(answer.status.error_code(), grpc::StatusCode::UNAUTHENTICATED) << answer.refusal;
  }
  {
    TestAgent box(channel_);
    const TestAgent::Answer answer = box.Greet(TestAgent::Hello("rev-box", 1, second.token()));
    EXPECT_FALSE(answer.agent_id.empty()) << answer.refusal;
    EXPECT_NE(answer.agent_id, enrolled.agent_id);
    box.Finish();
  }
}

// `agents remove` on a connected agent that has results: its stream is ended (not
// retryable), its credential refused, its unfinished job failed; the results stay
// readable; it is listed only with include_removed and never selected; the name
// enrolls again as a new agent. Removing an unknown name is NOT_FOUND.
TEST_P(ServiceTest, RemovedAgentIsDisconnectedKeepsItsResultsAndItsNameEnrollsAgain) {
  TestAgent gone(channel_);
  const TestAgent::Answer enrolled = gone.Greet(TestAgent::Hello("gone", 1, kEnrollToken));
  ASSERT_FALSE(enrolled.agent_id.empty()) << enrolled.refusal;
  v1::SubmitRunResponse submitted;
  {
    grpc::ClientContext context;
    Authorize(&context);
    v1::SubmitRunRequest submit;
    *submit.mutable_plan() = SmallPlan();
    submit.set_selector("name=gone");
    ASSERT_TRUE(control_->SubmitRun(&context, submit, &submitted).ok());
  }
  v1::CoordinatorMessage assignment;
  ASSERT_TRUE(gone.Read(&assignment));
  ASSERT_TRUE(assignment.has_assignment()) << assignment.DebugString();
  const std::string job_id = assignment.assignment().job_id();
  v1::AgentMessage accepted;
  accepted.mutable_job_accepted()->set_job_id(job_id);
  ASSERT_TRUE(gone.Send(accepted));
  v1::AgentMessage result;
  v1::CaseResult* r = result.mutable_result();
  r->set_result_id("77777777-7777-4777-8777-777777777777");
  r->set_job_id(job_id);
  r->mutable_spec()->set_case_id("batch/arithmetic/blocking/direct/any");
  r->mutable_stats()->set_median_ns(1000);
  ASSERT_TRUE(gone.Send(result));
  v1::CoordinatorMessage ack;
  ASSERT_TRUE(gone.Read(&ack));
  ASSERT_TRUE(ack.has_ack()) << ack.DebugString();
  ASSERT_FALSE(ack.ack().rejected()) << ack.ack().message();

  v1::RemoveAgentResponse removed;
  grpc::Status status = RemoveAgent("gone", &removed);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(removed.agent_id(), enrolled.agent_id);
  ASSERT_EQ(removed.failed_jobs_size(), 1);
  EXPECT_EQ(removed.failed_jobs(0), job_id);
  std::string refusal;
  bool retryable = true;
  v1::CoordinatorMessage m;
  while (gone.Read(&m)) {
    if (m.has_refusal()) {
      refusal = m.refusal().reason();
      retryable = m.refusal().retryable();
    }
  }
  EXPECT_EQ(refusal, store::kAgentRemovedReason);
  EXPECT_FALSE(retryable);
  EXPECT_EQ(RemoveAgent("gone", &removed).error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(RemoveAgent("never-was", &removed).error_code(), grpc::StatusCode::NOT_FOUND);
  {
    TestAgent back(channel_);
    const TestAgent::Answer answer = back.Greet(TestAgent::Hello("gone", 1, "", enrolled.credential));
    EXPECT_TRUE(answer.agent_id.empty()) << "a removed agent's credential still works";
    EXPECT_FALSE(answer.retryable);
  }
  EXPECT_TRUE(Agents().empty());
  std::vector<v1::AgentInfo> all = Agents(/*all=*/true);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].state(), "removed");
  {  // Never selected.
    grpc::ClientContext context;
    Authorize(&context);
    v1::SubmitRunRequest submit;
    *submit.mutable_plan() = SmallPlan();
    v1::SubmitRunResponse none;
    EXPECT_EQ(control_->SubmitRun(&context, submit, &none).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  }
  {  // Its run ended (the job failed as infrastructure) and its result is kept.
    grpc::ClientContext context;
    Authorize(&context);
    v1::ExportResultsRequest request;
    request.set_run_id(submitted.run().run_id());
    v1::ExportResultsResponse exported;
    ASSERT_TRUE(control_->ExportResults(&context, request, &exported).ok());
    EXPECT_EQ(exported.run().status(), "failed");
    ASSERT_EQ(exported.results_size(), 1);
    EXPECT_EQ(exported.results(0).result_id(), r->result_id());
    ASSERT_EQ(exported.run().jobs_size(), 1);
    EXPECT_EQ(exported.run().jobs(0).agent_name(), "gone");
    EXPECT_NE(exported.run().jobs(0).message().find("removed"), std::string::npos);
  }
  TestAgent reborn(channel_);
  const TestAgent::Answer again = reborn.Greet(TestAgent::Hello("gone", 1, kEnrollToken));
  ASSERT_FALSE(again.agent_id.empty()) << again.refusal;
  EXPECT_NE(again.agent_id, enrolled.agent_id);
  all = Agents(/*all=*/true);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].agent_id(), again.agent_id);
  EXPECT_EQ(all[1].agent_id(), enrolled.agent_id);
  reborn.Finish();
}

// Issue 10 item 7: every string of a hello is checked (UTF-8, length, control
// characters), nested host fields and map entries included, with a refusal that names
// the field and is not retryable — never "database unavailable, retry later".
TEST_P(ServiceTest, HelloStringsAreCheckedAndRefusalsNameTheField) {
  struct Case {
    std::string what;
    std::function<void(v1::Hello*)> mutate;
    std::string field;
  };
  const std::vector<Case> cases = {
      {"NUL in a label", [](v1::Hello* h) { (*h->mutable_labels())["rack"] = std::string("a\0b", 3); },
       "hello.labels[\"rack\"]"},
      {"escape sequence in the CPU model",
       [](v1::Hello* h) { h->mutable_host()->set_cpu_model("\x1b]0;pwned\x07\x1b[1A"); }, "hello.host.cpu_model"},
      {"NUL in the CPU model", [](v1::Hello* h) { h->mutable_host()->set_cpu_model(std::string("Xeon\0evil", 9)); },
       "hello.host.cpu_model"},
      {"10000-character label", [](v1::Hello* h) { (*h->mutable_labels())["rack"] = std::string(10000, 'x'); },
       "hello.labels[\"rack\"]: at most 63 bytes of printable UTF-8 (no control characters), got 10000 bytes"},
      {"10000-character host field", [](v1::Hello* h) { h->mutable_host()->set_os(std::string(10000, 'x')); },
       "hello.host.os"},
      {"control character in a label key", [](v1::Hello* h) { (*h->mutable_labels())["r\x1bk"] = "a"; },
       "hello.labels key \"r\\x1bk\""},
      {"C1 control in a core kind", [](v1::Hello* h) { h->mutable_host()->add_core_kinds()->set_name("P\xc2\x9b"); },
       "hello.host.core_kinds[0].name"},
      {"newline in the engine version", [](v1::Hello* h) { h->set_engine_version("0.1\n"); }, "hello.engine_version"},
      {"too many labels",
       [](v1::Hello* h) {
         for (int i = 0; i < 64; ++i) (*h->mutable_labels())["k" + std::to_string(i)] = "v";
       },
       "hello.labels: at most 64 entries, got 65"},  // with "rack"
  };
  for (const Case& c : cases) {
    v1::AgentMessage hello = TestAgent::Hello("checked", 1, kEnrollToken);
    c.mutate(hello.mutable_hello());
    TestAgent agent(channel_);
    const TestAgent::Answer answer = agent.Greet(hello);
    EXPECT_TRUE(answer.agent_id.empty()) << c.what << ": welcomed";
    EXPECT_EQ(answer.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << c.what << ": " << answer.refusal;
    EXPECT_FALSE(answer.retryable) << c.what;
    EXPECT_NE(answer.refusal.find("hello refused: " + c.field), std::string::npos) << c.what << ": " << answer.refusal;
    EXPECT_EQ(answer.refusal.find("unavailable"), std::string::npos) << c.what << ": " << answer.refusal;
    for (char ch : answer.refusal) EXPECT_TRUE(ch >= 0x20 && ch != 0x7f) << c.what << ": raw control in the refusal";
  }
  EXPECT_TRUE(Agents(/*all=*/true).empty()) << "a refused hello registered an agent";
  // HTML is text like any other: stored as sent (the web view escapes it), and a host
  // with every field at its limit is welcome.
  v1::AgentMessage fine = TestAgent::Hello("fine", 1, kEnrollToken);
  fine.mutable_hello()->mutable_host()->set_cpu_model("<b>Cortex</b> & \"A76\" µ");
  fine.mutable_hello()->mutable_host()->set_os(std::string(256, 'o'));
  (*fine.mutable_hello()->mutable_labels())[std::string(63, 'k')] = std::string(63, 'v');
  TestAgent agent(channel_);
  const TestAgent::Answer welcomed = agent.Greet(fine);
  EXPECT_FALSE(welcomed.agent_id.empty()) << welcomed.refusal;
  ASSERT_EQ(Agents().size(), 1u);
  EXPECT_EQ(Agents()[0].host().cpu_model(), "<b>Cortex</b> & \"A76\" µ");
  agent.Finish();
}

INSTANTIATE_TEST_SUITE_P(Stores, ServiceTest, CoordinatorBackends(), CoordinatorBackendName);

// The memory store's options (CheckCoordinatorOptions): no PostgreSQL URI beside it, a
// loopback address whatever TLS or allow_insecure_remote say; a memory database only
// with it; PostgreSQL still needs its URI.
TEST(CoordinatorOptionsTest, TheMemoryStoreServesOneMachineAndTakesNoDatabaseUri) {
  CoordinatorOptions memory;
  memory.store = StoreBackend::kMemory;
  memory.listen_address = "127.0.0.1:0";
  EXPECT_TRUE(CheckCoordinatorOptions(memory).ok()) << CheckCoordinatorOptions(memory);
  memory.listen_address = "unix:/tmp/fleetmark.sock";
  EXPECT_TRUE(CheckCoordinatorOptions(memory).ok()) << CheckCoordinatorOptions(memory);

  CoordinatorOptions both = memory;
  both.database_uri = "postgresql://x@127.0.0.1:1/x";
  EXPECT_EQ(CheckCoordinatorOptions(both).message(),
            "store: the memory store takes no database_uri or read_database_uri (give one store)");
  both = memory;
  both.read_database_uri = "postgresql://x@127.0.0.1:1/y";
  EXPECT_EQ(CheckCoordinatorOptions(both).code(), absl::StatusCode::kInvalidArgument);

  CoordinatorOptions remote = memory;
  remote.listen_address = "0.0.0.0:7443";
  remote.allow_insecure_remote = true;
  const absl::Status refused = CheckCoordinatorOptions(remote);
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(refused.message(),
                               "listen_address \"0.0.0.0:7443\": the memory store serves loopback (127.x, localhost, "
                               "[::1] or unix:) only"))
      << refused;

  CoordinatorOptions postgres;
  postgres.listen_address = "127.0.0.1:0";
  EXPECT_EQ(CheckCoordinatorOptions(postgres).message(), "database_uri: required");
  postgres.database_uri = "postgresql://x@127.0.0.1:1/x";
  EXPECT_TRUE(CheckCoordinatorOptions(postgres).ok());
  postgres.memory_database = std::make_shared<store::MemoryDatabase>();
  EXPECT_EQ(CheckCoordinatorOptions(postgres).message(),
            "memory_database: only with the memory store (store = kMemory)");
}

}  // namespace
}  // namespace fleetmark::service
