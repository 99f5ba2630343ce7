// Parent side of the fanout scenario: fit check, then the case in a child process.
#include "engine/scenarios/fanout_scenario.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "engine/common/status_macros.h"
#include "engine/scenarios/child_case.h"
#include "engine/scenarios/resource_limits.h"
#include "engine/strategies/executors/os_thread.h"

namespace fleetmark::engine {
namespace {

// Threads the case needs at its peak (all R requests are issued at once and each
// lives at least one delay).
int64_t PeakThreadsNeeded(std::string_view name, const FanoutConfig& c) {
  const int64_t r = c.requests, d = c.calls;
  const int64_t k = c.threads > 0 ? c.threads : LogicalCpuCount();
  const StrategyTraits* strategy = FindStrategy(name);
  if (strategy == nullptr || !IsFanoutThreadCarried(*strategy)) return k;
  switch (strategy->carrier) {
    case Carrier::kCaller:
      return r;
    case Carrier::kPool:
      return c.threads > 0 ? r + k : r * (1 + d);
    case Carrier::kWorkStealing:
      return r + k;
    default:
      return r * (1 + d);  // a thread per request and one per call
  }
}

// Wall-clock limit of the child: the worst case is every call waited in sequence.
absl::Duration ChildTimeout(const FanoutConfig& c) {
  const absl::Duration per_call = std::min(c.delay, c.timeout);
  const double calls = static_cast<double>(c.requests) * c.calls;
  return std::min(absl::Hours(2), absl::Seconds(60) + per_call * calls);
}

}  // namespace

absl::Status RunFanoutCase(const v1::CaseSpec& spec, const ScenarioContext& ctx, v1::CaseResult* result) {
  FLEETMARK_ASSIGN_OR_RETURN(FanoutConfig config, ResolveFanoutConfig(spec));
  if (absl::Status fits = CheckThreadsFit(PeakThreadsNeeded(spec.strategy().name(), config)); !fits.ok()) {
    result->set_status(v1::CASE_STATUS_RESOURCE_EXHAUSTED);
    result->set_message(absl::StrCat("skipped: ", fits.message()));
    return absl::OkStatus();
  }
  RunCaseInChild(kFanoutChildKind, spec,
                 {.executable = ctx.child_executable, .timeout = ChildTimeout(config), .cancelled = ctx.cancelled},
                 result);
  return absl::OkStatus();
}

absl::StatusOr<std::string> FanoutChild(std::string_view request) {
  return ServeCaseInChild(request, "fanout", RunFanoutInProcess);
}

}  // namespace fleetmark::engine
