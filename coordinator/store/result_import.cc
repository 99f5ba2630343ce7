// The shared rules of Store::ImportResults (result_import.h).
#include "coordinator/store/result_import.h"

#include <algorithm>
#include <iterator>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "coordinator/store/result_rows.h"
#include "engine/common/name_rule.h"
#include "engine/report/results_check.h"
#include "engine/report/results_document.h"
#include "engine/topology/fingerprint.h"

namespace fleetmark::store::internal {
namespace {

absl::Status CheckText(const std::string& field, const std::string& text) {
  const bool printable = std::all_of(text.begin(), text.end(), [](char c) {
    const unsigned char u = static_cast<unsigned char>(c);
    return u >= 0x20 && u != 0x7f;
  });
  if (text.size() > kMaxImportTextBytes || !printable) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": at most ", kMaxImportTextBytes,
                                                   " bytes of printable text, got ", text.size(), " bytes",
                                                   printable ? "" : " with control characters"));
  }
  return absl::OkStatus();
}

// The fingerprint fields that say which machine (not which build, limits or settings).
constexpr const char* kMachineFields[] = {"cpu", "arch", "core classes", "memory"};

std::vector<std::string> MachineValues(const v1::DeviceFingerprint& fp) {
  std::vector<std::string> values;
  for (const engine::FingerprintField& field : engine::FingerprintFields(fp)) {
    if (std::find_if(std::begin(kMachineFields), std::end(kMachineFields),
                     [&](const char* name) { return field.name == name; }) != std::end(kMachineFields)) {
      values.push_back(field.value);
    }
  }
  return values;
}

}  // namespace

absl::Status CheckImport(const v1::ResultsDocument& document, const std::string& submitted_by) {
  if (document.schema_version() < 1 || document.schema_version() > report::kResultsSchemaVersion) {
    return absl::InvalidArgumentError(absl::StrCat(
        "document.schema_version: 1 <= schema_version <= ", report::kResultsSchemaVersion, " (the versions this ",
        "coordinator knows), got ", document.schema_version(),
        document.schema_version() == 0 ? " (a file from before the results schema)" : " (a newer fleetmark's file)"));
  }
  if (absl::Status s = report::CheckResultsDocument(document); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("document: ", s.message()));
  }
  if (absl::Status s = CheckText("document.run.plan_name", document.run().plan_name()); !s.ok()) return s;
  if (absl::Status s = CheckText("submitted_by", submitted_by); !s.ok()) return s;
  for (int i = 0; i < document.devices_size(); ++i) {
    const v1::ResultsDevice& device = document.devices(i);
    for (int j = 0; j < device.results_size(); ++j) {
      // A stored result is one case of its job: the case id says which.
      if (device.results(j).spec().case_id().empty()) {
        return absl::InvalidArgumentError(absl::StrCat("devices[", i, "].results[", j, "].spec.case_id: empty"));
      }
      if (absl::Status s = CheckIncomingResult(device.results(j), /*job_id_too=*/false); !s.ok()) {
        // "result.stats.median_ns: ..." -> "devices[0].results[3].stats.median_ns: ..."
        std::string message(s.message());
        if (message.rfind("result.", 0) == 0) message = message.substr(7);
        return absl::InvalidArgumentError(absl::StrCat("devices[", i, "].results[", j, "].", message));
      }
    }
  }
  return absl::OkStatus();
}

std::vector<std::vector<int>> NewImportResults(const v1::ResultsDocument& document, const std::set<std::string>& stored,
                                               ImportOutcome* outcome) {
  std::vector<std::vector<int>> fresh(document.devices_size());
  std::set<std::string> seen;
  for (int i = 0; i < document.devices_size(); ++i) {
    const v1::ResultsDevice& device = document.devices(i);
    ImportOutcome::Device& out = outcome->devices.emplace_back();
    out.name = device.agent();
    for (int j = 0; j < device.results_size(); ++j) {
      const std::string id = absl::AsciiStrToLower(device.results(j).result_id());
      if (stored.count(id) > 0 || !seen.insert(id).second) {
        ++out.already_stored;
        continue;
      }
      fresh[i].push_back(j);
      ++out.stored;
    }
    outcome->stored += out.stored;
    outcome->already_stored += out.already_stored;
  }
  return fresh;
}

int MachineOf(const std::vector<ImportCandidate>& candidates, const v1::ResultsDevice& device) {
  const std::string& hostname = device.host().hostname();
  if (hostname.empty()) return -1;
  const v1::DeviceFingerprint measured = engine::MeasuredFingerprint(device.results(), device.fingerprint());
  const std::vector<std::string> machine = MachineValues(measured);
  if (measured.cpu_model().empty() && measured.arch().empty()) return -1;  // nothing says which machine
  int found = -1;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const ImportCandidate& c = candidates[i];
    if (c.host.hostname() != hostname) continue;
    if (MachineValues(engine::DeviceFingerprintOf(c.host)) != machine) continue;
    if (!c.imported) return static_cast<int>(i);
    if (found < 0) found = static_cast<int>(i);
  }
  return found;
}

void AssignImportAgents(
    const v1::ResultsDocument& document, const std::vector<std::vector<int>>& fresh,
    std::vector<ImportCandidate>* candidates, std::set<std::string>* names,
    const std::function<std::string(const v1::ResultsDevice& device, const std::string& name)>& new_record,
    ImportOutcome* outcome) {
  for (int i = 0; i < document.devices_size(); ++i) {
    if (fresh[i].empty()) continue;
    const v1::ResultsDevice& device = document.devices(i);
    ImportOutcome::Device& out = outcome->devices[i];
    if (const int match = MachineOf(*candidates, device); match >= 0) {
      const ImportCandidate& found = (*candidates)[match];
      out.agent_id = found.agent_id;
      out.agent_name = found.name;
      out.matched = !found.imported;
      continue;
    }
    out.agent_name = ImportedAgentName(device, *names);
    out.agent_id = new_record(device, out.agent_name);
    out.matched = false;
    names->insert(out.agent_name);
    candidates->push_back({out.agent_id, out.agent_name, device.host(), /*imported=*/true});
  }
}

std::string ImportedAgentName(const v1::ResultsDevice& device, const std::set<std::string>& taken) {
  static constexpr char kSuffix[] = "-imported";
  std::string base = device.agent().empty() ? device.host().hostname() : device.agent();
  for (char& c : base) {
    if (!IsNameChar(c)) c = '-';
  }
  if (base.empty() || base.front() == '-') base.insert(base.begin(), 'd');
  // Room for the suffix and "-NNNNN".
  base = base.substr(0, kMaxNameBytes - sizeof(kSuffix) - 6) + kSuffix;
  std::string name = base;
  for (int k = 2; taken.count(name) > 0; ++k) name = absl::StrCat(base, "-", k);
  return name;
}

ImportTimes ImportRunTimes(const v1::ResultsRun& run, absl::Time now) {
  ImportTimes times{now, now};
  const absl::Time created = absl::FromUnixNanos(run.created_unix_ns());
  if (run.created_unix_ns() > 0 && created <= now) times.created = created;
  const absl::Time finished = absl::FromUnixNanos(run.finished_unix_ns());
  times.finished =
      run.finished_unix_ns() > 0 && finished <= now && finished >= times.created ? finished : times.created;
  // Stored with microseconds (timestamptz).
  times.created = absl::FromUnixMicros(absl::ToUnixMicros(times.created));
  times.finished = absl::FromUnixMicros(absl::ToUnixMicros(times.finished));
  return times;
}

v1::CaseResult ImportedResult(const v1::CaseResult& result, const std::string& run_id, const std::string& job_id) {
  v1::CaseResult copy = result;
  copy.set_run_id(run_id);
  copy.set_job_id(job_id);
  return copy;
}

}  // namespace fleetmark::store::internal
