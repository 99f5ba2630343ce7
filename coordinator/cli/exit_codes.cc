#include "coordinator/cli/exit_codes.h"

#include <iostream>

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

void WriteError(std::string_view source, const absl::Status& status) {
  if (status.ok()) return;
  std::cerr << source << ": " << status.message() << "\n";
}

int ReportError(std::string_view source, const absl::Status& status) {
  WriteError(source, status);
  return ExitCodeFor(status);
}

}  // namespace fleetmark::cli
