// RunScenarioCase: dispatch to the memory, fanout and load scenarios, and the child
// handlers they run in (registered here because every binary that runs a scenario
// links this object file through RunScenarioCase).
#include "engine/scenarios/scenario.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "engine/common/clock.h"
#include "engine/child/child.h"
#include "engine/scenarios/fanout_scenario.h"
#include "engine/scenarios/load_scenario.h"
#include "engine/scenarios/memory_scenario.h"
#include "engine/scenarios/registry.h"

namespace fleetmark::engine {
namespace {

const ChildHandlerRegistration kMemoryPointHandler(std::string(kMemoryPointChildKind), MemoryPointChild);
const ChildHandlerRegistration kFanoutHandler(std::string(kFanoutChildKind), FanoutChild);
const ChildHandlerRegistration kLoadHandler(std::string(kLoadChildKind), LoadChild);

// The runner of each non-batch registry entry, in registry order (checked below).
struct Runner {
  std::string_view name;
  absl::Status (*run)(const v1::CaseSpec&, const ScenarioContext&, v1::CaseResult*);
};
constexpr Runner kRunners[] = {
    {"memory", &RunMemoryCase},
    {"fanout", &RunFanoutCase},
    {"load", &RunLoadCase},
};

constexpr bool RunnersFollowTheRegistry() {
  size_t next = 0;
  for (const ScenarioTraits& s : kScenarios) {
    if (s.is_batch) continue;
    if (next == std::size(kRunners) || kRunners[next].name != s.name) return false;
    ++next;
  }
  return next == std::size(kRunners);
}
static_assert(RunnersFollowTheRegistry(), "kRunners must name every non-batch kScenarios entry, in registry order");

// The runner of `scenario`, or nullptr for batch or an unknown name.
const Runner* FindRunner(std::string_view scenario) {
  for (const Runner& r : kRunners) {
    if (r.name == scenario) return &r;
  }
  return nullptr;
}

// "memory, fanout or load": the scenarios RunScenarioCase runs.
std::string RunnerNames() {
  std::string out;
  for (size_t i = 0; i < std::size(kRunners); ++i) {
    if (i > 0) out += i + 1 == std::size(kRunners) ? " or " : ", ";
    out += kRunners[i].name;
  }
  return out;
}

}  // namespace

absl::StatusOr<v1::CaseResult> RunScenarioCase(const v1::CaseSpec& spec, const ScenarioContext& ctx) {
  v1::CaseResult result;
  *result.mutable_spec() = spec;
  result.set_engine_version(FLEETMARK_ENGINE_VERSION);
  const StampedSpan span(SystemClock());  // the end is the start + the steady duration
  result.set_started_unix_ns(absl::ToUnixNanos(span.start()));
  absl::Status status;
  try {
    const Runner* runner = FindRunner(spec.scenario());
    if (runner == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("scenario: RunScenarioCase runs ", RunnerNames(), ", got \"", spec.scenario(), "\""));
    }
    status = runner->run(spec, ctx, &result);
  } catch (const std::bad_alloc&) {
    status = absl::ResourceExhaustedError("out of memory in the parent process");
  } catch (const std::exception& e) {
    status = absl::InternalError(absl::StrCat("unexpected exception: ", e.what()));
  }
  if (!status.ok()) {
    // A spec outside the documented ranges: a result, named field and all.
    result.set_status(absl::IsResourceExhausted(status) ? v1::CASE_STATUS_RESOURCE_EXHAUSTED : v1::CASE_STATUS_FAILED);
    result.set_message(std::string(status.message()));
  }
  result.set_finished_unix_ns(absl::ToUnixNanos(span.End()));
  return result;
}

}  // namespace fleetmark::engine
