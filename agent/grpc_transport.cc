// The gRPC transport of agent/transport.h: channel arguments, TLS credentials and the
// TLS diagnosis of a failed connect.
#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "agent/file_util.h"
#include "agent/target.h"
#include "agent/transport.h"
#include "engine/common/message_limits.h"
#include "engine/common/status_macros.h"
#include "engine/common/tls_probe.h"
#include "fleetmark/v1/agent.grpc.pb.h"

namespace fleetmark::agent {
namespace {

using fleetmark::v1::AgentMessage;
using fleetmark::v1::CoordinatorMessage;

// The agent's TLS flags, as tls_probe.h names them in messages.
const TlsFlagNames kAgentTlsFlags{"--tls_ca_file", "--tls_cert_file", "--tls_key_file"};

// The PEM text of the TLS files ("" where none is configured).
absl::StatusOr<TlsClientFiles> ReadTlsFiles(const TlsOptions& tls) {
  TlsClientFiles files;
  files.server_name = tls.server_name_override;
  if (tls.ca_file.empty()) return files;
  FLEETMARK_ASSIGN_OR_RETURN(files.ca_pem, ReadWholeFile(tls.ca_file, 1 << 20));
  if (!tls.cert_file.empty()) {
    FLEETMARK_ASSIGN_OR_RETURN(files.cert_pem, ReadWholeFile(tls.cert_file, 1 << 20));
    FLEETMARK_ASSIGN_OR_RETURN(files.key_pem, ReadWholeFile(tls.key_file, 1 << 20));
  }
  return files;
}

// InvalidArgument (a configuration error: the agent exits) for TLS files that are not
// PEM or a key that does not belong to its certificate.
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeCredentials(const TlsOptions& tls) {
  if (tls.ca_file.empty()) return grpc::InsecureChannelCredentials();
  FLEETMARK_ASSIGN_OR_RETURN(TlsClientFiles files, ReadTlsFiles(tls));
  FLEETMARK_RETURN_IF_ERROR(CheckTlsClientFiles(files, kAgentTlsFlags));
  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = files.ca_pem;
  ssl.pem_cert_chain = files.cert_pem;
  ssl.pem_private_key = files.key_pem;
  return grpc::SslCredentials(ssl);
}

// One Connect call; started by the first Write (so a Cancel before it fails it fast).
class GrpcSessionStream : public SessionStream {
 public:
  explicit GrpcSessionStream(std::shared_ptr<grpc::Channel> channel)
      : stub_(fleetmark::v1::AgentService::NewStub(std::move(channel))) {}

  bool Write(const AgentMessage& message) override {
    if (stream_ == nullptr) stream_ = stub_->Connect(&context_);
    return stream_->Write(message);
  }
  bool Read(CoordinatorMessage* message) override { return stream_ != nullptr && stream_->Read(message); }
  void Cancel() override { context_.TryCancel(); }
  absl::Status Finish() override {
    if (stream_ == nullptr) return absl::CancelledError("the stream was never started");
    const grpc::Status status = stream_->Finish();
    return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
  }

 private:
  std::unique_ptr<fleetmark::v1::AgentService::Stub> stub_;
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReaderWriter<AgentMessage, CoordinatorMessage>> stream_;
};

class GrpcTransport : public Transport {
 public:
  GrpcTransport(AgentOptions options, std::string target) : options_(std::move(options)), target_(std::move(target)) {}

  absl::StatusOr<std::unique_ptr<SessionStream>> Open() override {
    FLEETMARK_ASSIGN_OR_RETURN(std::shared_ptr<grpc::ChannelCredentials> credentials, MakeCredentials(options_.tls));
    // A fresh channel per session: our backoff, not the channel's, paces reconnects.
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, static_cast<int>(absl::ToInt64Milliseconds(options_.keepalive_time)));
    args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, static_cast<int>(absl::ToInt64Milliseconds(options_.keepalive_timeout)));
    args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
    args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
    args.SetInt(GRPC_ARG_ENABLE_RETRIES, 0);
    // A job assignment carries its whole plan: gRPC's 4 MiB receive default is too small
    // for plans the coordinator accepts (engine/common/message_limits.h).
    args.SetMaxReceiveMessageSize(kAgentMaxMessageBytes);
    args.SetMaxSendMessageSize(kAgentMaxMessageBytes);
    if (!options_.tls.server_name_override.empty()) {
      args.SetSslTargetNameOverride(options_.tls.server_name_override);
    }
    return std::make_unique<GrpcSessionStream>(grpc::CreateCustomChannel(target_, credentials, args));
  }

  // A TLS mismatch looks like any transport failure to gRPC; the probe tells.
  std::string DiagnoseConnectFailure() override {
    absl::StatusOr<TlsClientFiles> files = ReadTlsFiles(options_.tls);
    if (!files.ok()) return "";
    return DiagnoseTlsConnection(options_.coordinator, *files, kAgentTlsFlags);
  }

 private:
  const AgentOptions options_;
  const std::string target_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Transport>> MakeGrpcTransport(const AgentOptions& options) {
  FLEETMARK_ASSIGN_OR_RETURN(std::string target, CoordinatorTarget(options.coordinator));
  return std::make_unique<GrpcTransport>(options, std::move(target));
}

}  // namespace fleetmark::agent
