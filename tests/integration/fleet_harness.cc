#include "tests/integration/fleet_harness.h"

#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <tuple>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "engine/common/message_limits.h"
#include "engine/common/status_macros.h"
#include "google/protobuf/text_format.h"

namespace fleetmark::testing {
namespace {

absl::Status FromGrpc(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
}

std::string RandomSuffix() {
  std::random_device device;
  std::mt19937_64 gen(device());
  return absl::StrCat(absl::Hex(gen(), absl::kZeroPad16));
}

absl::Status WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text << "\n";
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::string PgBinDir() {
  std::string best;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/usr/lib/postgresql", ec)) {
    const std::string bin = entry.path().string() + "/bin";
    if (std::filesystem::exists(bin + "/pg_ctl") && bin > best) best = bin;
  }
  return best;
}

}  // namespace

std::string MakeTempDir(const std::string& prefix) {
  std::string pattern = absl::StrCat("/tmp/", prefix, ".XXXXXX");
  if (mkdtemp(pattern.data()) == nullptr) return "";
  return pattern;
}

void RemoveTree(const std::string& dir) {
  std::error_code ec;
  if (!dir.empty()) std::filesystem::remove_all(dir, ec);
}

bool WaitUntil(const std::function<bool()>& done, absl::Duration timeout, absl::Duration poll) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    if (done()) return true;
    if (absl::Now() >= deadline) return false;
    absl::SleepFor(poll);
  }
}

int Occurrences(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++n;
  return n;
}

absl::StatusOr<std::string> Psql(const std::string& uri, const std::string& sql) {
  FLEETMARK_ASSIGN_OR_RETURN(
      std::string out,
      RunCommand({"psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", uri, "-c", sql}, absl::Seconds(60)));
  return std::string(absl::StripAsciiWhitespace(out));
}

absl::StatusOr<int64_t> PsqlInt(const std::string& uri, const std::string& sql) {
  FLEETMARK_ASSIGN_OR_RETURN(std::string out, Psql(uri, sql));
  int64_t value = 0;
  if (!absl::SimpleAtoi(out, &value)) {
    return absl::InternalError(absl::StrCat("expected an integer from \"", sql, "\", got \"", out, "\""));
  }
  return value;
}

std::string TestPgUri() {
  const char* uri = std::getenv("FLEETMARK_TEST_PG_URI");
  return uri == nullptr ? "" : uri;
}

bool PgRequired() {
  const char* required = std::getenv("FLEETMARK_TEST_REQUIRE_PG");
  return required != nullptr && *required != '\0' && std::string(required) != "0";
}

// ---- TestDatabase --------------------------------------------------------------------

absl::StatusOr<std::unique_ptr<TestDatabase>> TestDatabase::Create(const std::string& server_uri) {
  // postgresql://user@host:port/db?params -> swap the database name.
  const size_t scheme = server_uri.find("://");
  const size_t slash = server_uri.find('/', scheme == std::string::npos ? 0 : scheme + 3);
  if (scheme == std::string::npos || slash == std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("FLEETMARK_TEST_PG_URI: expected postgresql://user@host:port/db, got ", server_uri));
  }
  const size_t query = server_uri.find('?', slash);
  const std::string params = query == std::string::npos ? "" : server_uri.substr(query);
  const std::string name = absl::StrCat("fm_it_", RandomSuffix());
  const std::string admin_uri = absl::StrCat(server_uri.substr(0, slash), "/postgres", params);
  FLEETMARK_RETURN_IF_ERROR(Psql(admin_uri, absl::StrCat("CREATE DATABASE ", name)).status());
  return std::unique_ptr<TestDatabase>(
      new TestDatabase(admin_uri, name, absl::StrCat(server_uri.substr(0, slash), "/", name, params)));
}

TestDatabase::~TestDatabase() {
  (void)Psql(admin_uri_, absl::StrCat("DROP DATABASE IF EXISTS ", name_, " WITH (FORCE)"));
}

// ---- PrivatePostgres -----------------------------------------------------------------

absl::StatusOr<std::unique_ptr<PrivatePostgres>> PrivatePostgres::Start() {
  const std::string dir = MakeTempDir("fleetmark-it-pg");
  if (dir.empty()) return absl::InternalError("mkdtemp failed");
  FLEETMARK_ASSIGN_OR_RETURN(std::string uri,
                             RunCommand({FLEETMARK_SOURCE_DIR "/deploy/pg.sh", "start", dir}, absl::Seconds(120)));
  return std::unique_ptr<PrivatePostgres>(new PrivatePostgres(dir, std::string(absl::StripAsciiWhitespace(uri))));
}

PrivatePostgres::~PrivatePostgres() {
  (void)RunCommand({FLEETMARK_SOURCE_DIR "/deploy/pg.sh", "stop", dir_}, absl::Seconds(60));
  RemoveTree(dir_);
}

absl::Status PrivatePostgres::Stop() {
  return RunCommand({FLEETMARK_SOURCE_DIR "/deploy/pg.sh", "stop", dir_}, absl::Seconds(60)).status();
}

absl::StatusOr<BenchDatabase> OpenBenchDatabase() {
  BenchDatabase opened;
  if (!TestPgUri().empty()) {
    auto created = TestDatabase::Create(TestPgUri());
    if (!created.ok()) return created.status();
    opened.database = *std::move(created);
    opened.uri = opened.database->uri();
    return opened;
  }
  auto started = PrivatePostgres::Start();
  if (!started.ok()) return started.status();
  opened.private_pg = *std::move(started);
  opened.uri = opened.private_pg->uri();
  return opened;
}

absl::Status PrivatePostgres::StartAgain() {
  // deploy/pg.sh start would pick a new free port; the coordinator keeps its URI, so
  // start the same data directory on the recorded port with pg_ctl directly.
  const std::string port(absl::StripAsciiWhitespace(ReadFile(dir_ + "/port")));
  const std::string bin = PgBinDir();
  if (bin.empty()) return absl::NotFoundError("no /usr/lib/postgresql/*/bin/pg_ctl");
  std::vector<std::string> argv;
  if (geteuid() == 0) argv = {"runuser", "-u", "postgres", "--"};
  for (const std::string& a :
       {bin + "/pg_ctl", std::string("-D"), dir_ + "/data", std::string("-l"), dir_ + "/server.log", std::string("-w"),
        std::string("-t"), std::string("60"), std::string("-o"),
        absl::StrCat("-p ", port, " -k ", dir_, " -c listen_addresses=127.0.0.1 -c max_connections=200 -c fsync=on"),
        std::string("start")}) {
    argv.push_back(a);
  }
  return RunCommand(argv, absl::Seconds(90)).status();
}

// ---- CoordinatorProcess --------------------------------------------------------------

absl::StatusOr<std::unique_ptr<CoordinatorProcess>> CoordinatorProcess::Start(const std::string& dir,
                                                                              CoordinatorConfig config) {
  std::unique_ptr<CoordinatorProcess> coordinator(new CoordinatorProcess(dir, std::move(config)));
  coordinator->port_ = coordinator->config_.listen_port;
  FLEETMARK_RETURN_IF_ERROR(WriteFile(dir + "/admin_token", coordinator->config_.admin_token));
  FLEETMARK_RETURN_IF_ERROR(WriteFile(dir + "/enrollment_token", coordinator->config_.enrollment_token));
  FLEETMARK_RETURN_IF_ERROR(coordinator->Launch());
  return coordinator;
}

absl::Status CoordinatorProcess::Launch() {
  ++launches_;
  const std::string port_file = absl::StrCat(dir_, "/port.", launches_);
  std::vector<std::string> argv = {
      FLEETMARK_COORDINATOR_BIN,
      absl::StrCat("--listen_address=127.0.0.1:", port_),
      absl::StrCat("--port_file=", port_file),
      config_.memory_store ? std::string("--store=memory") : absl::StrCat("--database_uri=", config_.database_uri),
      absl::StrCat("--admin_token_file=", dir_, "/admin_token"),
      absl::StrCat("--enrollment_token_file=", dir_, "/enrollment_token"),
      config_.coordinator_id.empty() ? absl::StrCat("--coordinator_id=it-coordinator-", launches_)
                                     : absl::StrCat("--coordinator_id=", config_.coordinator_id),
      absl::StrCat("--heartbeat_interval=", absl::FormatDuration(config_.heartbeat_interval)),
      absl::StrCat("--job_lease=", absl::FormatDuration(config_.job_lease)),
      absl::StrCat("--sweep_interval=", absl::FormatDuration(config_.sweep_interval)),
      absl::StrCat("--max_attempts=", config_.max_attempts)};
  for (const std::string& flag : config_.extra_flags) argv.push_back(flag);
  argv.insert(argv.begin(), config_.command_prefix.begin(), config_.command_prefix.end());
  FLEETMARK_ASSIGN_OR_RETURN(process_, Subprocess::Start(argv, dir_ + "/coordinator.log"));
  int port = 0;
  const bool up = WaitUntil(
      [&] {
        std::string text(absl::StripAsciiWhitespace(ReadFile(port_file)));
        return (absl::SimpleAtoi(text, &port) && port > 0) || !process_->Running();
      },
      absl::Seconds(60), absl::Milliseconds(20));
  if (!up || port <= 0) {
    return absl::UnavailableError(
        absl::StrCat("coordinator did not start (", up ? "exited" : "timeout", "); log:\n", Log()));
  }
  port_ = port;
  return absl::OkStatus();
}

absl::StatusOr<int> WebViewPort(const CoordinatorProcess& coordinator, absl::Duration timeout) {
  const std::string kLine = "web view at http://";
  if (!WaitUntil([&] { return absl::StrContains(coordinator.Log(), kLine); }, timeout)) {
    return absl::DeadlineExceededError(absl::StrCat("no \"", kLine, "\" line in the coordinator's log"));
  }
  const std::string log = coordinator.Log();
  const size_t at = log.find(kLine) + kLine.size();
  const std::string host_port = log.substr(at, log.find('/', at) - at);
  int port = 0;
  if (!absl::SimpleAtoi(host_port.substr(host_port.rfind(':') + 1), &port)) {
    return absl::InternalError(absl::StrCat("web view address ", host_port, ": no port"));
  }
  return port;
}

absl::Status CoordinatorProcess::Restart() {
  if (process_ != nullptr && process_->Running()) {
    return absl::FailedPreconditionError("coordinator still running");
  }
  // The old port may linger briefly in TIME_WAIT-like states; retry binding.
  absl::Status status;
  for (int attempt = 0; attempt < 20; ++attempt) {
    status = Launch();
    if (status.ok()) return status;
    absl::SleepFor(absl::Milliseconds(250));
  }
  return status;
}

void CoordinatorProcess::Kill9() {
  if (process_ == nullptr) return;
  process_->Signal(SIGKILL);
  (void)process_->Wait(absl::Seconds(10));
}

std::string CoordinatorProcess::address() const { return absl::StrCat("127.0.0.1:", port_); }

std::string CoordinatorProcess::Log() const { return ReadFile(dir_ + "/coordinator.log"); }

// ---- AgentProcess --------------------------------------------------------------------

absl::StatusOr<std::unique_ptr<AgentProcess>> AgentProcess::Start(const std::string& base_dir,
                                                                  const std::string& coordinator, AgentConfig config) {
  const std::string dir = absl::StrCat(base_dir, "/agent-", config.name);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::InternalError(absl::StrCat("mkdir ", dir, ": ", ec.message()));
  std::unique_ptr<AgentProcess> agent(new AgentProcess(dir, coordinator, std::move(config)));
  agent->spool_dir_ = dir + "/spool";
  if (!agent->config_.token.empty()) {
    FLEETMARK_RETURN_IF_ERROR(WriteFile(dir + "/token", agent->config_.token));
  }
  FLEETMARK_RETURN_IF_ERROR(agent->Launch());
  return agent;
}

absl::StatusOr<std::unique_ptr<AgentProcess>> AgentProcess::StartWithCopiedCredential(
    const std::string& base_dir, const std::string& coordinator, const AgentProcess& original,
    std::vector<std::string> extra_flags) {
  const std::string spool = absl::StrCat(base_dir, "/agent-", original.name(), "/spool");
  const std::string credential = original.spool_dir() + "/credential";
  // Written once `original` is welcomed, shortly after it shows online.
  if (!WaitUntil([&] { return std::filesystem::exists(credential); }, absl::Seconds(30))) {
    return absl::DeadlineExceededError(absl::StrCat(original.name(), " stored no credential in 30 s"));
  }
  std::error_code ec;
  std::filesystem::create_directories(spool, ec);
  if (!ec) std::filesystem::copy_file(credential, spool + "/credential", ec);
  if (ec) return absl::InternalError(absl::StrCat("copy the credential of ", original.name(), ": ", ec.message()));
  AgentConfig config;
  config.name = original.name();
  config.extra_flags = std::move(extra_flags);
  return Start(base_dir, coordinator, std::move(config));
}

absl::Status AgentProcess::Launch() {
  ++launches_;
  std::vector<std::string> argv;
  for (const std::string& arg : config_.command) {
    argv.push_back(absl::StrReplaceAll(arg, {{"{dir}", dir_}}));
  }
  if (argv.empty()) argv.push_back(config_.binary);
  const std::string inside = config_.chroot_into_dir ? "" : dir_;  // the dir as the agent sees it
  for (std::string flag : {absl::StrCat("--coordinator=", coordinator_), absl::StrCat("--name=", config_.name),
                           absl::StrCat("--labels=", config_.labels), absl::StrCat("--spool_dir=", inside, "/spool"),
                           std::string("--reconnect_initial_delay=200ms"), std::string("--reconnect_max_delay=2s"),
                           // The test's agents share this machine (one machine id and boot):
                           // they run jobs side by side as the tests expect, unless a test
                           // of the one-job-per-host rule passes --exclusive_cpus=false.
                           std::string("--exclusive_cpus=true")}) {
    // A flag of extra_flags replaces the default (the agent takes each flag once).
    const std::string name = flag.substr(0, flag.find('=') + 1);
    const bool replaced = std::any_of(config_.extra_flags.begin(), config_.extra_flags.end(),
                                      [&](const std::string& extra) { return absl::StartsWith(extra, name); });
    if (!replaced) argv.push_back(std::move(flag));
  }
  if (!config_.token.empty()) argv.push_back(absl::StrCat("--token_file=", inside, "/token"));
  for (const std::string& flag : config_.extra_flags) argv.push_back(flag);
  FLEETMARK_ASSIGN_OR_RETURN(process_, Subprocess::Start(argv, dir_ + "/agent.log", config_.extra_env));
  return absl::OkStatus();
}

absl::Status AgentProcess::Restart() {
  if (process_ != nullptr && process_->Running()) {
    return absl::FailedPreconditionError("agent still running");
  }
  return Launch();
}

void AgentProcess::Kill9() {
  if (process_ == nullptr) return;
  process_->Signal(SIGKILL);
  (void)process_->Wait(absl::Seconds(10));
}

std::string AgentProcess::Log() const { return ReadFile(dir_ + "/agent.log"); }

// ---- ControlClient -------------------------------------------------------------------

absl::StatusOr<TlsFiles> MakeTestPki(const std::string& dir) {
  TlsFiles files{dir + "/ca.pem", dir + "/server.pem", dir + "/server.key", dir + "/client.pem", dir + "/client.key"};
  FLEETMARK_RETURN_IF_ERROR(WriteFile(dir + "/server.ext",
                                      "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
                                      "extendedKeyUsage=serverAuth"));
  FLEETMARK_RETURN_IF_ERROR(WriteFile(dir + "/client.ext", "extendedKeyUsage=clientAuth"));
  FLEETMARK_RETURN_IF_ERROR(
      RunCommand({"openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", dir + "/ca.key", "-out",
                  files.ca, "-days", "2", "-subj", "/CN=fleetmark-test-ca"})
          .status());
  for (const auto& [name, cert, key] :
       {std::tuple<std::string, std::string, std::string>{"server", files.server_cert, files.server_key},
        {"client", files.client_cert, files.client_key}}) {
    const std::string csr = absl::StrCat(dir, "/", name, ".csr");
    FLEETMARK_RETURN_IF_ERROR(RunCommand({"openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out",
                                          csr, "-subj", absl::StrCat("/CN=fleetmark-test-", name)})
                                  .status());
    FLEETMARK_RETURN_IF_ERROR(
        RunCommand({"openssl", "x509", "-req", "-in", csr, "-CA", files.ca, "-CAkey", dir + "/ca.key",
                    "-CAcreateserial", "-out", cert, "-days", "2", "-extfile", absl::StrCat(dir, "/", name, ".ext")})
            .status());
  }
  return files;
}

ControlClient::ControlClient(const std::string& address, std::string admin_token, const TlsFiles* tls)
    : admin_token_(std::move(admin_token)) {
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
  if (tls != nullptr) {
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = ReadFile(tls->ca);
    ssl.pem_cert_chain = ReadFile(tls->client_cert);
    ssl.pem_private_key = ReadFile(tls->client_key);
    credentials = grpc::SslCredentials(ssl);
  }
  // The CLI's limit: a list of tens of thousands of agents is larger than gRPC's 4 MiB.
  grpc::ChannelArguments arguments;
  arguments.SetMaxReceiveMessageSize(kCliMaxMessageBytes);
  stub_ = v1::ControlService::NewStub(grpc::CreateCustomChannel(address, credentials, arguments));
}

std::unique_ptr<grpc::ClientContext> ControlClient::Context() const {
  auto context = std::make_unique<grpc::ClientContext>();
  context->AddMetadata("authorization", absl::StrCat("Bearer ", admin_token_));
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  return context;
}

absl::StatusOr<v1::RunInfo> ControlClient::Submit(const v1::Plan& plan, const std::string& selector, bool quick) {
  v1::SubmitRunRequest request;
  *request.mutable_plan() = plan;
  request.set_selector(selector);
  request.set_quick(quick);
  request.set_submitted_by("cli:integration-test");
  v1::SubmitRunResponse response;
  auto context = Context();
  FLEETMARK_RETURN_IF_ERROR(FromGrpc(stub_->SubmitRun(context.get(), request, &response)));
  return response.run();
}

// A call taking a run id and answering RunInfo: `rpc(context, request, response)`.
template <typename Request, typename Rpc>
absl::StatusOr<v1::RunInfo> ControlClient::RunCall(const std::string& run_id, Rpc rpc) {
  Request request;
  request.set_run_id(run_id);
  v1::RunInfo response;
  auto context = Context();
  FLEETMARK_RETURN_IF_ERROR(FromGrpc(rpc(context.get(), request, &response)));
  return response;
}

absl::StatusOr<v1::RunInfo> ControlClient::GetRun(const std::string& run_id) {
  return RunCall<v1::GetRunRequest>(run_id, [this](auto* context, const auto& request, auto* response) {
    return stub_->GetRun(context, request, response);
  });
}

absl::StatusOr<v1::RunInfo> ControlClient::CancelRun(const std::string& run_id) {
  return RunCall<v1::CancelRunRequest>(run_id, [this](auto* context, const auto& request, auto* response) {
    return stub_->CancelRun(context, request, response);
  });
}

absl::StatusOr<std::vector<v1::AgentInfo>> ControlClient::ListAgents(const std::string& selector) {
  v1::ListAgentsRequest request;
  request.set_selector(selector);
  v1::ListAgentsResponse response;
  auto context = Context();
  FLEETMARK_RETURN_IF_ERROR(FromGrpc(stub_->ListAgents(context.get(), request, &response)));
  return std::vector<v1::AgentInfo>(response.agents().begin(), response.agents().end());
}

absl::StatusOr<v1::CreateTokenResponse> ControlClient::CreateToken(const std::string& description) {
  v1::CreateTokenRequest request;
  request.set_description(description);
  v1::CreateTokenResponse response;
  auto context = Context();
  FLEETMARK_RETURN_IF_ERROR(FromGrpc(stub_->CreateToken(context.get(), request, &response)));
  return response;
}

absl::Status ControlClient::RevokeToken(const std::string& token_id) {
  v1::RevokeTokenRequest request;
  request.set_token_id(token_id);
  v1::Empty response;
  auto context = Context();
  return FromGrpc(stub_->RevokeToken(context.get(), request, &response));
}

absl::StatusOr<v1::RemoveAgentResponse> ControlClient::RemoveAgent(const std::string& name) {
  v1::RemoveAgentRequest request;
  request.set_name(name);
  v1::RemoveAgentResponse response;
  auto context = Context();
  FLEETMARK_RETURN_IF_ERROR(FromGrpc(stub_->RemoveAgent(context.get(), request, &response)));
  return response;
}

absl::StatusOr<v1::RunInfo> ControlClient::WaitRunEnded(const std::string& run_id, absl::Duration timeout) {
  absl::StatusOr<v1::RunInfo> run;
  const bool ended = WaitUntil(
      [&] {
        run = GetRun(run_id);
        return run.ok() && (run->status() == "done" || run->status() == "failed" || run->status() == "cancelled");
      },
      timeout, absl::Milliseconds(200));
  if (!run.ok()) return run.status();
  if (!ended) {
    return absl::DeadlineExceededError(absl::StrCat("run ", run_id, " still ", run->status(), " after ",
                                                    absl::FormatDuration(timeout), ": ", run->ShortDebugString()));
  }
  return run;
}

absl::StatusOr<size_t> ControlClient::CountOnline(const std::string& selector) {
  FLEETMARK_ASSIGN_OR_RETURN(const std::vector<v1::AgentInfo> agents, ListAgents(selector));
  return static_cast<size_t>(
      std::count_if(agents.begin(), agents.end(), [](const v1::AgentInfo& a) { return a.state() == "online"; }));
}

absl::Status ControlClient::WaitOnline(size_t count, absl::Duration timeout) {
  size_t online = 0;
  absl::Status last;
  const bool ok = WaitUntil(
      [&] {
        absl::StatusOr<size_t> counted = CountOnline();
        last = counted.status();
        if (!counted.ok()) return false;
        online = *counted;
        return online >= count;
      },
      timeout, absl::Milliseconds(100));
  if (ok) return absl::OkStatus();
  return absl::DeadlineExceededError(absl::StrCat(online, " of ", count, " agents online after ",
                                                  absl::FormatDuration(timeout), " (", last.ToString(), ")"));
}

absl::StatusOr<v1::Plan> PlanFromText(const std::string& text) {
  v1::Plan plan;
  if (!google::protobuf::TextFormat::ParseFromString(text, &plan)) {
    return absl::InvalidArgumentError("plan text does not parse");
  }
  return plan;
}

v1::Plan ReducedS1Plan(const std::vector<std::string>& strategies, const std::vector<std::string>& workloads, int tasks,
                       int repetitions, int rounds) {
  v1::Plan plan;
  plan.set_name("s1-reduced");
  plan.set_description("reduced S1 for the end-to-end fleet tests");
  v1::Matrix* matrix = plan.add_matrix();
  for (const std::string& s : strategies) {
    v1::StrategySpec* spec = matrix->add_strategies();
    spec->set_name(s);
    // Only strategies that use `threads` may set it (direct, single_thread,
    // thread_per_task and async ignore it; validation refuses a value there).
    if (s != "direct" && s != "single_thread" && s != "thread_per_task" && s != "async") {
      spec->set_threads(2);
    }
  }
  for (const std::string& w : workloads) matrix->add_workloads(w);
  matrix->add_io_modes("blocking");
  matrix->mutable_batch()->set_tasks(tasks);
  v1::MeasurementSettings* m = plan.mutable_measurement();
  m->set_warmup_seconds(0.01);
  m->set_min_repetitions(repetitions);
  m->set_max_repetitions(repetitions);
  m->set_max_seconds_per_case(30);
  m->set_rounds(rounds);
  m->set_target_ci_percent(50);
  return plan;
}

v1::Plan WithReducedS1Block(v1::Plan plan, const std::vector<std::string>& strategies,
                            const std::vector<std::string>& workloads) {
  const v1::Plan block = ReducedS1Plan(strategies, workloads, static_cast<int>(plan.matrix(0).batch().tasks()), 1);
  *plan.add_matrix() = block.matrix(0);
  return plan;
}

}  // namespace fleetmark::testing
