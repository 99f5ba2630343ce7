#include "engine/plan/case_filter.h"

#include <algorithm>

#include "engine/common/text.h"
#include "engine/plan/plan.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "re2/re2.h"

namespace fleetmark::engine {
namespace {

// Memory budget of the compiled pattern (RE2's default is 8 MiB).
constexpr int64_t kFilterMaxMem = int64_t{1} << 22;

}  // namespace

std::string QuotedFilter(std::string_view pattern) {
  constexpr size_t kShown = 64;
  return absl::StrCat("\"", EscapeForTerminal(pattern, kShown), "\"");
}

absl::StatusOr<CaseFilter> CaseFilter::Compile(std::string_view pattern) {
  CaseFilter filter;
  if (pattern.empty()) return filter;
  if (pattern.size() > kMaxFilterLength) {
    return absl::InvalidArgumentError(absl::StrCat("--filter: at most ", kMaxFilterLength, " bytes, got ",
                                                   pattern.size(), " (", QuotedFilter(pattern), ")"));
  }
  if (pattern.find('\0') != std::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("--filter: must not contain NUL bytes, got ", QuotedFilter(pattern)));
  }
  RE2::Options options;
  options.set_log_errors(false);
  options.set_max_mem(kFilterMaxMem);
  auto re = std::make_shared<const RE2>(re2::StringPiece(pattern.data(), pattern.size()), options);
  if (!re->ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--filter: not a valid RE2 regular expression: ", QuotedFilter(pattern), " (", QuotedFilter(re->error()), ")"));
  }
  filter.re_ = std::move(re);
  return filter;
}

bool CaseFilter::Matches(std::string_view case_id) const {
  return re_ == nullptr || RE2::PartialMatch(re2::StringPiece(case_id.data(), case_id.size()), *re_);
}

absl::StatusOr<std::vector<v1::CaseSpec>> SelectCases(const v1::Plan& plan, bool quick, std::string_view filter) {
  absl::StatusOr<CaseFilter> compiled = CaseFilter::Compile(filter);
  if (!compiled.ok()) return compiled.status();
  std::vector<v1::CaseSpec> specs = ExpandCases(plan, quick);
  const size_t expanded = specs.size();
  std::vector<v1::CaseSpec> selected;
  for (v1::CaseSpec& spec : specs) {
    if (compiled->Matches(spec.case_id())) selected.push_back(std::move(spec));
  }
  if (selected.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("--filter: ", QuotedFilter(filter), " matches none of the plan's ",
                                                   expanded, quick ? " quick" : "", " case ids"));
  }
  return selected;
}

}  // namespace fleetmark::engine
