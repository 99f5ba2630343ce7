// Child processes: request/response round trip, error codes, and children that crash,
// get SIGKILLed, run out of memory or hang — the parent (this test) must survive all.
#include "engine/child/child.h"
#include "engine/child/oom_kills.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetmark::engine {
namespace {

// AddressSanitizer handles SIGSEGV itself and cannot run under a small RLIMIT_AS.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAsan = true;
#else
constexpr bool kAsan = false;
#endif

using ::testing::HasSubstr;

const ChildHandlerRegistration kEcho("test.echo", [](std::string_view request) {
  return absl::StatusOr<std::string>(absl::StrCat("echo:", std::string(request)));
});
const ChildHandlerRegistration kError("test.error", [](std::string_view) {
  return absl::StatusOr<std::string>(absl::NotFoundError("no such thing: x"));
});
const ChildHandlerRegistration kKilled("test.sigkill", [](std::string_view) {
  std::fprintf(stderr, "about to die\n");
  ::raise(SIGKILL);
  return absl::StatusOr<std::string>("unreachable");
});
const ChildHandlerRegistration kCrash("test.segv", [](std::string_view) {
  ::raise(SIGSEGV);
  return absl::StatusOr<std::string>("unreachable");
});
const ChildHandlerRegistration kHang("test.hang", [](std::string_view) {
  ::sleep(600);
  return absl::StatusOr<std::string>("late");
});
// Allocates until the address-space limit makes operator new throw std::bad_alloc.
const ChildHandlerRegistration kOom("test.oom", [](std::string_view) {
  rlimit limit = {256u << 20, 256u << 20};
  ::setrlimit(RLIMIT_AS, &limit);
  std::vector<std::vector<char>> hog;
  while (true) hog.emplace_back(16u << 20, 'x');
  return absl::StatusOr<std::string>("unreachable");
});

TEST(ChildTest, RoundTripsRequestAndResponse) {
  absl::StatusOr<std::string> r = RunInChild("test.echo", "hello");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, "echo:hello");
}

TEST(ChildTest, CarriesLargePayloadsBothWays) {
  std::string big(8u << 20, 'a');
  for (size_t i = 0; i < big.size(); i += 4096) big[i] = static_cast<char>('a' + (i / 4096) % 26);
  absl::StatusOr<std::string> r = RunInChild("test.echo", big);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->size(), big.size() + 5);
  EXPECT_EQ(*r, "echo:" + big);
}

TEST(ChildTest, HandlerErrorKeepsCodeAndMessage) {
  absl::StatusOr<std::string> r = RunInChild("test.error", "");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(r.status().message(), "no such thing: x");
}

TEST(ChildTest, ChildSigkilledFromOutsideIsAFailureNotResourceExhaustion) {
  // The child kills itself as `kill -9` would: the kernel's OOM-kill count does not move.
  const std::optional<uint64_t> count = ReadOomKillCount();
  absl::StatusOr<std::string> r = RunInChild("test.sigkill", "x");
  EXPECT_EQ(r.status().code(), count ? absl::StatusCode::kInternal : absl::StatusCode::kResourceExhausted)
      << r.status();
  EXPECT_THAT(r.status().message(), HasSubstr("SIGKILL"));
  EXPECT_THAT(r.status().message(), HasSubstr("about to die"));
  if (count) EXPECT_THAT(r.status().message(), HasSubstr("not the out-of-memory killer"));
}

TEST(OomKillsTest, ReadsTheCountAndTellsTheOomKillerFromOtherKills) {
  const std::string dir = ::testing::TempDir();
  const std::string vmstat = dir + "/vmstat";
  {
    std::ofstream out(vmstat);
    out << "nr_free_pages 1234\noom_kill 7\nnr_zone_active_anon 5\n";
  }
  EXPECT_EQ(ReadOomKillCount(vmstat), std::optional<uint64_t>(7));
  {
    std::ofstream out(vmstat);
    out << "nr_free_pages 1234\n";  // a kernel before 4.13
  }
  EXPECT_EQ(ReadOomKillCount(vmstat), std::nullopt);
  EXPECT_EQ(ReadOomKillCount(dir + "/missing"), std::nullopt);
  // The count rose while the child ran: the OOM killer.
  absl::Status oom = SigkillStatus("memory_point", 7, 8, "; stderr: x");
  EXPECT_EQ(oom.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(oom.message(),
            "child \"memory_point\" was killed by SIGKILL from the kernel's out-of-memory killer (oom_kill 7 → 8)"
            "; stderr: x");
  // Known and unchanged: somebody else's kill -9.
  EXPECT_EQ(SigkillStatus("memory_point", 7, 7, "").code(), absl::StatusCode::kInternal);
  // Unknown: both causes named, counted as resource exhaustion (the study's answer).
  absl::Status unknown = SigkillStatus("memory_point", std::nullopt, 7, "");
  EXPECT_EQ(unknown.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(unknown.message(), HasSubstr("unreadable"));
}

TEST(ChildTest, CrashedChildIsInternal) {
  absl::StatusOr<std::string> r = RunInChild("test.segv", "");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInternal);
  if (!kAsan) {
    EXPECT_THAT(r.status().message(), HasSubstr("signal 11"));
  }
}

TEST(ChildTest, OutOfMemoryIsResourceExhausted) {
  if (kAsan) GTEST_SKIP() << "ASan reserves more address space than the test's RLIMIT_AS";
  absl::StatusOr<std::string> r = RunInChild("test.oom", "");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted) << r.status();
}

TEST(ChildTest, TimeoutKillsTheChild) {
  const absl::Time start = absl::Now();
  ChildOptions options;
  options.timeout = absl::Milliseconds(300);
  absl::StatusOr<std::string> r = RunInChild("test.hang", "", options);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_LT(absl::Now() - start, absl::Seconds(30));
}

TEST(ChildTest, CancelKillsTheChild) {
  std::atomic<bool> cancelled{false};
  std::thread canceller([&] {
    absl::SleepFor(absl::Milliseconds(200));
    cancelled = true;
  });
  const absl::Time start = absl::Now();
  ChildOptions options;
  options.cancelled = &cancelled;
  absl::StatusOr<std::string> r = RunInChild("test.hang", "", options);
  canceller.join();
  EXPECT_EQ(r.status().code(), absl::StatusCode::kCancelled);
  EXPECT_LT(absl::Now() - start, absl::Seconds(30));
}

TEST(ChildTest, UnknownKindAndMissingExecutableFailCleanly) {
  absl::StatusOr<std::string> r = RunInChild("test.no_such_kind", "");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(r.status().message(), HasSubstr("no child handler registered"));

  ChildOptions options;
  options.executable = "/nonexistent/fleetmark";
  r = RunInChild("test.echo", "", options);
  EXPECT_FALSE(r.ok());
  // The error names what could not be run (a chroot without /proc has no /proc/self/exe).
  EXPECT_THAT(r.status().message(), HasSubstr("(/nonexistent/fleetmark)"));
  options.executable = "/proc/no_such_entry/exe";
  r = RunInChild("test.echo", "", options);
  EXPECT_THAT(r.status().message(), HasSubstr("(/proc/no_such_entry/exe: is /proc mounted?)"));
}

TEST(ChildTest, SeveralChildrenAtOnce) {
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      absl::StatusOr<std::string> r = RunInChild("test.echo", std::to_string(i));
      if (r.ok() && *r == "echo:" + std::to_string(i)) ++ok;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 4);
}

// $FLEETMARK_CHILD_EMULATOR (an agent under qemu-user without binfmt_misc): the child is
// started through the named program, given this binary's resolved path. The stand-in
// emulator is a shell script that records its arguments and runs them.
TEST(ChildTest, RunsChildrenThroughTheNamedEmulator) {
  char dir_template[] = "/tmp/fleetmark-child-emulator.XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  const std::string emulator = dir + "/emulator", seen = dir + "/argv";
  {
    std::FILE* f = std::fopen(emulator.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fprintf(f, "#!/bin/sh\necho \"$@\" > %s\nexec \"$@\"\n", seen.c_str());
    std::fclose(f);
    ASSERT_EQ(::chmod(emulator.c_str(), 0755), 0);
  }
  char self[4096];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  ASSERT_GT(n, 0);
  self[n] = '\0';

  ::setenv(kChildEmulatorVariable, emulator.c_str(), 1);
  EXPECT_THAT(ChildCommand("/proc/self/exe"), ::testing::ElementsAre(emulator, std::string(self)));
  absl::StatusOr<std::string> r = RunInChild("test.echo", "via emulator");
  ::unsetenv(kChildEmulatorVariable);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, "echo:via emulator");
  std::string argv_line;
  if (std::FILE* f = std::fopen(seen.c_str(), "r")) {
    char buf[8192];
    argv_line.assign(buf, std::fread(buf, 1, sizeof buf, f));
    std::fclose(f);
  }
  EXPECT_EQ(argv_line, absl::StrCat(self, " __fleetmark_child test.echo\n"));
  EXPECT_THAT(ChildCommand("/proc/self/exe"), ::testing::ElementsAre("/proc/self/exe"));
  std::remove(emulator.c_str());
  std::remove(seen.c_str());
  ::rmdir(dir.c_str());
}

// A set but unusable FLEETMARK_CHILD_EMULATOR is refused with one error naming it
// (the mains exit 2 on it) instead of every case failing with "exited with code 127".
// A bare name is looked up on PATH, as a shell would.
TEST(ChildTest, UnusableEmulatorIsRefusedAndBareNamesAreLookedUpOnPath) {
  char file_template[] = "/tmp/fleetmark-child-plain.XXXXXX";
  const int fd = ::mkstemp(file_template);
  ASSERT_GE(fd, 0);
  ::close(fd);  // a regular file, not executable (mode 0600)
  for (const std::string& value :
       std::vector<std::string>{"/nonexistent", "/tmp", file_template, "no-such-emulator-xyz"}) {
    ::setenv(kChildEmulatorVariable, value.c_str(), 1);
    const absl::Status status = CheckChildEmulator();
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << value << ": " << status;
    EXPECT_THAT(status.message(), HasSubstr(absl::StrCat("FLEETMARK_CHILD_EMULATOR=", value)));
  }
  ::setenv(kChildEmulatorVariable, "sh", 1);
  EXPECT_TRUE(CheckChildEmulator().ok());
  const std::vector<std::string> command = ChildCommand("/some/binary");
  ASSERT_EQ(command.size(), 2u);
  EXPECT_NE(command[0], "sh");
  EXPECT_THAT(command[0], ::testing::EndsWith("/sh"));
  EXPECT_EQ(::access(command[0].c_str(), X_OK), 0);
  ::unsetenv(kChildEmulatorVariable);
  EXPECT_TRUE(CheckChildEmulator().ok());
  std::remove(file_template);
}

// A child the kernel cannot exec (an emulated binary without binfmt_misc, posix_spawn's
// child exiting 127) says how to name the emulator. The stand-in executable exits 127.
TEST(ChildTest, ExecFailureWithoutEmulatorSaysToSetTheVariable) {
  char dir_template[] = "/tmp/fleetmark-child-127.XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const std::string binary = std::string(dir_template) + "/binary";
  {
    std::FILE* f = std::fopen(binary.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fprintf(f, "#!/bin/sh\necho 'Exec format error' >&2\nexit 127\n");
    std::fclose(f);
    ASSERT_EQ(::chmod(binary.c_str(), 0755), 0);
  }
  ::unsetenv(kChildEmulatorVariable);
  ChildOptions options;
  options.executable = binary;
  absl::StatusOr<std::string> r = RunInChild("test.echo", "x", options);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("exited with code 127"));
  EXPECT_THAT(r.status().message(), HasSubstr("set FLEETMARK_CHILD_EMULATOR=/path/to/qemu-"));
  std::remove(binary.c_str());
  ::rmdir(dir_template);
}

}  // namespace
}  // namespace fleetmark::engine
