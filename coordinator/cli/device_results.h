// The results of each device (agent) that `fleetmark map` and `fleetmark recommend`
// read: results files (results_files.h: `fleetmark run --format json`, one device
// named by its host name, or `fleetmark export --format json`, one per agent; several
// files side by side), a
// run's results per agent, or those of the latest finished run of a plan; results
// measured under emulation left out unless asked; optionally only the agents a
// selector matches. Main thread only (reads flags' values through its arguments).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "fleetmark/v1/result.pb.h"

namespace fleetmark::cli {

struct DeviceResultsRequest {
  std::string command;            // for messages: "map", "recommend"
  std::string usage;              // the command's usage line, for usage errors
  std::vector<std::string> args;  // positional: RUN, or none
  std::string results_file;       // --results: FILE[,FILE...]
  std::string plan_latest;        // --plan_latest ("" = not given)
  std::string agent;              // --agent ("" = every agent)
  std::string select;             // --select ("" = every agent)
  bool include_emulated = false;
};

struct DeviceResults {
  // The run's summary line(s) for a run; FilesSummary for results files.
  std::string header;
  // Results files: OneHostNotes of the devices kept (results_files.h); a run: none.
  std::vector<std::string> one_host;
  // Device name -> its results, by name.
  std::map<std::string, std::vector<v1::CaseResult>> devices;
};

// Exactly one of RUN, --results and --plan_latest must be given (else a usage error).
// --select is parsed with the coordinator's selector language (an error names it) and
// matched against each agent's host and labels (a results file: its host, no labels).
// Notes on stderr what was left out (emulated results). No device with a result left
// (an empty file or run, a selector matching nothing, everything emulated) is a failure
// that says which. On failure the error for the command to return (exit_codes.h): bad
// input, no such run/agent/plan (exit 2), or the coordinator's error
// (ControlClient::CallError).
absl::StatusOr<DeviceResults> LoadDeviceResults(const DeviceResultsRequest& request);

}  // namespace fleetmark::cli
