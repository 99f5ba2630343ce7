#include "engine/common/flag_parser.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <optional>
#include <utility>

#include "engine/common/suggest.h"
#include "engine/common/text.h"
#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "engine/common/version.h"

namespace fleetmark {
namespace {

// The most bytes of a flag or value a parse error echoes (with "..." after a cut).
constexpr size_t kMaxEchoedFlagBytes = 200;

absl::CommandLineFlag* Find(const std::string& name, absl::string_view flag_files) {
  absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
  if (flag == nullptr || flag->IsRetired() || !absl::StrContains(flag->Filename(), flag_files)) return nullptr;
  return flag;
}

// FlagTextGiven's texts: written by ParseFlags before other threads start.
std::map<std::string, std::string>& GivenTexts() {
  static auto* texts = new std::map<std::string, std::string>();
  return *texts;
}

// The range an integer flag's help names as "(1..1000)" (the project's help convention:
// "runs list: how many runs (1..1000)"): the one definition of that flag's range, which
// ParseFlags enforces. nullopt when the help names none.
std::optional<std::pair<int64_t, int64_t>> HelpRange(const std::string& help) {
  for (size_t open = help.find('('); open != std::string::npos; open = help.find('(', open + 1)) {
    const size_t close = help.find(')', open);
    if (close == std::string::npos) break;
    const std::string inner = help.substr(open + 1, close - open - 1);
    const size_t dots = inner.find("..");
    if (dots == std::string::npos || dots == 0 || dots + 2 >= inner.size()) continue;
    int64_t low = 0, high = 0;
    if (absl::SimpleAtoi(inner.substr(0, dots), &low) && absl::SimpleAtoi(inner.substr(dots + 2), &high)) {
      return std::make_pair(low, high);
    }
  }
  return std::nullopt;
}

bool IsIntegerFlag(const absl::CommandLineFlag& flag) {
  return flag.IsOfType<int>() || flag.IsOfType<int64_t>() || flag.IsOfType<uint32_t>() || flag.IsOfType<uint64_t>();
}

// The one message of an integer flag outside its range, the form every range check of
// the project uses: "--limit: 1 <= limit <= 1000, got 0".
std::string RangeMessage(const std::string& name, std::pair<int64_t, int64_t> range, const std::string& value) {
  return absl::StrCat("--", name, ": ", range.first, " <= ", name, " <= ", range.second, ", got ",
                      EscapeForTerminal(value, kMaxEchoedFlagBytes));
}

}  // namespace

absl::StatusOr<ParsedFlags> ParseFlags(int argc, char** argv, absl::string_view flag_files) {
  ParsedFlags parsed;
  GivenTexts().clear();
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
    const std::string body = arg.substr(arg[1] == '-' ? 2 : 1);
    if (body == "help" || body == "h" || body == "helpfull" || body == "helpshort") {
      parsed.help = true;
      continue;
    }
    if (body == "version") {
      parsed.version = true;
      continue;
    }
    std::string name = body, value;
    const size_t eq = body.find('=');
    const bool has_value = eq != std::string::npos;
    if (has_value) {
      name = body.substr(0, eq);
      value = body.substr(eq + 1);
    }
    absl::CommandLineFlag* flag = Find(name, flag_files);
    if (flag == nullptr && !has_value && absl::StartsWith(name, "no")) {
      absl::CommandLineFlag* negated = Find(name.substr(2), flag_files);
      if (negated != nullptr && negated->IsOfType<bool>()) {
        flag = negated;
        value = "false";
        name = name.substr(2);
      }
    } else if (flag != nullptr && flag->IsOfType<bool>() && !has_value) {
      value = "true";
    } else if (flag != nullptr && !has_value) {
      if (i + 1 >= argc) return absl::InvalidArgumentError(absl::StrCat("flag --", name, " needs a value"));
      value = argv[++i];
    }
    if (flag == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag ", EscapeForTerminal(arg, kMaxEchoedFlagBytes),
                                                     DidYouMean(name, FlagNames(flag_files), "--")));
    }
    // Abseil keeps the last value of a repeated flag: `--select a --select b` would
    // silently mean b only.
    if (std::find(parsed.flags_set.begin(), parsed.flags_set.end(), name) != parsed.flags_set.end()) {
      return absl::InvalidArgumentError(absl::StrCat("--", name, " is given twice; give it once"));
    }
    std::string error;
    if (!flag->ParseFrom(value, &error)) {
      if (flag->IsOfType<absl::Duration>()) {
        // Abseil says only "Illegal value '5' specified for flag 'timeout'".
        double number = 0;
        return absl::InvalidArgumentError(absl::StrCat(
            "--", name, ": ", absl::SimpleAtod(value, &number) ? "a duration needs a unit" : "not a duration",
            " (h, m, s, ms, us, ns; e.g. --", name, "=30m or --", name, "=1h30m), got \"",
            EscapeForTerminal(value, kMaxEchoedFlagBytes), "\""));
      }
      if (IsIntegerFlag(*flag)) {
        // Abseil says "Illegal value '99999999999' specified for flag 'limit'" for a
        // number out of the type's range too.
        const bool digits = !value.empty() && value.find_first_not_of("-+0123456789") == std::string::npos;
        const auto range = HelpRange(flag->Help());
        if (digits && range) return absl::InvalidArgumentError(RangeMessage(name, *range, value));
        // Not a number ("--tasks many"): what it takes, with its range when the help has one.
        const std::string takes =
            range ? absl::StrCat("a whole number, ", range->first, " <= ", name, " <= ", range->second)
                  : std::string(!digits ? "not a whole number" : "a number out of range");
        return absl::InvalidArgumentError(
            absl::StrCat("--", name, ": ", takes, ", got \"", EscapeForTerminal(value, kMaxEchoedFlagBytes), "\""));
      }
      if (flag->IsOfType<bool>()) {
        // Abseil says "Illegal value 'maybe' specified for flag 'quick'".
        return absl::InvalidArgumentError(absl::StrCat("--", name, ": true or false (or --", name, " / --no", name,
                                                       "), got \"", EscapeForTerminal(value, kMaxEchoedFlagBytes),
                                                       "\""));
      }
      // Abseil's error quotes the value as given: "Illegal value '<value>' specified
      // for flag 'wide'".
      return absl::InvalidArgumentError(
          absl::StrCat("--", name, ": ", EscapeForTerminal(error, kMaxEchoedFlagBytes + 64)));
    }
    // An integer flag's range is its help's "(lo..hi)", checked here once for every
    // command and daemon (commands checked their own, each in its own words).
    if (IsIntegerFlag(*flag)) {
      if (const auto range = HelpRange(flag->Help())) {
        int64_t number = 0;
        if (!absl::SimpleAtoi(flag->CurrentValue(), &number) || number < range->first || number > range->second) {
          return absl::InvalidArgumentError(RangeMessage(name, *range, value));
        }
      }
    }
    parsed.flags_set.push_back(name);
    GivenTexts()[name] = value;
  }
  return parsed;
}

std::string FlagTextGiven(absl::string_view name) {
  auto it = GivenTexts().find(std::string(name));
  return it == GivenTexts().end() ? "" : it->second;
}

bool FlagGiven(absl::string_view name) { return GivenTexts().count(std::string(name)) > 0; }

std::vector<std::string> FlagNames(absl::string_view flag_files) {
  std::vector<std::string> names;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (!flag->IsRetired() && absl::StrContains(flag->Filename(), flag_files) && !absl::StartsWith(name, "test_")) {
      names.emplace_back(name);
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string FlagsHelp(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  std::string out;
  for (const std::string& name : names) {
    const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    if (flag == nullptr) continue;
    absl::StrAppend(&out, "  --", name,
                    flag->IsOfType<bool>() ? "" : absl::StrCat(" (default \"", flag->DefaultValue(), "\")"), "\n      ",
                    flag->Help(), "\n");
  }
  return out;
}

int ParseDaemonCommandLine(int argc, char** argv, absl::string_view program, absl::string_view usage,
                           absl::string_view flag_files) {
  absl::StatusOr<ParsedFlags> parsed = ParseFlags(argc, argv, flag_files);
  absl::Status error = parsed.status();
  if (parsed.ok() && !parsed->positional.empty()) {
    error = absl::InvalidArgumentError(absl::StrCat("unexpected argument \"",
                                                    EscapeForTerminal(parsed->positional[0], kMaxEchoedFlagBytes),
                                                    "\": this program takes flags only"));
  }
  if (!error.ok()) {
    std::cerr << program << ": " << error.message() << " (see --help)\n";
    return 2;
  }
  if (parsed->version) {
    std::cout << VersionLine(program) << "\n";
    return 0;
  }
  if (parsed->help) {
    std::cout << "usage: " << usage << "\n\nflags:\n"
              << FlagsHelp(FlagNames(flag_files)) << "  --help, --version\n      this text; the version\n";
    return 0;
  }
  return -1;
}

}  // namespace fleetmark
