// ExitCodeFor: every absl::StatusCode's exit code; WriteError's one error line, under
// the command's name or, for a FleetmarkError, "fleetmark" (coordinator/cli/exit_codes.h).
#include "coordinator/cli/exit_codes.h"

#include <iostream>
#include <sstream>
#include <string>

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

// What WriteError(source, status) writes to std::cerr.
std::string Written(std::string_view source, const absl::Status& status) {
  std::ostringstream out;
  std::streambuf* previous = std::cerr.rdbuf(out.rdbuf());
  WriteError(source, status);
  std::cerr.rdbuf(previous);
  return out.str();
}

TEST(WriteError, NamesTheCommandUnlessTheErrorIsFleetmarks) {
  EXPECT_EQ(Written("fleetmark compare", absl::InvalidArgumentError("--format: table or json, got \"x\"")),
            "fleetmark compare: --format: table or json, got \"x\"\n");
  const absl::Status own = FleetmarkError(absl::InvalidArgumentError("compare: --format: table or json, got \"x\""));
  EXPECT_EQ(Written("fleetmark compare", own), "fleetmark: compare: --format: table or json, got \"x\"\n");
  EXPECT_EQ(own.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Written("fleetmark compare", absl::OkStatus()), "");
  EXPECT_TRUE(FleetmarkError(absl::OkStatus()).ok());
}

TEST(WriteError, AUsageErrorIsFleetmarksWithTheUsageLineAndExit2) {
  const absl::Status usage = UsageError("fleetmark runs show RUN [--wide]", "runs show takes one run id");
  EXPECT_EQ(Written("fleetmark runs show", usage),
            "fleetmark: runs show takes one run id\nusage: fleetmark runs show RUN [--wide]\n");
  EXPECT_EQ(ExitCodeFor(usage), kExitUsage);
}

TEST(AppendToError, KeepsTheCodeAndWhoWritesIt) {
  const absl::Status hinted =
      AppendToError(FleetmarkError(absl::NotFoundError("tokens revoke x: no such token")), "\n  (hint)");
  EXPECT_EQ(hinted.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(Written("fleetmark tokens revoke", hinted), "fleetmark: tokens revoke x: no such token\n  (hint)\n");
  EXPECT_EQ(ExitCodeFor(AppendToError(absl::UnavailableError("down"), " (later)")), kExitUnavailable);
  EXPECT_TRUE(AppendToError(absl::OkStatus(), "x").ok());
}

}  // namespace
}  // namespace fleetmark::cli
