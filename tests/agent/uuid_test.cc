#include "agent/uuid.h"

#include <set>

#include "gtest/gtest.h"

namespace fleetmark::agent {
namespace {

TEST(UuidTest, VersionFourCanonicalAndUnique) {
  std::set<std::string> seen;
  for (int i = 0; i < 10000; ++i) {
    auto id = NewUuidV4();
    ASSERT_TRUE(id.ok()) << id.status();
    ASSERT_TRUE(IsUuid(*id)) << *id;
    ASSERT_EQ((*id)[14], '4') << *id;                                          // version
    ASSERT_NE(std::string("89ab").find((*id)[19]), std::string::npos) << *id;  // variant
    ASSERT_TRUE(seen.insert(*id).second) << "duplicate " << *id;
  }
}

TEST(UuidTest, IsUuidRejectsMalformedText) {
  EXPECT_TRUE(IsUuid("123e4567-e89b-42d3-a456-426614174000"));
  EXPECT_FALSE(IsUuid("123e4567e89b42d3a456426614174000"));
  EXPECT_FALSE(IsUuid("123e4567-e89b-42d3-a456-42661417400g"));
  EXPECT_FALSE(IsUuid(""));
}

}  // namespace
}  // namespace fleetmark::agent
