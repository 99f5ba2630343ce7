#include "coordinator/cli/remote_flags.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

#include "absl/flags/flag.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "coordinator/scheduler/cron.h"
#include "coordinator/cli/command.h"
#include "engine/common/host_port.h"
#include "coordinator/cli/run_flags.h"
#include "coordinator/service/run_cases.h"
#include "coordinator/service/selector.h"
#include "engine/common/flag_parser.h"
#include "engine/common/secret_file.h"
#include "engine/common/status_macros.h"
#include "engine/common/text.h"
#include "engine/report/recommend_plan.h"

ABSL_FLAG(std::string, coordinator, "",
          "coordinator gRPC address IP:PORT, HOST:PORT or a gRPC target such as "
          "dns://DNS_SERVER_IP/HOST:PORT (devices without /etc/resolv.conf) or unix:/path/to/socket (remote commands; "
          "default: $FLEETMARK_COORDINATOR, else "
          "127.0.0.1 and the port in .fleetmark/coordinator.port (the local stack's), else 127.0.0.1:7443)");
ABSL_FLAG(std::string, admin_token_file, "",
          "file holding the coordinator's admin token (default: $FLEETMARK_ADMIN_TOKEN_FILE, "
          "else .fleetmark/admin_token if it exists)");
ABSL_FLAG(std::string, tls_ca_file, "", "CA (PEM) to verify the coordinator's TLS certificate; empty = plaintext");
ABSL_FLAG(std::string, tls_cert_file, "", "client certificate (PEM) for mutual TLS");
ABSL_FLAG(std::string, tls_key_file, "", "client private key (PEM) for mutual TLS");
ABSL_FLAG(std::string, select, "",
          "agent selector, e.g. 'arch=arm64,cores>=8', or 'all' for every agent (required by submit and "
          "schedules create; agents list: optional filter)");
ABSL_FLAG(bool, wait, false,
          "submit: show live progress per agent, then the results table (keeps watching through a "
          "coordinator restart)");
ABSL_FLAG(std::string, agents, "",
          "compare: agent names A[,B,...] (with --cases: only these devices); export: only this agent");
ABSL_FLAG(
    std::string, cases, "",
    "compare: two cases A,B of the run (a case id, or whole '/'-parts of exactly one, e.g. a strategy label): B/A "
    "per device and over the fleet");
ABSL_FLAG(double, min_margin, 0.02,
          "compare: a winner (or faster/slower) only when the CIs separate and the margin exceeds this fraction "
          "(0 <= min_margin < 1; 0.02 = 2 %)");
ABSL_FLAG(std::string, agent, "", "map, recommend, changes list: only this agent");
ABSL_FLAG(std::string, results, "",
          "compare, map, recommend: read the results from these files, FILE[,FILE...] (`fleetmark run` or "
          "`fleetmark export` --format json, docs/results-schema.md) instead of a run: each device of each file "
          "side by side");
ABSL_FLAG(std::string, profile, "",
          "recommend: the task profile, key=value[,key=value] of the synthetic workload's parameters "
          "(cpu_ns|cpu_us|cpu_ms, wait_us|wait_ms, alloc_bytes|alloc_kib, touch_kib|touch_mib)");
ABSL_FLAG(std::string, run, "", "recommend: the run (id or unique prefix) to answer from");
ABSL_FLAG(std::string, plan_latest, "", "recommend: answer from the latest finished run of the plan of this name");
ABSL_FLAG(bool, measure, false,
          "recommend: measure the smallest plan that brackets --profile (the profile and its neighbours x0.5 "
          "and x2, blocking and suspending waits) with quick settings, here, or on the agents --select "
          "matches, and answer from it");
// The range in "(1..N)" is the one the flag parser enforces (flag_parser.h), from the
// bracket plan's own limit.
ABSL_FLAG(int, tasks, 100,
          absl::StrCat("recommend --measure: tasks per batch the answer assumes (1..",
                       fleetmark::report::kMaxBracketTasks, ")"));
ABSL_FLAG(std::string, plan_out, "", "recommend --measure: also write the plan it runs to this file (text format)");
ABSL_FLAG(std::string, workload, "",
          "recommend: instead of --profile, the answer for a fixed workload of the run (arithmetic, "
          "collections, storage, network, mixed) across its io modes, in one sentence");
ABSL_FLAG(bool, include_emulated, false,
          "compare, map: also compare results measured under user-mode emulation (qemu-user), marked "
          "(emulated); left out by default: they are the emulator's numbers, not the hardware's");
ABSL_FLAG(int, limit, 20, "runs list: how many runs (1..1000)");
ABSL_FLAG(std::string, cron, "", "schedules create: 5-field cron expression, UTC");
ABSL_FLAG(std::string, description, "", "tokens create: what the token is for");
ABSL_FLAG(bool, all, false, "agents list: also the agents removed by `agents remove`");
ABSL_FLAG(std::string, since, "",
          "changes list: changes found since a duration back from now (24h, 90m, 7d) or a UTC date or time "
          "(2026-12-01, 2026-12-01T10:00:00Z)");
ABSL_FLAG(std::string, state, "",
          "changes list: only changes in this state: suspected, confirmed, not_reproduced or unconfirmed");
ABSL_FLAG(absl::Duration, queue_offline, absl::ZeroDuration(),
          "submit: also queue jobs for the matching agents that are offline now (a phone that connects "
          "later); a job its agent has not taken within this duration of the submit fails as expired "
          "(1s to 720h, e.g. --queue_offline=24h; 0, the default: online agents only)");
ABSL_FLAG(std::string, older_than, "",
          "results prune: drop the months of results whose range ends before now minus this duration "
          "(400d, 8w, 720h; 1h to 36500d), with their runs");
ABSL_FLAG(bool, force, false, "results prune: also drop runs that were never exported (fleetmark export)");
ABSL_FLAG(bool, dry_run, false,
          "results prune: list what would be dropped, change nothing; recommend --measure: print the plan "
          "it would run (or write it to --plan_out), measure nothing");
ABSL_FLAG(absl::Duration, timeout, absl::InfiniteDuration(),
          "submit --wait, recommend --measure --select: stop waiting after this long (e.g. 30m, 2h) and exit 1 "
          "with the run's state; the run goes on (default: wait until it ends)");

namespace fleetmark::cli {
namespace {

constexpr char kDefaultCoordinator[] = "127.0.0.1:7443";

// The text of the file at `path`. `what` names where the path came from (a flag
// "--x", an environment variable, a default file) for the errors: InvalidArgument for
// a missing or unreadable path (with strerror), a directory or another non-file.
absl::StatusOr<std::string> ReadNamedFile(const std::string& what, const std::string& path) {
  auto error = [&](absl::string_view problem) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": \"", path, "\": ", problem));
  };
  struct stat st = {};
  if (::stat(path.c_str(), &st) != 0) return error(std::strerror(errno));
  if (S_ISDIR(st.st_mode)) return error("is a directory, not a file");
  if (!S_ISREG(st.st_mode)) return error("is not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return error(std::strerror(errno));
  std::stringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return error(std::strerror(errno));
  return buffer.str();
}

namespace {

// The address is checked as fleetmark-agent checks its own (CheckDialAddress: IP:PORT,
// [IPv6]:PORT, a DNS-name HOST:PORT, dns:, ipv4:, ipv6:, unix: targets; ports 1..65535,
// digits only), so a malformed one is bad usage (exit 2) before anything is dialled
// rather than a connection failure. gRPC's unix-abstract: and vsock: targets, which the
// agent does not take, pass as given.
absl::Status CheckCoordinatorAddress(const RemoteOptions& options) {
  for (absl::string_view scheme : {"unix-abstract:", "vsock:"}) {
    if (absl::StartsWith(options.coordinator, scheme)) return absl::OkStatus();
  }
  return CheckDialAddress(options.coordinator, options.coordinator_source);
}

}  // namespace

absl::Status ResolveCoordinator(RemoteOptions& options) {
  options.coordinator = absl::GetFlag(FLAGS_coordinator);
  options.coordinator_source = "--coordinator";
  if (!options.coordinator.empty()) return CheckCoordinatorAddress(options);
  if (const char* env = std::getenv("FLEETMARK_COORDINATOR"); env != nullptr && *env != '\0') {
    options.coordinator = env;
    options.coordinator_source = "$FLEETMARK_COORDINATOR";
    return CheckCoordinatorAddress(options);
  }
  struct stat st = {};
  if (::stat(kStackPortFile, &st) == 0) {
    FLEETMARK_ASSIGN_OR_RETURN(std::string text, ReadNamedFile("coordinator port file", kStackPortFile));
    const absl::string_view port_text = absl::StripAsciiWhitespace(text);
    const std::optional<int> port = ParsePort(std::string_view(port_text.data(), port_text.size()), 1);
    if (!port) {
      return absl::InvalidArgumentError(absl::StrCat("coordinator port file \"", kStackPortFile,
                                                     "\": a port 1..65535, got \"", port_text.substr(0, 40),
                                                     "\" (pass --coordinator HOST:PORT)"));
    }
    options.coordinator = absl::StrCat("127.0.0.1:", *port);
    options.coordinator_source = kStackPortFile;
    return absl::OkStatus();
  }
  options.coordinator = kDefaultCoordinator;
  options.coordinator_source = "the default";
  return absl::OkStatus();
}

absl::Status ResolveAdminToken(RemoteOptions& options) {
  std::string file = absl::GetFlag(FLAGS_admin_token_file);
  std::string source = "--admin_token_file";
  if (file.empty()) {
    if (const char* env = std::getenv("FLEETMARK_ADMIN_TOKEN_FILE"); env != nullptr && *env != '\0') {
      file = env;
      source = "$FLEETMARK_ADMIN_TOKEN_FILE";
    }
  }
  struct stat st = {};
  if (file.empty() && ::stat(kStackAdminTokenFile, &st) == 0) {
    file = kStackAdminTokenFile;
    source = "the default admin token file";
  }
  if (file.empty()) return absl::OkStatus();
  absl::StatusOr<std::string> token =
      ReadSecretFile(source, file,
                     absl::StrCat("the coordinator's admin token (the file the coordinator's --admin_token_file "
                                  "names; the local stack's is ",
                                  kStackAdminTokenFile, ")"));
  if (!token.ok()) return absl::Status(token.status().code(), CutEchoes(std::string(token.status().message()), file));
  options.admin_token = *std::move(token);
  // The token travels as an HTTP/2 header value: gRPC aborts the process on a byte it
  // cannot send there.
  FLEETMARK_RETURN_IF_ERROR(CheckSecretText(absl::StrCat(source, ": \"", EchoValue(file), "\""), options.admin_token));
  options.admin_token_file = file;
  options.admin_token_source = source;
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckSelectFlag(bool required) {
  const std::string select = absl::GetFlag(FLAGS_select);
  FLEETMARK_RETURN_IF_ERROR(CheckRequestText("--select", select));
  if (absl::StripAsciiWhitespace(select).empty()) {
    if (!required) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(
        "--select is required", select.empty() ? "" : absl::StrCat(" and must not be blank, got \"", select, "\""),
        ": which agents, e.g. --select 'arch=x86_64' or --select name=box2; --select ", service::Selector::kAll,
        " for every online agent"));
  }
  absl::StatusOr<service::Selector> selector = service::Selector::Parse(select);
  if (selector.ok()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("--select: ", selector.status().message()));
}

absl::Status CheckCronFlag() {
  const std::string cron = absl::GetFlag(FLAGS_cron);
  if (cron.empty()) return absl::InvalidArgumentError("--cron is required (5 fields, UTC)");
  absl::StatusOr<scheduler::CronSchedule> schedule = scheduler::CronSchedule::Parse(cron);
  if (schedule.ok()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("--cron: ", schedule.status().message()));
}

absl::StatusOr<std::vector<std::string>> SplitListFlag(absl::string_view flag, absl::string_view value) {
  std::vector<std::string> items;
  for (absl::string_view item : absl::StrSplit(value, ',')) {
    item = absl::StripAsciiWhitespace(item);
    if (item.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(flag, ": item ", items.size() + 1, " of \"",
                                                     absl::CHexEscape(value),
                                                     "\" is empty (two commas, or a trailing comma?)"));
    }
    items.emplace_back(item);
  }
  return items;
}

absl::Status CheckFilterFlag(const v1::Plan& plan) {
  return service::CountSelectedCases(plan, absl::GetFlag(FLAGS_quick), absl::GetFlag(FLAGS_filter)).status();
}

namespace {

// A duration flag's value as the user typed it (FlagTextGiven), else as Abseil formats it.
std::string GivenText(absl::string_view flag, absl::Duration value) {
  const std::string given = FlagTextGiven(flag);
  return given.empty() ? absl::FormatDuration(value) : EscapeForTerminal(given, 200);
}

}  // namespace

absl::StatusOr<absl::Duration> TimeoutFromFlag() {
  const absl::Duration timeout = absl::GetFlag(FLAGS_timeout);
  if (timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--timeout: a duration > 0 such as 30s, 10m or 2h, got \"", GivenText("timeout", timeout), "\""));
  }
  return timeout;
}

absl::StatusOr<RemoteOptions> RemoteOptionsFromFlags() {
  // The string flags sent in requests' string fields: every remote command's client
  // comes from here, so they are checked before its first call.
  for (const auto& [flag, value] : {std::pair<const char*, std::string>{"--select", absl::GetFlag(FLAGS_select)},
                                    {"--filter", absl::GetFlag(FLAGS_filter)},
                                    {"--cron", absl::GetFlag(FLAGS_cron)},
                                    {"--description", absl::GetFlag(FLAGS_description)},
                                    {"--agent", absl::GetFlag(FLAGS_agent)},
                                    {"--agents", absl::GetFlag(FLAGS_agents)},
                                    {"--state", absl::GetFlag(FLAGS_state)},
                                    {"--run", absl::GetFlag(FLAGS_run)},
                                    {"--plan_latest", absl::GetFlag(FLAGS_plan_latest)}}) {
    FLEETMARK_RETURN_IF_ERROR(CheckRequestText(flag, value));
  }
  // Agent names, checked against the name rule before any call (a 100 KB name would
  // fail in gRPC's metadata limits, not as a name).
  if (const std::string agent = absl::GetFlag(FLAGS_agent); !agent.empty()) {
    FLEETMARK_RETURN_IF_ERROR(CheckNameArgument("--agent", agent));
  }
  // Items are trimmed and empty ones left to the command, which names their position.
  for (absl::string_view agent : absl::StrSplit(absl::GetFlag(FLAGS_agents), ',', absl::SkipWhitespace())) {
    FLEETMARK_RETURN_IF_ERROR(CheckNameArgument("--agents", std::string(absl::StripAsciiWhitespace(agent))));
  }
  RemoteOptions options;
  FLEETMARK_RETURN_IF_ERROR(ResolveCoordinator(options));
  FLEETMARK_RETURN_IF_ERROR(ResolveAdminToken(options));
  if (const std::string ca = absl::GetFlag(FLAGS_tls_ca_file); !ca.empty()) {
    FLEETMARK_ASSIGN_OR_RETURN(options.tls_ca_pem, ReadNamedFile("--tls_ca_file", ca));
  }
  const std::string cert = absl::GetFlag(FLAGS_tls_cert_file), key = absl::GetFlag(FLAGS_tls_key_file);
  if (cert.empty() != key.empty()) {
    return absl::InvalidArgumentError("--tls_cert_file and --tls_key_file: give both or neither");
  }
  if (!cert.empty()) {
    if (options.tls_ca_pem.empty()) {
      return absl::InvalidArgumentError("--tls_cert_file: mutual TLS also needs --tls_ca_file");
    }
    FLEETMARK_ASSIGN_OR_RETURN(options.tls_cert_pem, ReadNamedFile("--tls_cert_file", cert));
    FLEETMARK_ASSIGN_OR_RETURN(options.tls_key_pem, ReadNamedFile("--tls_key_file", key));
  }
  // Unusable TLS files are bad input, found before connecting (gRPC would only say
  // "empty address list" or fail the handshake).
  FLEETMARK_RETURN_IF_ERROR(CheckTlsClientFiles(TlsFiles(options), kTlsFlagNames));
  return options;
}

TlsClientFiles TlsFiles(const RemoteOptions& options) {
  return {options.tls_ca_pem, options.tls_cert_pem, options.tls_key_pem, ""};
}

}  // namespace fleetmark::cli
