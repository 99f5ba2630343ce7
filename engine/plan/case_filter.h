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

#include <vector>

#include "absl/status/statusor.h"
#include "fleetmark/v1/plan.pb.h"
#include "fleetmark/v1/result.pb.h"

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

// The cases a run measures: `plan`'s expanded cases (ExpandCases, after `quick`) whose
// case id `filter` matches ("" matches all), in expansion order. The one rule of
// --filter for `fleetmark run`, submit, schedules and the coordinator: CaseFilter::Compile's
// errors, or InvalidArgument naming --filter when it matches none of the plan's cases
// ("--filter: \"x\" matches none of the plan's 12 [quick ]case ids"). `plan` must
// already be valid (ValidatePlan).
absl::StatusOr<std::vector<v1::CaseSpec>> SelectCases(const v1::Plan& plan, bool quick, std::string_view filter);

}  // namespace fleetmark::engine
