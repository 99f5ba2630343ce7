// The registry's traits against what the factories build, for every entry: a new
// strategy whose traits lie fails here (engine/strategies/README.md, "Adding a strategy").
#include "engine/strategies/registry.h"

#include <cstdlib>
#include <fstream>
#include <latch>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "engine/strategies/carrier.h"
#include "engine/strategies/executors/asio_runner.h"
#include "engine/strategies/executors/fiber_runner.h"
#include "engine/strategies/executors/os_thread.h"
#include "engine/strategies/strategy.h"
#include "gtest/gtest.h"
#include "tests/engine/strategies/test_support.h"

namespace fleetmark::engine {
namespace {

using ::fleetmark::engine::testing::FixedWaitWorkload;
using ::fleetmark::engine::testing::TsanSkipReason;

// Threads used and peak tasks in flight after one blocking batch of 8 tasks.
struct BatchFacts {
  int threads_used = -1;
  int peak_in_flight = -1;
};

BatchFacts RunBatchWith(const StrategyTraits& traits, int threads) {
  BatchFacts facts;
  std::unique_ptr<Strategy> strategy = MakeStrategy(traits);
  EXPECT_TRUE(strategy->Start({.threads = threads}).ok());
  FixedWaitWorkload wait(absl::Milliseconds(2));
  EXPECT_TRUE(strategy->RunBatch(wait, 8, IoMode::kBlocking).ok());
  facts.threads_used = strategy->threads_used();
  facts.peak_in_flight = strategy->peak_in_flight();
  strategy->Stop();
  return facts;
}

class RegistryTraitsTest : public ::testing::TestWithParam<const StrategyTraits*> {
 protected:
  static void SetUpTestSuite() { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
  void SetUp() override {
    if (const auto reason = TsanSkipReason(GetParam()->name); !reason.empty()) {
      GTEST_SKIP() << reason;
    }
  }
  // A fibre work-stealing group can be built once per process: fibre bodies run in a
  // child process (exit code 0 = no failure).
  template <typename Body>
  void Isolated(Body body) {
    ::fleetmark::engine::testing::RunIsolatedIf(GetParam()->carrier == Carrier::kFiber, body);
  }
};

TEST_P(RegistryTraitsTest, FactoryBuildsTheNamedStrategyWithItsSuspendingTrait) {
  const StrategyTraits& traits = *GetParam();
  EXPECT_EQ(FindStrategy(traits.name), &traits);
  std::unique_ptr<Strategy> strategy = MakeStrategy(traits);
  ASSERT_NE(strategy, nullptr);
  EXPECT_EQ(strategy->name(), traits.name);
  EXPECT_EQ(strategy->SupportsSuspending(), traits.suspending);
  auto by_name = MakeStrategy(traits.name);
  ASSERT_TRUE(by_name.ok()) << by_name.status();
  EXPECT_EQ((*by_name)->name(), traits.name);
  // The declared needs match the carrier.
  EXPECT_EQ((traits.needs & kNeedsTbb) != 0,
            traits.carrier == Carrier::kWorkStealing || traits.carrier == Carrier::kStdPar);
  EXPECT_EQ((traits.needs & kNeedsOpenMp) != 0, traits.carrier == Carrier::kOpenMp);
  EXPECT_EQ((traits.needs & kNeedsIoContext) != 0, IsAsio(traits.carrier));
  EXPECT_EQ((traits.needs & kNeedsFiberScheduler) != 0, traits.carrier == Carrier::kFiber);
  // Only strategies that ignore threads may pin a fixed number of them.
  if (!traits.ignores_threads) {
    EXPECT_EQ(traits.fixed_threads, 0);
  }
}

TEST_P(RegistryTraitsTest, ThreadsTraitMatchesWhatTheStrategyDoes) {
  Isolated([&] {
    const StrategyTraits& traits = *GetParam();
    // One Start per process for fibres (one work-stealing group): the default-threads
    // batch only where threads are ignored.
    const BatchFacts with_three = RunBatchWith(traits, 3);
    if (traits.ignores_threads) {
      // Really ignored: the same threads either way, and the fixed count if it has one.
      EXPECT_EQ(with_three.threads_used, RunBatchWith(traits, 0).threads_used) << traits.name;
      if (traits.fixed_threads > 0) {
        EXPECT_EQ(with_three.threads_used, traits.fixed_threads);
      }
    } else {
      // Used: never more than 3 tasks at once with blocking waits (3 carriers, 3
      // workers, a cap of 3 in flight or 3 threads at most).
      EXPECT_LE(with_three.peak_in_flight, 3) << traits.name;
    }
    switch (traits.concurrency) {
      case Concurrency::kOne:
        EXPECT_EQ(with_three.peak_in_flight, 1) << traits.name;
        break;
      case Concurrency::kPerTask:
        EXPECT_EQ(with_three.threads_used, 8) << traits.name << ": a thread per task";
        break;
      case Concurrency::kThreads:
        EXPECT_FALSE(traits.ignores_threads) << traits.name;
        break;
    }
  });
}

TEST_P(RegistryTraitsTest, CarrierFactoryBuildsTheDeclaredExecutor) {
  const StrategyTraits& traits = *GetParam();
  if (!HasExecutor(traits.carrier)) {
    auto carrier = StartCarrier(traits, 2);
    EXPECT_EQ(carrier.status().code(), absl::StatusCode::kUnimplemented) << traits.name;
    EXPECT_NE(std::string(carrier.status().message()).find(traits.name), std::string::npos);
    return;
  }
  // One fibre carrier: round-robin, no work-stealing group, so no child process needed.
  const int threads = traits.carrier == Carrier::kFiber ? 1 : 2;
  auto carrier = StartCarrier(traits, threads);
  ASSERT_TRUE(carrier.ok()) << traits.name << ": " << carrier.status();
  StrategyCarrier& c = **carrier;
  EXPECT_EQ(&c.traits(), &traits);
  EXPECT_EQ(c.asio() != nullptr, IsAsio(traits.carrier)) << traits.name;
  EXPECT_EQ(c.fibres() != nullptr, traits.carrier == Carrier::kFiber) << traits.name;
  const int expected = traits.fixed_threads > 0              ? traits.fixed_threads
                       : traits.carrier == Carrier::kLimited ? std::max(LogicalCpuCount(), threads)
                                                             : threads;
  EXPECT_EQ(c.threads(), expected) << traits.name;
  std::latch ran(4);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(c.executor().Submit([&ran] { ran.count_down(); }).ok());
  ran.wait();
  c.Stop();
}

std::vector<const StrategyTraits*> AllEntries() {
  std::vector<const StrategyTraits*> entries;
  for (const StrategyTraits& s : kStrategies) entries.push_back(&s);
  return entries;
}

INSTANTIATE_TEST_SUITE_P(AllStrategies, RegistryTraitsTest, ::testing::ValuesIn(AllEntries()),
                         [](const auto& info) { return std::string(info.param->name); });

TEST(RegistryTest, NamesAreUniqueAndListedInOrder) {
  std::set<std::string_view> names;
  for (const StrategyTraits& s : kStrategies) EXPECT_TRUE(names.insert(s.name).second) << s.name;
  EXPECT_EQ(FindStrategy("green_threads"), nullptr);
  EXPECT_EQ(StrategyNames([](const StrategyTraits& s) { return s.suspending; }), "coroutine, fiber and event_loop");
  EXPECT_EQ(StrategyNames([](const StrategyTraits& s) { return s.name == "direct"; }), "direct");
}

// The strategy table of docs/architecture.md ("Strategies") is the registry: one row per
// entry, `| \`name\` | description |`, the description as `fleetmark list` prints it.
TEST(RegistryTest, ArchitectureDocumentHasARowPerStrategy) {
  std::ifstream file(std::string(FLEETMARK_SOURCE_DIR) + "/docs/architecture.md");
  ASSERT_TRUE(file.good()) << "docs/architecture.md not readable";
  std::map<std::string, std::string> rows;  // name -> description
  bool in_table = false;
  for (std::string line; std::getline(file, line);) {
    if (line.rfind("#", 0) == 0) in_table = line == "#### Strategies";
    if (!in_table || line.rfind("| `", 0) != 0) continue;
    const size_t name_end = line.find("` | ", 3);
    ASSERT_NE(name_end, std::string::npos) << line;
    const std::string name = line.substr(3, name_end - 3);
    std::string description = line.substr(name_end + 4);
    if (description.size() >= 2 && description.compare(description.size() - 2, 2, " |") == 0) {
      description.resize(description.size() - 2);
    }
    EXPECT_TRUE(rows.emplace(name, description).second) << "two rows for " << name;
  }
  std::set<std::string> registry;
  for (const StrategyTraits& s : kStrategies) {
    registry.insert(std::string(s.name));
    auto row = rows.find(std::string(s.name));
    if (row == rows.end()) {
      ADD_FAILURE() << "docs/architecture.md, \"Strategies\": no row for " << s.name;
      continue;
    }
    EXPECT_EQ(row->second, s.description) << s.name;
  }
  for (const auto& [name, description] : rows) {
    EXPECT_EQ(registry.count(name), 1u) << "docs/architecture.md lists " << name << ", which the registry has not";
  }
}

}  // namespace
}  // namespace fleetmark::engine
