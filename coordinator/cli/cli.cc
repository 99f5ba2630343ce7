// RunCli: flag parsing with exit code 2 on bad flags, --help, command dispatch.
//
// Flags are parsed by engine/common/flag_parser.h (exit code 2 for every bad input,
// help without build paths), as in fleetmark-agent and fleetmark-coordinator.
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "engine/common/text.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "coordinator/cli/command.h"
#include "coordinator/cli/run_flags.h"
#include "engine/child/child.h"
#include "engine/common/flag_parser.h"
#include "engine/common/suggest.h"
#include "engine/common/version.h"

namespace fleetmark::cli {
namespace {

// The files whose flags are fleetmark's (every fleetmark CLI flag file is in this folder).
constexpr char kCliFlagFiles[] = "coordinator/cli/";

void PrintHelp(const CommandRegistry& registry) {
  std::cout << registry.Usage() << "\nflags (each command takes those its usage names):\n"
            << FlagsHelp(FlagNames(kCliFlagFiles))
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

int RefuseUsage(const std::string& message) {
  return ReportError("fleetmark", absl::InvalidArgumentError(absl::StrCat(message, " (see fleetmark --help)")));
}

// Finds the command `args` names; on failure prints one error line and sets *code.
const Command* FindCommand(const CommandRegistry& registry, const std::vector<std::string>& args, int* words,
                           int* code) {
  const Command* command = registry.Find(args, words);
  if (command != nullptr) return command;
  const std::string group = GroupUsage(registry, args[0]);
  // The words a typo may have meant: first words of commands, or a group's second words.
  std::vector<std::string> words_here;
  for (const Command& c : registry.commands()) {
    const std::vector<std::string> words = absl::StrSplit(c.name, ' ');
    const std::string& word = group.empty() ? words[0] : words.size() > 1 && words[0] == args[0] ? words[1] : "";
    if (!word.empty() && std::find(words_here.begin(), words_here.end(), word) == words_here.end()) {
      words_here.push_back(word);
    }
  }
  if (group.empty()) {
    *code = RefuseUsage(
        absl::StrCat("unknown command \"", EscapeForTerminal(args[0], 80), "\"", DidYouMean(args[0], words_here)));
  } else {
    // The group's usage lines follow the message (`group` ends with a newline).
    const std::string message = args.size() == 1 ? "needs a subcommand:\n"
                                                 : absl::StrCat("unknown subcommand \"", EscapeForTerminal(args[1], 80),
                                                                "\"", DidYouMean(args[1], words_here), "; one of:\n");
    *code = ReportError(absl::StrCat("fleetmark ", args[0]),
                        absl::InvalidArgumentError(absl::StrCat(message, absl::StripSuffix(group, "\n"))));
  }
  return nullptr;
}

}  // namespace

int RunCli(const CommandRegistry& registry, int argc, char** argv) {
  // Every error line below and in the commands goes through std::cerr: escaped there.
  const TerminalSafeStderr safe_stderr;
  absl::StatusOr<ParsedFlags> flags = ParseFlags(argc, argv, kCliFlagFiles);
  if (!flags.ok()) return RefuseUsage(std::string(flags.status().message()));
  if (flags->version) {
    std::cout << VersionLine("fleetmark") << "\n";
    return kExitOk;
  }
  ParsedFlags& parsed = *flags;
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
      return RefuseUsage(absl::StrCat("help takes one command, got extra \"", EchoValue(rest[words]), "\""));
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
      return RefuseUsage(absl::StrCat(
          "--", flag, " does not apply to `fleetmark ", command->name, "` (",
          shown.empty() ? "it takes no flags" : absl::StrCat("its flags: ", absl::StrJoin(shown, " ")), ")"));
    }
  }
  if (const absl::Status filter = CheckGivenFilter(parsed.flags_set); !filter.ok()) {
    return RefuseUsage(std::string(filter.message()));
  }
  if (command->runs_cases) {
    // A set but unusable FLEETMARK_CHILD_EMULATOR would fail every case: refuse at once.
    if (const absl::Status emulator = engine::CheckChildEmulator(); !emulator.ok()) {
      return ReportError("fleetmark", emulator);
    }
  }
  std::vector<std::string> rest(args.begin() + words, args.end());
  const std::string source = absl::StrCat("fleetmark ", command->name);  // who a command's errors name
  for (size_t i = 0; i < command->text_arguments.size() && i < rest.size(); ++i) {
    if (const absl::Status text = CheckRequestText(command->text_arguments[i], rest[i]); !text.ok()) {
      return ReportError(source, text);
    }
  }
  for (size_t i = 0; i < command->name_arguments.size() && i < rest.size(); ++i) {
    if (const absl::Status name = CheckNameArgument(command->name_arguments[i], rest[i]); !name.ok()) {
      return ReportError(source, name);
    }
  }
  const absl::StatusOr<int> ran = command->run(rest);
  return ran.ok() ? *ran : ReportError(source, ran.status());
}

}  // namespace fleetmark::cli
