// ExitCodeFor: every absl::StatusCode's exit code (coordinator/cli/exit_codes.h).
#include "coordinator/cli/exit_codes.h"

#include "gtest/gtest.h"

namespace fleetmark::cli {
namespace {

TEST(ExitCodeFor, MapsEachStatusCodeByTheTable) {
  EXPECT_EQ(ExitCodeFor(absl::OkStatus()), kExitOk);
  for (const absl::StatusCode code :
       {absl::StatusCode::kInvalidArgument, absl::StatusCode::kOutOfRange, absl::StatusCode::kNotFound,
        absl::StatusCode::kAlreadyExists, absl::StatusCode::kFailedPrecondition, absl::StatusCode::kUnauthenticated,
        absl::StatusCode::kPermissionDenied}) {
    EXPECT_EQ(ExitCodeFor(absl::Status(code, "x")), kExitUsage) << code;
  }
  for (const absl::StatusCode code : {absl::StatusCode::kUnavailable, absl::StatusCode::kDeadlineExceeded}) {
    EXPECT_EQ(ExitCodeFor(absl::Status(code, "x")), kExitUnavailable) << code;
  }
  for (const absl::StatusCode code :
       {absl::StatusCode::kCancelled, absl::StatusCode::kUnknown, absl::StatusCode::kResourceExhausted,
        absl::StatusCode::kAborted, absl::StatusCode::kUnimplemented, absl::StatusCode::kInternal,
        absl::StatusCode::kDataLoss}) {
    EXPECT_EQ(ExitCodeFor(absl::Status(code, "x")), kExitFailure) << code;
  }
}

TEST(ExitCodeFor, ErrorCodesAreNotTheVerdicts) {
  // 3 (cases failed), 4 (deferred) and 128 + s are verdicts a command returns itself.
  for (int raw = 1; raw <= 16; ++raw) {
    const int exit_code = ExitCodeFor(absl::Status(static_cast<absl::StatusCode>(raw), "x"));
    EXPECT_NE(exit_code, kExitCasesFailed) << raw;
    EXPECT_NE(exit_code, kExitDeferred) << raw;
    EXPECT_LT(exit_code, kExitSignalBase) << raw;
  }
}

}  // namespace
}  // namespace fleetmark::cli
