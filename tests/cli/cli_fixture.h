// Shared by the `fleetmark` end-to-end tests: a temporary directory per test and a
// helper that runs the real binary and captures its exit code, stdout and stderr.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace fleetmark_cli_test {

// How many times `what` occurs in `text` (overlapping occurrences counted).
inline size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The first line of `text` containing `what` ("" if none).
inline std::string LineWith(const std::string& text, const std::string& what) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.find(what) != std::string::npos) return line;
  }
  return "";
}

namespace fs = std::filesystem;

// The processes whose parent is `pid` (/proc/N/stat's fourth field).
inline std::set<int> ChildPids(pid_t pid) {
  std::set<int> children;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "stat");
    std::string stat;
    std::getline(in, stat);
    const size_t paren = stat.rfind(')');  // the command may hold spaces and ')'
    if (paren == std::string::npos) continue;
    std::istringstream rest(stat.substr(paren + 1));
    std::string state;
    int parent = 0;
    if (rest >> state >> parent && parent == pid) children.insert(std::stoi(name));
  }
  return children;
}

struct CliResult {
  int exit_code = -1;  // -1: killed by a signal (see signal)
  int signal = 0;
  std::string out;
  std::string err;
};

inline std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("fleetmark_cli_test_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path Write(const std::string& name, const std::string& text) {
    fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }

  // Runs `fleetmark <args>` (args are shell words, already quoted as needed) with stdin
  // from /dev/null and stdout/stderr captured, unless `args` redirects them itself. With
  // `cwd`, in that directory and without $FLEETMARK_COORDINATOR/_ADMIN_TOKEN_FILE (so
  // the defaults from .fleetmark/ apply).
  CliResult Cli(const std::string& args, const std::string& redirects = "", const fs::path& cwd = {}) {
    const fs::path out = dir_ / "stdout", err = dir_ / "stderr";
    // `timeout` turns a hang into a failed test (exit 124) rather than a stuck one.
    const std::string prefix =
        cwd.empty() ? "" : "cd '" + cwd.string() + "' && env -u FLEETMARK_COORDINATOR -u FLEETMARK_ADMIN_TOKEN_FILE ";
    const std::string command = prefix + "timeout -s KILL 300 " + std::string(FLEETMARK_CLI) + " " + args +
                                " </dev/null >" + out.string() + " 2>" + err.string() + " " + redirects;
    const int status = std::system(command.c_str());
    CliResult r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    r.out = ReadFile(out);
    r.err = ReadFile(err);
    return r;
  }

  fs::path dir_;
};

inline constexpr char kTinyPlan[] =
    R"pb(name: "tiny"
         matrix {
           strategies { name: "direct" }
           strategies { name: "fixed_pool" threads: 2 }
           workloads: [ "arithmetic", "storage" ]
           batch { tasks: 5 }
         }
         measurement { warmup_seconds: 0.01 max_repetitions: 12 max_seconds_per_case: 2 rounds: 2 }
    )pb";

// Two cases over 10 rounds of 4 s each: direct on arithmetic (measured every round; the
// CI target is never met) and direct on storage with suspending I/O (unsupported, done
// in round 1). What the interrupt (cli_hardening_test) and cancel (cli_test) tests stop
// part way, to see the finished rounds kept as a partial result. `max_repetitions`
// bounds each case's repetitions per round.
inline std::string RoundsPlan(int max_repetitions) {
  return R"pb(name: "rounds"
              matrix {
                strategies { name: "direct" }
                workloads: "arithmetic"
                batch { tasks: 1 }
              }
              matrix {
                strategies { name: "direct" }
                workloads: "storage"
                io_modes: "suspending"
                batch { tasks: 1 }
              }
              measurement { warmup_seconds: 0.01 target_ci_percent: 0.001 min_repetitions: 5 max_repetitions:)pb" +
         std::to_string(max_repetitions) + R"pb(
                max_seconds_per_case: 4
                min_seconds_per_case: 4
                rounds: 10
              })pb";
}

}  // namespace fleetmark_cli_test
