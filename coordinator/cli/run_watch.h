// `fleetmark submit --wait`'s watch of a run: live progress per agent (WatchRun stream)
// until the run ends, kept going through a coordinator restart or a database outage,
// bounded by --timeout, with a notice when nothing moves for a long time.
//
//   WatchResult watched = WatchRunUntilEnded(client, run_id, {.timeout = absl::Minutes(30)});
//   if (!watched.ended) return watched.exit_code;  // the reason is already printed
//
// Progress goes to stderr (redrawn in place on a terminal, else a line per change and
// at most one per 10 s). Not thread-safe: main's thread. Installs SIGINT/SIGTERM
// handlers that print how to follow the run and exit 130.
#pragma once

#include <string>

#include "absl/time/time.h"
#include "coordinator/cli/remote_client.h"
#include "fleetmark/v1/control.pb.h"

namespace fleetmark::cli {

struct WatchOptions {
  // Give up this long after the watch starts (exit 1, the run's state printed).
  absl::Duration timeout = absl::InfiniteDuration();
  // Coordinator unreachable (or its database unavailable) this long in a row: give up
  // (exit 1). Retried with backoff 1 s doubling to 10 s meanwhile.
  absl::Duration unreachable_limit = absl::Minutes(5);
  // No change in the run (states, cases done) this long: print one notice naming the
  // unfinished jobs and their agents' states (again after each further stall).
  absl::Duration no_progress_notice = absl::Minutes(5);
};

struct WatchResult {
  bool ended = false;  // the run reached done, failed or cancelled: `run` is its last state
  int exit_code = 0;   // when !ended: the process exit code (the message is printed)
  v1::RunInfo run;
};

// Watches run `run_id` (a full id or a unique prefix) until it ends, the timeout
// passes or the coordinator stays unreachable too long. A coordinator error other than
// UNAVAILABLE (unknown run, refused token) ends the watch at once via client.Fail.
WatchResult WatchRunUntilEnded(ControlClient& client, const std::string& run_id, const WatchOptions& options);

// "run <id> continues on the fleet; follow it with `fleetmark runs show <id>`; cancel
// with `fleetmark runs cancel <id>`": printed when the CLI stops watching.
std::string DetachHint(const std::string& run_id);

}  // namespace fleetmark::cli
