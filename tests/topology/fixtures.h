// Test helper: unpacks a recorded machine tree (tests/topology/fixtures/*.tar.bz2, from
// hwloc's test suite, COPYING.hwloc) into the build directory at test time.
#pragma once

#include <string>

namespace fleetmark::engine::testing {

// Returns the root of the unpacked tree `name` (e.g. "2arm-2c"), unpacking it on first
// use into a per-process directory under the test's build directory, removed at exit.
// Fails the current test (and returns "") if the archive cannot be unpacked.
std::string FixtureRoot(const std::string& name);

// A fresh empty directory under the per-process unpack directory (removed at exit),
// for trees a test writes itself; `name` must be unique within the test program.
std::string ScratchRoot(const std::string& name);

// A writable copy of the recorded tree `name` in ScratchRoot(`copy`), for tests that
// strip or change files of a recording. Fails the current test (and returns "") if the
// copy fails.
std::string CopyFixture(const std::string& name, const std::string& copy);

// Removes root + `path` (a file or a whole directory); absent is fine.
void RemoveTreePath(const std::string& root, const std::string& path);

// Writes `text` to root + `path` ("/proc/cpuinfo"), creating parent directories.
// Fails the current test if it cannot.
void WriteTreeFile(const std::string& root, const std::string& path, const std::string& text);

}  // namespace fleetmark::engine::testing
