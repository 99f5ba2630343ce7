// The agent logs through the daemons' common log (engine/common/log.h).
#pragma once

#include "engine/common/log.h"

namespace fleetmark::agent {

using ::fleetmark::Log;
using ::fleetmark::LogLevel;

}  // namespace fleetmark::agent
