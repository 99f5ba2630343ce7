#include "coordinator/cli/remote_client.h"

#include <iostream>

#include "coordinator/cli/command.h"

namespace fleetmark::cli {

ControlClient::ControlClient(const RemoteOptions& options) : options_(options) {
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  if (options_.tls_ca_pem.empty()) {
    credentials = grpc::InsecureChannelCredentials();
  } else {
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = options_.tls_ca_pem;
    ssl.pem_cert_chain = options_.tls_cert_pem;
    ssl.pem_private_key = options_.tls_key_pem;
    credentials = grpc::SslCredentials(ssl);
  }
  channel_ = grpc::CreateChannel(options_.coordinator, credentials);
  stub_ = v1::ControlService::NewStub(channel_);
}

std::unique_ptr<grpc::ClientContext> ControlClient::Context(std::chrono::seconds timeout) const {
  auto context = std::make_unique<grpc::ClientContext>();
  if (!options_.admin_token.empty()) context->AddMetadata("authorization", "Bearer " + options_.admin_token);
  if (timeout.count() > 0) context->set_deadline(std::chrono::system_clock::now() + timeout);
  return context;
}

int ControlClient::Fail(const std::string& what, const grpc::Status& status) const {
  std::cerr << "fleetmark: " << what << ": " << status.error_message() << "\n";
  switch (status.error_code()) {
    case grpc::StatusCode::UNAVAILABLE:
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      std::cerr << "  (is a coordinator running at " << options_.coordinator << "? see --coordinator)\n";
      return kExitFailure;
    case grpc::StatusCode::UNAUTHENTICATED:
      if (options_.admin_token.empty()) std::cerr << "  (no admin token: pass --admin_token_file)\n";
      return kExitUsage;
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::NOT_FOUND:
    case grpc::StatusCode::FAILED_PRECONDITION:
    case grpc::StatusCode::ALREADY_EXISTS:
      return kExitUsage;
    default:
      return kExitFailure;
  }
}

std::optional<ControlClient> ClientFromFlags(int* exit_code) {
  absl::StatusOr<RemoteOptions> options = RemoteOptionsFromFlags();
  if (!options.ok()) {
    std::cerr << "fleetmark: " << options.status().message() << "\n";
    *exit_code = kExitUsage;
    return std::nullopt;
  }
  return std::optional<ControlClient>(std::in_place, *options);
}

int RemoteUsageError(const std::string& usage, const std::string& message) {
  std::cerr << "fleetmark: " << message << "\nusage: " << usage << "\n";
  return kExitUsage;
}

}  // namespace fleetmark::cli
