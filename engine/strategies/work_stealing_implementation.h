// Which library implements the `work_stealing` strategy in this build, for HostInfo's
// notes (results carry their agent's HostInfo; a local run's report carries its own):
// the device build (deploy/dist.sh) links a static oneTBB built from Debian's onetbb
// source package, the host build Debian's shared libtbb12. Same scheduler, per-worker
// deques with stealing, either way.
#pragma once

#include <string>

namespace fleetmark::engine {

// "work_stealing: oneTBB 2021.8 (shared, Debian libtbb12)" or "... (static, built
// from the Debian onetbb source, device build)"; the version is the running library's
// (TBB_runtime_version). Thread-safe.
std::string WorkStealingImplementationNote();

}  // namespace fleetmark::engine
