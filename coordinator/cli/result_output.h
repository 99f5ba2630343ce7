// Where `fleetmark run` and `fleetmark export` write their results: stdout, or --out.
//
// --out is checked before anything runs (exit 2 on an unwritable directory, a dangling
// or looping symbolic link, or a path that is the plan itself). What happens next
// depends on what the path is:
//  - a regular file, or a name that does not exist yet: written to a temporary file
//    next to it and renamed over it only when complete, so an interrupted or failed run
//    never leaves a truncated file (an existing file keeps its permission bits);
//  - a symbolic link (a chain of them): followed; the link is kept and its final target
//    is written as above. A link whose target does not exist, or a loop, is an error;
//  - anything else — a device (/dev/null, /dev/full), a FIFO, a terminal — is opened
//    and written through in place, never replaced (a FIFO with no reader waits for one,
//    as a shell redirection does);
//  - /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N (also reached through a
//    link) write to that descriptor of this process, at its current offset.
// Write errors (a full disk or /dev/full, a closed stdout) are reported with their errno
// text, never dropped. If the complete temporary file cannot be renamed over the path
// (the path became a directory, an immutable file), the temporary file is kept and the
// error names it: finished results are never deleted. Not thread-safe: one writer at a
// time (run_command.cc serializes).
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace fleetmark::cli {

class ResultOutput {
 public:
  // `out` "" = stdout. `plan_path` "" = no plan to protect. InvalidArgument naming --out
  // (with strerror) if the output cannot be created or opened, if `out` is a directory,
  // a dangling or looping symbolic link, or the same file as `plan_path`. May block
  // while a FIFO has no reader (after saying so on stderr).
  static absl::StatusOr<ResultOutput> Open(const std::string& out, const std::string& plan_path);

  ResultOutput(ResultOutput&& other) noexcept;
  ResultOutput& operator=(ResultOutput&&) = delete;
  ~ResultOutput();  // closes what it opened; removes an uncommitted temporary file

  // Writes `text` and commits it (for a replaced file: flush, fsync and rename). Internal
  // error with the errno text if any step fails (ENOSPC on /dev/full); when only the
  // rename fails, the message names the kept temporary file. Call once.
  absl::Status WriteAll(const std::string& text);

  // "stdout" or the --out path, for messages.
  const std::string& name() const { return name_; }

 private:
  ResultOutput() = default;

  std::string name_ = "stdout";
  std::string path_;       // the file renamed over; "" when written in place
  std::string temp_path_;  // the temporary file while uncommitted
  int fd_ = -1;
  bool owns_fd_ = false;  // fd_ is closed by this object (not for stdout)
};

// The stderr line of `fleetmark run --out` and `fleetmark export --out` once the file is
// committed: "wrote 18 results to out.json" ("1 result"), with the path as given
// (terminal-escaped). Pure.
std::string WroteResultsLine(int results, const std::string& out);

}  // namespace fleetmark::cli
