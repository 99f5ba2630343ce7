// A child process for integration tests: spawned with posix_spawn, stdout and stderr
// appended to a log file, killed (SIGKILL) and reaped by the destructor if still alive.
//
//   FLEETMARK_ASSIGN_OR_RETURN(auto p, Subprocess::Start({"/bin/sleep", "10"}, "/tmp/log"));
//   p->Signal(SIGKILL);
//   absl::StatusOr<ExitInfo> exit = p->Wait(absl::Seconds(5));
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace fleetmark::testing {

struct ExitInfo {
  bool exited = false;  // normal exit (then exit_code), else killed by term_signal
  int exit_code = 0;
  int term_signal = 0;
};

// Not thread-safe: one owner thread.
class Subprocess {
 public:
  // Starts argv[0] (an absolute path) with `argv`, the parent's environment plus
  // `extra_env` ("K=V"), output appended to `log_path`. Internal with errno text on
  // failure.
  static absl::StatusOr<std::unique_ptr<Subprocess>> Start(const std::vector<std::string>& argv,
                                                           const std::string& log_path,
                                                           const std::vector<std::string>& extra_env = {});
  ~Subprocess();

  pid_t pid() const { return pid_; }
  // True until the process has exited (reaps it when it has).
  bool Running();
  void Signal(int signal_number);
  // Waits up to `timeout` for the exit. DeadlineExceeded if still running.
  absl::StatusOr<ExitInfo> Wait(absl::Duration timeout);
  // The log so far.
  std::string Log() const;
  const std::string& log_path() const { return log_path_; }

 private:
  Subprocess(pid_t pid, std::string log_path) : pid_(pid), log_path_(std::move(log_path)) {}
  pid_t pid_;
  std::string log_path_;
  bool reaped_ = false;
  ExitInfo exit_;
};

// Runs argv to completion (up to `timeout`, then SIGKILL) and returns its stdout.
// Internal with the exit status and stderr when it fails.
absl::StatusOr<std::string> RunCommand(const std::vector<std::string>& argv,
                                       absl::Duration timeout = absl::Seconds(60));

}  // namespace fleetmark::testing
