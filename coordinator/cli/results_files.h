// Saved results files as devices: what `fleetmark show FILE`, `compare --results`,
// `map --results` and `recommend --results` read. A results file is the JSON that
// `fleetmark run --format json` or `fleetmark export --format json` writes
// (docs/results-schema.md; also a pre-schema `fleetmark run` file); each of its devices
// (a local run: one, named by its host name; a fleet export: one per agent) is one
// device side by side with the devices of the other files. CSV is not read back (it
// holds no samples, conditions or host): the error says to write JSON. Main thread only;
// errors are returned (exit_codes.h), never written here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "fleetmark/v1/result.pb.h"

namespace fleetmark::cli {

// The largest results file read back: a larger one is refused by its size before it is
// read (a regular file; standard input is read up to it). A results file holds the
// samples of every case: S1's full run is a few MB, a fleet export of 100 agents tens.
inline constexpr uint64_t kMaxResultsFileBytes = uint64_t{256} << 20;
inline constexpr char kMaxResultsFileText[] = "256 MiB";

// The one rule of every command that reads a results file (show, compare, map,
// recommend): the document in `path` ("-": standard input), at most
// kMaxResultsFileBytes, not CSV, parsed and checked by report::ParseResultsJson (its
// messages say what is wrong and where in fleetmark's words), holding at least one
// result. InvalidArgument (NotFound, PermissionDenied for a file that cannot be read)
// naming the path; `what` names it in "must be" messages ("--results", "FILE").
absl::StatusOr<v1::ResultsDocument> LoadResultsFile(const std::string& what, const std::string& path);

// LoadResultsFile, its error as the command's: a FleetmarkError, InvalidArgument
// (exit 2), written "fleetmark: COMMAND: WHAT: PATH: reason" (`what` e.g. "--results",
// "FILE").
absl::StatusOr<v1::ResultsDocument> ReadResultsFile(const std::string& command, const std::string& what,
                                                    const std::string& path);

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
// with no result are kept (callers decide). Each file at most once, and each result
// once: two paths of one file (./a.json and /abs/a.json, a link: the same canonical
// path) are refused, and so are two files holding one result id (a copy of a file, or
// two exports of one run): "a.json and b.json hold the same results (result id R in
// both); give each once". On failure (an item empty, a file twice, a result twice, a
// file ReadResultsFile refuses) a FleetmarkError, InvalidArgument (exit 2), written
// "fleetmark: COMMAND: ...".
absl::StatusOr<std::vector<FileDevice>> ReadResultsFiles(const std::string& command, const std::string& files);

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
