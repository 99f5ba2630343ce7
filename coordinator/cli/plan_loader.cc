#include "coordinator/cli/plan_loader.h"

#include "engine/common/status_macros.h"
#include "engine/plan/plan.h"

namespace fleetmark::cli {

absl::StatusOr<v1::Plan> LoadValidPlan(const std::string& path) {
  FLEETMARK_ASSIGN_OR_RETURN(engine::ParsedPlan parsed, engine::LoadPlanFile(path));
  FLEETMARK_RETURN_IF_ERROR(engine::ValidatePlan(parsed));
  return std::move(parsed.plan);
}

}  // namespace fleetmark::cli
