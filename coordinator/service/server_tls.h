// The coordinator's gRPC server credentials from its TLS options (coordinator_options.h):
// plaintext without a certificate, TLS with one, mutual TLS with a client CA.
//
//   FLEETMARK_ASSIGN_OR_RETURN(auto credentials, ServerCredentialsFromFiles(cert, key, ca));
//   builder.AddListeningPort(address, credentials, &port);
//
// Thread-safety: reads the files each call; safe from any thread.
#pragma once

#include <memory>
#include <string>

#include <grpcpp/security/server_credentials.h>

#include "absl/status/statusor.h"

namespace fleetmark::service {

// Insecure credentials when `cert_file` is ""; else TLS with the PEM certificate chain
// `cert_file` and private key `key_file` (both given: CheckCoordinatorOptions), and with
// `client_ca_file` non-empty, client certificates required and verified against it.
// InvalidArgument "tls_cert_file: cannot read "PATH"" (tls_key_file, tls_client_ca_file)
// for a file that cannot be read; PEM contents are checked by gRPC when the server
// starts.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> ServerCredentialsFromFiles(const std::string& cert_file,
                                                                                    const std::string& key_file,
                                                                                    const std::string& client_ca_file);

}  // namespace fleetmark::service
