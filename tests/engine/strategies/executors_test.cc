// The reusable executors on their own: OsThread, ThreadPool, Limiter, ElasticPool,
// AsioRunner.
#include <pthread.h>

#include <atomic>
#include <latch>
#include <mutex>
#include <stdexcept>
#include <vector>

#include <boost/asio/post.hpp>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "engine/strategies/executors/asio_runner.h"
#include "engine/strategies/executors/elastic_pool.h"
#include "engine/strategies/executors/limiter.h"
#include "engine/strategies/executors/os_thread.h"
#include "engine/strategies/executors/thread_pool.h"
#include "gtest/gtest.h"
#include "tests/engine/strategies/test_support.h"

namespace fleetmark::engine {
namespace {

using ::fleetmark::engine::testing::CountThreads;
using ::fleetmark::engine::testing::WaitForThreadCount;

TEST(OsThreadTest, AppliesTheRequestedStackSize) {
  size_t stack_bytes = 0;
  auto thread = StartThread(1024, [&] {
    pthread_attr_t attr;
    pthread_getattr_np(pthread_self(), &attr);
    pthread_attr_getstacksize(&attr, &stack_bytes);
    pthread_attr_destroy(&attr);
  });
  ASSERT_TRUE(thread.ok()) << thread.status();
  thread->Join();
  // At least what was asked, and below the 8 MiB default: glibc may hand out a cached
  // stack of up to 4x the request (e.g. one of oneTBB's 4 MiB worker stacks), and
  // sanitizers add a little.
  EXPECT_GE(stack_bytes, 1024u * 1024);
  EXPECT_LE(stack_bytes, 5u * 1024 * 1024);
}

TEST(OsThreadTest, RejectsBadStackAndEmptyFunction) {
  auto small = StartThread(8, [] {});
  EXPECT_EQ(small.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(small.status().message().find("stack_kib"), std::string_view::npos);
  EXPECT_NE(small.status().message().find("got 8"), std::string_view::npos);
  EXPECT_EQ(StartThread(kMaxStackKib + 1, [] {}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(StartThread(0, nullptr).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_GE(LogicalCpuCount(), 1);
}

TEST(OsThreadTest, DestructorJoins) {
  std::atomic<bool> ran{false};
  {
    auto thread = StartThread(0, [&] {
      absl::SleepFor(absl::Milliseconds(20));
      ran = true;
    });
    ASSERT_TRUE(thread.ok());
  }
  EXPECT_TRUE(ran.load());
}

TEST(ThreadPoolTest, OneThreadRunsInFifoOrder) {
  ThreadPool pool;
  ASSERT_TRUE(pool.Start(1).ok());
  std::vector<int> order;
  std::latch done(50);
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(pool.Submit([&, i] {
                      order.push_back(i);
                      done.count_down();
                    })
                    .ok());
  }
  done.wait();
  for (int i = 0; i < 50; ++i) EXPECT_EQ(order[i], i);
  pool.Stop();
  EXPECT_EQ(pool.Submit([] {}).code(), absl::StatusCode::kFailedPrecondition);
}

TEST(ThreadPoolTest, StopRunsQueuedTasksAndJoins) {
  const int before = CountThreads();
  std::atomic<int> ran{0};
  {
    ThreadPool pool;
    ASSERT_TRUE(pool.Start(2, {.name_prefix = "fm-test"}).ok());
    EXPECT_EQ(pool.size(), 2);
    EXPECT_EQ(pool.Start(2).code(), absl::StatusCode::kFailedPrecondition);
    for (int i = 0; i < 20; ++i) {
      ASSERT_TRUE(pool.Submit([&] {
                        absl::SleepFor(absl::Milliseconds(1));
                        ++ran;
                      })
                      .ok());
    }
    pool.Stop();
    EXPECT_EQ(ran.load(), 20);
  }
  EXPECT_EQ(WaitForThreadCount(before), before);
  ThreadPool bad;
  EXPECT_EQ(bad.Start(0).code(), absl::StatusCode::kInvalidArgument);
}

TEST(ThreadPoolTest, AThrowingTaskDoesNotKillItsWorker) {
  ThreadPool pool;
  ASSERT_TRUE(pool.Start(1).ok());
  ASSERT_TRUE(pool.Submit([] { throw std::runtime_error("task failed"); }).ok());
  std::latch done(1);
  ASSERT_TRUE(pool.Submit([&] { done.count_down(); }).ok());
  done.wait();  // would hang if the only worker had died
  pool.Stop();
}

TEST(LimiterTest, AThrowingTaskDoesNotStallTheLimiter) {
  ThreadPool pool;
  ASSERT_TRUE(pool.Start(2).ok());
  Limiter limiter(&pool, 1);
  ASSERT_TRUE(limiter.Submit([] { throw std::runtime_error("task failed"); }).ok());
  std::latch done(1);
  ASSERT_TRUE(limiter.Submit([&] { done.count_down(); }).ok());
  done.wait();
  pool.Stop();
}

TEST(LimiterTest, QueuedTasksHoldNoPoolThread) {
  ThreadPool pool;
  ASSERT_TRUE(pool.Start(3).ok());
  Limiter limiter(&pool, 1);
  EXPECT_EQ(limiter.max_in_flight(), 1);
  std::atomic<int> in_flight{0}, peak{0};
  std::latch done(20);
  absl::Notification release;  // holds the limited tasks until the others have run
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(limiter
                    .Submit([&] {
                      const int now = ++in_flight;
                      int p = peak.load();
                      while (p < now && !peak.compare_exchange_weak(p, now)) {
                      }
                      release.WaitForNotificationWithTimeout(absl::Seconds(60));
                      --in_flight;
                      done.count_down();
                    })
                    .ok());
  }
  // While one limited task runs and 19 wait, the pool's other two threads stay free:
  // two other tasks finish before any limited one may (the timeout only stops a hang).
  std::atomic<int> others{0};
  absl::Notification others_ran;
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(pool.Submit([&] {
                      if (++others == 2) others_ran.Notify();
                    })
                    .ok());
  }
  EXPECT_TRUE(others_ran.WaitForNotificationWithTimeout(absl::Seconds(60)));
  EXPECT_EQ(done.try_wait(), false);
  release.Notify();
  done.wait();
  EXPECT_EQ(peak.load(), 1);
  pool.Stop();
}

TEST(ElasticPoolTest, ReusesIdleThreadsBeforeCreatingNew) {
  ElasticPool pool;
  ASSERT_TRUE(pool.Start(8).ok());
  EXPECT_EQ(pool.threads_created(), 0);
  for (int round = 0; round < 5; ++round) {
    std::latch done(1);
    ASSERT_TRUE(pool.Submit([&] { done.count_down(); }).ok());
    done.wait();
    // The thread goes back to idle (polled: no fixed sleep is long enough on a loaded
    // machine; the bound only stops a hang).
    const absl::Time deadline = absl::Now() + absl::Seconds(30);
    while (pool.idle_threads() < pool.threads_created() && absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(1));
    }
    ASSERT_EQ(pool.idle_threads(), pool.threads_created());
  }
  EXPECT_EQ(pool.threads_created(), 1);
  std::latch all(8);
  std::latch release(1);
  for (int i = 0; i < 12; ++i) {
    ASSERT_TRUE(pool.Submit([&] {
                      if (!all.try_wait()) all.count_down();
                      release.wait();
                    })
                    .ok());
  }
  all.wait();  // 8 tasks blocked at once: the cap was reached
  EXPECT_EQ(pool.threads_created(), 8);
  release.count_down();
  pool.Stop();
}

TEST(AsioRunnerTest, RoundRobinOverContextsEachOnItsOwnThread) {
  AsioRunner runner;
  std::atomic<int> announced{0};
  ASSERT_TRUE(runner.Start(3, {.on_thread_start = [&] { ++announced; }}).ok());
  EXPECT_EQ(announced.load(), 3);
  EXPECT_EQ(runner.size(), 3);
  std::mutex mu;
  std::vector<std::thread::id> ids(3);
  std::latch done(3);
  for (int k = 0; k < 3; ++k) {
    boost::asio::post(runner.Next(), [&, k] {
      std::lock_guard lock(mu);
      ids[k] = std::this_thread::get_id();
      done.count_down();
    });
  }
  done.wait();
  EXPECT_NE(ids[0], ids[1]);
  EXPECT_NE(ids[1], ids[2]);
  EXPECT_NE(ids[0], ids[2]);
  runner.Stop();
  EXPECT_EQ(runner.Submit([] {}).code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace fleetmark::engine
