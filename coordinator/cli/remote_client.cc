#include "coordinator/cli/remote_client.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "coordinator/cli/command.h"
#include "coordinator/cli/exit_codes.h"
#include "engine/common/message_limits.h"
#include "engine/common/text.h"

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
  // gRPC's reconnect backoff grows to 120 s by default; `submit --wait` retries a
  // restarted coordinator every <= 10 s (run_watch.h), so the channel must too.
  grpc::ChannelArguments arguments;
  arguments.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 1000);
  arguments.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 5000);
  // Explicit both ways (gRPC receives 4 MiB by default): engine/common/message_limits.h.
  arguments.SetMaxReceiveMessageSize(kCliMaxMessageBytes);
  arguments.SetMaxSendMessageSize(kCliMaxMessageBytes);
  channel_ = grpc::CreateCustomChannel(options_.coordinator, credentials, arguments);
  stub_ = v1::ControlService::NewStub(channel_);
}

std::unique_ptr<grpc::ClientContext> ControlClient::Context(std::chrono::seconds timeout) const {
  auto context = std::make_unique<grpc::ClientContext>();
  if (!options_.admin_token.empty()) context->AddMetadata("authorization", "Bearer " + options_.admin_token);
  if (timeout.count() > 0) context->set_deadline(std::chrono::system_clock::now() + timeout);
  return context;
}

grpc::Status ControlClient::FetchResults(const std::string& run_id, const std::string& agent_name,
                                         std::chrono::seconds timeout, v1::ExportResultsResponse* out,
                                         bool record_export) const {
  v1::ExportResultsRequest request;
  request.set_run_id(run_id);
  request.set_agent_name(agent_name);
  request.set_record_export(record_export);
  out->Clear();
  auto context = Context(timeout);
  std::unique_ptr<grpc::ClientReader<v1::ExportResultsResponse>> reader = stub_->StreamResults(context.get(), request);
  v1::ExportResultsResponse page;
  bool any = false;
  while (reader->Read(&page)) {
    out->MergeFrom(page);  // the first page carries the run and hosts, every page results
    any = true;
  }
  grpc::Status status = reader->Finish();
  if (status.error_code() == grpc::StatusCode::UNIMPLEMENTED && !any) {
    auto unary = Context(timeout);
    out->Clear();
    status = stub_->ExportResults(unary.get(), request, out);
  }
  if (!status.ok()) out->Clear();
  return status;
}

bool ControlClient::IsTransportError(const grpc::Status& status) const {
  if (status.error_code() != grpc::StatusCode::UNAVAILABLE &&
      status.error_code() != grpc::StatusCode::DEADLINE_EXCEEDED) {
    return false;
  }
  return channel_->GetState(/*try_to_connect=*/false) != GRPC_CHANNEL_READY;
}

namespace {
// The most of a user's input (a run id, an address) an error line repeats, and of a
// coordinator's error message (it may quote input too), in bytes.
constexpr size_t kMaxEchoedBytes = 200;
constexpr size_t kMaxMessageBytes = 4096;
}  // namespace

absl::Status ControlClient::CallError(const std::string& what, const grpc::Status& status) const {
  // `what` and the address may hold what the user typed (a run id, a --coordinator
  // value): escaped and cut like every quoted input.
  const std::string message = absl::StrCat(EscapeForTerminal(what, kMaxEchoedBytes), ": ",
                                           EscapeForTerminal(status.error_message(), kMaxMessageBytes));
  // The code the exit code follows (ExitCodeFor): gRPC's, except that a transport error
  // answered by a TLS mismatch is bad input (the TLS flags must change).
  absl::StatusCode code = static_cast<absl::StatusCode>(status.error_code());
  std::string hint;
  const std::string address = EscapeForTerminal(options_.coordinator, kMaxEchoedBytes);
  switch (status.error_code()) {
    case grpc::StatusCode::UNAVAILABLE:
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      if (IsTransportError(status)) {
        // Something may answer at the address with another TLS set-up: say what differs.
        if (const std::string tls = DiagnoseTlsConnection(address, TlsFiles(options_), kTlsFlagNames); !tls.empty()) {
          hint = absl::StrCat("  (TLS: ", tls, ")\n");
          code = absl::StatusCode::kInvalidArgument;
        } else {
          hint =
              absl::StrCat("  (is a coordinator running at ", address, " (", options_.coordinator_source,
                           ")? pass --coordinator HOST:PORT; for the local stack: eval \"$(deploy/stack.sh env)\")\n");
        }
      } else if (status.error_code() == grpc::StatusCode::UNAVAILABLE) {
        hint = absl::StrCat("  (the coordinator at ", address,
                            " answered, but its database is unavailable: see the coordinator's log)\n");
      } else {
        hint = absl::StrCat("  (the coordinator at ", address, " did not answer in time)\n");
      }
      break;
    case grpc::StatusCode::UNAUTHENTICATED:
      if (options_.admin_token.empty()) {
        hint = absl::StrCat("  (no admin token: pass --admin_token_file FILE or set $FLEETMARK_ADMIN_TOKEN_FILE; ",
                            "for the local stack: eval \"$(deploy/stack.sh env)\", or run from the directory holding ",
                            kStackAdminTokenFile, ")\n");
      } else {
        hint = absl::StrCat("  (the admin token was read from \"", EchoValue(options_.admin_token_file), "\" (",
                            options_.admin_token_source, "); the coordinator's is in the file its --admin_token_file ",
                            "names; the local stack's is ", kStackAdminTokenFile, ")\n");
      }
      break;
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      hint = absl::StrCat("  (a message over a size limit: this CLI sends and receives at most ",
                          FormatMessageLimit(kCliMaxMessageBytes), " per message, the coordinator ",
                          FormatMessageLimit(kCoordinatorMaxMessageBytes), ")\n");
      break;
    default:
      break;
  }
  // The hint is the lines after the error's (each hint ends with a newline, which
  // WriteError adds).
  return FleetmarkError(
      absl::Status(code, hint.empty() ? message : absl::StrCat(message, "\n", absl::StripSuffix(hint, "\n"))));
}

absl::StatusOr<ControlClient> ClientFromFlags() {
  absl::StatusOr<RemoteOptions> options = RemoteOptionsFromFlags();
  if (!options.ok()) return FleetmarkError(options.status());  // InvalidArgument: 2
  return ControlClient(*options);
}

}  // namespace fleetmark::cli
