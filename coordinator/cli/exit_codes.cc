#include "coordinator/cli/exit_codes.h"

#include <iostream>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"

namespace fleetmark::cli {

int ExitCodeFor(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kOk:
      return kExitOk;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kUnauthenticated:
    case absl::StatusCode::kPermissionDenied:
      return kExitUsage;
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
      return kExitUnavailable;
    default:
      return kExitFailure;
  }
}

namespace {
// The payload that says who writes an error (FleetmarkError); its value is the source.
constexpr char kSourcePayload[] = "type.fleetmark.dev/cli.ErrorSource";
constexpr char kFleetmark[] = "fleetmark";
}  // namespace

absl::Status FleetmarkError(absl::Status status) {
  if (!status.ok()) status.SetPayload(kSourcePayload, absl::Cord(kFleetmark));
  return status;
}

absl::Status AppendToError(const absl::Status& status, absl::string_view text) {
  if (status.ok()) return status;
  absl::Status longer(status.code(), absl::StrCat(status.message(), text));
  status.ForEachPayload(
      [&](absl::string_view type_url, const absl::Cord& payload) { longer.SetPayload(type_url, payload); });
  return longer;
}

absl::Status UsageError(absl::string_view usage, absl::string_view message) {
  return FleetmarkError(absl::InvalidArgumentError(absl::StrCat(message, "\nusage: ", usage)));
}

void WriteError(std::string_view source, const absl::Status& status) {
  if (status.ok()) return;
  const auto said_by = status.GetPayload(kSourcePayload);  // absl::optional<absl::Cord>
  std::cerr << (said_by ? std::string(*said_by) : std::string(source)) << ": " << status.message() << "\n";
}

int ReportError(std::string_view source, const absl::Status& status) {
  WriteError(source, status);
  return ExitCodeFor(status);
}

}  // namespace fleetmark::cli
