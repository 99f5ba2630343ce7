// The runner's case filter: a regular expression matched anywhere in a case id, in RE2
// syntax (https://github.com/google/re2/wiki/Syntax). RE2 runs in time linear in the
// input and parses without recursion, so no pattern can crash or hang the runner
// (std::regex recursed once per character and overflowed the stack on long patterns).
//
//   FLEETMARK_ASSIGN_OR_RETURN(CaseFilter filter, CaseFilter::Compile("network/.*/fiber"));
//   if (filter.Matches(spec.case_id())) ...
//
// Immutable after Compile; Matches is thread-safe.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace re2 {
class RE2;
}

namespace fleetmark::engine {

// Longest filter accepted, in bytes (case ids are far shorter; a longer pattern is a
// mistake, and its compiled form would cost memory for nothing).
inline constexpr size_t kMaxFilterLength = 1024;

// A --filter pattern as error messages quote it: in double quotes, its first 64 bytes
// escaped for a terminal (EscapeForTerminal, "..." when cut).
std::string QuotedFilter(std::string_view pattern);

class CaseFilter {
 public:
  // "" matches every case. InvalidArgument naming --filter for a pattern longer than
  // kMaxFilterLength, with NUL bytes, or that RE2 rejects (syntax, nesting deeper than
  // RE2's limit, compiled program over its memory budget); the message quotes at most
  // the first 64 bytes of the pattern (QuotedFilter).
  static absl::StatusOr<CaseFilter> Compile(std::string_view pattern);

  // Whether the pattern matches anywhere in `case_id` (unanchored search).
  bool Matches(std::string_view case_id) const;

 private:
  std::shared_ptr<const re2::RE2> re_;  // null: match all
};

}  // namespace fleetmark::engine
