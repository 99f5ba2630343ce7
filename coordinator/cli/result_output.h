// Where `fleetmark run` writes its results: stdout, or --out FILE written atomically.
//
// --out is checked before anything runs (exit 2 on an unwritable directory or a path
// that is the plan itself), written to a temporary file next to it and renamed over it
// only when complete, so an interrupted or failed run never leaves a truncated file.
// Write errors (a full disk, a closed stdout) are reported with their errno text, never
// dropped. Not thread-safe: one writer at a time (run_command.cc serializes).
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace fleetmark::cli {

class ResultOutput {
 public:
  // `out` "" = stdout. InvalidArgument naming --out (with strerror) if the temporary
  // file cannot be created, or if `out` is the same file as `plan_path`.
  static absl::StatusOr<ResultOutput> Open(const std::string& out, const std::string& plan_path);

  ResultOutput(ResultOutput&& other) noexcept;
  ResultOutput& operator=(ResultOutput&&) = delete;
  ~ResultOutput();  // removes an uncommitted temporary file

  // Writes `text` and commits it (flush, fsync and rename for a file). Internal error
  // with the errno text if any step fails. Call once.
  absl::Status WriteAll(const std::string& text);

  // "stdout" or the --out path, for messages.
  const std::string& name() const { return name_; }

 private:
  ResultOutput() = default;

  std::string name_ = "stdout";
  std::string path_;       // "" for stdout
  std::string temp_path_;  // the temporary file while uncommitted
  int fd_ = -1;
};

}  // namespace fleetmark::cli
