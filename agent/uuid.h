// Random (version 4) UUIDs for case result ids, drawn from the kernel's CSPRNG
// (getrandom(2)), so ids chosen by different agents never collide in practice.
#pragma once

#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"

namespace fleetmark::agent {

// Returns a lowercase RFC 4122 version-4 UUID ("xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx").
// Internal if the kernel's random source fails. Thread-safe.
absl::StatusOr<std::string> NewUuidV4();

// True if `text` is a canonical lowercase or uppercase 8-4-4-4-12 hex UUID.
bool IsUuid(absl::string_view text);

}  // namespace fleetmark::agent
