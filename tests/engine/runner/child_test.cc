// Child processes: request/response round trip, error codes, and children that crash,
// get SIGKILLed, run out of memory or hang — the parent (this test) must survive all.
#include "engine/runner/child.h"

#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
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

TEST(ChildTest, SigkilledChildIsResourceExhausted) {
  absl::StatusOr<std::string> r = RunInChild("test.sigkill", "x");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(r.status().message(), HasSubstr("SIGKILL"));
  EXPECT_THAT(r.status().message(), HasSubstr("about to die"));
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

}  // namespace
}  // namespace fleetmark::engine
