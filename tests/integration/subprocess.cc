#include "tests/integration/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"

extern char** environ;

namespace fleetmark::testing {

absl::StatusOr<std::unique_ptr<Subprocess>> Subprocess::Start(const std::vector<std::string>& argv,
                                                              const std::string& log_path,
                                                              const std::vector<std::string>& extra_env) {
  if (argv.empty()) return absl::InvalidArgumentError("argv: empty");
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> env_storage(extra_env);
  std::vector<char*> env;
  for (char** e = environ; *e != nullptr; ++e) env.push_back(*e);
  for (std::string& e : env_storage) env.push_back(e.data());
  env.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // The child starts with no blocked signals, whatever the test runner blocked.
  sigset_t empty;
  sigemptyset(&empty);
  posix_spawnattr_setsigmask(&attr, &empty);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, args[0], &actions, &attr, args.data(), env.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    return absl::InternalError(absl::StrCat("spawn ", argv[0], ": ", std::strerror(rc)));
  }
  return std::unique_ptr<Subprocess>(new Subprocess(pid, log_path));
}

Subprocess::~Subprocess() {
  if (Running()) {
    Signal(SIGKILL);
    (void)Wait(absl::Seconds(10));
  }
}

bool Subprocess::Running() {
  if (reaped_) return false;
  int status = 0;
  const pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == 0) return true;
  reaped_ = true;
  if (r == pid_) {
    exit_.exited = WIFEXITED(status);
    exit_.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
    exit_.term_signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  }
  return false;
}

void Subprocess::Signal(int signal_number) {
  if (!reaped_) kill(pid_, signal_number);
}

absl::StatusOr<ExitInfo> Subprocess::Wait(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (Running()) {
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("process ", pid_, " still running after ", absl::FormatDuration(timeout)));
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  return exit_;
}

std::string Subprocess::Log() const {
  std::ifstream in(log_path_);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

absl::StatusOr<std::string> RunCommand(const std::vector<std::string>& argv, absl::Duration timeout) {
  char out_path[] = "/tmp/fleetmark-cmd-out.XXXXXX";
  char err_path[] = "/tmp/fleetmark-cmd-err.XXXXXX";
  const int out_fd = mkstemp(out_path);
  const int err_fd = mkstemp(err_path);
  if (out_fd < 0 || err_fd < 0) return absl::InternalError("mkstemp failed");
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_fd, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err_fd, STDERR_FILENO);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out_fd);
  close(err_fd);
  auto slurp = [](const char* path) {
    std::ifstream in(path);
    std::stringstream buffer;
    buffer << in.rdbuf();
    unlink(path);
    return buffer.str();
  };
  if (rc != 0) {
    slurp(out_path);
    slurp(err_path);
    return absl::InternalError(absl::StrCat("spawn ", argv[0], ": ", std::strerror(rc)));
  }
  const absl::Time deadline = absl::Now() + timeout;
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (absl::Now() >= deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      slurp(out_path);
      return absl::DeadlineExceededError(absl::StrCat(absl::StrJoin(argv, " "), ": timed out; ", slurp(err_path)));
    }
    absl::SleepFor(absl::Milliseconds(10));
  }
  std::string out = slurp(out_path);
  std::string err = slurp(err_path);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return absl::InternalError(absl::StrCat(absl::StrJoin(argv, " "), ": exit status ", status, ": ", err));
  }
  return out;
}

}  // namespace fleetmark::testing
