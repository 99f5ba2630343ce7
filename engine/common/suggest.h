// Did-you-mean for names a person typed: the one rule every name check uses (the flag
// parser, the CLI's command table, plan and profile names: strategies, workloads,
// scenarios, fields), so a typo gets the same help wherever it is made.
//
// Distance: the optimal string alignment form of the Damerau-Levenshtein distance
// (insertions, deletions, substitutions and transpositions of adjacent characters, each
// 1; F. J. Damerau, "A technique for computer detection and correction of spelling
// errors", CACM 7(3), 1964; G. Navarro, "A guided tour to approximate string matching",
// ACM Computing Surveys 33(1), 2001, section 2), ASCII case ignored. A candidate is
// close when its distance is at most max(length of the typed name, 3) / 3 (integer
// division: one edit up to 5 characters, two up to 8, ...), the threshold rustc's
// `find_best_match_for_name` uses, or when one of the two names is a prefix of the
// other of at least 4 characters ("--quic" for "--quick", "work" for "work_stealing").
//
//   std::string hint = DidYouMean("fibre", names);  // " (did you mean \"fiber\"?)"
//
// Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace fleetmark {

// The optimal string alignment distance between `a` and `b` (ASCII case ignored).
size_t EditDistance(std::string_view a, std::string_view b);

// The candidates close to `typed` (see above), nearest first (ties in the candidates'
// order), at most `max_names`; none when `typed` is empty or equals a candidate.
std::vector<std::string> ClosestNames(std::string_view typed, const std::vector<std::string>& candidates,
                                      size_t max_names = 3);

// " (did you mean \"x\"?)", " (did you mean \"x\" or \"y\"?)", ... for ClosestNames, with
// `prefix` before each name ("--" for flags); "" when none is close. Names are quoted
// as they are (candidates are the program's own names, never user text).
std::string DidYouMean(std::string_view typed, const std::vector<std::string>& candidates,
                       std::string_view prefix = "");

// The one message of a name that is not one of `names`: "one of a, b, c<note>; got
// \"fibre\" (did you mean \"fiber\"?)" — `typed` echoed as EscapeForTerminal shows it,
// cut at kMaxEchoBytes (text.h); `note` e.g. " (empty = fixed)".
std::string OneOfMessage(std::string_view typed, const std::vector<std::string>& names, std::string_view note = "");

}  // namespace fleetmark
