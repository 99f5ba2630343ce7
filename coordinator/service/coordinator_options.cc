#include "coordinator/service/coordinator_options.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "coordinator/store/read_router.h"
#include "engine/common/host_port.h"
#include "engine/common/status_macros.h"
#include "engine/plan/plan.h"

namespace fleetmark::service {
namespace {

bool IsLoopback(const std::string& address) {
  return absl::StartsWith(address, "127.") || absl::StartsWith(address, "localhost:") ||
         absl::StartsWith(address, "[::1]:") || absl::StartsWith(address, "ipv4:127.") ||
         absl::StartsWith(address, "unix:");
}

}  // namespace

absl::Status CheckCoordinatorOptions(const CoordinatorOptions& o) {
  if (o.store == StoreBackend::kMemory) {
    if (!o.database_uri.empty() || !o.read_database_uri.empty()) {
      return absl::InvalidArgumentError(
          "store: the memory store takes no database_uri or read_database_uri (give one store)");
    }
  } else {
    if (o.database_uri.empty()) return absl::InvalidArgumentError("database_uri: required");
    if (o.memory_database != nullptr) {
      return absl::InvalidArgumentError("memory_database: only with the memory store (store = kMemory)");
    }
  }
  if (o.tls_cert_file.empty() != o.tls_key_file.empty()) {
    return absl::InvalidArgumentError("tls_cert_file and tls_key_file: give both or neither");
  }
  if (!o.tls_client_ca_file.empty() && o.tls_cert_file.empty()) {
    return absl::InvalidArgumentError("tls_client_ca_file: mutual TLS needs tls_cert_file and tls_key_file");
  }
  if (!absl::StartsWith(o.listen_address, "unix:") && !absl::StartsWith(o.listen_address, "ipv4:") &&
      !absl::StartsWith(o.listen_address, "ipv6:")) {
    FLEETMARK_RETURN_IF_ERROR(ParseHostPort(o.listen_address, "listen_address").status());
  }
  if (o.store == StoreBackend::kMemory && !IsLoopback(o.listen_address)) {
    return absl::InvalidArgumentError(
        absl::StrCat("listen_address \"", o.listen_address,
                     "\": the memory store serves loopback (127.x, localhost, [::1] or unix:) only; it keeps "
                     "nothing past the process and is for tests and demos, use PostgreSQL (database_uri) for a fleet"));
  }
  if (o.tls_cert_file.empty() && !o.allow_insecure_remote && !IsLoopback(o.listen_address)) {
    return absl::InvalidArgumentError(
        absl::StrCat("listen_address \"", o.listen_address,
                     "\": plaintext on a non-loopback address; configure TLS (tls_cert_file/tls_key_file) "
                     "or pass allow_insecure_remote"));
  }
  if (absl::Status gates = engine::ValidatePreconditions(o.default_preconditions, "default_preconditions");
      !gates.ok()) {
    return gates;
  }
  if (o.max_attempts < 1 || o.max_attempts > 100) {
    return absl::InvalidArgumentError(absl::StrCat("max_attempts: 1 <= max_attempts <= 100, got ", o.max_attempts));
  }
  if (o.executor_threads < 1 || o.executor_threads > 64) {
    return absl::InvalidArgumentError(
        absl::StrCat("executor_threads: 1 <= executor_threads <= 64, got ", o.executor_threads));
  }
  if (o.db_pool_size < 2 || o.db_pool_size > 256) {
    return absl::InvalidArgumentError(absl::StrCat("db_pool_size: 2 <= db_pool_size <= 256, got ", o.db_pool_size));
  }
  if (!o.read_database_uri.empty()) {
    store::ReadRouterOptions reads;
    reads.primary_uri = o.database_uri;
    reads.replica_uri = o.read_database_uri;
    reads.max_lag = o.read_max_lag;
    if (absl::Status valid = store::ValidateReadRouterOptions(reads); !valid.ok()) return valid;
  }
  if (o.max_agent_streams < 0 || o.max_agent_streams > 1000000) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_agent_streams: 0 (the descriptor budget) <= max_agent_streams <= 1000000, got ", o.max_agent_streams));
  }
  if (o.heartbeat_interval < absl::Milliseconds(100) || o.job_lease < 2 * o.heartbeat_interval) {
    return absl::InvalidArgumentError(
        absl::StrCat("heartbeat_interval >= 100ms and job_lease >= 2 x heartbeat_interval, got heartbeat_interval ",
                     absl::FormatDuration(o.heartbeat_interval), ", job_lease ", absl::FormatDuration(o.job_lease)));
  }
  if (o.requeue_timeout < absl::ZeroDuration() || o.requeue_timeout > absl::Hours(24 * 7)) {
    return absl::InvalidArgumentError(
        absl::StrCat("requeue_timeout: 0 (one job_lease) <= requeue_timeout <= 168h, got ",
                     absl::FormatDuration(o.requeue_timeout)));
  }
  if (o.sweep_interval < absl::Milliseconds(10) || o.sweep_interval > absl::Minutes(1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("sweep_interval: 10ms <= sweep_interval <= 1m, got ", absl::FormatDuration(o.sweep_interval)));
  }
  return store::ValidateHealthOptions(o.health);
}

}  // namespace fleetmark::service
