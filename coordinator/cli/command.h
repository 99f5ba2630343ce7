// The `fleetmark` CLI's command registry: each command (run, plan validate, list,
// submit, runs ..., topology, ...) is a name, a one-line summary, a usage line and a run
// function, so commands live in their own files and main.cc registers them in one line
// each.
//
//   void RegisterTopologyCommand(CommandRegistry& registry) {
//     registry.Add({.name = "topology", .summary = "show this host's cores",
//                   .usage = "fleetmark topology [--json]",
//                   .run = [](const std::vector<std::string>& args) -> absl::StatusOr<int> {
//                     if (!args.empty()) return absl::InvalidArgumentError("takes no arguments");
//                     ...; return kExitOk; }});
//   }
//
// Flags are Abseil flags (ABSL_FLAG in the cli folder's *_flags.cc files, parsed once in
// main before dispatch); a command reads them through its Options struct, never from a
// library. Not thread-safe: built and used on main's thread.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <streambuf>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "coordinator/cli/exit_codes.h"  // kExit*, ExitCodeFor, WriteError
#include "engine/common/text.h"          // EchoValue, CutEchoes, kMaxEchoBytes

namespace fleetmark::cli {

struct Command {
  // One or more words, e.g. "run", "plan validate", "runs show".
  std::string name;
  std::string summary;  // one line, for the command listing
  // e.g. "fleetmark run PLAN [--format table|json|csv|gbench-json]". Every flag the
  // command reads must appear here as --name: a flag it does not name is refused.
  std::string usage;
  // Flags accepted besides those named in `usage` (set by the registry: see
  // SetCommonFlags).
  std::vector<std::string> common_flags = {};
  // The command runs cases on this machine: RunCli refuses a set but unusable
  // FLEETMARK_CHILD_EMULATOR (exit 2) before calling `run`. Other commands, --help and
  // --version never look at it.
  bool runs_cases = false;
  // Receives the positional arguments after the command's words (flags already parsed)
  // and returns the process exit code, or an error: RunCli writes it ("fleetmark
  // <name>: <message>", or "fleetmark: <message>" for a FleetmarkError; WriteError) and
  // exits with ExitCodeFor(status) (exit_codes.h). Codes a command returns itself:
  // kExitOk and the verdicts (kExitCasesFailed, kExitDeferred, kExitSignalBase + s, each
  // said by the command in its own words), and kExitFailure from `submit --wait` for a
  // run that ended failed or cancelled (its summary line says so); no other error code.
  std::function<absl::StatusOr<int>(const std::vector<std::string>& args)> run;
  // The leading positional arguments the command sends to a coordinator in request
  // string fields, named as its usage names them (e.g. {"RUN"}, {"NAME"}; never a PLAN,
  // which is a file path read here): RunCli refuses one that is not valid UTF-8
  // (CheckRequestText, exit 2) before calling `run`.
  std::vector<std::string> text_arguments = {};
  // The leading positional arguments that are agent, schedule or token names (e.g.
  // {"NAME"}): RunCli refuses one that breaks the name rule (CheckNameArgument, exit 2)
  // before calling `run`, so neither an empty nor a 100 KB name reaches the coordinator.
  std::vector<std::string> name_arguments = {};
};

// OK if `value`, what the user gave for `what` ("--select", "RUN"), is valid UTF-8, as
// the protobuf string fields of a request to the coordinator must be (protobuf would
// log an error naming the request's field and send it anyway). Otherwise
// InvalidArgument: `--select: not valid UTF-8 (text sent to the coordinator must be
// UTF-8), got "name=\xff"`, the value escaped (EscapeForTerminal) and cut at 200 bytes.
absl::Status CheckRequestText(std::string_view what, std::string_view value);

// kMaxEchoBytes, EchoValue and CutEchoes (what an error echoes of a user's value) are
// engine/common/text.h's, shared with the coordinator's gRPC errors.

// OK if `value`, given for `what` ("NAME", "--agent"), follows the agent and schedule
// name rule (engine/common/name_rule.h: 1 to 64 characters of [A-Za-z0-9._-]);
// otherwise InvalidArgument with NameRuleMessage(what, value). Commands check names
// with it before any call, so a 100 KB name never reaches gRPC's metadata limits.
absl::Status CheckNameArgument(std::string_view what, std::string_view value);

// The one place the CLI's error text passes through: while alive, everything written
// to std::cerr is escaped line by line with EscapeForTerminal (newlines kept; text
// already escaped is unchanged, its backslashes being printable), so a control byte in
// any echoed input (a path, a flag value, a gRPC message) reaches the terminal as the
// text "\x1b". Restores std::cerr's buffer when destroyed. Terminal control sequences
// the CLI draws itself (progress redraw) go to stdio's stderr, not std::cerr. Main
// thread only.
class TerminalSafeStderr {
 public:
  TerminalSafeStderr();
  ~TerminalSafeStderr();
  TerminalSafeStderr(const TerminalSafeStderr&) = delete;
  TerminalSafeStderr& operator=(const TerminalSafeStderr&) = delete;

 private:
  class Buffer;
  std::unique_ptr<Buffer> buffer_;
  std::streambuf* previous_;
};

class CommandRegistry {
 public:
  // Adds `command` (with the current common flags); a later command with the same name
  // replaces the earlier one.
  void Add(Command command);

  // Flags (names without "--") that commands added from now on accept besides those
  // their usage names, e.g. the connection flags of remote commands. {} to stop.
  void SetCommonFlags(std::vector<std::string> flags) { common_flags_ = std::move(flags); }

  // The flags `command` accepts: the --names in its usage plus its common flags.
  static std::vector<std::string> FlagsOf(const Command& command);

  // The command whose words are the longest prefix of `args`, or null. Sets
  // `*words_used` to the number of its words.
  const Command* Find(const std::vector<std::string>& args, int* words_used) const;

  // The usage text: synopsis plus every command's usage and summary, sorted by name.
  std::string Usage() const;

  const std::vector<Command>& commands() const { return commands_; }

 private:
  std::vector<Command> commands_;
  std::vector<std::string> common_flags_;
};

// Parses flags (exit 2 with a one-line error on an unknown flag, a bad flag value, a
// flag given twice, or a flag the command does not take), finds the command in the remaining arguments and
// runs it. Unknown command: one error line, exit 2; no command: usage on stderr, exit 2.
// `fleetmark --help` prints the command listing and every flag; `fleetmark COMMAND
// --help` and `fleetmark help COMMAND` print that command's usage and flags.
int RunCli(const CommandRegistry& registry, int argc, char** argv);

}  // namespace fleetmark::cli
