// File seams for the energy tests (engine/energy/energy_files.h): a recorded tree under
// tests/engine/energy/trees with denials injected and later recordings overlaid, and an
// in-memory fake a test rewrites between samples. Tests run as root, where a mode-000
// file still reads, so unreadability is injected here. Not thread-safe.
#pragma once

#include <map>
#include <memory>
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

// The absolute directory of trees/<tree>.
std::string TreeDir(absl::string_view tree);

}  // namespace fleetmark::engine::energy::test_support
