// Issue 32, item 12: the lines the coordinator printed while its database was away
// ("storing N result(s) failed, will retry") and protobuf's own lines lacked the time
// and level every other log line has (engine/common/log.h). Both go through Log now.
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "coordinator/service/group_commit.h"
#include "coordinator/service/protobuf_log.h"
#include "fleetmark/v1/result.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetmark::service {
namespace {

using ::testing::ContainsRegex;

// "2026-12-06T14:00:00.123Z WARNING ..." at the start of a line.
constexpr char kStampedWarning[] = "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z WARNING ";

TEST(LogLinesTest, AGroupCommitRetryDuringAnOutageIsALogLine) {
  absl::Mutex mu;
  int calls = 0;
  bool done = false;
  testing::internal::CaptureStderr();
  {
    GroupCommitQueue<int, int> queue(
        "result(s)",
        {.write = [&](const std::vector<const int*>& batch) -> absl::StatusOr<std::vector<int>> {
           absl::MutexLock lock(&mu);
           if (++calls == 1) return absl::UnavailableError("connection refused");
           return std::vector<int>(batch.size(), 1);
         },
         .reject = [](const int&, const absl::Status&) { return 0; }},
        {.threads = 1, .max_backoff = absl::Milliseconds(50)});
    queue.Submit(7, [&](const int&) {
      absl::MutexLock lock(&mu);
      done = true;
    });
    absl::MutexLock lock(&mu);
    ASSERT_TRUE(mu.AwaitWithTimeout(absl::Condition(&done), absl::Seconds(30)));
  }
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_THAT(err, ContainsRegex(std::string(kStampedWarning) +
                                 "storing 1 result\\(s\\) failed, will retry: connection refused\n"))
      << err;
  EXPECT_EQ(err.find("fleetmark-coordinator: storing"), std::string::npos) << err;
}

TEST(LogLinesTest, ProtobufsOwnLinesAreLogLines) {
  InstallRateLimitedProtobufLog();
  v1::CaseResult result;
  result.set_message("not utf-8 \xff");
  testing::internal::CaptureStderr();
  std::string bytes;
  result.SerializeToString(&bytes);  // protobuf logs an ERROR about the string field
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_THAT(err, ContainsRegex("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]{12}Z ERROR \\[libprotobuf ERROR ")) << err;
}

}  // namespace
}  // namespace fleetmark::service
