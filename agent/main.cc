// fleetmark-agent: runs benchmark jobs for a coordinator (docs/architecture.md, "Agent").
//
//   fleetmark-agent --coordinator=10.0.0.5:7443 --token_file=/etc/fleetmark/token
//       --name=pixel-7 --labels=rack=b,os=android --spool_dir=/data/local/fleetmark
//       --tls_ca_file=/etc/fleetmark/ca.pem
//
// Exit codes: 0 stopped by SIGINT/SIGTERM; 2 bad flags or local configuration (token
// file, TLS files, spool directory, a hello the coordinator's text rules would refuse);
// 3 refused by the coordinator (bad or revoked token, a name enrolled by another agent,
// protocol version); 1 anything else.
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/synchronization/mutex.h"
#include "agent/agent.h"
#include "agent/host_identity.h"
#include "agent/labels.h"
#include "agent/log.h"
#include "engine/common/flag_parser.h"
#include "engine/common/host_port.h"
#include "engine/common/version.h"
#include "engine/child/child.h"
#include "engine/strategies/openmp_implementation.h"
#include "engine/strategies/work_stealing_implementation.h"
#include "engine/topology/host.h"

ABSL_FLAG(std::string, coordinator, "127.0.0.1:7443",
          "Coordinator address: IP:PORT or [IPv6]:PORT (no DNS needed), HOST:PORT (gRPC's DNS "
          "resolver, which reads /etc/resolv.conf), or dns://DNS_SERVER_IP/HOST:PORT to name the "
          "DNS server (devices without /etc/resolv.conf, e.g. Android; the static device builds "
          "have no NSS), or any gRPC target (ipv4:, ipv6:, dns:, unix:)");
ABSL_FLAG(std::string, token_file, "", "File holding the enrollment token (needed until a credential is stored)");
ABSL_FLAG(std::string, name, "", "Agent name, unique in the fleet: [A-Za-z0-9._-]{1,64} (default: host name)");
ABSL_FLAG(std::string, labels, "", "Comma-separated key=value labels, e.g. rack=b,os=android");
ABSL_FLAG(std::string, spool_dir, "/var/lib/fleetmark-agent",
          "Directory for the result spool and the stored credential");
ABSL_FLAG(std::string, tls_ca_file, "", "PEM CA bundle to verify the coordinator (enables TLS)");
ABSL_FLAG(std::string, tls_cert_file, "", "PEM client certificate for mutual TLS");
ABSL_FLAG(std::string, tls_key_file, "", "PEM private key of --tls_cert_file");
ABSL_FLAG(std::string, tls_server_name, "",
          "Name expected in the coordinator's certificate (default: the address' host)");
ABSL_FLAG(bool, exclusive_cpus, false,
          "This agent is pinned to CPUs no other agent on its host uses (e.g. taskset/cpuset): it may run a job "
          "while another agent of the host started with --exclusive_cpus runs one. Without it the coordinator "
          "runs one job at a time per host (agents with the same machine-id and boot id)");
ABSL_FLAG(absl::Duration, reconnect_initial_delay, absl::Milliseconds(500),
          "Ceiling of the first reconnect delay (full jitter below it)");
ABSL_FLAG(absl::Duration, reconnect_max_delay, absl::Seconds(30), "Cap on reconnect delays");
ABSL_FLAG(absl::Duration, welcome_timeout, absl::Seconds(30),
          "Abandon a session that gets no Welcome within this time");

namespace fleetmark::agent {
namespace {

constexpr int kExitError = 1;
constexpr int kExitConfig = 2;
constexpr int kExitRefused = 3;

std::string HostName() {
  char buffer[256] = {};
  if (gethostname(buffer, sizeof(buffer) - 1) != 0) return "";
  return buffer;
}

int Main(int argc, char** argv) {
  // Debian's Abseil is built without NDEBUG, so every absl::Mutex (gRPC locks with
  // them too) would run deadlock-cycle detection (GraphCycles) on each acquisition:
  // ~5% of a fan-out's CPU in the fleet benchmark. Lock order is checked in the tests.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  if (const int code =
          ParseDaemonCommandLine(argc, argv, "fleetmark-agent",
                                 "fleetmark-agent --coordinator=HOST:PORT --token_file=FILE [--name=N] "
                                 "[--labels=k=v,...] [--spool_dir=DIR] [--exclusive_cpus] [--tls_ca_file=PEM "
                                 "[--tls_cert_file=PEM --tls_key_file=PEM]]",
                                 "agent/main.cc");
      code >= 0) {
    return code;
  }
  // A set but unusable FLEETMARK_CHILD_EMULATOR would fail every case: refuse at once
  // (after --help/--version, which run no case).
  if (const absl::Status emulator = engine::CheckChildEmulator(); !emulator.ok()) {
    std::fprintf(stderr, "fleetmark-agent: %s\n", std::string(emulator.message()).c_str());
    return kExitConfig;
  }

  // SIGINT/SIGTERM are taken by a dedicated thread (sigwait), so every other thread,
  // including gRPC's, must block them: set the mask before any thread starts.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);
  // gRPC's client-channel backup poller wakes every 5 s by default (an idle agent's
  // wake-ups went from 6.6/s to 3.4/s without it); the session always has a thread
  // reading its stream, which polls the channel. An explicit setting in the environment
  // wins.
  setenv("GRPC_CLIENT_CHANNEL_BACKUP_POLL_INTERVAL_MS", "0", /*overwrite=*/0);

  AgentOptions options;
  options.coordinator = absl::GetFlag(FLAGS_coordinator);
  options.token_file = absl::GetFlag(FLAGS_token_file);
  options.name = absl::GetFlag(FLAGS_name);
  // The host name only when --name is not given: `--name ''` is refused below (the name rule).
  if (!FlagGiven("name")) options.name = HostName();
  options.spool_dir = absl::GetFlag(FLAGS_spool_dir);
  options.tls.ca_file = absl::GetFlag(FLAGS_tls_ca_file);
  options.tls.cert_file = absl::GetFlag(FLAGS_tls_cert_file);
  options.tls.key_file = absl::GetFlag(FLAGS_tls_key_file);
  options.tls.server_name_override = absl::GetFlag(FLAGS_tls_server_name);
  options.backoff.initial_delay = absl::GetFlag(FLAGS_reconnect_initial_delay);
  options.backoff.max_delay = absl::GetFlag(FLAGS_reconnect_max_delay);
  options.backoff.min_delay = std::min(options.backoff.min_delay, options.backoff.initial_delay);
  options.welcome_timeout = absl::GetFlag(FLAGS_welcome_timeout);
  options.exclusive_cpus = absl::GetFlag(FLAGS_exclusive_cpus);
  // A bad flag value is one line naming the flag and its range, before anything starts.
  auto flag_error = [](absl::string_view message) {
    std::fprintf(stderr, "fleetmark-agent: %s\n", std::string(message).c_str());
    return kExitConfig;
  };
  // The backoff rule (agent/backoff.h) in the flags' names.
  if (const absl::Status backoff = ValidateBackoffOptions(options.backoff); !backoff.ok()) {
    // One replacement pass: the fields' rule texts in the flags' names.
    const std::string message = absl::StrReplaceAll(
        backoff.message(), {{"backoff.max_delay: 0 < max_delay", "--reconnect_max_delay: 0 < delay"},
                            {"backoff.initial_delay: 0 < initial_delay <= max_delay",
                             "--reconnect_initial_delay: 0 < delay <= --reconnect_max_delay"}});
    return flag_error(message);
  }
  // The address forms (docs/devices.md, "Names"); a host that cannot be dialled is refused here,
  // not retried for ever.
  if (const absl::Status address = CheckDialAddress(options.coordinator, "--coordinator"); !address.ok()) {
    return flag_error(address.message());
  }
  absl::StatusOr<std::map<std::string, std::string>> labels = ParseLabels(absl::GetFlag(FLAGS_labels));
  if (!labels.ok()) return flag_error(absl::StrCat("--", labels.status().message()));
  options.labels = *std::move(labels);
  // The other options are the flags of the same names (ValidateAgentOptions).
  if (const absl::Status valid = ValidateAgentOptions(options); !valid.ok()) {
    const std::string message(valid.message());
    return flag_error(absl::StartsWith(message, "--") ? message : absl::StrCat("--", message));
  }

  absl::StatusOr<v1::HostInfo> host = engine::DetectHost({});
  if (!host.ok()) {
    Log(LogLevel::kWarning,
        absl::StrCat("host detection failed (", host.status().message(), "); registering without host details"));
    host = v1::HostInfo();
  }
  host->add_notes(engine::WorkStealingImplementationNote());
  host->add_notes(engine::OpenMpImplementationNote());
  options.labels = WithAutomaticLabels(std::move(options.labels), AutomaticLabels(*host));
  if (host->emulated()) {
    Log(LogLevel::kWarning, absl::StrCat("running under user-mode emulation (", host->emulation_evidence(),
                                         "): results are marked emulated, not hardware numbers"));
  }
  AgentIdentity identity = BuildIdentity(*std::move(host));
  const HostIds host_ids = ReadHostIds(HostIdentityFiles{});
  identity.machine_id = host_ids.machine_id;
  identity.boot_id = host_ids.boot_id;
  absl::StatusOr<std::unique_ptr<Agent>> agent = Agent::Create(options, std::move(identity), MakeEngineJobExecutor());
  if (!agent.ok()) {
    Log(LogLevel::kError, agent.status().ToString());
    return kExitConfig;
  }
  Log(LogLevel::kInfo, absl::StrCat(VersionLine("fleetmark-agent"), " \"", options.name, "\" dialing ",
                                    options.coordinator, options.tls.ca_file.empty() ? " (plaintext)" : " (TLS)"));

  // Never deleted: the detached signal thread may use it until the process exits.
  Agent* const raw = agent->release();
  std::thread([raw, stop_signals] {
    int signal_number = 0;
    if (sigwait(&stop_signals, &signal_number) == 0) {
      Log(LogLevel::kInfo, absl::StrCat("signal ", signal_number, ": shutting down"));
      raw->Shutdown();
    }
  }).detach();  // lives until exit; Run() may also end on its own (refusal)

  const absl::Status status = raw->Run();
  if (status.ok()) {
    Log(LogLevel::kInfo, "stopped");
    return 0;
  }
  if (absl::IsUnauthenticated(status)) return kExitRefused;  // logged by Run()
  Log(LogLevel::kError, status.ToString());
  return absl::IsNotFound(status) || absl::IsFailedPrecondition(status) || absl::IsPermissionDenied(status) ||
                 absl::IsInvalidArgument(status)
             ? kExitConfig
             : kExitError;
}

}  // namespace
}  // namespace fleetmark::agent

int main(int argc, char** argv) {
  fleetmark::engine::MaybeRunChild(argc, argv);
  return fleetmark::agent::Main(argc, argv);
}
