#include "engine/report/results_document.h"

#include "engine/common/partial_result.h"

namespace fleetmark::report {

std::string LocalAgentName(const fleetmark::v1::HostInfo& host) {
  return host.hostname().empty() ? "local" : host.hostname();
}

fleetmark::v1::ResultsDocument LocalResultsDocument(const fleetmark::v1::RunReport& report) {
  fleetmark::v1::ResultsDocument document;
  document.set_schema_version(kResultsSchemaVersion);
  document.set_source("local");
  document.mutable_run()->set_plan_name(report.plan_name());
  document.mutable_run()->set_quick(report.quick());
  fleetmark::v1::ResultsDevice* device = document.add_devices();
  device->set_agent(LocalAgentName(report.host()));
  if (report.has_host()) *device->mutable_host() = report.host();
  if (report.has_fingerprint()) *device->mutable_fingerprint() = report.fingerprint();
  *device->mutable_results() = report.results();
  MarkIncomplete(&document);
  return document;
}

void MarkIncomplete(fleetmark::v1::ResultsDocument* document) {
  bool incomplete = false;
  for (fleetmark::v1::ResultsDevice& device : *document->mutable_devices()) {
    for (fleetmark::v1::CaseResult& result : *device.mutable_results()) {
      result.set_partial(engine::IsPartialResult(result));
      incomplete = incomplete || result.status() == fleetmark::v1::CASE_STATUS_CANCELLED;
    }
  }
  document->mutable_run()->set_incomplete(incomplete);
}

fleetmark::v1::RunReport DeviceReport(const fleetmark::v1::ResultsDocument& document,
                                      const fleetmark::v1::ResultsDevice& device) {
  fleetmark::v1::RunReport report;
  report.set_plan_name(document.run().plan_name());
  report.set_quick(document.run().quick());
  if (device.has_host()) *report.mutable_host() = device.host();
  if (device.has_fingerprint()) *report.mutable_fingerprint() = device.fingerprint();
  *report.mutable_results() = device.results();
  return report;
}

}  // namespace fleetmark::report
