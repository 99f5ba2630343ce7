#include "engine/common/version.h"

#include "absl/strings/str_cat.h"
#include "fleetmark_build_commit.h"  // generated each build by cmake/build_commit.cmake

namespace fleetmark {

absl::string_view BuildCommit() { return FLEETMARK_BUILD_COMMIT; }

absl::string_view BuildType() { return FLEETMARK_BUILD_TYPE; }

std::string VersionLine(absl::string_view program) {
  return absl::StrCat(program, " ", FLEETMARK_ENGINE_VERSION, " (commit ", BuildCommit(), ", ", BuildType(), " build)");
}

}  // namespace fleetmark
