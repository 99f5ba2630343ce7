// RunInChild / MaybeRunChild: posix_spawn of /proc/self/exe, request on stdin, response
// on stdout, exit status and signals mapped to absl::Status.
#include "engine/child/child.h"
#include "engine/child/oom_kills.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"

extern char** environ;

namespace fleetmark::engine {
namespace {

constexpr int kExitHandlerError = 3;
constexpr int kExitBadArguments = 4;
constexpr size_t kStderrTailBytes = 4096;
// posix_spawn's child exits 127 when the exec fails after the fork (qemu-user
// emulates the vfork as a fork, so the spawn itself succeeds).
constexpr int kExitExecFailed = 127;

// qemu's name for this binary's architecture (qemu-ARCH-static).
#if defined(__aarch64__)
constexpr char kBinaryArch[] = "aarch64";
#elif defined(__arm__)
constexpr char kBinaryArch[] = "arm";
#elif defined(__x86_64__)
constexpr char kBinaryArch[] = "x86_64";
#elif defined(__i386__)
constexpr char kBinaryArch[] = "i386";
#elif defined(__riscv) && __riscv_xlen == 64
constexpr char kBinaryArch[] = "riscv64";
#else
constexpr char kBinaryArch[] = "ARCH";
#endif

bool ChildEmulatorSet() {
  const char* value = std::getenv(kChildEmulatorVariable);
  return value != nullptr && *value != '\0';
}

ABSL_CONST_INIT absl::Mutex registry_mu(absl::kConstInit);
std::map<std::string, ChildHandler, std::less<>>& Registry() ABSL_EXCLUSIVE_LOCKS_REQUIRED(registry_mu) {
  static auto* registry = new std::map<std::string, ChildHandler, std::less<>>();
  return *registry;
}

ChildHandler FindHandler(std::string_view kind) {
  absl::MutexLock lock(&registry_mu);
  auto it = Registry().find(kind);
  return it == Registry().end() ? ChildHandler() : it->second;
}

// Writes all of `data` to `fd` (blocking); false on error.
bool WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

std::string ReadAll(int fd) {
  std::string out;
  char buf[65536];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

[[noreturn]] void ExitWith(int code, std::string_view out) {
  WriteAll(STDOUT_FILENO, out);
  std::fflush(nullptr);
  ::_exit(code);
}

// A pipe whose descriptors close on destruction.
struct Pipe {
  int fd[2] = {-1, -1};
  ~Pipe() {
    for (int f : fd) {
      if (f >= 0) ::close(f);
    }
  }
  void Close(int end) {
    if (fd[end] >= 0) ::close(fd[end]);
    fd[end] = -1;
  }
};

// `program`: what posix_spawn was asked to run, named when it could not be found (a
// chroot or container without /proc has no /proc/self/exe).
absl::Status SpawnError(int err, std::string_view kind, std::string_view program = {}) {
  std::string what = absl::StrCat("cannot start child process for \"", std::string(kind), "\": ", std::strerror(err));
  if (err == ENOENT && !program.empty()) {
    absl::StrAppend(&what, " (", std::string(program), program.rfind("/proc/", 0) == 0 ? ": is /proc mounted?)" : ")");
  }
  if (err == EAGAIN || err == ENOMEM) return absl::ResourceExhaustedError(what);
  return absl::InternalError(what);
}

std::string Tail(const std::string& text) {
  if (text.empty()) return "";
  std::string tail = text.size() > kStderrTailBytes ? "..." + text.substr(text.size() - kStderrTailBytes) : text;
  while (!tail.empty() && (tail.back() == '\n' || tail.back() == '\r')) tail.pop_back();
  return absl::StrCat("; child stderr: ", tail);
}

// Writes to a pipe without letting SIGPIPE kill the process when the child has exited:
// SIGPIPE is blocked in this thread for the call and a SIGPIPE it raised is consumed.
ssize_t WriteNoSigpipe(int fd, const char* data, size_t size) {
  sigset_t pipe_set, old_set;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  sigset_t pending;
  sigpending(&pending);
  const bool was_pending = sigismember(&pending, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old_set);
  ssize_t n = ::write(fd, data, size);
  const int saved_errno = errno;
  if (n < 0 && saved_errno == EPIPE && !was_pending) {
    const timespec zero = {0, 0};
    while (sigtimedwait(&pipe_set, nullptr, &zero) < 0 && errno == EINTR) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &old_set, nullptr);
  errno = saved_errno;
  return n;
}

// Decodes the handler-error payload "<code>\n<message>".
absl::Status DecodeHandlerError(const std::string& payload, std::string_view kind) {
  const size_t newline = payload.find('\n');
  int code = 0;
  if (newline != std::string::npos && absl::SimpleAtoi(absl::string_view(payload.data(), newline), &code) && code > 0 &&
      code <= static_cast<int>(absl::StatusCode::kUnauthenticated)) {
    return absl::Status(static_cast<absl::StatusCode>(code), payload.substr(newline + 1));
  }
  return absl::InternalError(absl::StrCat("child \"", std::string(kind), "\" failed without a readable status"));
}

}  // namespace

namespace {

// The emulator's path: a value with a '/' as given, a bare name looked up on $PATH.
// "" when unset or empty. InvalidArgument naming the variable when it is not an
// executable regular file.
absl::StatusOr<std::string> ResolveChildEmulator() {
  const char* value = std::getenv(kChildEmulatorVariable);
  if (value == nullptr || *value == '\0') return std::string();
  const std::string name = value;
  auto usable = [](const std::string& path) {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
  };
  if (name.find('/') != std::string::npos) {
    if (usable(name)) return name;
    return absl::InvalidArgumentError(
        absl::StrCat(kChildEmulatorVariable, "=", name,
                     " is not an executable file; set it to the user-mode emulator for this binary "
                     "(e.g. /usr/bin/qemu-",
                     kBinaryArch, "-static) or unset it"));
  }
  const char* path = std::getenv("PATH");
  for (absl::string_view dir : absl::StrSplit(path == nullptr ? "" : path, ':')) {
    if (dir.empty()) continue;
    std::string candidate = absl::StrCat(dir, "/", name);
    if (usable(candidate)) return candidate;
  }
  return absl::InvalidArgumentError(absl::StrCat(kChildEmulatorVariable, "=", name,
                                                 " names no executable file on PATH; set it to the "
                                                 "user-mode emulator for this binary (e.g. /usr/bin/qemu-",
                                                 kBinaryArch, "-static) or unset it"));
}

}  // namespace

absl::Status CheckChildEmulator() { return ResolveChildEmulator().status(); }

std::vector<std::string> ChildCommand(const std::string& executable) {
  absl::StatusOr<std::string> resolved = ResolveChildEmulator();
  // An unusable value is refused at start-up (CheckChildEmulator); should it change
  // later, it is passed as given and the spawn reports the failure.
  const std::string emulator = resolved.ok() ? *resolved : std::string(std::getenv(kChildEmulatorVariable));
  if (emulator.empty()) return {executable};
  std::string binary = executable;
  if (binary == "/proc/self/exe") {
    // Under qemu-user this names the emulated binary, which the emulator must be given.
    char path[4096];
    const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path);
    if (n > 0 && static_cast<size_t>(n) < sizeof path) binary.assign(path, static_cast<size_t>(n));
  }
  return {emulator, binary};
}

void RegisterChildHandler(std::string kind, ChildHandler handler) {
  absl::MutexLock lock(&registry_mu);
  Registry()[std::move(kind)] = std::move(handler);
}

absl::StatusOr<std::string> RunInChild(std::string_view kind, std::string_view request, const ChildOptions& options) {
  const std::string executable = options.executable.empty() ? "/proc/self/exe" : options.executable;
  const std::string kind_arg(kind);
  const std::string child_arg(kChildArgument);
  Pipe in, out, err;
  if (::pipe2(in.fd, O_CLOEXEC) != 0 || ::pipe2(out.fd, O_CLOEXEC) != 0 || ::pipe2(err.fd, O_CLOEXEC) != 0) {
    return SpawnError(errno, kind);
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in.fd[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out.fd[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err.fd[1], STDERR_FILENO);
  std::vector<std::string> args = ChildCommand(executable);
  args.push_back(child_arg);
  args.push_back(kind_arg);
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  const std::optional<uint64_t> oom_kills_before = ReadOomKillCount();
  const int spawn_error = ::posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawn_error != 0) return SpawnError(spawn_error, kind, argv[0]);
  in.Close(0);
  out.Close(1);
  err.Close(1);
  for (int fd : {in.fd[1], out.fd[0], err.fd[0]}) {
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  }

  const Clock& clock = options.clock != nullptr ? *options.clock : SystemClock();
  const absl::Time deadline =
      options.timeout == absl::InfiniteDuration() ? absl::InfiniteFuture() : clock.SteadyNow() + options.timeout;
  std::string response, child_stderr;
  size_t written = 0;
  if (request.empty()) in.Close(1);
  int wait_status = 0;
  bool exited = false;
  absl::Status abort_status;
  while (!exited) {
    std::vector<pollfd> fds;
    if (in.fd[1] >= 0) fds.push_back({in.fd[1], POLLOUT, 0});
    if (out.fd[0] >= 0) fds.push_back({out.fd[0], POLLIN, 0});
    if (err.fd[0] >= 0) fds.push_back({err.fd[0], POLLIN, 0});
    if (!fds.empty()) {
      int ready = ::poll(fds.data(), fds.size(), 20);
      if (ready < 0 && errno != EINTR) {
        abort_status = absl::InternalError(absl::StrCat("poll: ", std::strerror(errno)));
      }
      for (const pollfd& p : fds) {
        if (p.revents == 0) continue;
        if (p.fd == in.fd[1]) {
          ssize_t n = WriteNoSigpipe(p.fd, request.data() + written, request.size() - written);
          if (n > 0) written += static_cast<size_t>(n);
          // The child may exit without reading everything (EPIPE): that is its business.
          if ((n < 0 && errno != EAGAIN && errno != EINTR) || written == request.size()) {
            in.Close(1);
          }
        } else {
          char buf[65536];
          ssize_t n = ::read(p.fd, buf, sizeof buf);
          if (n > 0) {
            (p.fd == out.fd[0] ? response : child_stderr).append(buf, static_cast<size_t>(n));
            if (child_stderr.size() > 4 * kStderrTailBytes) {
              child_stderr.erase(0, child_stderr.size() - kStderrTailBytes);
            }
          } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
            (p.fd == out.fd[0] ? out : err).Close(0);
          }
        }
      }
    } else {
      absl::SleepFor(absl::Milliseconds(5));
    }
    // Reap as soon as the child is gone (it may leave descendants holding the pipes).
    pid_t r = ::waitpid(pid, &wait_status, WNOHANG);
    if (r == pid) exited = true;
    if (!exited && abort_status.ok()) {
      if (options.cancelled != nullptr && options.cancelled->load()) {
        abort_status = absl::CancelledError(absl::StrCat("child \"", kind_arg, "\" cancelled"));
      } else if (clock.SteadyNow() >= deadline) {
        abort_status = absl::DeadlineExceededError(absl::StrCat(
            "child \"", kind_arg, "\" timed out after ", absl::FormatDuration(options.timeout), " and was killed"));
      }
    }
    if (!exited && !abort_status.ok()) {
      ::kill(pid, SIGKILL);
      while (::waitpid(pid, &wait_status, 0) < 0 && errno == EINTR) {
      }
      return abort_status;
    }
  }
  // Drain what the child wrote just before exiting (non-blocking: a descendant that
  // inherited the pipes must not keep us waiting).
  auto drain = [](Pipe& p, std::string& into) {
    if (p.fd[0] < 0) return;
    char buf[65536];
    ssize_t n;
    while ((n = ::read(p.fd[0], buf, sizeof buf)) > 0) into.append(buf, static_cast<size_t>(n));
  };
  drain(out, response);
  drain(err, child_stderr);

  if (WIFSIGNALED(wait_status)) {
    const int sig = WTERMSIG(wait_status);
    if (sig == SIGKILL) return SigkillStatus(kind_arg, oom_kills_before, ReadOomKillCount(), Tail(child_stderr));
    return absl::InternalError(absl::StrCat("child \"", kind_arg, "\" crashed with signal ", sig, " (", strsignal(sig),
                                            ")", Tail(child_stderr)));
  }
  const int code = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1;
  if (code == 0) return response;
  if (code == kExitHandlerError) return DecodeHandlerError(response, kind);
  if (code == kExitBadArguments) {
    return absl::InternalError(absl::StrCat("child \"", kind_arg, "\" refused to start", Tail(child_stderr)));
  }
  std::string hint;
  if (code == kExitExecFailed && !ChildEmulatorSet()) {
    // The kernel could not exec this binary: under user-mode emulation without a
    // binfmt_misc handler (a chroot, a container) children need the emulator named.
    hint = absl::StrCat(
        "; the child could not be executed: if this binary runs under "
        "user-mode emulation, set ",
        kChildEmulatorVariable, "=/path/to/qemu-", kBinaryArch, "-static");
  }
  return absl::InternalError(
      absl::StrCat("child \"", kind_arg, "\" exited with code ", code, hint, Tail(child_stderr)));
}

void MaybeRunChild(int argc, char** argv) {
  if (argc < 2 || argv[1] != kChildArgument) return;
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s %s KIND < request\n", argv[0], argv[1]);
    ::_exit(kExitBadArguments);
  }
  ChildHandler handler = FindHandler(argv[2]);
  if (!handler) {
    std::fprintf(stderr, "no child handler registered for \"%s\"\n", argv[2]);
    ::_exit(kExitBadArguments);
  }
  absl::Status status;
  try {
    const std::string request = ReadAll(STDIN_FILENO);
    absl::StatusOr<std::string> response = handler(request);
    if (response.ok()) ExitWith(0, *response);
    status = response.status();
  } catch (const std::bad_alloc&) {
    status = absl::ResourceExhaustedError("child ran out of memory (std::bad_alloc)");
  } catch (const std::exception& e) {
    status = absl::InternalError(absl::StrCat("child threw: ", e.what()));
  }
  ExitWith(kExitHandlerError, absl::StrCat(static_cast<int>(status.code()), "\n", status.message()));
}

}  // namespace fleetmark::engine
