// One command-line parser for fleetmark's three binaries (the fleetmark CLI,
// fleetmark-agent, fleetmark-coordinator), over Abseil's public flag reflection API
// (FindCommandLineFlag, CommandLineFlag::ParseFrom) instead of absl::ParseCommandLine,
// which exits with code 1 on an unknown flag or a bad value and prints build paths in
// its help. fleetmark exits with code 2 for every bad input, 0 for --help/--version.
//
//   absl::StatusOr<ParsedFlags> parsed = ParseFlags(argc, argv, "agent/main.cc");
//   if (!parsed.ok()) { print parsed.status().message(); return 2; }
//
// Thread-safety: sets process-wide Abseil flags; call from main before other threads.
#pragma once

#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/statusor.h"

namespace fleetmark {

struct ParsedFlags {
  std::vector<std::string> positional;  // non-flag arguments, in order ("--" ends flags)
  std::vector<std::string> flags_set;   // names of the flags given, in order
  bool help = false;                    // --help, -h, --helpfull, --helpshort
  bool version = false;                 // --version
};

// Parses argv[1..argc) into the Abseil flags defined in source files whose path
// contains `flag_files` (other flags, e.g. gRPC's or Abseil's own, are unknown here).
// Accepts --name=value, --name value, -name, bool --name / --noname. InvalidArgument,
// with a message naming the flag: "unknown flag --x" (with a did-you-mean of the
// known flags, suggest.h), "flag --x needs a value", "--x is given twice; give it
// once", `--quick: true or false (or --quick / --noquick), got "maybe"`, `--tasks: a
// whole number, 1 <= tasks <= 10000, got "many"`, "--x: <Abseil's parse error>". An integer flag whose help names a
// range
// "(lo..hi)" is held to it here, for every command and daemon, in the project's one
// range form: "--limit: 1 <= limit <= 1000, got 0" (the help is the range's one
// definition). What the user typed is echoed escaped (EscapeForTerminal) and cut at
// 200 bytes.
absl::StatusOr<ParsedFlags> ParseFlags(int argc, char** argv, absl::string_view flag_files);

// The text the last ParseFlags call was given for flag `name` ("0s" for --timeout=0s),
// for messages that echo the input as typed (a parsed 0s would print as "0"); "" when
// the flag was not given. Read after ParseFlags, from any thread.
std::string FlagTextGiven(absl::string_view name);

// Whether the last ParseFlags call was given flag `name` (`--name=` and `--name ''`
// included), for a flag whose empty value means "not given" only when it was not
// typed (Abseil 20220623 keeps IsSpecifiedOnCommandLine private). Read after
// ParseFlags, from any thread.
bool FlagGiven(absl::string_view name);

// The flags defined in files containing `flag_files` (not retired, not test hooks:
// names starting with "test_" are left out of help), sorted by name.
std::vector<std::string> FlagNames(absl::string_view flag_files);

// The daemons' whole command line (fleetmark-agent, fleetmark-coordinator): ParseFlags
// over the flags of `flag_files`; --help prints `usage` and those flags to stdout,
// --version prints VersionLine(program); positional arguments are refused. Returns the
// exit code to end with now (0 after help/version; 2 after one error line
// "<program>: <message> (see --help)" on stderr), or -1 to go on.
int ParseDaemonCommandLine(int argc, char** argv, absl::string_view program, absl::string_view usage,
                           absl::string_view flag_files);

// "  --name (default "x")\n      help\n" for each of `names` (bool flags show no
// default); unknown names are skipped. Never prints source paths.
std::string FlagsHelp(std::vector<std::string> names);

}  // namespace fleetmark
