// The file seam of the energy sources: every read of engine/energy goes through an
// EnergyFiles, so the same code reads the live machine, a recorded tree below a root,
// or a test's tree with files made unreadable (tests run as root, where a mode-000 file
// still reads: unreadability is injected here instead).
//
//   std::unique_ptr<EnergyFiles> files = SysfsEnergyFiles("");   // the live /sys
//   absl::StatusOr<std::string> uj = files->Read("/sys/class/powercap/intel-rapl:0/energy_uj");
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace fleetmark::engine::energy {

class EnergyFiles {
 public:
  virtual ~EnergyFiles() = default;
  // The content of the file at the absolute `path` ("/sys/..."), at most 64 KiB,
  // trailing whitespace removed. Errors, each naming the path: NotFound (absent),
  // PermissionDenied (EACCES, EPERM: e.g. a RAPL energy_uj, root-only since Linux 5.10),
  // Unavailable (any other failure, e.g. EIO from a driver that cannot reach its chip).
  virtual absl::StatusOr<std::string> Read(absl::string_view path) const = 0;
  // The entry names of directory `dir`, sorted, without "." and ".."; empty when the
  // directory is absent or unreadable.
  virtual std::vector<std::string> List(absl::string_view dir) const = 0;
};

// Reads below `fsroot` ("" or "/" = the live machine; else a recorded tree holding
// sys/...). Thread-safe (no state); never blocks longer than the kernel's read.
std::unique_ptr<EnergyFiles> SysfsEnergyFiles(std::string fsroot);

}  // namespace fleetmark::engine::energy
