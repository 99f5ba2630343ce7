#include "coordinator/service/server_tls.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "engine/common/status_macros.h"

namespace fleetmark::service {
namespace {

absl::StatusOr<std::string> ReadFile(const std::string& option, const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::InvalidArgumentError(absl::StrCat(option, ": cannot read \"", path, "\""));
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

}  // namespace

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> ServerCredentialsFromFiles(const std::string& cert_file,
                                                                                    const std::string& key_file,
                                                                                    const std::string& client_ca_file) {
  if (cert_file.empty()) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions ssl(client_ca_file.empty()
                                            ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                                            : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  FLEETMARK_ASSIGN_OR_RETURN(std::string cert, ReadFile("tls_cert_file", cert_file));
  FLEETMARK_ASSIGN_OR_RETURN(std::string key, ReadFile("tls_key_file", key_file));
  ssl.pem_key_cert_pairs.push_back({key, cert});
  if (!client_ca_file.empty()) {
    FLEETMARK_ASSIGN_OR_RETURN(ssl.pem_root_certs, ReadFile("tls_client_ca_file", client_ca_file));
  }
  return grpc::SslServerCredentials(ssl);
}

}  // namespace fleetmark::service
