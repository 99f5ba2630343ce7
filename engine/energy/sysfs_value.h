// Strict reading of one sysfs integer ("262143328850\n"). The energy sources read
// counters and sensor values only this way, so garbage, an empty file, a second word or
// a number beyond 64 bits is an error naming the file, never a wrong number.
//
//   FLEETMARK_ASSIGN_OR_RETURN(int64_t uj, ReadSysfsInt(files, zone + "/energy_uj"));
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "engine/energy/energy_files.h"

namespace fleetmark::engine::energy {

// `text` (surrounding whitespace ignored) as a decimal integer with an optional sign.
// InvalidArgument naming `path` for an empty text, anything but one integer, or a value
// outside int64 ("beyond the 64-bit range"). Pure.
absl::StatusOr<int64_t> ParseSysfsInt(absl::string_view text, absl::string_view path);

// Reads `path` through `files` and parses it as above; the read's own error otherwise
// (NotFound, PermissionDenied, Unavailable). Thread-safe when `files` is.
absl::StatusOr<int64_t> ReadSysfsInt(const EnergyFiles& files, absl::string_view path);

// ReadSysfsInt refusing a negative value (counters, ranges, voltages): InvalidArgument
// "<path>: -5 is negative, 0 or more expected".
absl::StatusOr<int64_t> ReadSysfsNonNegative(const EnergyFiles& files, absl::string_view path);

// The text of a name or label file (a zone's `name`, power1_label) when it is 1..64
// printable ASCII characters, else "" (absent, denied, empty, binary or too long).
std::string ReadSysfsName(const EnergyFiles& files, absl::string_view path);

}  // namespace fleetmark::engine::energy
