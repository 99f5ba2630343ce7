// fleetmark-coordinator: schedules plans across agents and stores every result in
// PostgreSQL. Flags (all optional except --database_uri, which --store=memory replaces):
//
//   --listen_address=127.0.0.1:7443   gRPC (AgentService + ControlService); port 0 = any free port; or
//   unix:/path/to/socket
//   --port_file=PATH                  write the bound gRPC port there once serving (tests, scripts)
//   --http_address=HOST:PORT          also serve the web view / JSON API, GET /healthz and
//                                     Prometheus GET /metrics ("" = off)
//   --http_token_file=PATH            bearer token the JSON API requires (needed on a
//                                     non-loopback --http_address)
//   --database_uri=postgresql://...   PostgreSQL (migrations are applied at start)
//   --store=postgres                  where rows live: postgres (--database_uri), or memory: in this
//                                     process only, lost at exit (tests and demos; loopback
//                                     --listen_address only, no --database_uri/--read_database_uri/--http_address)
//   --tls_cert_file, --tls_key_file   PEM; enable TLS on the gRPC port
//   --tls_client_ca_file              PEM; require client certificates (mutual TLS)
//   --allow_insecure_remote           allow plaintext on a non-loopback address
//   --grpc_reflection=true            serve gRPC server reflection (grpcurl); false = off
//   --admin_token_file=PATH           admin token for the CLI (ControlService)
//   --enrollment_token_file=PATH      seed this enrollment token (stored hashed)
//   --coordinator_id=NAME             name in the database (default host:pid)
//   --heartbeat_interval=5s  --job_lease=30s  --sweep_interval=1s  --max_attempts=3
//   --requeue_timeout=0               a re-queued job not taken back this long fails (0 = one --job_lease)
//   --listen_notifications=true       pushes between coordinators (LISTEN/NOTIFY); false = sweep only
//   --db_outage_grace=5s              end agent streams (they spool, replay) after this outage
//   --executor_threads=4  --db_pool_size=8
//   --max_agent_streams=N             hold at most N agent streams (default: the descriptor budget)
//   --read_database_uri=URI           web view and read-only control RPCs from a streaming replica
//   --read_max_lag=10s                ... while it lags at most this; else from the primary
//   --nightly_plan=PATH  --nightly_cron="0 2 * * *"  --nightly_selector=EXPR
//   --noise_nights=14  --quarantine_drift_percent=10  --quarantine_drift_noise_multiple=4
//   --quarantine_noise_percent=10  --quarantine_deferred_jobs=3
//   --confirm_budget_per_agent_per_day=4  --alert_webhook_url=http://HOST:PORT/PATH
//   --partitions_ahead=3              monthly result partitions created ahead (0..120)
//
// Exits 2 on bad flags, 1 if it cannot start; SIGINT/SIGTERM shut it down cleanly.
#include <netdb.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>

#include "absl/flags/flag.h"
#include "engine/common/text.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/text_format.h"
#include "absl/time/time.h"
#include "absl/synchronization/mutex.h"
#include "coordinator/service/coordinator.h"
#include "coordinator/service/protobuf_log.h"
#include "engine/common/secret_file.h"
#if FLEETMARK_WITH_HTTP
#include "coordinator/http/http_server.h"
#include "engine/common/flag_parser.h"
#include "engine/common/log.h"
#include "engine/common/version.h"
#endif

ABSL_FLAG(std::string, listen_address, "127.0.0.1:7443",
          "gRPC listen address host:port (port 0 = any) or unix:/path/to/socket");
ABSL_FLAG(std::string, port_file, "", "write the bound gRPC port to this file once serving");
ABSL_FLAG(std::string, http_address, "", "web view / JSON API, /healthz and /metrics address host:port (empty = off)");
ABSL_FLAG(std::string, http_token_file, "",
          "file holding the bearer token the web view's JSON API requires; required when "
          "--http_address is not a loopback address");
ABSL_FLAG(std::string, database_uri, "", "PostgreSQL URI (required unless --store=memory)");
ABSL_FLAG(std::string, store, "postgres",
          "where the coordinator keeps its rows: postgres (--database_uri) or memory (in this process only, "
          "lost at exit: for tests and demos; a loopback --listen_address, no --database_uri, "
          "--read_database_uri or --http_address)");
ABSL_FLAG(std::string, read_database_uri, "",
          "a streaming replica of --database_uri: the web view and `runs list`/`export`/`compare` read from it while "
          "it answers and lags at most --read_max_lag (empty = every read on the primary)");
ABSL_FLAG(absl::Duration, read_max_lag, absl::Seconds(10),
          "reads go to the primary while the read replica's WAL replay is further behind than this (1s..1h)");
ABSL_FLAG(std::string, tls_cert_file, "", "TLS certificate chain (PEM) for the gRPC port");
ABSL_FLAG(std::string, tls_key_file, "", "TLS private key (PEM)");
ABSL_FLAG(std::string, tls_client_ca_file, "", "CA (PEM) for client certificates: enables mutual TLS");
ABSL_FLAG(bool, allow_insecure_remote, false, "allow plaintext gRPC on a non-loopback address");
ABSL_FLAG(bool, grpc_reflection, true,
          "serve gRPC server reflection on the gRPC port (what grpcurl uses to list and call the API; "
          "descriptors only, ControlService calls still need the admin token); false = off. "
          "grpc.health.v1.Health is always served");
ABSL_FLAG(std::string, admin_token_file, "", "file holding the admin token for ControlService");
ABSL_FLAG(std::string, enrollment_token_file, "", "file holding an enrollment token to seed");
ABSL_FLAG(std::string, coordinator_id, "", "this coordinator's name (default host:pid)");
ABSL_FLAG(absl::Duration, heartbeat_interval, absl::Seconds(5), "agent heartbeat period");
ABSL_FLAG(absl::Duration, job_lease, absl::Seconds(30), "job lease, renewed by heartbeats/progress");
ABSL_FLAG(absl::Duration, sweep_interval, absl::Seconds(1), "lease/schedule/dispatch sweep period");
ABSL_FLAG(bool, listen_notifications, true,
          "LISTEN for other coordinators' notifications (jobs queued, runs cancelled, agents revoked) on a "
          "dedicated database connection; false = the sweep alone (e.g. behind a transaction-mode pooler)");
ABSL_FLAG(absl::Duration, db_outage_grace, absl::Seconds(5),
          "end agent streams (agents spool and replay) once the database is down this long");
ABSL_FLAG(int, max_attempts, 3, "attempts per job before failing as infrastructure (1..100)");
ABSL_FLAG(absl::Duration, requeue_timeout, absl::ZeroDuration(),
          "a job re-queued after its agent's lease expired (or its agent restarted) that no agent takes back "
          "this long fails as infrastructure, whatever attempts are left (0 = one --job_lease; at most 168h)");
ABSL_FLAG(int, executor_threads, 4, "coordinator executor threads (1..64)");
ABSL_FLAG(int, db_pool_size, 8, "PostgreSQL connections (2..256)");
ABSL_FLAG(int, max_agent_streams, 0,
          "agent streams held at most (0 = the descriptor budget: RLIMIT_NOFILE, raised to its hard limit, minus a "
          "reserve); a hello over it gets a retryable Refusal naming the limit, so the agent backs off");
ABSL_FLAG(int, partitions_ahead, 3,
          "months of case_results partitions created ahead of this one, at start and daily (0..120; "
          "docs/operations.md \"Storage\")");
ABSL_FLAG(std::string, nightly_plan, "", "plan file of the default nightly schedule (empty = none)");
ABSL_FLAG(std::string, nightly_cron, "0 2 * * *", "cron (5 fields, UTC) of the nightly schedule");
ABSL_FLAG(std::string, nightly_selector, "", "agent selector of the nightly schedule");
ABSL_FLAG(int, noise_nights, 14, "nights (runs with calibration results) an agent's noise score spans (3..1000)");
ABSL_FLAG(double, quarantine_drift_percent, 10,
          "quarantine an agent whose newest calibration night drifts more than max(this %, "
          "--quarantine_drift_noise_multiple x noise) from its earlier nights (0 = off)");
ABSL_FLAG(double, quarantine_drift_noise_multiple, 4, "noise multiple of the drift limit (0..100)");
ABSL_FLAG(double, quarantine_noise_percent, 10, "quarantine an agent whose noise score exceeds this % (0 = off)");
ABSL_FLAG(int, quarantine_deferred_jobs, 3,
          "quarantine an agent whose preflight gates deferred this many jobs in a row (0 = off)");
ABSL_FLAG(int, confirm_budget_per_agent_per_day, 4,
          "confirmation runs of suspected changes per agent in any 24 hours (0..1000; 0 = none: changes stay "
          "unconfirmed)");
ABSL_FLAG(std::string, alert_webhook_url, "",
          "POST each confirmed change as JSON to this http(s)://HOST[:PORT][/PATH] (empty = off)");
ABSL_FLAG(std::string, default_preconditions, "",
          "preflight gates of runs whose plan sets none, as Preconditions text format, e.g. "
          "'min_battery_percent: 20 max_temperature_c: 45' (empty = none)");

namespace {

// Reads a token file (engine/common/secret_file.h); errors name the flag.
bool ReadSecret(const std::string& flag, const std::string& path, std::string* out) {
  absl::StatusOr<std::string> secret = fleetmark::ReadSecretFile(absl::StrCat("--", flag), path);
  if (!secret.ok()) {
    std::cerr << "fleetmark-coordinator: " << secret.status().message() << "\n";
    return false;
  }
  *out = *std::move(secret);
  return true;
}

// Whether a listener could bind `address` (host:port) now: a bind of a throw-away socket,
// so a port in use is one clear line naming `flag` before the coordinator connects to
// its database or serves anything (gRPC's own bind failure also prints a raw core
// error). Port 0 always binds. A port taken between this check and the real bind
// still fails there.
bool CheckCanListen(const std::string& flag, const std::string& address) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos) return true;  // malformed: reported where it is parsed
  std::string host = address.substr(0, colon);
  const std::string port = address.substr(colon + 1);
  if (port.empty() || port == "0") return true;
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.empty() ? nullptr : host.c_str(), port.c_str(), &hints, &found) != 0) return true;
  int error = 0;
  for (addrinfo* a = found; a != nullptr && error == 0; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);  // as gRPC and httplib bind
    if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 && errno == EADDRINUSE) error = errno;
    ::close(fd);
  }
  freeaddrinfo(found);
  if (error == 0) return true;
  std::cerr << "fleetmark-coordinator: --" << flag << "=" << address << ": the port is in use (" << std::strerror(error)
            << "): another coordinator or service listens there; pick another port, or port 0 for any free one\n";
  return false;
}

std::string DefaultCoordinatorId() {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  return absl::StrCat(host, ":", getpid());
}

}  // namespace

int main(int argc, char** argv) {
  // Debian's Abseil is built without NDEBUG, so every absl::Mutex (gRPC locks with
  // them too) would run deadlock-cycle detection (GraphCycles) on each acquisition:
  // ~5% of a fan-out's CPU in the fleet benchmark. Lock order is checked in the tests.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  // protobuf logs one ERROR line per unparseable message (e.g. a string that is not
  // UTF-8): rate-limited, so a fuzzer or a broken client cannot flood the log.
  fleetmark::service::InstallRateLimitedProtobufLog();
  if (const int code =
          fleetmark::ParseDaemonCommandLine(argc, argv, "fleetmark-coordinator",
                                            "fleetmark-coordinator --database_uri=URI [flags]", "coordinator/main.cc");
      code >= 0) {
    return code;
  }

  fleetmark::service::CoordinatorOptions options;
  options.listen_address = absl::GetFlag(FLAGS_listen_address);
  options.database_uri = absl::GetFlag(FLAGS_database_uri);
  options.read_database_uri = absl::GetFlag(FLAGS_read_database_uri);
  options.read_max_lag = absl::GetFlag(FLAGS_read_max_lag);
  options.tls_cert_file = absl::GetFlag(FLAGS_tls_cert_file);
  options.tls_key_file = absl::GetFlag(FLAGS_tls_key_file);
  options.tls_client_ca_file = absl::GetFlag(FLAGS_tls_client_ca_file);
  options.allow_insecure_remote = absl::GetFlag(FLAGS_allow_insecure_remote);
  options.grpc_reflection = absl::GetFlag(FLAGS_grpc_reflection);
  options.coordinator_id = absl::GetFlag(FLAGS_coordinator_id);
  if (options.coordinator_id.empty()) options.coordinator_id = DefaultCoordinatorId();
  options.heartbeat_interval = absl::GetFlag(FLAGS_heartbeat_interval);
  options.job_lease = absl::GetFlag(FLAGS_job_lease);
  options.sweep_interval = absl::GetFlag(FLAGS_sweep_interval);
  options.listen_notifications = absl::GetFlag(FLAGS_listen_notifications);
  options.max_attempts = absl::GetFlag(FLAGS_max_attempts);
  options.requeue_timeout = absl::GetFlag(FLAGS_requeue_timeout);
  options.db_outage_grace = absl::GetFlag(FLAGS_db_outage_grace);
  options.executor_threads = absl::GetFlag(FLAGS_executor_threads);
  options.db_pool_size = absl::GetFlag(FLAGS_db_pool_size);
  options.max_agent_streams = absl::GetFlag(FLAGS_max_agent_streams);
  options.partitions_ahead = absl::GetFlag(FLAGS_partitions_ahead);
  options.nightly_plan_file = absl::GetFlag(FLAGS_nightly_plan);
  options.nightly_cron = absl::GetFlag(FLAGS_nightly_cron);
  options.nightly_selector = absl::GetFlag(FLAGS_nightly_selector);
  options.health.noise_nights = absl::GetFlag(FLAGS_noise_nights);
  options.health.drift_percent = absl::GetFlag(FLAGS_quarantine_drift_percent);
  options.health.drift_noise_multiple = absl::GetFlag(FLAGS_quarantine_drift_noise_multiple);
  options.health.noise_limit_percent = absl::GetFlag(FLAGS_quarantine_noise_percent);
  options.health.deferred_jobs = absl::GetFlag(FLAGS_quarantine_deferred_jobs);
  options.changes.confirm_budget_per_agent_per_day = absl::GetFlag(FLAGS_confirm_budget_per_agent_per_day);
  options.alert_webhook_url = absl::GetFlag(FLAGS_alert_webhook_url);
  if (absl::Status valid = fleetmark::service::ValidateChangeMonitorOptions(options.changes); !valid.ok()) {
    std::cerr << "fleetmark-coordinator: " << valid.message() << "\n";
    return 2;
  }
  if (!options.alert_webhook_url.empty()) {
    if (absl::Status valid = fleetmark::alerts::ValidateWebhookUrl(options.alert_webhook_url); !valid.ok()) {
      std::cerr << "fleetmark-coordinator: " << fleetmark::EscapeForTerminal(std::string(valid.message()), 300) << "\n";
      return 2;
    }
  }
  if (const std::string text = absl::GetFlag(FLAGS_default_preconditions); !text.empty()) {
    if (!google::protobuf::TextFormat::ParseFromString(text, &options.default_preconditions)) {
      std::cerr << "fleetmark-coordinator: --default_preconditions: not Preconditions text format "
                   "(fields min_battery_percent, max_temperature_c, max_other_cpu_percent, max_load_average, "
                   "required_governor, min_free_memory_mib, cooldown_seconds, max_checks, cpu_sample_seconds), got \""
                << fleetmark::EscapeForTerminal(text, 200) << "\"\n";
      return 2;
    }
  }
  if (const std::string store = absl::GetFlag(FLAGS_store); store == "memory") {
    options.store = fleetmark::service::StoreBackend::kMemory;
    if (!absl::GetFlag(FLAGS_http_address).empty()) {
      // The web view reads PostgreSQL itself (coordinator/http): nothing to read here.
      std::cerr << "fleetmark-coordinator: --http_address: the web view reads PostgreSQL; it is off with "
                   "--store=memory\n";
      return 2;
    }
    if (absl::Status valid = fleetmark::service::CheckCoordinatorOptions(options); !valid.ok()) {
      std::cerr << "fleetmark-coordinator: --store=memory: " << valid.message() << "\n";
      return 2;
    }
  } else if (store != "postgres") {
    std::cerr << "fleetmark-coordinator: --store: postgres or memory, got \"" << store << "\"\n";
    return 2;
  } else if (options.database_uri.empty()) {
    std::cerr << "fleetmark-coordinator: --database_uri is required (e.g. the URI printed by "
                 "deploy/pg.sh start DIR)\n";
    return 2;
  }
  if (const std::string path = absl::GetFlag(FLAGS_admin_token_file); !path.empty()) {
    if (!ReadSecret("admin_token_file", path, &options.admin_token)) return 2;
  }
  if (const std::string path = absl::GetFlag(FLAGS_enrollment_token_file); !path.empty()) {
    std::string token;
    if (!ReadSecret("enrollment_token_file", path, &token)) return 2;
    options.enrollment_tokens.push_back(token);
  }
#if FLEETMARK_WITH_HTTP
  // The web view's flags are checked before anything starts.
  fleetmark::http::HttpServerOptions http_options;
  http_options.address = absl::GetFlag(FLAGS_http_address);
  if (!http_options.address.empty()) options.changes.link_base = absl::StrCat("http://", http_options.address);
  http_options.pg_uri = options.database_uri;
  if (const std::string path = absl::GetFlag(FLAGS_http_token_file); !path.empty()) {
    if (http_options.address.empty()) {
      std::cerr << "fleetmark-coordinator: --http_token_file needs --http_address (the web view is off)\n";
      return 2;
    }
    if (!ReadSecret("http_token_file", path, &http_options.bearer_token)) return 2;
  }
  if (!http_options.address.empty()) {
    auto host_port = fleetmark::http::ParseHostPort(http_options.address);
    if (!host_port.ok()) {
      std::cerr << "fleetmark-coordinator: --http_address: " << host_port.status().message() << "\n";
      return 2;
    }
    // --allow_insecure_remote concerns plaintext gRPC; it does not open the web API.
    if (!fleetmark::http::IsLoopbackHost(host_port->first) && http_options.bearer_token.empty()) {
      std::cerr << "fleetmark-coordinator: --http_address=" << http_options.address
                << " is not a loopback address: the web view's JSON API then requires a bearer "
                   "token; pass --http_token_file=PATH (a file holding the token)\n";
      return 2;
    }
    if (absl::Status valid = fleetmark::http::ValidateHttpServerOptions(http_options); !valid.ok()) {
      std::cerr << "fleetmark-coordinator: --http_address/--http_token_file: " << valid.message() << "\n";
      return 2;
    }
  }
#endif

  if (!CheckCanListen("listen_address", options.listen_address)) return 1;
#if FLEETMARK_WITH_HTTP
  if (!http_options.address.empty() && !CheckCanListen("http_address", http_options.address)) return 1;
  // The web view's database connections and client connections count in the
  // descriptor reserve (twice the database connections with a read replica: one reader
  // on each server).
  if (!http_options.address.empty()) {
    options.http_descriptors =
        fleetmark::http::HttpDescriptors(http_options, options.read_database_uri.empty() ? 1 : 2);
  }
#endif

  // Block the shutdown signals in every thread; one thread waits for them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto coordinator = fleetmark::service::Coordinator::Start(options);
  if (!coordinator.ok()) {
    fleetmark::Log(fleetmark::LogLevel::kError, coordinator.status().message());
    return absl::IsInvalidArgument(coordinator.status()) ? 2 : 1;
  }
  const bool unix_socket = absl::StartsWith(options.listen_address, "unix:");
  fleetmark::Log(fleetmark::LogLevel::kInfo,
                 absl::StrCat(fleetmark::VersionLine("fleetmark-coordinator"), ": serving gRPC on ",
                              unix_socket ? options.listen_address : absl::StrCat("port ", (*coordinator)->port())));
  fleetmark::Log(fleetmark::LogLevel::kInfo,
                 absl::StrCat("holding up to ", (*coordinator)->stream_budget(), " agent streams (RLIMIT_NOFILE ",
                              (*coordinator)->descriptor_limit(), ")"));
#if FLEETMARK_WITH_HTTP
  std::unique_ptr<fleetmark::http::HttpServer> http;
  if (!http_options.address.empty()) {
    http_options.health = [c = coordinator->get()] { return c->CheckHealth(); };
    http_options.metrics = [c = coordinator->get()] { return c->RenderMetrics(); };
    fleetmark::store::ReadRouter* router = (*coordinator)->read_router();
    if (router != nullptr) http_options.read_server = [router] { return router->ReadServer(); };
    auto server = router == nullptr
                      ? fleetmark::http::StartHttpServer(http_options)
                      : fleetmark::http::StartRoutedHttpServer(http_options, options.read_database_uri, *router);
    if (!server.ok()) {
      fleetmark::Log(fleetmark::LogLevel::kError, absl::StrCat("--http_address: ", server.status().message()));
      return absl::IsInvalidArgument(server.status()) ? 2 : 1;
    }
    http = *std::move(server);
    fleetmark::Log(fleetmark::LogLevel::kInfo,
                   absl::StrCat("web view at ", http->url(), " (files from ", http->web_root(), ")"));
  }
#else
  if (!absl::GetFlag(FLAGS_http_address).empty() || !absl::GetFlag(FLAGS_http_token_file).empty()) {
    std::cerr << "fleetmark-coordinator: --http_address, --http_token_file: this build has no web view\n";
    return 2;
  }
#endif
  if (const std::string path = absl::GetFlag(FLAGS_port_file); !path.empty()) {
    const std::string tmp = path + ".tmp";
    std::ofstream(tmp) << (*coordinator)->port() << "\n";
    std::rename(tmp.c_str(), path.c_str());
  }

  std::thread signal_waiter([&signals, c = coordinator->get()] {
    int signal = 0;
    sigwait(&signals, &signal);
    fleetmark::Log(fleetmark::LogLevel::kInfo, absl::StrCat("signal ", signal, ", shutting down"));
    c->Shutdown();
  });
  (*coordinator)->Wait();
#if FLEETMARK_WITH_HTTP
  if (http != nullptr) http->Stop();
#endif
  (*coordinator)->Shutdown();
  // Wake the signal thread if Wait() returned for another reason.
  pthread_kill(signal_waiter.native_handle(), SIGTERM);
  signal_waiter.join();
  return 0;
}
