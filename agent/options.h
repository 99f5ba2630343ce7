// The agent's configuration (what fleetmark-agent's flags set) and its one check.
//
//   AgentOptions options;
//   options.coordinator = "192.0.2.10:7443";
//   FLEETMARK_RETURN_IF_ERROR(ValidateAgentOptions(options));
#pragma once

#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "agent/backoff.h"
#include "agent/spool.h"

namespace fleetmark::agent {

struct TlsOptions {
  std::string ca_file;    // PEM roots to verify the coordinator; "" = plaintext
  std::string cert_file;  // PEM client certificate for mutual TLS (with key_file)
  std::string key_file;   // PEM private key of cert_file
  // Overrides the name checked in the coordinator's certificate (useful with IP
  // literals and certificates issued for a host name). "" = the target's host.
  std::string server_name_override;
};

struct AgentOptions {
  std::string coordinator;                    // host:port; IP literals need no DNS (agent/target.h)
  std::string token_file;                     // enrollment token; may be "" once a credential is stored
  std::string name;                           // unique in the fleet: [A-Za-z0-9._-]{1,64}
  std::map<std::string, std::string> labels;  // agent/labels.h
  std::string spool_dir;                      // spool + credential; created if missing
  TlsOptions tls;
  BackoffOptions backoff;
  SpoolOptions spool;
  // --exclusive_cpus: this agent is pinned to CPUs no other agent of its host uses
  // (Hello.exclusive_cpus). Two such agents on one host may run jobs at the same time;
  // otherwise the coordinator runs one job per host.
  bool exclusive_cpus = false;
  // A session that gets no Welcome/Refusal within this time is abandoned.
  absl::Duration welcome_timeout = absl::Seconds(30);
  // Used until the Welcome gives an interval (or if it gives 0).
  absl::Duration default_heartbeat_interval = absl::Seconds(10);
  // gRPC HTTP/2 keepalive pings (detect a dead path behind NAT).
  absl::Duration keepalive_time = absl::Seconds(20);
  absl::Duration keepalive_timeout = absl::Seconds(10);
};

// Checks every field; InvalidArgument naming the field, value and allowed form.
// Pure function, thread-safe.
absl::Status ValidateAgentOptions(const AgentOptions& options);

}  // namespace fleetmark::agent
