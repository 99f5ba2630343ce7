// File seams for the energy tests (engine/energy/energy_files.h): a recorded tree under
// tests/engine/energy/trees with denials injected and later recordings overlaid, and an
// in-memory fake a test rewrites between samples. Tests run as root, where a mode-000
// file still reads, so unreadability is injected here. Not thread-safe.
#pragma once

#include <map>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "engine/energy/energy_files.h"

namespace fleetmark::engine::energy::test_support {

// A recorded tree, trees/<tree>/sys/...; the paths listed in trees/<tree>/DENIED (one
// absolute path a line) read as PermissionDenied, as energy_uj does for non-root users
// since Linux 5.10.
class TreeFiles : public EnergyFiles {
 public:
  explicit TreeFiles(absl::string_view tree);
  // From now on, files present under trees/<overlay> (a later recording of some files,
  // e.g. energy_uj after ten seconds) are read instead of the tree's.
  void Overlay(absl::string_view overlay);

  absl::StatusOr<std::string> Read(absl::string_view path) const override;
  std::vector<std::string> List(absl::string_view dir) const override;

 private:
  std::unique_ptr<EnergyFiles> base_;
  std::unique_ptr<EnergyFiles> overlay_;
  std::set<std::string> denied_;
};

// Files held in memory: Set writes one (its directories list it), Deny makes one
// unreadable (PermissionDenied), absent ones are NotFound.
class FakeFiles : public EnergyFiles {
 public:
  void Set(const std::string& path, const std::string& text) { files_[path] = text; }
  void Deny(const std::string& path) { denied_.insert(path); }

  absl::StatusOr<std::string> Read(absl::string_view path) const override;
  std::vector<std::string> List(absl::string_view dir) const override;

 private:
  std::map<std::string, std::string> files_;
  std::set<std::string> denied_;
};

// A RAPL zone (/sys/class/powercap/intel-rapl:0, "package-0") whose energy_uj follows
// CLOCK_MONOTONIC: the integral of the power the test sets, in whole µJ modulo
// `range_uj`, as the hardware's counter. Thread-safe (the one class here that is): a
// sampler thread reads it while the test changes the power.
class PoweredRaplFiles : public EnergyFiles {
 public:
  PoweredRaplFiles(double watts, uint64_t range_uj);
  void SetWatts(double watts);
  absl::StatusOr<std::string> Read(absl::string_view path) const override;
  std::vector<std::string> List(absl::string_view dir) const override { return fixed_.List(dir); }

 private:
  FakeFiles fixed_;  // name, max_energy_range_uj, a placeholder energy_uj (listed)
  uint64_t range_uj_;
  mutable std::mutex mu_;
  mutable double joules_ = 0;
  mutable double last_s_ = 0;
  double watts_ = 0;
};

// The absolute directory of trees/<tree>.
std::string TreeDir(absl::string_view tree);

}  // namespace fleetmark::engine::energy::test_support
