// Saved results files as devices: what `fleetmark show FILE`, `compare --results`,
// `map --results` and `recommend --results` read. A results file is the JSON that
// `fleetmark run --format json` or `fleetmark export --format json` writes
// (docs/results-schema.md; also a pre-schema `fleetmark run` file); each of its devices
// (a local run: one, named by its host name; a fleet export: one per agent) is one
// device side by side with the devices of the other files. CSV is not read back (it
// holds no samples, conditions or host): the error says to write JSON. Main thread only;
// messages go to stderr.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "fleetmark/v1/result.pb.h"

namespace fleetmark::cli {

// The document in `path` ("-": standard input, at most 1 GiB), checked by
// report::ParseResultsJson (an unknown newer schema_version, malformed JSON, values no
// measurement makes are refused). On failure prints "fleetmark: COMMAND: WHAT: PATH:
// reason" (`what` e.g. "--results", "FILE") and returns nullopt with `*exit_code` 2.
std::optional<v1::ResultsDocument> ReadResultsFile(const std::string& command, const std::string& what,
                                                   const std::string& path, int* exit_code);

// One device of a results file.
struct FileDevice {
  // Its name side by side: the device's name in the file (host name or agent name);
  // when an earlier device already has it, "NAME (FILE's base name)", then "... #2",
  // "#3" as needed, so every label is unique.
  std::string label;
  std::string file;  // the path it was read from
  // report::DeviceReport of the device: plan name, host, fingerprint, results.
  v1::RunReport report;
};

// Every device of every file of `files` (a --results value: one path, or several
// comma-separated, SplitListFlag's rules), in file order then document order; devices
// with no result are kept (callers decide). Each path at most once. On failure (an item
// empty, a path twice, a file ReadResultsFile refuses) prints the error and returns
// nullopt with `*exit_code` 2.
std::optional<std::vector<FileDevice>> ReadResultsFiles(const std::string& command, const std::string& files,
                                                        int* exit_code);

// The devices of files that are one host: for each pair i < j of `devices` whose host
// names are equal and non-empty and whose prevailing device fingerprints
// (engine::PrevailingFingerprint) have equal, non-empty hashes, "A and B are one host
// (host name H, device fingerprint F): their differences are not between devices". A
// file carries no machine id or boot id, so the agents' rule (scheduler/same_host.h)
// cannot be applied: the host name and the fingerprint are what a file says of its
// machine. Pure.
std::vector<std::string> OneHostNotes(const std::vector<const FileDevice*>& devices);

// "results files a.json, b.json  plan P  N results" (the plans' names when they
// differ), escaped for a terminal: the header of a side-by-side answer from files.
std::string FilesSummary(const std::vector<const FileDevice*>& devices);

}  // namespace fleetmark::cli
