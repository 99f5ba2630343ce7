// An exclusive lock on an agent's spool directory, so that two fleetmark-agent
// processes never share one spool and credential (each would overwrite the other's).
//
// The lock is flock(2) LOCK_EX on `<dir>/lock`, held through an open file descriptor
// (O_CLOEXEC, so job children never inherit it) for the lock object's life; the kernel
// releases it when the process ends in any way, kill -9 included, so a stale lock file
// never blocks a restart. The holder writes its pid into the file for the error message.
//
//   FLEETMARK_ASSIGN_OR_RETURN(std::unique_ptr<SpoolLock> lock, SpoolLock::Acquire(dir));
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <utility>

#include "absl/status/statusor.h"

namespace fleetmark::agent {

class SpoolLock {
 public:
  // Takes the lock without waiting. `dir` must exist. Errors: FailedPrecondition
  // "spool dir <dir> is in use by another fleetmark-agent (pid N)" when another open
  // file description holds it (another process, or another SpoolLock in this one);
  // the errno mapping of agent/file_util.h when the lock file cannot be opened/written.
  static absl::StatusOr<std::unique_ptr<SpoolLock>> Acquire(const std::string& dir);
  ~SpoolLock();  // closes the descriptor: releases the lock
  SpoolLock(const SpoolLock&) = delete;
  SpoolLock& operator=(const SpoolLock&) = delete;

  const std::string& path() const { return path_; }

 private:
  SpoolLock(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_;
  std::string path_;
};

// The pid recorded in the lock file at `path`, or 0 if none can be read. Exposed for
// tests and messages; the lock itself never depends on it.
pid_t SpoolLockHolder(const std::string& path);

}  // namespace fleetmark::agent
