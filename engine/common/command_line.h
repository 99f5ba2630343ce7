// Command-line checks that absl::ParseCommandLine does not make, for the
// fleetmark-agent and fleetmark-coordinator mains (the fleetmark CLI has its own
// parser with the same rules): a flag given twice (Abseil silently keeps the last
// value) and stray positional arguments (Abseil returns them; the daemons take none).
//
// Thread-safety: pure functions. Errors: InvalidArgument naming the flag or argument.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace fleetmark {

// `argv[1..argc)` up to a lone "--": InvalidArgument if a flag (--name, --name=value,
// -name) appears twice. Values given as the next argument are not flags themselves
// unless they start with '-'.
inline absl::Status RefuseRepeatedFlags(int argc, char** argv) {
  std::set<std::string> seen;
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (arg == "--") break;
    if (arg.size() < 2 || arg[0] != '-') continue;
    arg.remove_prefix(arg[1] == '-' ? 2 : 1);
    const std::string name(arg.substr(0, arg.find('=')));
    if (!seen.insert(name).second) {
      return absl::InvalidArgumentError(absl::StrCat("--", name, " is given twice; give it once"));
    }
  }
  return absl::OkStatus();
}

// `positional` as absl::ParseCommandLine returns it (argv[0] first): InvalidArgument
// naming the first argument after argv[0].
inline absl::Status RefusePositionalArguments(const std::vector<char*>& positional) {
  if (positional.size() <= 1) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("unexpected argument \"", positional[1], "\": this program takes flags only (see --help)"));
}

}  // namespace fleetmark
