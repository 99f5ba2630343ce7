// GET /metrics' fleet counts (RenderCoordinatorMetrics over the in-memory store): a
// device record of `fleetmark results import` is counted as imported, never as an
// offline agent, and the family's HELP says so (issue 34).
#include "coordinator/service/coordinator_metrics.h"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "coordinator/store/memory_store.h"
#include "tests/coordinator/import_fixtures.h"

namespace fleetmark::service {
namespace {

using ::testing::HasSubstr;

TEST(CoordinatorMetricsTextTest, AnImportedDeviceRecordIsCountedApartFromOfflineAgents) {
  store::MemoryStore store;
  CoordinatorMetrics metrics;
  const MetricsSources sources{.store = &store, .metrics = &metrics};
  std::string text = RenderCoordinatorMetrics(sources);
  EXPECT_THAT(text, HasSubstr("fleetmark_agents{state=\"imported\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("imported: device records of `fleetmark results import`, never online"));

  ASSERT_TRUE(store.ImportResults(store::LocalFile({store::Id(1)}), "import:alice").ok());
  text = RenderCoordinatorMetrics(sources);
  EXPECT_THAT(text, HasSubstr("fleetmark_agents{state=\"imported\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("fleetmark_agents{state=\"offline\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("fleetmark_agents{state=\"online\"} 0\n"));
}

}  // namespace
}  // namespace fleetmark::service
