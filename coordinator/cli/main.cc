// fleetmark: the command-line tool. Local commands run the engine in-process; remote
// commands talk to a coordinator. Each command registers itself in one line below.
#include <string>

#include "absl/synchronization/mutex.h"
#include "coordinator/cli/command.h"
#include "coordinator/cli/local_commands.h"
#include "coordinator/cli/remote_commands.h"
#include "coordinator/cli/topology_command.h"
#include "engine/child/child.h"

int main(int argc, char** argv) {
  // Debian's Abseil is built without NDEBUG, so every absl::Mutex (gRPC locks with
  // them too) would run deadlock-cycle detection (GraphCycles) on each acquisition:
  // ~5% of a fan-out's CPU in the fleet benchmark. Lock order is checked in the tests.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  // Child-process mode (fibre cases, memory points, ...) before anything else.
  fleetmark::engine::MaybeRunChild(argc, argv);
  // FLEETMARK_CHILD_EMULATOR is checked by RunCli for the commands that run cases only.
  fleetmark::cli::CommandRegistry registry;
  fleetmark::cli::RegisterRunCommand(registry);
  fleetmark::cli::RegisterPlanCommands(registry);
  fleetmark::cli::RegisterListCommand(registry);
  fleetmark::cli::RegisterTopologyCommand(registry);
  fleetmark::cli::RegisterRemoteCommands(registry);
  return fleetmark::cli::RunCli(registry, argc, argv);
}
