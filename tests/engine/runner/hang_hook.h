// A test-only hung repetition: linked into a test executable (the object library
// fleetmark_test_hang_hook), it installs a repetition hook (engine/runner/batch_slice.h)
// under which every batch case whose strategy label is kHangLabel blocks for good in
// its third repetition, as oneTBB's finalize once did under a one-CPU mask. Other cases
// are untouched. Production binaries never link it; the label is an ordinary one, so a
// plan using it passes validation everywhere (coordinator included).
#pragma once

namespace fleetmark::testing {

inline constexpr char kHangLabel[] = "test_hang";

}  // namespace fleetmark::testing
