// The human table: grouping, ranking by median, ratios, statuses, scenario tables.
#include "engine/report/table.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "engine/common/text.h"
#include "engine/report/text_table.h"
#include "engine/report/units.h"
#include "gtest/gtest.h"
#include "sample_report.h"

namespace fleetmark::report {
namespace {

// Index of the first line containing `needle` (after `from`), or -1.
int LineOf(const std::vector<std::string>& lines, const std::string& needle, int from = 0) {
  for (int i = from; i < static_cast<int>(lines.size()); ++i) {
    if (lines[i].find(needle) != std::string::npos) return i;
  }
  return -1;
}

TEST(UnitsTest, AutoScales) {
  EXPECT_EQ(FormatNanos(850), "850 ns");
  EXPECT_EQ(FormatNanos(1234), "1.23 µs");
  EXPECT_EQ(FormatNanos(45'600'000), "45.6 ms");
  EXPECT_EQ(FormatNanos(2e9), "2.00 s");
  EXPECT_EQ(FormatNanos(999.7), "1.00 µs");  // rounding crosses the unit boundary
  EXPECT_EQ(FormatNanos(-1), "-");
  EXPECT_EQ(FormatCount(512), "512");
  EXPECT_EQ(FormatCount(12345), "12.3k");
  EXPECT_EQ(FormatBytes(300.0 * 1024 * 1024), "300 MiB");
  EXPECT_EQ(ShortestDouble(0.1), "0.1");
  EXPECT_EQ(DisplayWidth("1.23 µs"), 7u);
}

TEST(TableTest, BatchGroupsRankedByMedianWithRatios) {
  const std::string text = FormatTable(testing::SampleReport());
  const std::vector<std::string> lines = absl::StrSplit(text, '\n');
  EXPECT_NE(LineOf(lines, "plan s1-test · Test CPU @ 3.0GHz · 2 CPUs"), -1) << text;

  const int group = LineOf(lines, "== batch · arithmetic · blocking · n=100 ==");
  ASSERT_NE(group, -1) << text;
  const int header = group + 1;
  EXPECT_NE(lines[header].find("strategy"), std::string::npos);
  EXPECT_NE(lines[header].find("95% CI"), std::string::npos);
  EXPECT_NE(lines[header].find("allocs/rep"), std::string::npos);
  // Ranked: direct (2 µs), work_stealing (3 µs), fixed_pool_2 (4 µs), then fiber.
  const int direct = LineOf(lines, "direct ", group);
  const int ws = LineOf(lines, "work_stealing_2", group);
  const int fixed = LineOf(lines, "fixed_pool_2", group);
  const int fiber = LineOf(lines, "fiber_1", group);
  ASSERT_NE(direct, -1) << text;
  EXPECT_EQ(direct, header + 2);
  EXPECT_LT(direct, ws);
  EXPECT_LT(ws, fixed);
  EXPECT_LT(fixed, fiber);
  EXPECT_NE(lines[direct].find("2.00 µs"), std::string::npos) << lines[direct];
  EXPECT_NE(lines[direct].find("1.00×"), std::string::npos) << lines[direct];
  EXPECT_NE(lines[direct].find("[1.98 µs, 2.02 µs]"), std::string::npos) << lines[direct];
  EXPECT_NE(lines[direct].find("1.0%  10  1.00×"), std::string::npos) << lines[direct];
  EXPECT_NE(lines[fixed].find("2.00×"), std::string::npos) << lines[fixed];
  EXPECT_NE(lines[ws].find("1.50×"), std::string::npos) << lines[ws];
  // CPU/rep = 0.6 × median; allocations per repetition; capped/throttled marks.
  EXPECT_NE(lines[fixed].find("2.40 µs"), std::string::npos) << lines[fixed];
  EXPECT_NE(lines[fixed].find("250"), std::string::npos) << lines[fixed];
  EXPECT_NE(lines[ws].find("n/a"), std::string::npos) << lines[ws];
  EXPECT_NE(lines[ws].find("ok (rep cap) [throttled]"), std::string::npos) << lines[ws];
  EXPECT_NE(lines[fiber].find("unsupported: no blocking wait, \"suspending\" only"), std::string::npos) << lines[fiber];

  const int storage = LineOf(lines, "== batch · storage · blocking · n=100 ==");
  ASSERT_NE(storage, -1) << text;
  const int io = LineOf(lines, "fixed_pool_100", storage);
  const int cpu = LineOf(lines, "fixed_pool_cpu, small", storage);
  ASSERT_NE(io, -1);
  ASSERT_NE(cpu, -1);
  EXPECT_LT(io, cpu);
  EXPECT_NE(lines[io].find("12.5 ms"), std::string::npos) << lines[io];
  EXPECT_NE(lines[cpu].find("250 ms"), std::string::npos) << lines[cpu];
  EXPECT_NE(lines[cpu].find("20.00×"), std::string::npos) << lines[cpu];
  EXPECT_NE(text.find("ratio: median / fastest"), std::string::npos);
}

// The threads column says what ran against what was asked, never a bare 0 for a case
// that did not run.
TEST(TableTest, ThreadsShowRequestedWhenDifferentOrNotRun) {
  fleetmark::v1::RunReport report;
  auto pool = testing::BatchCase("elastic_pool", 64, "arithmetic", 1000);
  pool.set_threads_used(10);
  *report.add_results() = pool;
  auto unsupported = testing::BatchCase("fiber", 4, "arithmetic", 1000, 0);
  unsupported.set_status(fleetmark::v1::CASE_STATUS_UNSUPPORTED);
  unsupported.set_threads_used(0);  // nothing ran
  *report.add_results() = unsupported;
  auto direct = testing::BatchCase("direct", 0, "arithmetic", 900);
  *report.add_results() = direct;
  const std::string text = FormatTable(report);
  EXPECT_NE(text.find("10 of 64"), std::string::npos) << text;
  EXPECT_NE(text.find("4 req."), std::string::npos) << text;
  EXPECT_NE(text.find("counted over the timed repetitions only"), std::string::npos) << text;
}

// More threads than requested (issue 32, item 12: fan-out and load showed "5 of 2" and
// "7 of 5", which the legend reads as fewer) is shown as such, in every table and its
// legend.
TEST(TableTest, MoreThreadsThanRequestedAreNotShownAsFewer) {
  EXPECT_EQ(ThreadsCell(5, 2), "5 (2 req.)");
  EXPECT_EQ(ThreadsCell(4, 100), "4 of 100");
  EXPECT_EQ(ThreadsCell(3, 3), "3");
  EXPECT_EQ(ThreadsCell(3, 0), "3");
  fleetmark::v1::RunReport report = testing::SampleReport();
  for (fleetmark::v1::CaseResult& r : *report.mutable_results()) {
    if (r.has_fanout() || r.has_load()) {
      r.mutable_spec()->mutable_strategy()->set_threads(2);
      r.set_threads_used(5);
      if (r.has_load()) r.mutable_load()->set_server_threads(7);
    }
  }
  const std::string text = FormatTable(report);
  EXPECT_EQ(text.find("5 of 2"), std::string::npos) << text;
  EXPECT_EQ(text.find("7 of 2"), std::string::npos) << text;
  EXPECT_NE(text.find("5 (2 req.)"), std::string::npos) << text;
  EXPECT_NE(text.find("7 (2 req.)"), std::string::npos) << text;
  EXPECT_NE(text.find("threads (fan-out, load): the threads that carried the requests"), std::string::npos) << text;
}

// Cases measured in several processes show the between-process share in one short
// column; a report without them has no such column.
TEST(TableTest, BetweenProcessShareColumnOnlyWithSeveralProcesses) {
  fleetmark::v1::RunReport report;
  auto pooled = testing::BatchCase("direct", 0, "arithmetic", 900);
  *report.add_results() = pooled;
  EXPECT_EQ(FormatTable(report).find("btw"), std::string::npos) << FormatTable(report);
  auto multi = testing::BatchCase("fixed_pool", 4, "arithmetic", 1000);
  for (double m : {990.0, 1000.0, 1030.0}) multi.add_process_medians_ns(m);
  multi.set_between_process_share(0.62);
  *report.add_results() = multi;
  const std::string text = FormatTable(report);
  EXPECT_NE(text.find("btw"), std::string::npos) << text;
  EXPECT_NE(text.find(" 62%"), std::string::npos) << text;
  EXPECT_NE(text.find("hierarchical bootstrap"), std::string::npos) << text;
}

TEST(TableTest, UnstableCasesAreMarked) {
  // Issue 13, item 6: a case still drifting when its budget ran out says so in the
  // status column, and the legend explains the mark; a settled case has no mark.
  fleetmark::v1::RunReport report;
  auto unstable = testing::BatchCase("fixed_pool", 2, "collections", 2'000'000);
  unstable.set_stop_reason(fleetmark::v1::STOP_REASON_MAX_TIME);
  unstable.set_unstable(true);
  *report.add_results() = unstable;
  *report.add_results() = testing::BatchCase("direct", 0, "collections", 330'000);
  const std::string text = FormatTable(report);
  EXPECT_NE(text.find("ok (time cap) [unstable]"), std::string::npos) << text;
  size_t marks = 0;
  for (size_t at = text.find("[unstable]"); at != std::string::npos; at = text.find("[unstable]", at + 1)) ++marks;
  EXPECT_EQ(marks, 2u) << text;  // the unstable row and the legend
  EXPECT_NE(text.find("[unstable]: the samples still drifted"), std::string::npos) << text;
}

TEST(TableTest, PartialResultsShowTheirNumbersMarked) {
  // Issue 34, item 3: a case interrupted after some rounds is kept as a partial result:
  // its median over those rounds is shown, and its status says partial; a cancelled
  // case without a finished round shows no numbers.
  fleetmark::v1::RunReport report;
  auto partial = testing::BatchCase("fixed_pool", 2, "collections", 2'000'000);
  partial.set_status(fleetmark::v1::CASE_STATUS_CANCELLED);
  partial.add_process_sample_counts(10);  // its one finished round
  partial.add_process_rounds(1);
  partial.set_message("partial: interrupted after 1 of at least 3 rounds; its numbers cover the finished round only");
  *report.add_results() = partial;
  auto none = testing::BatchCase("direct", 0, "collections", 330'000);
  none.set_status(fleetmark::v1::CASE_STATUS_CANCELLED);
  none.set_message("cancelled before the case finished a round");
  *report.add_results() = none;
  const std::string text = FormatTable(report);
  EXPECT_NE(text.find("2.00 ms"), std::string::npos) << text;
  EXPECT_EQ(text.find("330 µs"), std::string::npos) << text;  // no finished round: no numbers
  EXPECT_NE(text.find("cancelled: partial: interrupted after 1 of at least 3 rounds"), std::string::npos) << text;
  EXPECT_NE(text.find("[partial]: the run was interrupted"), std::string::npos) << text;
}

TEST(TableTest, ContendedCasesAreMarked) {
  // Issue 31, item 5: a case measured while other work used the machine says so, with the
  // share, in the status column (the map said contended; the tables said a plain "ok").
  fleetmark::v1::RunReport report;
  auto contended = testing::BatchCase("fixed_pool", 2, "collections", 2'000'000);
  contended.set_contended(true);
  contended.set_other_cpu_share(0.534);
  *report.add_results() = contended;
  *report.add_results() = testing::BatchCase("direct", 0, "collections", 330'000);
  const std::string text = FormatTable(report);
  EXPECT_NE(text.find("ok [contended 53%]"), std::string::npos) << text;
  size_t marks = 0;
  for (size_t at = text.find("[contended"); at != std::string::npos; at = text.find("[contended", at + 1)) ++marks;
  EXPECT_EQ(marks, 2u) << text;  // the contended row and the legend
  EXPECT_NE(text.find("[contended N%]: other work\ntook N% of the machine's CPU"), std::string::npos) << text;
}

TEST(TableTest, HarnessHeavyCasesAreMarked) {
  // Issue 13, item 5: a case whose empty-task calibration is > 5 % of its median says
  // how much in the status column, and the legend explains the mark; a case below has
  // none, however it was calibrated.
  fleetmark::v1::RunReport report;
  auto heavy = testing::BatchCase("single_thread", 0, "arithmetic", 20'000);
  heavy.set_harness_ns_per_task(120);
  heavy.set_harness_share(0.6);
  heavy.set_harness_heavy(true);
  *report.add_results() = heavy;
  auto light = testing::BatchCase("direct", 0, "arithmetic", 2'000);
  light.set_harness_ns_per_task(0.5);
  light.set_harness_share(0.025);
  *report.add_results() = light;
  const std::string text = FormatTable(report);
  EXPECT_NE(text.find("ok [harness 60%]"), std::string::npos) << text;
  size_t marks = 0;
  for (size_t at = text.find("[harness"); at != std::string::npos; at = text.find("[harness", at + 1)) ++marks;
  EXPECT_EQ(marks, 3u) << text;  // the heavy row and the legend's two marks (N% and >= median)
  EXPECT_NE(text.find("[harness N%]: a batch of"), std::string::npos) << text;
}

// Trial of 2026-12-02, finding 5: an empty-task batch costing more than the task read
// "[harness 261%]", a share above 100 %; it says the harness is at least the median.
TEST(TableTest, HarnessAboveTheMedianIsNotAPercentage) {
  EXPECT_EQ(HarnessNote(0.12), "[harness 12%]");
  EXPECT_EQ(HarnessNote(0.994), "[harness 99%]");
  EXPECT_EQ(HarnessNote(0.996), "[harness >= median]");  // would round to 100 %
  EXPECT_EQ(HarnessNote(2.61), "[harness >= median]");
  fleetmark::v1::RunReport report;
  auto over = testing::BatchCase("single_thread", 0, "arithmetic", 268);
  over.set_harness_ns_per_task(699);
  over.set_harness_share(2.61);
  over.set_harness_heavy(true);
  *report.add_results() = over;
  const std::string text = FormatTable(report);
  EXPECT_NE(text.find("ok [harness >= median]"), std::string::npos) << text;
  EXPECT_EQ(text.find("261%"), std::string::npos) << text;
  EXPECT_NE(text.find("[harness >=\nmedian]: the empty batch"), std::string::npos) << text;
}

// Finding 5 too: a case whose repetitions were mostly dropped as a transient phase says
// how many ran ("97 of 1000"), in the n column; one with none dropped shows its count.
TEST(TableTest, SamplesDroppedAsTransientAreCounted) {
  fleetmark::v1::RunReport report;
  auto dropped = testing::BatchCase("single_thread", 0, "arithmetic", 4'000);
  dropped.mutable_stats()->set_count(97);
  dropped.set_transient_samples(903);
  *report.add_results() = dropped;
  auto kept = testing::BatchCase("direct", 0, "arithmetic", 2'000);
  kept.mutable_stats()->set_count(120);
  *report.add_results() = kept;
  EXPECT_EQ(SampleCountText(dropped), "97 of 1000");
  EXPECT_EQ(SampleCountText(kept), "120");
  const std::string text = FormatTable(report);
  EXPECT_NE(text.find(" 97 of 1000 "), std::string::npos) << text;
  EXPECT_NE(text.find("\"97 of 1000\": the"), std::string::npos) << text;  // the legend
}

TEST(TableTest, ColumnsAreAligned) {
  const std::string text = FormatTable(testing::SampleReport());
  const std::vector<std::string> lines = absl::StrSplit(text, '\n');
  const int group = LineOf(lines, "== batch · arithmetic");
  ASSERT_NE(group, -1);
  // The "median" column is right-aligned: every row's median cell ends where the
  // header's "median" ends (widths in code points).
  const std::string& header = lines[group + 1];
  const size_t end = DisplayWidth(header.substr(0, header.find("median") + 6));
  for (int row = group + 3; row < group + 6; ++row) {
    const std::string& line = lines[row];
    const size_t unit = line.find(" µs");
    ASSERT_NE(unit, std::string::npos) << line;
    EXPECT_EQ(DisplayWidth(line.substr(0, unit + 4)), end) << line;
  }
}

// S2 at 100 000 threads: the largest point ran out of threads, so the case is
// resource_exhausted, but the slope fitted on the points that ran is the answer: shown
// with the points left out (it was "-" before), in the ratio column too.
TEST(TableTest, MemorySlopeOverThePointsThatRanNamesThoseLeftOut) {
  fleetmark::v1::RunReport report;
  fleetmark::v1::CaseResult r;
  r.mutable_spec()->set_scenario("memory");
  r.mutable_spec()->set_workload("network");
  r.mutable_spec()->mutable_strategy()->set_name("thread_per_task");
  r.set_status(fleetmark::v1::CASE_STATUS_RESOURCE_EXHAUSTED);
  r.set_message("N=100000: skipped: needs 100000 more threads");
  auto* m = r.mutable_memory();
  for (uint32_t n : {10u, 100u, 100000u}) {
    auto* p = m->add_points();
    p->set_tasks(n);
    p->set_status(n == 100000 ? fleetmark::v1::CASE_STATUS_RESOURCE_EXHAUSTED : fleetmark::v1::CASE_STATUS_OK);
    p->set_rss_bytes(n == 100000 ? 0 : n * 10 * 1024);
  }
  m->set_slope_kib_per_task(10);
  m->set_r_squared(1);
  m->set_points_fitted(2);
  m->add_left_out_tasks(100000);
  *report.add_results() = r;
  fleetmark::v1::CaseResult fiber = r;
  fiber.mutable_spec()->mutable_strategy()->set_name("fiber");
  fiber.set_status(fleetmark::v1::CASE_STATUS_OK);
  fiber.mutable_memory()->set_slope_kib_per_task(2);
  fiber.mutable_memory()->clear_left_out_tasks();
  *report.add_results() = fiber;
  const std::string text = FormatTable(report);
  const std::vector<std::string> lines = absl::StrSplit(text, '\n');
  const int threads = LineOf(lines, "thread_per_task");
  ASSERT_NE(threads, -1) << text;
  EXPECT_NE(lines[threads].find("10.00 (without 100000)"), std::string::npos) << lines[threads];
  EXPECT_NE(lines[threads].find("5.00×"), std::string::npos) << lines[threads];
  EXPECT_NE(lines[threads].find("100000:resource_exhausted"), std::string::npos) << lines[threads];
  const int fiber_row = LineOf(lines, "fiber");
  ASSERT_NE(fiber_row, -1) << text;
  EXPECT_EQ(lines[fiber_row].find("without"), std::string::npos) << lines[fiber_row];
}

TEST(TableTest, MemoryFanoutAndLoadTables) {
  const std::string text = FormatTable(testing::SampleReport());
  const std::vector<std::string> lines = absl::StrSplit(text, '\n');
  const int mem = LineOf(lines, "== memory · network · blocking ==");
  ASSERT_NE(mem, -1) << text;
  EXPECT_NE(lines[mem + 1].find("KiB/task"), std::string::npos);
  const int fiber = LineOf(lines, "fiber", mem);
  const int threads = LineOf(lines, "thread_per_task", mem);
  ASSERT_NE(fiber, -1);
  EXPECT_LT(fiber, threads);  // smaller slope first
  EXPECT_NE(lines[threads].find("10:640 100:6400 1000:64000"), std::string::npos) << lines[threads];
  EXPECT_NE(lines[threads].find("64.00    80.00  0.999"), std::string::npos) << lines[threads];
  EXPECT_NE(lines[threads].find("pthread_attr_setstacksize 64 KiB"), std::string::npos);
  EXPECT_NE(lines[threads].find("8.00×"), std::string::npos) << lines[threads];
  EXPECT_NE(lines[fiber].find("1000:resource_exhausted"), std::string::npos) << lines[fiber];

  const int fan = LineOf(lines, "== fanout · blocking · R=100 D=5");
  ASSERT_NE(fan, -1) << text;
  const int co = LineOf(lines, "coroutine", fan);
  EXPECT_NE(lines[co].find("2.51 s"), std::string::npos) << lines[co];
  EXPECT_NE(lines[co].find("495"), std::string::npos) << lines[co];
  EXPECT_NE(lines[co].find("3.00 s"), std::string::npos) << lines[co];
  EXPECT_NE(lines[co].find("coroutines on 2 threads  ok"), std::string::npos) << lines[co];

  const int load = LineOf(lines, "== load · users=1000 ==");
  ASSERT_NE(load, -1) << text;
  const int ev = LineOf(lines, "event_loop", load);
  EXPECT_NE(lines[ev].find("1834.2"), std::string::npos) << lines[ev];
  EXPECT_NE(lines[ev].find("80.0 ms"), std::string::npos) << lines[ev];
  EXPECT_NE(lines[ev].find("300 MiB"), std::string::npos) << lines[ev];
  EXPECT_NE(lines[ev].find(" 4 "), std::string::npos) << lines[ev];  // errors
  EXPECT_EQ(lines[ev].rfind("event_loop        4  1834.2", 0), 0u) << lines[ev];
  EXPECT_NE(lines[ev].find("12%"), std::string::npos) << lines[ev];
}

TEST(TableTest, EmptyAndDegenerateReports) {
  EXPECT_NE(FormatTable({}).find("(no results)"), std::string::npos);
  fleetmark::v1::RunReport report;
  auto* r = report.add_results();  // nothing set at all
  r->set_status(static_cast<fleetmark::v1::CaseStatus>(99));
  auto* ok_without_stats = report.add_results();
  ok_without_stats->set_status(fleetmark::v1::CASE_STATUS_OK);
  const std::string text = FormatTable(report);
  EXPECT_NE(text.find("status 99"), std::string::npos) << text;
  EXPECT_NE(text.find("== batch · blocking · n=100 =="), std::string::npos) << text;
}

// Issue 16, item 4: a suspending batch where most strategies have no suspending wait.
fleetmark::v1::RunReport SuspendingReport() {
  fleetmark::v1::RunReport report;
  report.set_plan_name("s1");
  report.mutable_host()->set_hostname("vm");
  for (const char* name : {"coroutine", "fiber"}) {
    auto r = testing::BatchCase(name, 2, "network", 5'000'000);
    r.mutable_spec()->set_io_mode("suspending");
    *report.add_results() = r;
  }
  const std::vector<std::pair<std::string, std::string>> unsupported = {
      {"single_thread", "its tasks run on its one worker OS thread, which can only block"},
      {"fixed_pool", "its tasks run on pool OS threads, which can only block"},
      {"thread_per_task", "each task owns an OS thread, which can only block"}};
  for (const auto& [name, why] : unsupported) {
    auto r = testing::BatchCase(name, 4, "network", 0, 0);
    r.mutable_spec()->set_io_mode("suspending");
    r.set_status(fleetmark::v1::CASE_STATUS_UNSUPPORTED);
    r.set_threads_used(0);
    r.clear_stats();
    r.set_message(name + " has no suspending wait (io_mode suspending): " + why);
    *report.add_results() = r;
  }
  return report;
}

TEST(TableTest, UnsupportedCasesCollapseIntoOneLineNamingTheStrategies) {
  const std::string text = FormatTable(SuspendingReport(), {.collapse_unsupported = true});
  const std::vector<std::string> lines = absl::StrSplit(text, '\n');
  const int group = LineOf(lines, "== batch · network · suspending · n=100 ==");
  ASSERT_NE(group, -1) << text;
  // Header, rule, the two measured rows, then the one collapsed line.
  EXPECT_NE(lines[group + 3].find("coroutine"), std::string::npos) << text;
  EXPECT_NE(lines[group + 4].find("fiber"), std::string::npos) << text;
  EXPECT_EQ(lines[group + 5],
            "unsupported (3): single_thread_4, fixed_pool_4, thread_per_task_4 — has no suspending wait "
            "(io_mode suspending) (--wide shows each strategy's reason)")
      << text;
  size_t mentions = 0;
  for (size_t at = text.find("no suspending wait"); at != std::string::npos;
       at = text.find("no suspending wait", at + 1)) {
    ++mentions;
  }
  EXPECT_EQ(mentions, 1u) << "the reason once: " << text;

  // The full table: one row each, every reason.
  const std::string wide = FormatTable(SuspendingReport());
  EXPECT_EQ(wide.find("unsupported (3)"), std::string::npos) << wide;
  EXPECT_NE(wide.find("its one worker OS thread"), std::string::npos) << wide;
  EXPECT_NE(wide.find("each task owns an OS thread"), std::string::npos) << wide;
}

// An unsupported storage batch case of `name` whose message is `message`.
fleetmark::v1::CaseResult UnsupportedCase(const std::string& name, const std::string& message) {
  auto r = testing::BatchCase(name, 0, "storage", 0, 0);
  r.set_status(fleetmark::v1::CASE_STATUS_UNSUPPORTED);
  r.clear_stats();
  r.set_message(message);
  return r;
}

TEST(TableTest, IdenticalReasonsAreGivenWhole) {
  fleetmark::v1::RunReport report;
  for (const std::string name : {"direct", "async"}) {
    *report.add_results() =
        UnsupportedCase(name, name + " has no suspending wait: its tasks can only block their OS thread");
  }
  const std::string text = FormatTable(report, {.collapse_unsupported = true});
  EXPECT_NE(text.find("unsupported (2): direct, async — has no suspending wait: its tasks can only block their OS "
                      "thread\n"),
            std::string::npos)
      << text;
  // A table of unsupported cases only: no empty header, just the line.
  EXPECT_EQ(text.find("strategy"), std::string::npos) << text;
}

// Reasons that name their own strategy after "; " (the fan-out and memory scenarios'
// "fanout supports ...; got X") collapse to the part they share.
TEST(TableTest, ReasonsDifferingOnlyAfterASemicolonCollapseToTheirCommonHead) {
  fleetmark::v1::RunReport report;
  for (const std::string name : {"openmp_for", "std_par"}) {
    *report.add_results() = UnsupportedCase(name, "fanout supports direct and fixed_pool; got " + name);
  }
  const std::string text = FormatTable(report, {.collapse_unsupported = true});
  EXPECT_NE(text.find("unsupported (2): openmp_for, std_par — fanout supports direct and fixed_pool (--wide shows "
                      "each strategy's reason)"),
            std::string::npos)
      << text;
}

// Fitting a terminal: every line within the width, the status wrapped under its column,
// the counters left out (and said so) where they would not fit.
TEST(TableTest, FitsTheGivenWidth) {
  fleetmark::v1::RunReport report = SuspendingReport();
  auto slow = testing::BatchCase("event_loop", 2, "network", 9'000'000);
  slow.mutable_spec()->set_io_mode("suspending");
  slow.set_stop_reason(fleetmark::v1::STOP_REASON_MAX_TIME);
  slow.set_throttled(true);
  slow.set_unstable(true);
  slow.set_harness_heavy(true);
  slow.set_harness_share(0.12);
  *report.add_results() = slow;
  const std::string full = FormatTable(report);
  size_t widest = 0;
  for (absl::string_view line : absl::StrSplit(full, '\n')) widest = std::max(widest, DisplayWidth(std::string(line)));
  ASSERT_GT(widest, 80u) << full;

  const std::string fitted = FormatTable(report, {.max_width = 80, .collapse_unsupported = true});
  for (absl::string_view line : absl::StrSplit(fitted, '\n')) {
    EXPECT_LE(DisplayWidth(std::string(line)), 80u) << "'" << line << "' in\n" << fitted;
  }
  EXPECT_NE(fitted.find("CPU/rep and allocs/rep left out to fit 80 columns; --wide shows them"), std::string::npos)
      << fitted;
  EXPECT_EQ(fitted.find("allocs/rep  status"), std::string::npos) << fitted;
  // The flags still all there, wrapped onto continuation lines under the status column.
  const std::string words = absl::StrJoin(absl::StrSplit(fitted, absl::ByAnyChar(" \n"), absl::SkipEmpty()), " ");
  EXPECT_NE(words.find("ok (time cap) [throttled] [unstable] [harness 12%]"), std::string::npos) << fitted;
  const std::vector<std::string> lines = absl::StrSplit(fitted, '\n');
  const int row = LineOf(lines, "event_loop_2");
  ASSERT_NE(row, -1) << fitted;
  const size_t status_column = DisplayWidth(lines[row].substr(0, lines[row].find("ok (time")));
  EXPECT_EQ(lines[row + 1].find_first_not_of(' '), status_column) << fitted;
  // A width that fits everything changes nothing.
  EXPECT_EQ(FormatTable(report, {.max_width = 1000}), full);
}

// A gate the device had no reading for passed unchecked (issue 32, item 11): the table
// says which, in how many cases, and says nothing when every gate was checked.
TEST(TableTest, GatesNotCheckedAreListedWithTheirCount) {
  fleetmark::v1::RunReport report;
  for (const char* strategy : {"direct", "fixed_pool"}) {
    auto r = testing::BatchCase(strategy, 0, "arithmetic", 900);
    r.mutable_env_before()->set_load_average_1m(0.5);
    *report.add_results() = r;
  }
  EXPECT_EQ(FormatTable(report).find("not checked"), std::string::npos) << FormatTable(report);
  for (auto& r : *report.mutable_results()) {
    r.mutable_env_before()->add_gates_not_checked(
        "temperature: no thermal zone or battery gave a plausible "
        "reading, max 45 °C not checked");
  }
  report.mutable_results(1)->mutable_env_before()->add_gates_not_checked(
      "other CPU: not measured, max 10 % not "
      "checked");
  const std::string text = FormatTable(report);
  EXPECT_NE(text.find("gates not checked (no reading on this device, so they passed unchecked; in N of M cases):\n"
                      "  temperature: no thermal zone or battery gave a plausible reading, max 45 °C not checked "
                      "(2 of 2)\n"
                      "  other CPU: not measured, max 10 % not checked (1 of 2)\n"),
            std::string::npos)
      << text;
}

TEST(TableTest, HeadingNamesTheAgentAndLabelsTheHostName) {
  const std::string text = FormatTable(SuspendingReport(), {.agent_name = "big-x86"});
  EXPECT_EQ(text.substr(0, text.find('\n')), "plan s1 · agent big-x86 · host name vm") << text;
  const std::string without = FormatTable(SuspendingReport());
  EXPECT_EQ(without.substr(0, without.find('\n')), "plan s1 · host name vm") << without;
}

TEST(TableTest, TextTableWrapsItsLastColumn) {
  TextTable table({{"strategy"}, {"status"}});
  table.AddRow({"fixed_pool", "ok (rep cap) [throttled] [unstable] [harness 12%]"});
  const std::string text = table.Render(40);
  EXPECT_EQ(text,
            "strategy    status\n"
            "------------------\n"
            "fixed_pool  ok (rep cap) [throttled]\n"
            "            [unstable] [harness 12%]\n")
      << text;
  EXPECT_EQ(WrapText("测试机 测试机", 7), (std::vector<std::string>{"测试机", "测试机"}));
  EXPECT_EQ(WrapText("abcdefghij", 4), (std::vector<std::string>{"abcd", "efgh", "ij"}));
  EXPECT_TRUE(WrapText("", 4).empty());
}

}  // namespace
}  // namespace fleetmark::report
