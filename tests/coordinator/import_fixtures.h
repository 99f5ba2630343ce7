// A local results file to import (Store::ImportResults, `fleetmark results import`), for
// the store conformance suite (store_import_test.cc) and the metrics text test: one
// device, the laptop, as `fleetmark run --format json` writes it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "engine/topology/fingerprint.h"
#include "fleetmark/v1/result.pb.h"
#include "tests/coordinator/store_fixtures.h"  // Result

namespace fleetmark::store {

inline constexpr int64_t kCreatedNs = 1'700'000'000'000'000'000;  // 2023-11-14

inline v1::HostInfo LaptopHost() {
  v1::HostInfo host;
  host.set_hostname("laptop");
  host.set_cpu_model("Test CPU 9000");
  host.set_arch("x86_64");
  host.set_logical_cpus(8);
  host.set_physical_cores(4);
  host.set_memory_bytes(uint64_t{16} << 30);
  return host;
}

inline std::string Id(int n) { return absl::StrFormat("%08d-0000-4000-8000-0000000000ab", n); }

// A results file as `fleetmark run --format json` writes it: one device (the laptop)
// with results `ids`, each of its own case.
inline v1::ResultsDocument LocalFile(const std::vector<std::string>& ids) {
  v1::ResultsDocument document;
  document.set_schema_version(1);
  document.set_source("local");
  document.mutable_run()->set_plan_name("laptop-sweep");
  document.mutable_run()->set_created_unix_ns(kCreatedNs);
  document.mutable_run()->set_finished_unix_ns(kCreatedNs + 5'000'000'000);
  v1::ResultsDevice* device = document.add_devices();
  device->set_agent("laptop");
  *device->mutable_host() = LaptopHost();
  *device->mutable_fingerprint() = engine::DeviceFingerprintOf(LaptopHost());
  for (size_t i = 0; i < ids.size(); ++i) {
    v1::CaseResult r = Result(ids[i], "", 100.0 + i);
    r.mutable_spec()->set_case_id(absl::StrCat("batch/arithmetic/blocking/direct/any/", i));
    *device->add_results() = r;
  }
  return document;
}

}  // namespace fleetmark::store
