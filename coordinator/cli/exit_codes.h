// The `fleetmark` CLI's process exit codes, and the one place an error becomes one:
// ExitCodeFor maps an absl::Status code to an exit code (docs/cli.md, "Exit codes"),
// WriteError writes an error line to stderr. Commands return an error absl::Status
// (Command::run); RunCli writes it with WriteError and exits with ExitCodeFor. No
// command writes its own error line.
//
//   return absl::InvalidArgumentError("takes no arguments, got \"x\"");  // in a command
//   // RunCli: "fleetmark list: takes no arguments, got "x"", exit 2
//   return FleetmarkError(absl::InvalidArgumentError("--agents: agent \"x\" has no results"));
//   // RunCli: "fleetmark: --agents: agent "x" has no results", exit 2
//
// Thread-compatible; WriteError writes to std::cerr (escaped by TerminalSafeStderr).
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

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

// `status` to be written as "fleetmark: <message>" instead of under the command's name
// ("fleetmark COMMAND: <message>", RunCli's): the wording of the errors that name their
// subject themselves ("fleetmark: --agents: ...", "fleetmark: compare: ...", a remote
// call's "fleetmark: runs list: ..."). Kept as a payload of the status, so it holds
// however far the status is returned. OK stays OK.
absl::Status FleetmarkError(absl::Status status);

// `status` with `text` appended to its message (more lines after it, e.g. a hint
// "\n  (...)"), its code and payloads kept. OK stays OK.
absl::Status AppendToError(const absl::Status& status, absl::string_view text);

// InvalidArgument "fleetmark: <message>\nusage: <usage>": a command given the wrong
// arguments or flags, with its usage line (the remote commands' usage errors).
absl::Status UsageError(absl::string_view usage, absl::string_view message);

// Writes "<source>: <message>\n" to std::cerr, `source` naming who speaks ("fleetmark",
// "fleetmark run"; "fleetmark" whatever `source` for a FleetmarkError); nothing for an
// OK status.
void WriteError(std::string_view source, const absl::Status& status);

// WriteError, then ExitCodeFor: `return ReportError("fleetmark", status);`.
int ReportError(std::string_view source, const absl::Status& status);

}  // namespace fleetmark::cli
