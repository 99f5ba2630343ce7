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

namespace fleetmark::engine {
namespace {

const ChildHandlerRegistration kMemoryPointHandler(std::string(kMemoryPointChildKind), MemoryPointChild);
const ChildHandlerRegistration kFanoutHandler(std::string(kFanoutChildKind), FanoutChild);
const ChildHandlerRegistration kLoadHandler(std::string(kLoadChildKind), LoadChild);

}  // namespace

absl::StatusOr<v1::CaseResult> RunScenarioCase(const v1::CaseSpec& spec, const ScenarioContext& ctx) {
  v1::CaseResult result;
  *result.mutable_spec() = spec;
  result.set_engine_version(FLEETMARK_ENGINE_VERSION);
  const StampedSpan span(SystemClock());  // the end is the start + the steady duration
  result.set_started_unix_ns(absl::ToUnixNanos(span.start()));
  absl::Status status;
  try {
    if (spec.scenario() == "memory") {
      status = RunMemoryCase(spec, ctx, &result);
    } else if (spec.scenario() == "fanout") {
      status = RunFanoutCase(spec, ctx, &result);
    } else if (spec.scenario() == "load") {
      status = RunLoadCase(spec, ctx, &result);
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("scenario: RunScenarioCase runs memory, fanout or load, got \"", spec.scenario(), "\""));
    }
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
