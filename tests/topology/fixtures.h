// Test helper: unpacks a recorded machine tree (tests/topology/fixtures/*.tar.bz2, from
// hwloc's test suite, COPYING.hwloc) into the build directory at test time.
#pragma once

#include <string>

namespace fleetmark::engine::testing {

// Returns the root of the unpacked tree `name` (e.g. "2arm-2c"), unpacking it on first
// use into a per-process directory under the test's build directory, removed at exit.
// Fails the current test (and returns "") if the archive cannot be unpacked.
std::string FixtureRoot(const std::string& name);

}  // namespace fleetmark::engine::testing
