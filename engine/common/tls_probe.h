// Says what is wrong when a gRPC client (the CLI, the agent) cannot reach a coordinator
// because of TLS: gRPC itself only reports "Socket closed", "failed to connect to all
// addresses" or "empty address list" for a plaintext client on a TLS port, a CA that did
// not sign the coordinator's certificate, a missing or refused client certificate, or a
// key that does not match its certificate.
//
// Two checks, with OpenSSL directly (no gRPC):
//  - CheckTlsClientFiles: offline, before connecting — the PEM files parse and the key
//    belongs to the certificate;
//  - DiagnoseTlsConnection: after gRPC failed to connect — one TCP connection and one TLS
//    handshake to the coordinator with the client's own configuration, classified.
//
//   if (std::string why = DiagnoseTlsConnection("10.0.0.5:7000", files, names); !why.empty())
//     std::cerr << "TLS: " << why << "\n";
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace fleetmark {

// The client's TLS material (PEM text). `ca_pem` "" = the client connects in plaintext;
// `cert_pem`/`key_pem` "" = no client certificate.
struct TlsClientFiles {
  std::string ca_pem;
  std::string cert_pem;
  std::string key_pem;
  // The name checked in the coordinator's certificate; "" = the address's host.
  std::string server_name;
};

// How the program names its TLS flags, for messages ("--tls_ca_file" for the CLI,
// "--tls_ca_file" for the agent).
struct TlsFlagNames {
  std::string ca;
  std::string cert;
  std::string key;
};

// OK, or InvalidArgument naming the flag: a CA file with no PEM certificate, a
// certificate or key that does not parse, a key that does not match the certificate.
// Thread-safe.
absl::Status CheckTlsClientFiles(const TlsClientFiles& files, const TlsFlagNames& names);

// After a failed connection to `address` ("host:port", "[v6]:port", or a gRPC target
// with an ipv4:/ipv6:/dns: scheme): "" when the cause is not TLS (nothing listens, the
// handshake succeeds, the address cannot be resolved), else one sentence saying what is
// wrong and which flag fixes it, e.g. "the coordinator at 127.0.0.1:7000 uses TLS and
// this client connects in plaintext: pass --tls_ca_file (the CA that signed its
// certificate)". Blocks for at most about 2 × `timeout` (connect, then handshake).
// Thread-safe.
std::string DiagnoseTlsConnection(const std::string& address, const TlsClientFiles& files, const TlsFlagNames& names,
                                  absl::Duration timeout = absl::Seconds(3));

}  // namespace fleetmark
