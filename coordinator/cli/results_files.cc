// ReadResultsFile, ReadResultsFiles, OneHostNotes, FilesSummary (results_files.h).
#include "coordinator/cli/results_files.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "coordinator/cli/command.h"
#include "coordinator/cli/remote_flags.h"
#include "engine/common/input_file.h"
#include "engine/common/text.h"
#include "engine/report/json.h"
#include "engine/report/results_document.h"
#include "engine/topology/fingerprint.h"

namespace fleetmark::cli {
namespace {

// The same rule under the name the command gives the file (--results, FILE).
constexpr InputFileRule kResultsFlagRule{.noun = "results file",
                                         .must_be = "--results must be a regular file (or - for standard input)",
                                         .max_bytes = kMaxResultsFileBytes,
                                         .max_text = kMaxResultsFileText,
                                         .stdin_name = "<stdin>"};
constexpr InputFileRule kResultsArgumentRule{.noun = "results file",
                                             .must_be = "FILE must be a regular file (or - for standard input)",
                                             .max_bytes = kResultsFlagRule.max_bytes,
                                             .max_text = kResultsFlagRule.max_text,
                                             .stdin_name = kResultsFlagRule.stdin_name};

// The path's file once: its canonical path (links and ./ resolved), "-" as itself.
std::string FileIdentity(const std::string& path) {
  if (path == kStdinPath) return path;
  std::error_code error;
  const std::filesystem::path canonical = std::filesystem::weakly_canonical(path, error);
  return error ? path : canonical.string();
}

}  // namespace

absl::StatusOr<v1::ResultsDocument> LoadResultsFile(const std::string& what, const std::string& path) {
  absl::StatusOr<std::string> text = ReadInputFile(path, what == "--results" ? kResultsFlagRule : kResultsArgumentRule);
  if (!text.ok()) return text.status();
  // A CSV export (its header starts with the agent column) is refused by name, not as
  // malformed JSON.
  if (absl::StartsWith(absl::StripLeadingAsciiWhitespace(*text), "agent,")) {
    return absl::InvalidArgumentError(
        absl::StrCat(EchoValue(path),
                     ": a CSV results file; only JSON results files are read back (CSV holds no samples, conditions "
                     "or host): write them with --format json"));
  }
  absl::StatusOr<v1::ResultsDocument> document = report::ParseResultsJson(*text);
  if (!document.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(EchoValue(path), ": ", document.status().message()));
  }
  int results = 0;
  for (const v1::ResultsDevice& device : document->devices()) results += device.results_size();
  if (results == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(EchoValue(path), ": the file holds no results (no device measured anything)"));
  }
  return document;
}

absl::StatusOr<v1::ResultsDocument> ReadResultsFile(const std::string& command, const std::string& what,
                                                    const std::string& path) {
  absl::StatusOr<v1::ResultsDocument> document = LoadResultsFile(what, path);
  if (!document.ok()) {
    return FleetmarkError(absl::InvalidArgumentError(
        absl::StrCat(command, ": ", what, ": ", EscapeForTerminal(std::string(document.status().message())))));
  }
  return document;
}

absl::StatusOr<std::vector<FileDevice>> ReadResultsFiles(const std::string& command, const std::string& files) {
  absl::StatusOr<std::vector<std::string>> paths = SplitListFlag("--results", files);
  if (!paths.ok()) {
    return FleetmarkError(absl::InvalidArgumentError(
        absl::StrCat(command, ": ", EscapeForTerminal(std::string(paths.status().message())))));
  }
  std::map<std::string, std::string> seen_files;    // canonical path -> the path given
  std::map<std::string, std::string> seen_results;  // result id -> the path it came in
  std::set<std::string> labels;
  std::vector<FileDevice> devices;
  for (const std::string& path : *paths) {
    const auto [file, added] = seen_files.emplace(FileIdentity(path), path);
    if (!added) {
      return FleetmarkError(absl::InvalidArgumentError(absl::StrCat(
          command, ": --results: each file once, got ",
          file->second == path ? absl::StrCat(EchoValue(path), " twice")
                               : absl::StrCat(EchoValue(file->second), " and ", EchoValue(path), ", one file"))));
    }
    absl::StatusOr<v1::ResultsDocument> document = ReadResultsFile(command, "--results", path);
    if (!document.ok()) return document.status();
    // One result once: a copy of a file, or two exports of one run, are not two devices.
    for (const v1::ResultsDevice& device : document->devices()) {
      for (const v1::CaseResult& result : device.results()) {
        if (result.result_id().empty()) continue;  // a file older than result ids
        const auto [earlier, fresh] = seen_results.emplace(result.result_id(), path);
        if (fresh || earlier->second == path) continue;
        return FleetmarkError(absl::InvalidArgumentError(
            absl::StrCat(command, ": --results: ", EchoValue(earlier->second), " and ", EchoValue(path),
                         " hold the same results (result id ", EchoValue(result.result_id()),
                         " in both: a copy of one file, or two exports of one run); give each result once")));
      }
    }
    for (const v1::ResultsDevice& device : document->devices()) {
      std::string label = device.agent();
      if (labels.count(label) > 0) {
        const std::string base =
            absl::StrCat(device.agent(), " (", std::filesystem::path(path).filename().string(), ")");
        label = base;
        for (int k = 2; labels.count(label) > 0; ++k) label = absl::StrCat(base, " #", k);
      }
      labels.insert(label);
      devices.push_back({.label = label, .file = path, .report = report::DeviceReport(*document, device)});
    }
  }
  return devices;
}

std::vector<std::string> OneHostNotes(const std::vector<const FileDevice*>& devices) {
  std::vector<std::string> hashes;
  for (const FileDevice* d : devices) {
    hashes.push_back(engine::MeasuredFingerprint(d->report.results(), d->report.fingerprint()).hash());
  }
  std::vector<std::string> notes;
  for (size_t i = 0; i < devices.size(); ++i) {
    for (size_t j = i + 1; j < devices.size(); ++j) {
      const std::string& host = devices[i]->report.host().hostname();
      if (host.empty() || host != devices[j]->report.host().hostname()) continue;
      if (hashes[i].empty() || hashes[i] != hashes[j]) continue;
      notes.push_back(EscapeForTerminal(absl::StrCat(devices[i]->label, " and ", devices[j]->label,
                                                     " are one host (host name ", host, ", device fingerprint ",
                                                     hashes[i], "): their differences are not between devices")));
    }
  }
  return notes;
}

std::string FilesSummary(const std::vector<const FileDevice*>& devices) {
  std::vector<std::string> files, plans;
  int results = 0;
  for (const FileDevice* d : devices) {
    if (files.empty() || files.back() != d->file) files.push_back(d->file);
    if (std::find(plans.begin(), plans.end(), d->report.plan_name()) == plans.end()) {
      plans.push_back(d->report.plan_name());
    }
    results += d->report.results_size();
  }
  return EscapeForTerminal(absl::StrCat(files.size() == 1 ? "results file " : "results files ",
                                        absl::StrJoin(files, ", "), "  plan ", absl::StrJoin(plans, ", "), "  ",
                                        results, results == 1 ? " result" : " results"));
}

}  // namespace fleetmark::cli
