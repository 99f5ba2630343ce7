#include "coordinator/cli/remote_flags.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/flags/flag.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "coordinator/scheduler/cron.h"
#include "coordinator/service/selector.h"

ABSL_FLAG(std::string, coordinator, "127.0.0.1:7443",
          "coordinator gRPC address host:port (remote commands; default: $FLEETMARK_COORDINATOR if set)");
ABSL_FLAG(std::string, admin_token_file, "",
          "file holding the coordinator's admin token (default: $FLEETMARK_ADMIN_TOKEN_FILE, "
          "else .fleetmark/admin_token if it exists)");
ABSL_FLAG(std::string, tls_ca_file, "", "CA (PEM) to verify the coordinator's TLS certificate; empty = plaintext");
ABSL_FLAG(std::string, tls_cert_file, "", "client certificate (PEM) for mutual TLS");
ABSL_FLAG(std::string, tls_key_file, "", "client private key (PEM) for mutual TLS");
ABSL_FLAG(std::string, select, "", "agent selector, e.g. 'arch=arm64,cores>=8' (submit, agents list, schedules create)");
ABSL_FLAG(bool, wait, false, "submit: show live progress per agent, then the results table");
ABSL_FLAG(std::string, agents, "", "compare: two agent names A,B; export: only this agent");
ABSL_FLAG(int, limit, 20, "runs list: how many runs (1..1000)");
ABSL_FLAG(std::string, cron, "", "schedules create: 5-field cron expression, UTC");
ABSL_FLAG(std::string, description, "", "tokens create: what the token is for");

namespace fleetmark::cli {
namespace {

absl::StatusOr<std::string> ReadFlagFile(const std::string& flag, const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::InvalidArgumentError(absl::StrCat("--", flag, ": cannot read \"", path, "\""));
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

}  // namespace

absl::Status CheckSelectFlag() {
  const std::string select = absl::GetFlag(FLAGS_select);
  if (select.empty()) return absl::OkStatus();
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

absl::StatusOr<RemoteOptions> RemoteOptionsFromFlags() {
  RemoteOptions options;
  options.coordinator = absl::GetFlag(FLAGS_coordinator);
  if (const char* env = std::getenv("FLEETMARK_COORDINATOR");
      env != nullptr && *env != '\0' && options.coordinator == "127.0.0.1:7443") {
    options.coordinator = env;
  }
  if (options.coordinator.empty()) return absl::InvalidArgumentError("--coordinator: must not be empty");
  std::string token_file = absl::GetFlag(FLAGS_admin_token_file);
  if (token_file.empty()) {
    if (const char* env = std::getenv("FLEETMARK_ADMIN_TOKEN_FILE"); env != nullptr) token_file = env;
  }
  if (token_file.empty() && std::ifstream(".fleetmark/admin_token").good()) token_file = ".fleetmark/admin_token";
  if (!token_file.empty()) {
    absl::StatusOr<std::string> token = ReadFlagFile("admin_token_file", token_file);
    if (!token.ok()) return token.status();
    options.admin_token = std::string(absl::StripAsciiWhitespace(*token));
  }
  if (const std::string ca = absl::GetFlag(FLAGS_tls_ca_file); !ca.empty()) {
    absl::StatusOr<std::string> pem = ReadFlagFile("tls_ca_file", ca);
    if (!pem.ok()) return pem.status();
    options.tls_ca_pem = *pem;
  }
  const std::string cert = absl::GetFlag(FLAGS_tls_cert_file), key = absl::GetFlag(FLAGS_tls_key_file);
  if (cert.empty() != key.empty()) {
    return absl::InvalidArgumentError("--tls_cert_file and --tls_key_file: give both or neither");
  }
  if (!cert.empty()) {
    if (options.tls_ca_pem.empty()) {
      return absl::InvalidArgumentError("--tls_cert_file: mutual TLS also needs --tls_ca_file");
    }
    absl::StatusOr<std::string> c = ReadFlagFile("tls_cert_file", cert);
    if (!c.ok()) return c.status();
    absl::StatusOr<std::string> k = ReadFlagFile("tls_key_file", key);
    if (!k.ok()) return k.status();
    options.tls_cert_pem = *c;
    options.tls_key_pem = *k;
  }
  return options;
}

}  // namespace fleetmark::cli
