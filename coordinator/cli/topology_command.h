// `fleetmark topology [--fsroot DIR] [--format text|json]`: what this host is (core
// classes, hwloc kinds, SMT, caches, governor), as agents report it.
#pragma once

#include "coordinator/cli/command.h"

namespace fleetmark::cli {

void RegisterTopologyCommand(CommandRegistry& registry);

}  // namespace fleetmark::cli
