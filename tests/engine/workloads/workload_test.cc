#include "engine/workloads/workload.h"

#include <cmath>
#include <limits>

#include "engine/common/registry.h"
#include "engine/workloads/task_values.h"
#include "gtest/gtest.h"

namespace fleetmark::engine {
namespace {

constexpr int32_t kIntMax = std::numeric_limits<int32_t>::max();
constexpr int32_t kIntMin = std::numeric_limits<int32_t>::min();

TEST(SaturatingFloatToIntTest, TruncatesAndSaturatesLikeKotlin) {
  EXPECT_EQ(SaturatingFloatToInt(0.0f), 0);
  EXPECT_EQ(SaturatingFloatToInt(2.9f), 2);
  EXPECT_EQ(SaturatingFloatToInt(-2.9f), -2);
  EXPECT_EQ(SaturatingFloatToInt(std::numeric_limits<float>::infinity()), kIntMax);
  EXPECT_EQ(SaturatingFloatToInt(-std::numeric_limits<float>::infinity()), kIntMin);
  EXPECT_EQ(SaturatingFloatToInt(std::numeric_limits<float>::quiet_NaN()), 0);
  EXPECT_EQ(SaturatingFloatToInt(2147483648.0f), kIntMax);  // 2^31
  EXPECT_EQ(SaturatingFloatToInt(-2147483648.0f), kIntMin);
  EXPECT_EQ(SaturatingFloatToInt(2147483520.0f), 2147483520);  // largest float < 2^31
  EXPECT_EQ(SaturatingFloatToInt(1e30f), kIntMax);
}

TEST(ArithmeticValueTest, HandComputedPowers) {
  EXPECT_EQ(ArithmeticValue(0), 1);  // 0^0 = 1 (powf convention)
  EXPECT_EQ(ArithmeticValue(1), 1);
  EXPECT_EQ(ArithmeticValue(2), 4);
  EXPECT_EQ(ArithmeticValue(3), 27);
  EXPECT_EQ(ArithmeticValue(4), 256);
  EXPECT_EQ(ArithmeticValue(5), 3125);
  // 8^8 = 16777216 = 2^24 is exact in float.
  EXPECT_EQ(ArithmeticValue(8), 16777216);
  // 9^9 = 387420489 needs 29 bits; float keeps 24, so within 2^5 of the true value.
  EXPECT_NEAR(ArithmeticValue(9), 387420489, 32);
  // 10^10 > 2^31 - 1 saturates; so does everything up to float overflow (inf) and beyond.
  EXPECT_EQ(ArithmeticValue(10), kIntMax);
  EXPECT_EQ(ArithmeticValue(40), kIntMax);
  EXPECT_EQ(ArithmeticValue(99), kIntMax);
  EXPECT_EQ(ArithmeticValue(1000), kIntMax);
}

TEST(CollectionsValueTest, KeepsSquaresAboveFive) {
  EXPECT_EQ(CollectionsValue(0).kept, 0u);
  EXPECT_EQ(CollectionsValue(1).kept, 0u);  // 0.3^2
  EXPECT_EQ(CollectionsValue(2).kept, 0u);  // 1.3^2 = 1.69
  EXPECT_EQ(CollectionsValue(3).kept, 1u);  // 2.3^2 = 5.29
  const CollectionsResult five = CollectionsValue(5);
  EXPECT_EQ(five.kept, 3u);  // 2.3, 3.3, 4.3
  EXPECT_NEAR(five.sum, 5.29 + 10.89 + 18.49, 1e-3);
  for (int i = 2; i < 100; i += 7) EXPECT_EQ(CollectionsValue(i).kept, size_t(i - 2)) << i;
}

TEST(WorkloadTest, FactoryCoversRegistryAndRejectsUnknown) {
  for (const NameInfo& info : kWorkloads) {
    auto w = MakeWorkload(info.name);
    ASSERT_TRUE(w.ok()) << info.name << ": " << w.status();
    EXPECT_EQ((*w)->name(), info.name);
  }
  auto bad = MakeWorkload("arithmetics");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("arithmetic, collections"), std::string::npos) << bad.status();
}

TEST(WorkloadTest, WaitsMatchS1) {
  auto storage = *MakeWorkload("storage");
  auto network = *MakeWorkload("network");
  auto arithmetic = *MakeWorkload("arithmetic");
  EXPECT_EQ(storage->Wait(0), absl::Microseconds(500));
  EXPECT_EQ(storage->Wait(99), absl::Microseconds(1490));
  EXPECT_EQ(network->Wait(0), absl::ZeroDuration());
  EXPECT_EQ(network->Wait(99), absl::Milliseconds(99));
  EXPECT_EQ(arithmetic->Wait(50), absl::ZeroDuration());
  EXPECT_EQ(arithmetic->Compute(3), 27u);
  EXPECT_EQ(arithmetic->Compute(2), 4u);
}

TEST(WorkloadTest, MixedDispatchesByIndex) {
  auto mixed = *MakeWorkload("mixed");
  auto arithmetic = *MakeWorkload("arithmetic");
  auto collections = *MakeWorkload("collections");
  // i % 5 == 0: network (takes precedence over % 3, e.g. 15).
  for (int i : {0, 5, 15, 30}) {
    EXPECT_EQ(mixed->Wait(i), absl::Milliseconds(i)) << i;
    EXPECT_EQ(mixed->Compute(i), 0u) << i;
  }
  // i % 3 == 0: storage.
  for (int i : {3, 6, 9, 21}) {
    EXPECT_EQ(mixed->Wait(i), absl::Microseconds(500 + 10 * i)) << i;
    EXPECT_EQ(mixed->Compute(i), 0u) << i;
  }
  // even: collections; odd: arithmetic.
  for (int i : {2, 4, 8, 14}) {
    EXPECT_EQ(mixed->Wait(i), absl::ZeroDuration()) << i;
    EXPECT_EQ(mixed->Compute(i), collections->Compute(i)) << i;
  }
  for (int i : {1, 7, 11, 13}) {
    EXPECT_EQ(mixed->Wait(i), absl::ZeroDuration()) << i;
    EXPECT_EQ(mixed->Compute(i), arithmetic->Compute(i)) << i;
  }
  // Among 0..99: 20 network (multiples of 5), 27 storage (the 34 multiples of 3
  // minus the 7 multiples of 15).
  int network = 0, storage = 0;
  for (int i = 0; i < 100; ++i) {
    if (mixed->Wait(i) >= absl::Milliseconds(5) || i == 0)
      ++network;
    else if (mixed->Wait(i) > absl::ZeroDuration())
      ++storage;
  }
  EXPECT_EQ(network, 20);
  EXPECT_EQ(storage, 27);
}

}  // namespace
}  // namespace fleetmark::engine
