// The `fleetmark` commands that need no server: run, plan validate, list.
#pragma once

#include "coordinator/cli/command.h"

namespace fleetmark::cli {

// `fleetmark run PLAN [--format ...] [--out FILE] [--filter REGEX] [--quick]`.
void RegisterRunCommand(CommandRegistry& registry);
// `fleetmark plan validate PLAN`.
void RegisterPlanCommands(CommandRegistry& registry);
// `fleetmark list`.
void RegisterListCommand(CommandRegistry& registry);

}  // namespace fleetmark::cli
