// RunCli: flag parsing with exit code 2 on bad flags, --help, command dispatch.
//
// Flags are parsed here through Abseil's public reflection API (FindCommandLineFlag,
// CommandLineFlag::ParseFrom) rather than absl::ParseCommandLine, which exits with
// code 1 on an unknown flag; fleetmark promises exit code 2 for every bad input.
#include <unistd.h>

#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/internal/usage.h"
#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "coordinator/cli/command.h"

namespace fleetmark::cli {
namespace {

// The files whose flags `--help` lists (every fleetmark CLI flag file is in this folder).
constexpr char kCliFlagFiles[] = "coordinator/cli/";

void PrintHelp(const CommandRegistry& registry, bool all_flags) {
  std::cout << registry.Usage() << "\nflags:\n";
  absl::flags_internal::FlagsHelp(std::cout, all_flags ? "" : kCliFlagFiles,
                                  absl::flags_internal::HelpFormat::kHumanReadable, "");
}

// The usage lines of the commands whose first word is `group` ("plan" -> "plan validate").
std::string GroupUsage(const CommandRegistry& registry, const std::string& group) {
  std::string out;
  for (const Command& c : registry.commands()) {
    if (absl::StartsWith(c.name, group + " ")) absl::StrAppend(&out, "  ", c.usage, "\n");
  }
  return out;
}

int UsageError(const std::string& message) {
  std::cerr << "fleetmark: " << message << "\n(see fleetmark --help)\n";
  return kExitUsage;
}

// Parses every flag of argv into its Abseil flag; the other arguments go to
// `positional`. Returns -1 to continue, else the exit code to return.
int ParseFlags(const CommandRegistry& registry, int argc, char** argv,
               std::vector<std::string>& positional) {
  bool only_positional = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (only_positional || arg.size() < 2 || arg[0] != '-') {
      positional.push_back(arg);
      continue;
    }
    if (arg == "--") {
      only_positional = true;
      continue;
    }
    std::string body = arg.substr(arg[1] == '-' ? 2 : 1);
    if (body == "help" || body == "h" || body == "helpfull" || body == "helpshort") {
      PrintHelp(registry, body == "helpfull");
      return kExitOk;
    }
    if (body == "version") {
      std::cout << "fleetmark " << FLEETMARK_ENGINE_VERSION << "\n";
      return kExitOk;
    }
    std::string name = body, value;
    const size_t eq = body.find('=');
    const bool has_value = eq != std::string::npos;
    if (has_value) {
      name = body.substr(0, eq);
      value = body.substr(eq + 1);
    }
    absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    if (flag == nullptr && !has_value && absl::StartsWith(name, "no")) {
      absl::CommandLineFlag* negated = absl::FindCommandLineFlag(name.substr(2));
      if (negated != nullptr && negated->IsOfType<bool>()) {
        flag = negated;
        value = "false";
        name = name.substr(2);
      }
    } else if (flag != nullptr && flag->IsOfType<bool>() && !has_value) {
      value = "true";
    } else if (flag != nullptr && !has_value) {
      if (i + 1 >= argc) return UsageError(absl::StrCat("flag --", name, " needs a value"));
      value = argv[++i];
    }
    if (flag == nullptr || flag->IsRetired()) {
      return UsageError(absl::StrCat("unknown flag ", arg));
    }
    std::string error;
    if (!flag->ParseFrom(value, &error)) {
      return UsageError(absl::StrCat("--", name, ": ", error));
    }
  }
  return -1;
}

}  // namespace

int RunCli(const CommandRegistry& registry, int argc, char** argv) {
  std::vector<std::string> args;
  if (int code = ParseFlags(registry, argc, argv, args); code >= 0) return code;
  if (args.empty()) {
    std::cerr << registry.Usage();
    return kExitUsage;
  }
  if (args[0] == "help") {
    std::vector<std::string> rest(args.begin() + 1, args.end());
    int words = 0;
    const Command* command = rest.empty() ? nullptr : registry.Find(rest, &words);
    if (rest.empty()) {
      PrintHelp(registry, false);
      return kExitOk;
    }
    if (command == nullptr) {
      const std::string group = GroupUsage(registry, rest[0]);
      if (group.empty()) return UsageError(absl::StrCat("unknown command \"", rest[0], "\""));
      std::cout << "usage:\n" << group;
      return kExitOk;
    }
    std::cout << "usage: " << command->usage << "\n\n" << command->summary << "\n";
    return kExitOk;
  }
  int words = 0;
  const Command* command = registry.Find(args, &words);
  if (command == nullptr) {
    const std::string group = GroupUsage(registry, args[0]);
    if (!group.empty()) {
      std::cerr << "fleetmark: \"" << args[0] << "\" needs a subcommand:\n" << group;
    } else {
      std::cerr << "fleetmark: unknown command \"" << args[0] << "\"\n\n" << registry.Usage();
    }
    return kExitUsage;
  }
  std::vector<std::string> rest(args.begin() + words, args.end());
  return command->run(rest);
}

}  // namespace fleetmark::cli
