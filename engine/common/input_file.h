// The one reader of files named on a command line for their contents (plans, results
// JSON): a size-capped regular file, or "-" for standard input. A directory, a device
// (/dev/zero), a FIFO or a socket is refused before anything is read, so such a name can
// neither hang the reader nor make it read without end.
//
//   FLEETMARK_ASSIGN_OR_RETURN(std::string text, ReadInputFile(path, kPlanFileRule));
//
// Thread-safety: stateless.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace fleetmark {

// The path that names standard input.
inline constexpr char kStdinPath[] = "-";

// What a kind of input file is called in errors, and its size limit.
struct InputFileRule {
  const char* noun = "";        // "plan file": "<path>: cannot open plan file: ..."
  const char* must_be = "";     // "a plan must be a regular file (or - for standard input)"
  uint64_t max_bytes = 0;       // larger: "<path>: plan file is N bytes or more; at most M (<max_text>)"
  const char* max_text = "";    // "16 MiB"
  const char* stdin_name = "";  // the source name of "-" in errors, e.g. "<stdin>"
};

// The contents of `path` ("-": standard input, read up to the limit). Errors name the
// path: NotFound (no such file), PermissionDenied, InvalidArgument (not a regular file,
// naming what it is; larger than rule.max_bytes; a read error).
absl::StatusOr<std::string> ReadInputFile(const std::string& path, const InputFileRule& rule);

}  // namespace fleetmark
