// RunCli: flag parsing with exit code 2 on bad flags, --help, command dispatch.
//
// Flags are parsed here through Abseil's public reflection API (FindCommandLineFlag,
// CommandLineFlag::ParseFrom) rather than absl::ParseCommandLine, which exits with
// code 1 on an unknown flag; fleetmark promises exit code 2 for every bad input. Help
// is printed here too (Abseil's FlagsHelp shows build paths and an "UNKNOWN" group).
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "coordinator/cli/command.h"

namespace fleetmark::cli {
namespace {

// The files whose flags are fleetmark's (every fleetmark CLI flag file is in this folder).
constexpr char kCliFlagFiles[] = "coordinator/cli/";

// "  --name (default: "x")\n      help\n" for each of `names` that is a fleetmark flag.
std::string FlagsHelp(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  std::string out;
  for (const std::string& name : names) {
    const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    if (flag == nullptr) continue;
    const std::string value = flag->DefaultValue();
    absl::StrAppend(&out, "  --", name, flag->IsOfType<bool>() ? "" : absl::StrCat(" (default \"", value, "\")"),
                    "\n      ", flag->Help(), "\n");
  }
  return out;
}

std::vector<std::string> AllCliFlags() {
  std::vector<std::string> names;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (!flag->IsRetired() && absl::StrContains(flag->Filename(), kCliFlagFiles)) {
      names.emplace_back(name);
    }
  }
  return names;
}

void PrintHelp(const CommandRegistry& registry) {
  std::cout << registry.Usage() << "\nflags (each command takes those its usage names):\n"
            << FlagsHelp(AllCliFlags())
            << "  --help, --version\n      this text (with a command: its usage and flags); "
               "the version\n";
}

void PrintCommandHelp(const Command& command) {
  std::cout << "usage: " << command.usage << "\n\n" << command.summary << "\n";
  const std::vector<std::string> flags = CommandRegistry::FlagsOf(command);
  if (!flags.empty()) std::cout << "\nflags:\n" << FlagsHelp(flags);
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
  std::cerr << "fleetmark: " << message << " (see fleetmark --help)\n";
  return kExitUsage;
}

struct ParsedArgs {
  std::vector<std::string> positional;
  std::vector<std::string> flags_set;  // names of the flags given
  bool help = false;
};

// Parses every flag of argv into its Abseil flag; the other arguments go to
// `positional`. Returns -1 to continue, else the exit code to return.
int ParseFlags(int argc, char** argv, ParsedArgs& parsed) {
  bool only_positional = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (only_positional || arg.size() < 2 || arg[0] != '-') {
      parsed.positional.push_back(arg);
      continue;
    }
    if (arg == "--") {
      only_positional = true;
      continue;
    }
    std::string body = arg.substr(arg[1] == '-' ? 2 : 1);
    if (body == "help" || body == "h" || body == "helpfull" || body == "helpshort") {
      parsed.help = true;
      continue;
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
    if (flag != nullptr && !absl::StrContains(flag->Filename(), kCliFlagFiles)) flag = nullptr;
    if (flag == nullptr && !has_value && absl::StartsWith(name, "no")) {
      absl::CommandLineFlag* negated = absl::FindCommandLineFlag(name.substr(2));
      if (negated != nullptr && negated->IsOfType<bool>() && absl::StrContains(negated->Filename(), kCliFlagFiles)) {
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
    // Abseil keeps the last value of a repeated flag; `--select a --select b` would
    // silently mean b only.
    if (std::find(parsed.flags_set.begin(), parsed.flags_set.end(), name) != parsed.flags_set.end()) {
      return UsageError(absl::StrCat("--", name, " is given twice; give it once"));
    }
    std::string error;
    if (!flag->ParseFrom(value, &error)) {
      return UsageError(absl::StrCat("--", name, ": ", error));
    }
    parsed.flags_set.push_back(name);
  }
  return -1;
}

// Finds the command `args` names; on failure prints one error line and sets *code.
const Command* FindCommand(const CommandRegistry& registry, const std::vector<std::string>& args, int* words,
                           int* code) {
  const Command* command = registry.Find(args, words);
  if (command != nullptr) return command;
  const std::string group = GroupUsage(registry, args[0]);
  if (group.empty()) {
    *code = UsageError(absl::StrCat("unknown command \"", args[0], "\""));
  } else if (args.size() == 1) {
    std::cerr << "fleetmark " << args[0] << ": needs a subcommand:\n" << group;
    *code = kExitUsage;
  } else {
    std::cerr << "fleetmark " << args[0] << ": unknown subcommand \"" << args[1] << "\"; one of:\n" << group;
    *code = kExitUsage;
  }
  return nullptr;
}

}  // namespace

int RunCli(const CommandRegistry& registry, int argc, char** argv) {
  ParsedArgs parsed;
  if (int code = ParseFlags(argc, argv, parsed); code >= 0) return code;
  std::vector<std::string>& args = parsed.positional;
  if (parsed.help && !args.empty() && args[0] != "help") args.insert(args.begin(), "help");
  if (args.empty()) {
    if (parsed.help) {
      PrintHelp(registry);
      return kExitOk;
    }
    std::cerr << registry.Usage();
    return kExitUsage;
  }
  int words = 0, code = kExitUsage;
  if (args[0] == "help") {
    std::vector<std::string> rest(args.begin() + 1, args.end());
    if (rest.empty()) {
      PrintHelp(registry);
      return kExitOk;
    }
    const Command* command = FindCommand(registry, rest, &words, &code);
    if (command == nullptr) return code;
    if (static_cast<size_t>(words) != rest.size()) {
      return UsageError(absl::StrCat("help takes one command, got extra \"", rest[words], "\""));
    }
    PrintCommandHelp(*command);
    return kExitOk;
  }
  const Command* command = FindCommand(registry, args, &words, &code);
  if (command == nullptr) return code;
  const std::vector<std::string> accepted = CommandRegistry::FlagsOf(*command);
  for (const std::string& flag : parsed.flags_set) {
    if (std::find(accepted.begin(), accepted.end(), flag) == accepted.end()) {
      std::vector<std::string> shown;
      for (const std::string& a : accepted) shown.push_back("--" + a);
      return UsageError(absl::StrCat(
          "--", flag, " does not apply to `fleetmark ", command->name, "` (",
          shown.empty() ? "it takes no flags" : absl::StrCat("its flags: ", absl::StrJoin(shown, " ")), ")"));
    }
  }
  std::vector<std::string> rest(args.begin() + words, args.end());
  return command->run(rest);
}

}  // namespace fleetmark::cli
