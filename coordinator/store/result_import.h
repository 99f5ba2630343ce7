// The rules of `fleetmark results import` that both stores share (Store::ImportResults):
// which documents may be imported, which of their results are new, which agent a
// device of a file is, and how a device record created for it is named. Pure
// functions; thread-safe.
#pragma once

#include <cstddef>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "coordinator/store/store.h"
#include "fleetmark/v1/host.pb.h"
#include "fleetmark/v1/result.pb.h"

namespace fleetmark::store::internal {

// Longest plan name and submitter an import stores, bytes.
inline constexpr size_t kMaxImportTextBytes = 256;

// InvalidArgument naming the field unless `document` may be imported: its
// schema_version is one this build knows (1 <= schema_version <=
// report::kResultsSchemaVersion; 0, a file from before the schema, is refused too);
// report::CheckResultsDocument passes (the check every reader of a results file runs);
// every result passes the check an agent's result gets (CheckIncomingResult), named
// `devices[i].results[j].FIELD`, and has a case id; the plan name and `submitted_by` are at most
// kMaxImportTextBytes of printable text.
absl::Status CheckImport(const v1::ResultsDocument& document, const std::string& submitted_by);

// Which results of `document` are new: per device, the indexes of its results whose
// (lower-case) id is neither in `stored` nor met earlier in the document. Fills
// `outcome`'s devices (name, counts) and totals; agents and run are left to the caller.
std::vector<std::vector<int>> NewImportResults(const v1::ResultsDocument& document, const std::set<std::string>& stored,
                                               ImportOutcome* outcome);

// An agent (or device record) a device of a file may be stored under.
struct ImportCandidate {
  std::string agent_id;
  std::string name;
  v1::HostInfo host;
  bool imported = false;  // a device record of an earlier import
};

// The index in `candidates` of the machine `device` was measured on, or -1: an agent
// whose host has the device's host name (non-empty, equal) and whose fingerprint's
// machine fields (cpu, arch, core classes, memory; engine/topology/fingerprint.h) equal
// those of the fingerprint the device's results were measured under
// (engine::MeasuredFingerprint: the prevailing one, else the device's own; the file carries no machine id,
// so scheduler/same_host.h's rule cannot apply). An agent is preferred to an imported
// device record; among equals, the first.
int MachineOf(const std::vector<ImportCandidate>& candidates, const v1::ResultsDevice& device);

// Assigns each device of `document` with new results (`fresh`, NewImportResults') its
// agent in outcome->devices[i]: the machine MachineOf finds among `*candidates`
// (agent_id, agent_name; matched when it is an agent, not an imported device record),
// else a new device record named ImportedAgentName(device, *names), created by
// `new_record(device, name)`, which stores it and returns its agent id; the record then
// joins `*candidates` and `*names`, so a later device of that machine goes to it. One
// rule for both stores; errors of `new_record` (a store's exceptions) propagate.
void AssignImportAgents(
    const v1::ResultsDocument& document, const std::vector<std::vector<int>>& fresh,
    std::vector<ImportCandidate>* candidates, std::set<std::string>* names,
    const std::function<std::string(const v1::ResultsDevice& device, const std::string& name)>& new_record,
    ImportOutcome* outcome);

// The name of a new device record for `device`: its name (the host name of a local run,
// the agent name of an export; characters outside the agent name rule replaced by '-')
// with "-imported", then "-imported-2", ... : the first not in `taken` (the names of the
// agents not removed), so a real agent of that name can still enroll.
std::string ImportedAgentName(const v1::ResultsDevice& device, const std::set<std::string>& taken);

// The imported run's times: the document's run times when they are in (0, now]
// (finished no earlier than created), else `now` (finished: created).
struct ImportTimes {
  absl::Time created;
  absl::Time finished;
};
ImportTimes ImportRunTimes(const v1::ResultsRun& run, absl::Time now);

// The copy of `result` stored by the import: its job and run are the import's.
v1::CaseResult ImportedResult(const v1::CaseResult& result, const std::string& run_id, const std::string& job_id);

}  // namespace fleetmark::store::internal
