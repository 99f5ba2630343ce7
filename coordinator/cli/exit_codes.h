// The `fleetmark` CLI's process exit codes, and the one place an error becomes one:
// ExitCodeFor maps an absl::Status code to an exit code (docs/cli.md, "Exit codes"),
// WriteError writes an error line to stderr. Commands return an error absl::Status
// (Command::run); RunCli writes it with WriteError and exits with ExitCodeFor.
//
//   return absl::InvalidArgumentError("takes no arguments, got \"x\"");  // in a command
//   // RunCli: "fleetmark list: takes no arguments, got "x"", exit 2
//
// Thread-compatible; WriteError writes to std::cerr (escaped by TerminalSafeStderr).
#pragma once

#include <string_view>

#include "absl/status/status.h"

namespace fleetmark::cli {

// Process exit codes of every command.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;      // the command ran and failed (server error, ...)
inline constexpr int kExitUsage = 2;        // bad input: unknown command/flag, bad plan, ...
inline constexpr int kExitCasesFailed = 3;  // `run`: finished, but some case failed
inline constexpr int kExitDeferred = 4;     // `run`: the plan's preflight gates kept failing
// The coordinator (or its database) could not be reached or did not answer in time:
// the same command may succeed later.
inline constexpr int kExitUnavailable = 5;
// Interrupted by signal `s` (SIGINT, SIGTERM): 128 + s, the shell's convention.
inline constexpr int kExitSignalBase = 128;

// The exit code of a command that ended with `status`: kExitOk for OK; kExitUsage for
// bad input (InvalidArgument, OutOfRange, NotFound, AlreadyExists, FailedPrecondition,
// Unauthenticated, PermissionDenied: the command, a flag, a file or a name must change);
// kExitUnavailable for Unavailable and DeadlineExceeded (try again later); kExitFailure
// for every other code. Verdicts (kExitCasesFailed, kExitDeferred, signals) are not
// errors and never come from here.
int ExitCodeFor(const absl::Status& status);

// Writes "<source>: <message>\n" to std::cerr, `source` naming who speaks ("fleetmark",
// "fleetmark run"); nothing for an OK status.
void WriteError(std::string_view source, const absl::Status& status);

// WriteError, then ExitCodeFor: `return ReportError("fleetmark", status);`.
int ReportError(std::string_view source, const absl::Status& status);

}  // namespace fleetmark::cli
