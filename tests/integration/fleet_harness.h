// Harness of the end-to-end fleet tests: fresh PostgreSQL databases, real
// fleetmark-coordinator processes (on one of them, or on the in-memory store:
// CoordinatorConfig::memory_store) and fleetmark-agent processes on loopback, a
// ControlService client with the admin token, and polling helpers with deadlines.
//
// Binaries come from the build (FLEETMARK_AGENT_BIN / FLEETMARK_COORDINATOR_BIN compile
// definitions); PostgreSQL from FLEETMARK_TEST_PG_URI (deploy/test.sh) or a private
// deploy/pg.sh instance (PrivatePostgres). Not thread-safe: one test thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "fleetmark/v1/control.grpc.pb.h"
#include "fleetmark/v1/plan.pb.h"
#include "tests/integration/subprocess.h"

namespace fleetmark::testing {

// A fresh directory under /tmp (removed by RemoveTree).
std::string MakeTempDir(const std::string& prefix);
void RemoveTree(const std::string& dir);

// Polls `done` every `poll` until it returns true (true) or `timeout` passes (false).
bool WaitUntil(const std::function<bool()>& done, absl::Duration timeout,
               absl::Duration poll = absl::Milliseconds(100));

// Non-overlapping occurrences of `needle` (not empty) in `text`: lines of a log.
int Occurrences(const std::string& text, const std::string& needle);

// Runs `sql` with psql on `uri`; returns the unaligned, tuples-only output, trimmed.
absl::StatusOr<std::string> Psql(const std::string& uri, const std::string& sql);
// A query returning one integer.
absl::StatusOr<int64_t> PsqlInt(const std::string& uri, const std::string& sql);

// FLEETMARK_TEST_PG_URI, or "" if unset.
std::string TestPgUri();
// True when FLEETMARK_TEST_REQUIRE_PG is set (tests must fail, not skip, without PG).
bool PgRequired();

// A database created for one test on the server of `server_uri`, dropped (WITH FORCE)
// by the destructor.
class TestDatabase {
 public:
  static absl::StatusOr<std::unique_ptr<TestDatabase>> Create(const std::string& server_uri);
  ~TestDatabase();
  const std::string& uri() const { return uri_; }
  const std::string& name() const { return name_; }
  // The server's "postgres" database (to ALTER or DROP this one).
  const std::string& admin_uri() const { return admin_uri_; }

 private:
  TestDatabase(std::string admin_uri, std::string name, std::string uri)
      : admin_uri_(std::move(admin_uri)), name_(std::move(name)), uri_(std::move(uri)) {}
  std::string admin_uri_, name_, uri_;
};

// A private PostgreSQL started with deploy/pg.sh in its own directory, which a test may
// stop and start again on the same port (an outage).
class PrivatePostgres {
 public:
  static absl::StatusOr<std::unique_ptr<PrivatePostgres>> Start();
  ~PrivatePostgres();
  const std::string& uri() const { return uri_; }
  // Its deploy/pg.sh directory (e.g. for `deploy/pg.sh replica DIR REPLICA_DIR`).
  const std::string& dir() const { return dir_; }
  absl::Status Stop();
  absl::Status StartAgain();  // same data directory and port

 private:
  PrivatePostgres(std::string dir, std::string uri) : dir_(std::move(dir)), uri_(std::move(uri)) {}
  std::string dir_, uri_;
};

// A database for a benchmark: a fresh one on the test PostgreSQL when
// FLEETMARK_TEST_PG_URI is set (TestPgUri), else a private PostgreSQL of its own. Owns
// whichever it made; `uri` is the database's.
struct BenchDatabase {
  std::unique_ptr<TestDatabase> database;
  std::unique_ptr<PrivatePostgres> private_pg;
  std::string uri;
};
absl::StatusOr<BenchDatabase> OpenBenchDatabase();

struct CoordinatorConfig {
  std::string database_uri;
  // --store=memory instead of --database_uri (which must then be ""): the coordinator's
  // rows live in its process, so tests run without PostgreSQL; a Restart() or Kill9()
  // loses them (agents enrol again with their token, their old credential is unknown).
  bool memory_store = false;
  std::string enrollment_token = "it-enrollment-token-5f1c2b";
  std::string admin_token = "it-admin-token-9a8b7c";
  absl::Duration heartbeat_interval = absl::Seconds(1);
  absl::Duration job_lease = absl::Seconds(5);
  absl::Duration sweep_interval = absl::Milliseconds(200);
  int max_attempts = 3;
  int listen_port = 0;                   // first start's port (0 = a free one)
  std::string coordinator_id;            // --coordinator_id ("" = it-coordinator-<launch count>)
  std::vector<std::string> extra_flags;  // e.g. "--executor_threads=8" (each flag once)
  // Runs the coordinator through this command (an absolute path first), e.g.
  // {"/usr/bin/prlimit", "--nofile=256", "--"}: it must exec the coordinator in its own
  // process (the pid stays the coordinator's).
  std::vector<std::string> command_prefix;
};

// A fleetmark-coordinator process on 127.0.0.1 (first start on a free port; restarts
// reuse it so agents find it again).
class CoordinatorProcess {
 public:
  static absl::StatusOr<std::unique_ptr<CoordinatorProcess>> Start(const std::string& dir, CoordinatorConfig config);
  absl::Status Restart();  // after Kill9 (or a clean stop): same port, same database
  void Kill9();
  int port() const { return port_; }
  std::string address() const;
  std::string Log() const;
  const CoordinatorConfig& config() const { return config_; }
  Subprocess* process() { return process_.get(); }

 private:
  CoordinatorProcess(std::string dir, CoordinatorConfig config) : dir_(std::move(dir)), config_(std::move(config)) {}
  absl::Status Launch();
  std::string dir_;
  CoordinatorConfig config_;
  int port_ = 0;
  int launches_ = 0;
  std::unique_ptr<Subprocess> process_;
};

// The web view's port of a coordinator started with --http_address, from its log line
// "web view at http://HOST:PORT/" (logged before the port file is written). Waits up
// to `timeout`; DeadlineExceeded when the line does not appear.
absl::StatusOr<int> WebViewPort(const CoordinatorProcess& coordinator, absl::Duration timeout = absl::Seconds(30));

struct AgentConfig {
  std::string name;
  std::string labels;  // --labels
  std::string token;   // written to the agent's token file; "" = no --token_file
  // Appended; one named like a default flag (--reconnect_max_delay=...) replaces it.
  std::vector<std::string> extra_flags;
  // FLEETMARK_AGENT_BIN by default; FLEETMARK_HANG_AGENT_BIN is the same agent whose
  // cases labelled "test_hang" hang (tests/engine/runner/hang_hook.h). Used when
  // `command` is empty.
  std::string binary = FLEETMARK_AGENT_BIN;
  // The command that starts the agent, flags appended (default: {binary});
  // "{dir}" in an element is replaced by the agent's directory (base_dir/agent-NAME).
  std::vector<std::string> command;
  // True when `command` chroots into the agent's directory: the spool and token file
  // are then passed as /spool and /token (their paths inside that root).
  bool chroot_into_dir = false;
  std::vector<std::string> extra_env;  // "K=V" added to the agent's environment
};

// A fleetmark-agent process with its own directory base_dir/agent-NAME holding its spool
// (kept across restarts), token file and log.
class AgentProcess {
 public:
  static absl::StatusOr<std::unique_ptr<AgentProcess>> Start(const std::string& base_dir,
                                                             const std::string& coordinator, AgentConfig config);
  // A second process given a copy of `original`'s credential file and no token (as an
  // operator copying the state directory to another machine would): `original`'s name,
  // its own directory base_dir/agent-NAME, `extra_flags` appended. Waits up to 30 s
  // for `original` to have stored its credential.
  static absl::StatusOr<std::unique_ptr<AgentProcess>> StartWithCopiedCredential(
      const std::string& base_dir, const std::string& coordinator, const AgentProcess& original,
      std::vector<std::string> extra_flags = {});
  absl::Status Restart();
  void Kill9();
  Subprocess* process() { return process_.get(); }
  std::string Log() const;
  const std::string& spool_dir() const { return spool_dir_; }
  const std::string& name() const { return config_.name; }

 private:
  AgentProcess(std::string dir, std::string coordinator, AgentConfig config)
      : dir_(std::move(dir)), coordinator_(std::move(coordinator)), config_(std::move(config)) {}
  absl::Status Launch();
  std::string dir_, coordinator_, spool_dir_;
  AgentConfig config_;
  int launches_ = 0;
  std::unique_ptr<Subprocess> process_;
};

// PEM files of a test PKI (MakeTestPki).
struct TlsFiles {
  std::string ca;           // CA certificate
  std::string server_cert;  // for 127.0.0.1 / localhost
  std::string server_key;
  std::string client_cert;  // a client certificate signed by the CA
  std::string client_key;
};

// Creates a CA, a server certificate (SAN IP:127.0.0.1, DNS:localhost) and a client
// certificate in `dir` with the openssl command-line tool.
absl::StatusOr<TlsFiles> MakeTestPki(const std::string& dir);

// ControlService with "authorization: Bearer <admin token>"; over TLS (with the client
// certificate) when `tls` is given.
class ControlClient {
 public:
  ControlClient(const std::string& address, std::string admin_token, const TlsFiles* tls = nullptr);
  absl::StatusOr<v1::RunInfo> Submit(const v1::Plan& plan, const std::string& selector, bool quick = false);
  absl::StatusOr<v1::RunInfo> GetRun(const std::string& run_id);
  absl::StatusOr<v1::RunInfo> CancelRun(const std::string& run_id);
  absl::StatusOr<std::vector<v1::AgentInfo>> ListAgents(const std::string& selector = "");
  absl::StatusOr<v1::CreateTokenResponse> CreateToken(const std::string& description);
  absl::Status RevokeToken(const std::string& token_id);
  // `fleetmark agents remove NAME`.
  absl::StatusOr<v1::RemoveAgentResponse> RemoveAgent(const std::string& name);
  // Polls GetRun until the run is done, failed or cancelled.
  absl::StatusOr<v1::RunInfo> WaitRunEnded(const std::string& run_id, absl::Duration timeout);
  // Agents matching `selector` whose state is "online".
  absl::StatusOr<size_t> CountOnline(const std::string& selector = "");
  // Polls ListAgents until at least `count` agents are online.
  absl::Status WaitOnline(size_t count, absl::Duration timeout);

 private:
  std::unique_ptr<grpc::ClientContext> Context() const;
  template <typename Request, typename Rpc>
  absl::StatusOr<v1::RunInfo> RunCall(const std::string& run_id, Rpc rpc);
  std::unique_ptr<v1::ControlService::Stub> stub_;
  std::string admin_token_;
};

// Parses a text-format plan; InvalidArgument with protobuf's message.
absl::StatusOr<v1::Plan> PlanFromText(const std::string& text);

// A reduced S1 plan: `strategies` x `workloads` batch cases with `tasks` tasks and
// `repetitions` repetitions per case, in `rounds` rounds.
v1::Plan ReducedS1Plan(const std::vector<std::string>& strategies, const std::vector<std::string>& workloads, int tasks,
                       int repetitions, int rounds = 1);

// `plan` (a ReducedS1Plan) with one more matrix block: `strategies` x `workloads` with
// the first block's batch size, io modes and the same per-strategy `threads` rule (e.g.
// the parallel constructs on one workload only, where the full cross product costs more).
v1::Plan WithReducedS1Block(v1::Plan plan, const std::vector<std::string>& strategies,
                            const std::vector<std::string>& workloads);

// Number of cases ReducedS1Plan produces.
inline int CaseCount(const v1::Plan& plan) {
  int n = 0;
  for (const auto& m : plan.matrix()) {
    n += m.strategies_size() * m.workloads_size() * std::max(1, m.io_modes_size()) * std::max(1, m.placements_size());
  }
  return n;
}

}  // namespace fleetmark::testing
