#include "agent/spool.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetmark::agent {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

class SpoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/fleetmark-spool-test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  static v1::CaseResult Result(const std::string& id, int samples = 3) {
    v1::CaseResult result;
    result.set_result_id(id);
    result.set_run_id("run-1");
    result.mutable_spec()->set_case_id(absl::StrCat("batch/arithmetic/blocking/direct/", id));
    for (int i = 0; i < samples; ++i) result.add_samples_ns(1000 + i);
    return result;
  }

  static v1::JobFinished Finished(const std::string& job_id, bool ok = true, const std::string& message = "") {
    v1::JobFinished finished;
    finished.set_job_id(job_id);
    finished.set_ok(ok);
    finished.set_message(message);
    return finished;
  }

  static std::vector<std::string> JobIds(const std::vector<v1::JobFinished>& reports) {
    std::vector<std::string> ids;
    for (const v1::JobFinished& report : reports) ids.push_back(report.job_id());
    return ids;
  }

  std::string path() const { return absl::StrCat(dir_, "/", Spool::kFileName); }
  uint64_t FileSize() const { return std::filesystem::file_size(path()); }

  std::string dir_;
};

TEST_F(SpoolTest, AppendedResultsArePendingInOrderAndReadBack) {
  auto spool = Spool::Open(dir_, {});
  ASSERT_TRUE(spool.ok()) << spool.status();
  ASSERT_TRUE((*spool)->Append(Result("b")).ok());
  ASSERT_TRUE((*spool)->Append(Result("a")).ok());
  ASSERT_TRUE((*spool)->Append(Result("c")).ok());
  EXPECT_THAT((*spool)->PendingIds(), ElementsAre("b", "a", "c"));
  auto read = (*spool)->Read("a");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->spec().case_id(), "batch/arithmetic/blocking/direct/a");
  EXPECT_EQ(read->samples_ns_size(), 3);
}

TEST_F(SpoolTest, DuplicateAndEmptyIdsAreRefused) {
  auto spool = Spool::Open(dir_, {});
  ASSERT_TRUE(spool.ok());
  ASSERT_TRUE((*spool)->Append(Result("x")).ok());
  EXPECT_TRUE(absl::IsAlreadyExists((*spool)->Append(Result("x"))));
  EXPECT_TRUE(absl::IsInvalidArgument((*spool)->Append(Result(""))));
  EXPECT_EQ((*spool)->pending(), 1u);
}

TEST_F(SpoolTest, OversizedResultIsRefusedAndSpoolStaysUsable) {
  auto spool = Spool::Open(dir_, {.compact_min_dead = 256, .max_record_bytes = 1024});
  ASSERT_TRUE(spool.ok());
  EXPECT_TRUE(absl::IsInvalidArgument((*spool)->Append(Result("big", 1000))));
  ASSERT_TRUE((*spool)->Append(Result("small")).ok());
  EXPECT_THAT((*spool)->PendingIds(), ElementsAre("small"));
}

TEST_F(SpoolTest, AckRemovesAndSurvivesReopen) {
  {
    auto spool = Spool::Open(dir_, {});
    ASSERT_TRUE(spool.ok());
    for (const char* id : {"r1", "r2", "r3"}) ASSERT_TRUE((*spool)->Append(Result(id)).ok());
    ASSERT_TRUE((*spool)->Ack("r2").ok());
    ASSERT_TRUE((*spool)->Ack("never-spooled").ok());  // ignored
    EXPECT_TRUE(absl::IsNotFound((*spool)->Read("r2").status()));
  }
  auto reopened = Spool::Open(dir_, {});
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  EXPECT_THAT((*reopened)->PendingIds(), ElementsAre("r1", "r3"));
  EXPECT_EQ((*reopened)->recovery().pending, 2u);
  EXPECT_EQ((*reopened)->recovery().truncated_bytes, 0u);
}

TEST_F(SpoolTest, TornLastRecordIsCutAndEarlierResultsReplay) {
  {
    auto spool = Spool::Open(dir_, {});
    ASSERT_TRUE(spool.ok());
    ASSERT_TRUE((*spool)->Append(Result("kept-1")).ok());
    ASSERT_TRUE((*spool)->Append(Result("kept-2")).ok());
  }
  const uint64_t good_size = FileSize();
  {
    auto spool = Spool::Open(dir_, {});
    ASSERT_TRUE(spool.ok());
    ASSERT_TRUE((*spool)->Append(Result("torn", 50)).ok());
  }
  // Simulate a crash in the middle of the last append: keep half of its bytes.
  const uint64_t full_size = FileSize();
  ASSERT_EQ(truncate(path().c_str(), static_cast<off_t>(good_size + (full_size - good_size) / 2)), 0);

  auto recovered = Spool::Open(dir_, {});
  ASSERT_TRUE(recovered.ok()) << recovered.status();
  EXPECT_THAT((*recovered)->PendingIds(), ElementsAre("kept-1", "kept-2"));
  EXPECT_GT((*recovered)->recovery().truncated_bytes, 0u);
  EXPECT_THAT((*recovered)->recovery().tail_error, ::testing::HasSubstr("torn"));
  EXPECT_EQ(FileSize(), good_size);
  // Appends after recovery land behind the cut and survive another reopen.
  ASSERT_TRUE((*recovered)->Append(Result("after")).ok());
  recovered->reset();
  auto again = Spool::Open(dir_, {});
  ASSERT_TRUE(again.ok());
  EXPECT_THAT((*again)->PendingIds(), ElementsAre("kept-1", "kept-2", "after"));
  EXPECT_EQ((*again)->recovery().truncated_bytes, 0u);
}

TEST_F(SpoolTest, CorruptedPayloadIsDetectedByCrc) {
  {
    auto spool = Spool::Open(dir_, {});
    ASSERT_TRUE(spool.ok());
    ASSERT_TRUE((*spool)->Append(Result("good")).ok());
    ASSERT_TRUE((*spool)->Append(Result("flipped")).ok());
  }
  // Flip one byte near the end (inside the last record's payload).
  const int fd = open(path().c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  char byte = 0;
  const off_t at = static_cast<off_t>(FileSize() - 3);
  ASSERT_EQ(pread(fd, &byte, 1, at), 1);
  byte = static_cast<char>(byte ^ 0x5a);
  ASSERT_EQ(pwrite(fd, &byte, 1, at), 1);
  close(fd);

  auto recovered = Spool::Open(dir_, {});
  ASSERT_TRUE(recovered.ok());
  EXPECT_THAT((*recovered)->PendingIds(), ElementsAre("good"));
  EXPECT_THAT((*recovered)->recovery().tail_error, ::testing::HasSubstr("CRC"));
}

// Issue 32, item 12: one damaged record no longer discards every record after it.
// Recovery resynchronises on the next readable record (a plausible header whose CRC
// matches), keeps the records after the damage, rewrites the file without the damaged
// bytes, and says how many results were lost: a damaged result the coordinator had
// not acknowledged is lost, one acknowledged later in the file is not. Before, the
// spool was cut at the damage (r3, the report and r4 lost) and the warning gave bytes.
TEST_F(SpoolTest, ADamagedRecordLosesOnlyItselfAndTheRecordsAfterItAreKept) {
  uint64_t damaged_at = 0, damaged_end = 0;
  {
    auto spool = Spool::Open(dir_, {});
    ASSERT_TRUE(spool.ok());
    ASSERT_TRUE((*spool)->Append(Result("r1")).ok());
    damaged_at = (*spool)->file_bytes();
    ASSERT_TRUE((*spool)->Append(Result("r2", 40)).ok());
    damaged_end = (*spool)->file_bytes();
    ASSERT_TRUE((*spool)->Append(Result("r3")).ok());
    ASSERT_TRUE((*spool)->AppendFinished(Finished("job-1")).ok());
    ASSERT_TRUE((*spool)->Append(Result("r4")).ok());
    ASSERT_TRUE((*spool)->Ack("r1").ok());
  }
  // Damage r2's length field: its extent is unknown, so r3 is found by its CRC, and
  // the loss is a lower bound.
  const int fd = open(path().c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  const char garbage = '\x7f';
  ASSERT_EQ(pwrite(fd, &garbage, 1, static_cast<off_t>(damaged_at + 5)), 1);  // the length's second byte
  close(fd);

  auto recovered = Spool::Open(dir_, {});
  ASSERT_TRUE(recovered.ok()) << recovered.status();
  EXPECT_THAT((*recovered)->PendingIds(), ElementsAre("r3", "r4"));
  EXPECT_THAT(JobIds((*recovered)->PendingFinished()), ElementsAre("job-1"));
  const SpoolRecovery& recovery = (*recovered)->recovery();
  EXPECT_EQ(recovery.damaged_records, 1u);
  EXPECT_EQ(recovery.skipped_bytes, damaged_end - damaged_at);
  EXPECT_EQ(recovery.truncated_bytes, 0u);
  EXPECT_EQ(recovery.results_lost, 1u);
  EXPECT_TRUE(recovery.results_lost_is_lower_bound);
  EXPECT_THAT(recovery.first_damage, ::testing::HasSubstr(absl::StrCat("at offset ", damaged_at)));
  EXPECT_TRUE(recovery.rewrite_error.empty()) << recovery.rewrite_error;
  const std::string warning = RecoveryWarning(path(), recovery);
  EXPECT_THAT(warning, ::testing::HasSubstr(": at least 1 result lost"));
  EXPECT_THAT(warning, ::testing::HasSubstr("2 results and 1 job reports to replay"));
  // Rewritten without the damage: a reopen finds nothing wrong and the same records.
  recovered->reset();
  auto again = Spool::Open(dir_, {});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ((*again)->recovery().damaged_records, 0u);
  EXPECT_THAT((*again)->PendingIds(), ElementsAre("r3", "r4"));
  EXPECT_EQ(RecoveryWarning(path(), (*again)->recovery()), "");
}

// A damaged result acknowledged later in the file was stored: not lost. A torn end
// after it is cut, and its result (its append interrupted) counted lost.
TEST_F(SpoolTest, ADamagedResultAckedLaterIsNotLostAndATornEndIsCounted) {
  uint64_t damaged_at = 0;
  {
    auto spool = Spool::Open(dir_, {});
    ASSERT_TRUE(spool.ok());
    damaged_at = (*spool)->file_bytes();
    ASSERT_TRUE((*spool)->Append(Result("stored")).ok());
    ASSERT_TRUE((*spool)->Append(Result("kept")).ok());
    ASSERT_TRUE((*spool)->Ack("stored").ok());
    ASSERT_TRUE((*spool)->Append(Result("torn", 50)).ok());
  }
  ASSERT_EQ(truncate(path().c_str(), static_cast<off_t>(FileSize() - 20)), 0);
  const int fd = open(path().c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(pwrite(fd, "\xee", 1, static_cast<off_t>(damaged_at + 30)), 1);  // in the payload of "stored"
  close(fd);

  auto recovered = Spool::Open(dir_, {});
  ASSERT_TRUE(recovered.ok()) << recovered.status();
  EXPECT_THAT((*recovered)->PendingIds(), ElementsAre("kept"));
  const SpoolRecovery& recovery = (*recovered)->recovery();
  EXPECT_EQ(recovery.damaged_records, 2u);
  EXPECT_EQ(recovery.results_lost, 1u);  // "torn"; "stored" was acknowledged
  EXPECT_FALSE(recovery.results_lost_is_lower_bound);
  EXPECT_THAT(recovery.tail_error, ::testing::HasSubstr("torn"));
  EXPECT_GT(recovery.truncated_bytes, 0u);
  EXPECT_THAT(RecoveryWarning(path(), recovery), ::testing::HasSubstr(": 1 result lost"));
}

TEST_F(SpoolTest, TornHeaderStartsAfreshButForeignFileIsRefused) {
  {
    const int fd = open(path().c_str(), O_WRONLY | O_CREAT, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(write(fd, "FMSP", 4), 4);
    close(fd);
  }
  auto spool = Spool::Open(dir_, {});
  ASSERT_TRUE(spool.ok()) << spool.status();
  EXPECT_THAT((*spool)->PendingIds(), IsEmpty());
  spool->reset();

  std::filesystem::remove(path());
  {
    const int fd = open(path().c_str(), O_WRONLY | O_CREAT, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(write(fd, "not a spool at all", 18), 18);
    close(fd);
  }
  auto foreign = Spool::Open(dir_, {});
  EXPECT_TRUE(absl::IsInvalidArgument(foreign.status())) << foreign.status();
}

TEST_F(SpoolTest, CompactionShrinksTheFileAndKeepsLiveResults) {
  auto spool = Spool::Open(dir_, {.compact_min_dead = 8, .max_record_bytes = 1 << 20});
  ASSERT_TRUE(spool.ok());
  for (int i = 0; i < 20; ++i) ASSERT_TRUE((*spool)->Append(Result(absl::StrCat("r", i))).ok());
  const uint64_t before = (*spool)->file_bytes();
  for (int i = 0; i < 18; ++i) ASSERT_TRUE((*spool)->Ack(absl::StrCat("r", i)).ok());
  // 36 dead records > 8 and > 2 live: compacted at least once.
  EXPECT_LT((*spool)->file_bytes(), before / 2);
  EXPECT_EQ((*spool)->file_bytes(), FileSize());
  EXPECT_THAT((*spool)->PendingIds(), ElementsAre("r18", "r19"));
  auto r19 = (*spool)->Read("r19");
  ASSERT_TRUE(r19.ok()) << r19.status();
  EXPECT_EQ(r19->spec().case_id(), "batch/arithmetic/blocking/direct/r19");
  EXPECT_FALSE(std::filesystem::exists(path() + ".compact"));
  // Appends after a compaction go to the new file and survive a reopen.
  ASSERT_TRUE((*spool)->Append(Result("late")).ok());
  spool->reset();
  auto reopened = Spool::Open(dir_, {});
  ASSERT_TRUE(reopened.ok());
  EXPECT_THAT((*reopened)->PendingIds(), ElementsAre("r18", "r19", "late"));
}

TEST_F(SpoolTest, FullyAckedSpoolCompactsToHeaderOnly) {
  auto spool = Spool::Open(dir_, {.compact_min_dead = 1, .max_record_bytes = 1 << 20});
  ASSERT_TRUE(spool.ok());
  ASSERT_TRUE((*spool)->Append(Result("only")).ok());
  ASSERT_TRUE((*spool)->Ack("only").ok());
  EXPECT_EQ((*spool)->pending(), 0u);
  EXPECT_EQ(FileSize(), 8u);  // just the header
}

TEST_F(SpoolTest, FinishedReportIsWrittenDurablyAndReplaysAfterItsResults) {
  {
    auto spool = Spool::Open(dir_, {});
    ASSERT_TRUE(spool.ok());
    ASSERT_TRUE((*spool)->Append(Result("r1")).ok());
    ASSERT_TRUE((*spool)->Append(Result("r2")).ok());
    const uint64_t before = FileSize();
    ASSERT_TRUE((*spool)->AppendFinished(Finished("job-1", false, "case crashed")).ok());
    EXPECT_GT(FileSize(), before);       // on disk when AppendFinished returns
    EXPECT_EQ((*spool)->pending(), 2u);  // pending() counts results only
  }
  // As after a kill -9: nothing but the file survives.
  auto reopened = Spool::Open(dir_, {});
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  EXPECT_EQ((*reopened)->recovery().pending, 2u);
  EXPECT_EQ((*reopened)->recovery().pending_finished, 1u);
  EXPECT_EQ((*reopened)->recovery().truncated_bytes, 0u);
  EXPECT_THAT((*reopened)->PendingIds(), ElementsAre("r1", "r2"));
  std::vector<v1::JobFinished> reports = (*reopened)->PendingFinished();
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].job_id(), "job-1");
  EXPECT_FALSE(reports[0].ok());
  EXPECT_EQ(reports[0].message(), "case crashed");
}

TEST_F(SpoolTest, FinishedReportsKeepAppendOrderAcrossReopenAndCompaction) {
  auto spool = Spool::Open(dir_, {.compact_min_dead = 4, .max_record_bytes = 1 << 20});
  ASSERT_TRUE(spool.ok());
  ASSERT_TRUE((*spool)->Append(Result("a1")).ok());
  ASSERT_TRUE((*spool)->AppendFinished(Finished("job-b")).ok());
  ASSERT_TRUE((*spool)->Append(Result("a2")).ok());
  ASSERT_TRUE((*spool)->AppendFinished(Finished("job-a")).ok());
  EXPECT_THAT(JobIds((*spool)->PendingFinished()), ElementsAre("job-b", "job-a"));
  // Enough acked results to compact: the reports move to the new file, in order.
  for (int i = 0; i < 6; ++i) ASSERT_TRUE((*spool)->Append(Result(absl::StrCat("x", i))).ok());
  const uint64_t before = (*spool)->file_bytes();
  for (int i = 0; i < 6; ++i) ASSERT_TRUE((*spool)->Ack(absl::StrCat("x", i)).ok());
  EXPECT_LT((*spool)->file_bytes(), before);
  EXPECT_EQ((*spool)->file_bytes(), FileSize());
  EXPECT_THAT(JobIds((*spool)->PendingFinished()), ElementsAre("job-b", "job-a"));
  spool->reset();
  auto reopened = Spool::Open(dir_, {});
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  EXPECT_THAT((*reopened)->PendingIds(), ElementsAre("a1", "a2"));
  EXPECT_THAT(JobIds((*reopened)->PendingFinished()), ElementsAre("job-b", "job-a"));
  EXPECT_EQ((*reopened)->recovery().truncated_bytes, 0u);
}

TEST_F(SpoolTest, AckFinishedRemovesTheReportAndSurvivesReopen) {
  {
    auto spool = Spool::Open(dir_, {});
    ASSERT_TRUE(spool.ok());
    ASSERT_TRUE((*spool)->Append(Result("r1")).ok());
    ASSERT_TRUE((*spool)->AppendFinished(Finished("job-1")).ok());
    EXPECT_TRUE(absl::IsAlreadyExists((*spool)->AppendFinished(Finished("job-1"))));
    EXPECT_TRUE(absl::IsInvalidArgument((*spool)->AppendFinished(Finished(""))));
    ASSERT_TRUE((*spool)->Ack("r1").ok());
    ASSERT_TRUE((*spool)->AckFinished("job-1").ok());
    ASSERT_TRUE((*spool)->AckFinished("job-1").ok());          // a second ack: ignored
    ASSERT_TRUE((*spool)->AckFinished("never-spooled").ok());  // ignored
    EXPECT_THAT((*spool)->PendingFinished(), IsEmpty());
    // Acked, the job may report again (e.g. a later attempt).
    ASSERT_TRUE((*spool)->AppendFinished(Finished("job-2")).ok());
  }
  auto reopened = Spool::Open(dir_, {});
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  EXPECT_THAT((*reopened)->PendingIds(), IsEmpty());
  EXPECT_THAT(JobIds((*reopened)->PendingFinished()), ElementsAre("job-2"));
}

TEST_F(SpoolTest, TornFinishedRecordAfterACrashIsCutAndResultsReplay) {
  {
    auto spool = Spool::Open(dir_, {});
    ASSERT_TRUE(spool.ok());
    ASSERT_TRUE((*spool)->Append(Result("last-result")).ok());
  }
  const uint64_t good_size = FileSize();
  {
    auto spool = Spool::Open(dir_, {});
    ASSERT_TRUE(spool.ok());
    ASSERT_TRUE((*spool)->AppendFinished(Finished("job-1", true, std::string(200, 'm'))).ok());
  }
  // A crash in the middle of writing the report: it was never sent, so it may go.
  const uint64_t full_size = FileSize();
  ASSERT_EQ(truncate(path().c_str(), static_cast<off_t>(good_size + (full_size - good_size) / 2)), 0);
  auto recovered = Spool::Open(dir_, {});
  ASSERT_TRUE(recovered.ok()) << recovered.status();
  EXPECT_THAT((*recovered)->PendingIds(), ElementsAre("last-result"));
  EXPECT_THAT((*recovered)->PendingFinished(), IsEmpty());
  EXPECT_THAT((*recovered)->recovery().tail_error, ::testing::HasSubstr("torn"));
  EXPECT_EQ(FileSize(), good_size);
  // The job finishes again after the restart (e.g. the report is rebuilt): it lands
  // behind the cut and survives.
  ASSERT_TRUE((*recovered)->AppendFinished(Finished("job-1")).ok());
  recovered->reset();
  auto again = Spool::Open(dir_, {});
  ASSERT_TRUE(again.ok());
  EXPECT_THAT(JobIds((*again)->PendingFinished()), ElementsAre("job-1"));
  EXPECT_EQ((*again)->recovery().truncated_bytes, 0u);
}

TEST_F(SpoolTest, TornFinishedAckKeepsTheReportPendingForAnotherReplay) {
  {
    auto spool = Spool::Open(dir_, {});
    ASSERT_TRUE(spool.ok());
    ASSERT_TRUE((*spool)->AppendFinished(Finished("job-1")).ok());
  }
  const uint64_t good_size = FileSize();
  {
    auto spool = Spool::Open(dir_, {});
    ASSERT_TRUE(spool.ok());
    ASSERT_TRUE((*spool)->AckFinished("job-1").ok());
  }
  ASSERT_GT(FileSize(), good_size);
  ASSERT_EQ(truncate(path().c_str(), static_cast<off_t>(FileSize() - 2)), 0);
  auto recovered = Spool::Open(dir_, {});
  ASSERT_TRUE(recovered.ok()) << recovered.status();
  // The coordinator acknowledges a replayed report again; nothing is lost.
  EXPECT_THAT(JobIds((*recovered)->PendingFinished()), ElementsAre("job-1"));
  EXPECT_EQ(FileSize(), good_size);
}

TEST_F(SpoolTest, FullyAckedResultsAndReportCompactToHeaderOnly) {
  auto spool = Spool::Open(dir_, {.compact_min_dead = 1, .max_record_bytes = 1 << 20});
  ASSERT_TRUE(spool.ok());
  ASSERT_TRUE((*spool)->Append(Result("only")).ok());
  ASSERT_TRUE((*spool)->AppendFinished(Finished("job-1")).ok());
  ASSERT_TRUE((*spool)->Ack("only").ok());
  // 2 dead records, 1 live report: compacted, the report kept.
  EXPECT_THAT(JobIds((*spool)->PendingFinished()), ElementsAre("job-1"));
  ASSERT_TRUE((*spool)->AckFinished("job-1").ok());
  EXPECT_THAT((*spool)->PendingFinished(), IsEmpty());
  EXPECT_EQ(FileSize(), 8u);  // just the header
}

TEST_F(SpoolTest, MissingDirectoryIsNotFoundNamingThePath) {
  auto spool = Spool::Open(dir_ + "/does/not/exist", {});
  EXPECT_TRUE(absl::IsNotFound(spool.status())) << spool.status();
  EXPECT_THAT(std::string(spool.status().message()), ::testing::HasSubstr("does/not/exist"));
}

}  // namespace
}  // namespace fleetmark::agent
