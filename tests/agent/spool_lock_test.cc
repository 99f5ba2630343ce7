#include "agent/spool_lock.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>

#include "absl/strings/str_cat.h"
#include "agent/agent.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetmark::agent {
namespace {

using ::testing::HasSubstr;

class SpoolLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/fleetmark-spool-lock-test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string InUseMessage(pid_t pid) const {
    return absl::StrCat("spool dir ", dir_, " is in use by another fleetmark-agent (pid ", pid, ")");
  }
  std::string dir_;
};

TEST_F(SpoolLockTest, SecondLockIsRefusedNamingTheHolderUntilTheFirstIsReleased) {
  auto first = SpoolLock::Acquire(dir_);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(SpoolLockHolder(dir_ + "/lock"), getpid());

  auto second = SpoolLock::Acquire(dir_);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(second.status().message(), HasSubstr(InUseMessage(getpid())));

  first->reset();
  auto again = SpoolLock::Acquire(dir_);
  EXPECT_TRUE(again.ok()) << again.status();
}

TEST_F(SpoolLockTest, HeldByAnotherProcessUntilItIsKilled) {
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(ready[0]);
    auto lock = SpoolLock::Acquire(dir_);
    const char byte = lock.ok() ? 'y' : 'n';
    (void)!write(ready[1], &byte, 1);
    for (;;) pause();  // holds the lock until SIGKILL
  }
  close(ready[1]);
  char byte = 0;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  close(ready[0]);
  ASSERT_EQ(byte, 'y');

  auto refused = SpoolLock::Acquire(dir_);
  EXPECT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr(InUseMessage(child)));

  // kill -9 leaves the lock file (with the dead pid) behind; the kernel drops the lock.
  kill(child, SIGKILL);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  auto taken = SpoolLock::Acquire(dir_);
  ASSERT_TRUE(taken.ok()) << taken.status();
  EXPECT_EQ(SpoolLockHolder(dir_ + "/lock"), getpid());
}

TEST_F(SpoolLockTest, UnreadableHolderIsReportedAsUnknown) {
  EXPECT_EQ(SpoolLockHolder(dir_ + "/lock"), 0);  // no file
  auto first = SpoolLock::Acquire(dir_);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ(truncate((dir_ + "/lock").c_str(), 0), 0);
  auto second = SpoolLock::Acquire(dir_);
  ASSERT_FALSE(second.ok());
  EXPECT_THAT(second.status().message(), HasSubstr("(pid unknown)"));
}

TEST_F(SpoolLockTest, MissingDirectoryIsNotFound) {
  auto lock = SpoolLock::Acquire(dir_ + "/missing");
  ASSERT_FALSE(lock.ok());
  EXPECT_EQ(lock.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(lock.status().message(), HasSubstr(dir_ + "/missing/lock"));
}

class IdleExecutor : public JobExecutor {
 public:
  absl::Status Run(const fleetmark::v1::JobAssignment&, const JobCallbacks&, const std::atomic<bool>&) override {
    return absl::OkStatus();
  }
};

TEST_F(SpoolLockTest, TwoAgentsCannotShareASpoolDir) {
  AgentOptions options;
  options.coordinator = "127.0.0.1:1";
  options.name = "box2";
  options.spool_dir = dir_ + "/spool";
  auto first = Agent::Create(options, AgentIdentity(), std::make_unique<IdleExecutor>());
  ASSERT_TRUE(first.ok()) << first.status();

  options.name = "box6";
  auto second = Agent::Create(options, AgentIdentity(), std::make_unique<IdleExecutor>());
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(second.status().message(),
              HasSubstr(absl::StrCat("spool dir ", options.spool_dir, " is in use by another fleetmark-agent (pid ",
                                     getpid(), ")")));

  first->reset();  // the lock goes with the Agent
  auto third = Agent::Create(options, AgentIdentity(), std::make_unique<IdleExecutor>());
  EXPECT_TRUE(third.ok()) << third.status();
}

}  // namespace
}  // namespace fleetmark::agent
