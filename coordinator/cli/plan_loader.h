// Loading a plan file for a CLI command: parse (text or JSON by extension) and
// validate, so every command (run, plan validate, submit) reports bad plans alike.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "fleetmark/v1/plan.pb.h"

namespace fleetmark::cli {

// The validated plan at `path`, or the first problem: NotFound (missing file),
// PermissionDenied, or InvalidArgument naming the field (with line:column for text
// plans). Every error means exit code 2 for the CLI.
absl::StatusOr<v1::Plan> LoadValidPlan(const std::string& path);

}  // namespace fleetmark::cli
