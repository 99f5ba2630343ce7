// The version line every fleetmark binary prints for --version:
//   "fleetmark-agent 0.1.0 (commit 1a2b3c4d5e6f, Release build)"
// The version is the CMake project version (FLEETMARK_ENGINE_VERSION, also in every
// result); the commit is `git describe --always --dirty` of the source tree at build
// time ("unknown" outside a git checkout); the build type is CMAKE_BUILD_TYPE.
// Thread-safe (pure).
#pragma once

#include <string>
#include "absl/strings/string_view.h"

namespace fleetmark {

// The commit the binary was built from, e.g. "1a2b3c4d5e6f" or "1a2b3c4d5e6f-dirty".
absl::string_view BuildCommit();

// CMAKE_BUILD_TYPE of the build ("Release", "Debug", ...).
absl::string_view BuildType();

// "<program> <version> (commit <commit>, <build type> build)".
std::string VersionLine(absl::string_view program);

}  // namespace fleetmark
