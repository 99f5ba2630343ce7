// Small POSIX file helpers shared by the spool and the credential store: errno to
// absl::Status, full writes, atomic file replacement with fsync.
#pragma once

#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace fleetmark::agent {

// Maps `errno_value` to an Abseil code (ENOENT -> NotFound, EACCES/EPERM ->
// PermissionDenied, ENOSPC -> ResourceExhausted, else Internal); the message is
// "<what> <path>: <strerror>".
absl::Status ErrnoStatus(int errno_value, absl::string_view what, absl::string_view path);

// Writes all of `data` to `fd` at its current offset, retrying short writes and EINTR.
absl::Status WriteAll(int fd, absl::string_view data, absl::string_view path);

// fsyncs directory `dir` so that a rename or create inside it is durable.
absl::Status SyncDirectory(const std::string& dir);

// Replaces `dir/name` atomically with `data` (write to `name.tmp`, fsync, rename,
// fsync the directory). `mode` is the new file's permission bits.
absl::Status ReplaceFileAtomically(const std::string& dir, absl::string_view name, absl::string_view data,
                                   unsigned mode);

// Reads the whole file (at most `max_bytes`; InvalidArgument beyond).
absl::StatusOr<std::string> ReadWholeFile(const std::string& path, size_t max_bytes);

// Creates `dir` and missing parents with mode 0700. OK if it already exists.
absl::Status MakeDirectories(const std::string& dir);

}  // namespace fleetmark::agent
