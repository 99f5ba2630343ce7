// `fleetmark runs show` of a 3-agent S1-like run through the real binary, a real
// coordinator on the in-memory store (issue 16, item 4): unsupported cases collapse into one
// line per table naming their strategies, the tables fit $COLUMNS, --wide gives the full
// table, wide characters in agent names keep the columns aligned, and each agent's
// subheader names the agent and labels the OS host name.
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "engine/common/text.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cli/cli_store_fixture.h"

namespace {

using namespace fleetmark_cli_test;  // NOLINT: the fixture of this test folder
using ::testing::HasSubstr;
namespace store = fleetmark::store;
namespace v1 = fleetmark::v1;

// What an S1 suspending block reports for strategies without a suspending wait.
constexpr const char* kUnsupported[] = {"direct",  "single_thread", "fixed_pool",     "work_stealing",
                                        "limited", "elastic_pool",  "thread_per_task"};
// A phone whose CPU model has wide characters (CJK: two columns each).
constexpr char kCjkAgent[] = "mate-60";
constexpr char kCjkCpu[] = "麒麟 9000S";

// Occurrences of `needle` in `text`.
size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// The part of runs show's output holding the result tables (from the first "== agent").
std::string TablesPart(const std::string& out) {
  const size_t begin = out.find("== agent ");
  const size_t end = out.find("== conditions of agent ");
  return begin == std::string::npos ? "" : out.substr(begin, end == std::string::npos ? end : end - begin);
}

class CliShowTest : public CliStoreTest {
 protected:
  void SetUp() override {
    CliStoreTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    unsetenv("COLUMNS");  // output to a file, not a terminal: the stable layout unless a test sets it
    std::vector<std::string> ids;
    for (const char* name : {"big-x86", "pixel-8", kCjkAgent}) {
      v1::HostInfo host;
      host.set_arch("x86_64");
      host.set_cpu_model(std::string(name) == kCjkAgent ? kCjkCpu : "Test CPU");
      host.set_physical_cores(4);
      host.set_logical_cpus(8);
      host.set_hostname("vm");  // the OS host name, the same on all three
      ids.push_back(Register(name, host));
    }
    std::vector<store::ClaimedJob> claimed;
    run_id_ = CreateClaimedRun("s1", ids, 9, &claimed);
    ASSERT_EQ(claimed.size(), 3u);
    std::vector<v1::CaseResult> results;
    std::vector<std::string> agents;
    int n = 0;
    for (const store::ClaimedJob& job : claimed) {
      for (const char* ok : {"coroutine", "fiber"}) {
        v1::CaseResult r = BatchResult(++n, job, ok, 2e6);
        r.mutable_spec()->set_io_mode("suspending");
        r.mutable_spec()->set_case_id(absl::StrCat("batch/arithmetic/suspending/", ok, "/any"));
        results.push_back(r);
        agents.push_back(job.agent_id);
      }
      for (const char* name : kUnsupported) {
        v1::CaseResult r = BatchResult(++n, job, name, 0);
        r.mutable_spec()->set_io_mode("suspending");
        r.mutable_spec()->set_case_id(absl::StrCat("batch/arithmetic/suspending/", name, "/any"));
        r.set_status(v1::CASE_STATUS_UNSUPPORTED);
        r.clear_stats();
        r.set_message(absl::StrCat(name,
                                   " has no suspending wait (io_mode suspending): its tasks run on OS threads "
                                   "of its own, which can only block"));
        results.push_back(r);
        agents.push_back(job.agent_id);
      }
    }
    ASSERT_NO_FATAL_FAILURE(Insert(results, agents));
  }

  void TearDown() override {
    unsetenv("COLUMNS");
    CliStoreTest::TearDown();
  }

  std::string run_id_;
};

TEST_F(CliShowTest, UnsupportedCasesCollapseIntoOneLinePerTable) {
  CliResult r = Fleet("runs show " + run_id_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string tables = TablesPart(r.out);
  ASSERT_FALSE(tables.empty()) << r.out;
  const std::vector<std::string> lines = absl::StrSplit(tables, '\n');
  // Three agents' tables of 2 measured rows and one collapsed line, with the legend
  // (about 16 lines): under 90 lines, where the uncollapsed tables took 494.
  EXPECT_LE(lines.size(), 90u) << tables;
  // One collapsed line per agent's table, naming all seven strategies and the reason.
  int collapsed = 0;
  for (const std::string& line : lines) {
    if (line.rfind("unsupported (7): ", 0) != 0) continue;
    ++collapsed;
    for (const char* name : kUnsupported) EXPECT_THAT(line, HasSubstr(name)) << line;
    EXPECT_THAT(line, HasSubstr(" — has no suspending wait (io_mode suspending)")) << line;
  }
  EXPECT_EQ(collapsed, 3) << tables;
  EXPECT_EQ(Count(tables, "no suspending wait"), 3u) << "the reason once per table:\n" << tables;
  // Each subheader names its agent and labels the OS host name as such.
  for (const char* agent : {"big-x86", "pixel-8", kCjkAgent}) {
    EXPECT_THAT(tables, HasSubstr(absl::StrCat("plan s1 · agent ", agent, " · ",
                                               std::string(agent) == kCjkAgent ? kCjkCpu : "Test CPU",
                                               " · 8 CPUs · host name vm\n")))
        << tables;
  }
}

TEST_F(CliShowTest, WideShowsEveryCaseWithItsReason) {
  CliResult collapsed = Fleet("runs show " + run_id_);
  CliResult r = Fleet("runs show --wide " + run_id_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string tables = TablesPart(r.out);
  EXPECT_EQ(Count(tables, "unsupported ("), 0u) << tables;
  EXPECT_EQ(Count(tables, "no suspending wait"), 3u * 7) << tables;
  const size_t wide_lines = std::vector<std::string>(absl::StrSplit(tables, '\n')).size();
  const size_t short_lines = std::vector<std::string>(absl::StrSplit(TablesPart(collapsed.out), '\n')).size();
  EXPECT_EQ(wide_lines, short_lines + 3 * (7 - 1)) << tables;
}

TEST_F(CliShowTest, FitsColumnsAndAlignsWideCharacters) {
  setenv("COLUMNS", "80", 1);
  CliResult r = Fleet("runs show " + run_id_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string tables = TablesPart(r.out);
  for (absl::string_view line : absl::StrSplit(tables, '\n')) {
    EXPECT_LE(fleetmark::DisplayWidth(std::string_view(line.data(), line.size())), 80u) << line << "\n" << tables;
  }
  // --wide ignores $COLUMNS: the message of a row is never wrapped.
  CliResult wide = Fleet("runs show --wide " + run_id_);
  EXPECT_THAT(wide.out, HasSubstr("its tasks run on OS threads of its own, which can only block\n")) << wide.out;

  // agents list: the CPU model column holds 10 display columns of 8 characters for the
  // phone, so the right-aligned cores/threads column still ends where its header ends.
  CliResult agents = Fleet("agents list");
  ASSERT_EQ(agents.exit_code, 0) << agents.err;
  const std::vector<std::string> lines = absl::StrSplit(agents.out, '\n');
  ASSERT_GE(lines.size(), 5u) << agents.out;
  const std::string& header = lines[0];
  const size_t end = fleetmark::DisplayWidth(header.substr(0, header.find("cores/threads") + 13));
  int rows = 0;
  for (size_t i = 2; i < lines.size(); ++i) {
    const size_t at = lines[i].find(" 4/8");
    if (at == std::string::npos) continue;
    ++rows;
    EXPECT_EQ(fleetmark::DisplayWidth(lines[i].substr(0, at + 4)), end) << agents.out;
  }
  EXPECT_EQ(rows, 3) << agents.out;
}

}  // namespace
