// The payloads coordinators exchange through LISTEN/NOTIFY (coordinator/store/notification.h)
// and the listener that receives them (notification_listener.h) on a real PostgreSQL:
// delivery after commit only, reconnection after pg_terminate_backend, prompt stop.
#include "coordinator/store/notification.h"

#include <pqxx/pqxx>

#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "coordinator/store/notification_listener.h"
#include "gtest/gtest.h"
#include "tests/coordinator/test_database.h"

namespace fleetmark::store {
namespace {

std::string Uuid(int i) { return absl::StrFormat("00000000-0000-4000-8000-%012d", i); }

TEST(NotificationTest, LongListsAreCutIntoPayloadsUnder8000BytesThatParseBackInOrder) {
  Notification ended{.kind = NotificationKind::kEnded};
  for (int i = 0; i < 500; ++i) {
    ended.agent_ids.push_back(Uuid(i));
    ended.job_ids.push_back(Uuid(10000 + i));
  }
  const std::vector<std::string> payloads = NotificationPayloads(ended);
  ASSERT_GT(payloads.size(), 1u);
  Notification back{.kind = NotificationKind::kEnded};
  for (const std::string& payload : payloads) {
    EXPECT_LE(payload.size(), kMaxNotificationPayloadBytes);
    auto parsed = ParseNotification(payload);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(parsed->kind, NotificationKind::kEnded);
    back.agent_ids.insert(back.agent_ids.end(), parsed->agent_ids.begin(), parsed->agent_ids.end());
    back.job_ids.insert(back.job_ids.end(), parsed->job_ids.begin(), parsed->job_ids.end());
  }
  EXPECT_EQ(back.agent_ids, ended.agent_ids);
  EXPECT_EQ(back.job_ids, ended.job_ids);
  EXPECT_TRUE(NotificationPayloads({.kind = NotificationKind::kQueued}).empty());
  EXPECT_EQ(NotificationPayloads({.kind = NotificationKind::kDisconnect, .agent_ids = {Uuid(1), Uuid(2)}}),
            std::vector<std::string>{absl::StrCat("disconnect ", Uuid(1), ",", Uuid(2))});
}

TEST(NotificationTest, PayloadsNoCoordinatorWroteAreRefusedNamingTheProblem) {
  EXPECT_NE(ParseNotification("hello").status().message().find("kind must be"), std::string::npos);
  EXPECT_NE(ParseNotification("queued 42").status().message().find("not a UUID"), std::string::npos);
  EXPECT_NE(ParseNotification(absl::StrCat("ended ", Uuid(1))).status().message().find("<agent id>/<job id>"),
            std::string::npos);
  EXPECT_NE(ParseNotification(absl::StrCat("ended ", Uuid(1), "/x")).status().message().find("job id"),
            std::string::npos);
  auto bare = ParseNotification("queued");
  ASSERT_TRUE(bare.ok());
  EXPECT_TRUE(bare->agent_ids.empty());
}

// What the listener handed over, and how often it (re)started listening.
struct Inbox {
  absl::Mutex mu;
  std::vector<Notification> received ABSL_GUARDED_BY(mu);
  int listens ABSL_GUARDED_BY(mu) = 0;
  int reconnects ABSL_GUARDED_BY(mu) = 0;
  bool WaitFor(size_t count, absl::Duration timeout) {
    absl::MutexLock lock(&mu);
    auto enough = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return received.size() >= count; };
    return mu.AwaitWithTimeout(absl::Condition(&enough), timeout);
  }
  bool WaitListens(int count, absl::Duration timeout) {
    absl::MutexLock lock(&mu);
    auto enough = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return listens >= count; };
    return mu.AwaitWithTimeout(absl::Condition(&enough), timeout);
  }
};

absl::StatusOr<std::unique_ptr<NotificationListener>> StartListener(const std::string& uri, Inbox& inbox) {
  NotificationListener::Options options;
  options.connection.uri = uri;
  options.connection.application_name = "notification-test-listener";
  return NotificationListener::Start(
      options,
      [&inbox](const Notification& n) {
        absl::MutexLock lock(&inbox.mu);
        inbox.received.push_back(n);
      },
      [&inbox](bool reconnected) {
        absl::MutexLock lock(&inbox.mu);
        ++inbox.listens;
        inbox.reconnects += reconnected;
      });
}

TEST(NotificationListenerTest, DeliversCommittedNotificationsAndListensAgainAfterItsBackendIsKilled) {
  FLEETMARK_TEST_DATABASE_OR_SKIP(db);
  Inbox inbox;
  auto listener = StartListener(db.uri(), inbox);
  ASSERT_TRUE(listener.ok()) << listener.status();
  ASSERT_TRUE(inbox.WaitListens(1, absl::Seconds(30)));
  pqxx::connection conn(db.uri());
  {
    pqxx::work rolled_back(conn);
    rolled_back.exec(absl::StrCat("SELECT pg_notify('fleetmark', 'queued ", Uuid(7), "')"));
    rolled_back.abort();
    pqxx::work txn(conn);
    txn.exec(absl::StrCat("SELECT pg_notify('fleetmark', 'queued ", Uuid(1), "')"));
    txn.exec("SELECT pg_notify('fleetmark', 'not ours')");
    txn.exec(absl::StrCat("SELECT pg_notify('other_channel', 'queued ", Uuid(9), "')"));
    txn.commit();
  }
  ASSERT_TRUE(inbox.WaitFor(1, absl::Seconds(30)));
  EXPECT_TRUE((*listener)->listening());
  {
    pqxx::nontransaction kill(conn);
    pqxx::result r = kill.exec(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
        "WHERE application_name = 'notification-test-listener'");
    ASSERT_EQ(r.size(), 1u);
  }
  ASSERT_TRUE(inbox.WaitListens(2, absl::Seconds(30))) << "did not listen again";
  {
    pqxx::work txn(conn);
    txn.exec(absl::StrCat("SELECT pg_notify('fleetmark', 'disconnect ", Uuid(2), "')"));
    txn.commit();
  }
  ASSERT_TRUE(inbox.WaitFor(2, absl::Seconds(30)));
  EXPECT_EQ((*listener)->reconnects(), 1u);
  EXPECT_EQ((*listener)->malformed(), 1u);  // 'not ours'
  const absl::Time stop = absl::Now();
  listener->reset();
  EXPECT_LT(absl::Now() - stop, absl::Seconds(5));  // the join returned (generous bound)
  absl::MutexLock lock(&inbox.mu);
  ASSERT_EQ(inbox.received.size(), 2u);  // neither the rolled-back one nor the other channel's
  EXPECT_EQ(inbox.received[0].kind, NotificationKind::kQueued);
  EXPECT_EQ(inbox.received[0].agent_ids, std::vector<std::string>{Uuid(1)});
  EXPECT_EQ(inbox.received[1].kind, NotificationKind::kDisconnect);
  EXPECT_EQ(inbox.reconnects, 1);
}

TEST(NotificationListenerTest, StopsWhileItCannotReachTheDatabase) {
  Inbox inbox;
  // A port nothing listens on (refused at once): the listener keeps retrying.
  auto listener = StartListener("postgresql://postgres@127.0.0.1:1/none", inbox);
  ASSERT_TRUE(listener.ok()) << listener.status();
  absl::SleepFor(absl::Milliseconds(300));
  EXPECT_FALSE((*listener)->listening());
  listener->reset();
  absl::MutexLock lock(&inbox.mu);
  EXPECT_EQ(inbox.listens, 0);
  EXPECT_TRUE(NotificationListener::Start({}, nullptr, nullptr).status().message().find("uri") != std::string::npos);
}

}  // namespace
}  // namespace fleetmark::store
