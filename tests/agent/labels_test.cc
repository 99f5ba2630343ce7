#include "agent/labels.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetmark::agent {
namespace {

using ::testing::HasSubstr;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

TEST(LabelsTest, ParsesPairsAndTrimsWhitespace) {
  auto labels = ParseLabels(" rack=b , os=android,room=lab-2/east ");
  ASSERT_TRUE(labels.ok()) << labels.status();
  EXPECT_THAT(*labels, UnorderedElementsAre(Pair("rack", "b"), Pair("os", "android"), Pair("room", "lab-2/east")));
  EXPECT_EQ(FormatLabels(*labels), "os=android,rack=b,room=lab-2/east");
}

TEST(LabelsTest, EmptyTextAndEmptyValuesAreAllowed) {
  auto none = ParseLabels("   ");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  auto empty_value = ParseLabels("flag=");
  ASSERT_TRUE(empty_value.ok());
  EXPECT_THAT(*empty_value, UnorderedElementsAre(Pair("flag", "")));
}

TEST(LabelsTest, ErrorsNameTheItemAndTheAllowedForm) {
  auto no_eq = ParseLabels("rack=b,android");
  ASSERT_FALSE(no_eq.ok());
  EXPECT_THAT(std::string(no_eq.status().message()), HasSubstr("labels[1]"));
  EXPECT_THAT(std::string(no_eq.status().message()), HasSubstr("key=value"));

  auto bad_key = ParseLabels("ra ck=b");
  ASSERT_FALSE(bad_key.ok());
  EXPECT_THAT(std::string(bad_key.status().message()), HasSubstr("labels[0].key"));

  auto empty_key = ParseLabels("=b");
  EXPECT_FALSE(empty_key.ok());

  auto bad_value = ParseLabels("os=and roid");
  ASSERT_FALSE(bad_value.ok());
  EXPECT_THAT(std::string(bad_value.status().message()), HasSubstr("labels[0].value"));

  auto twice = ParseLabels("os=a,os=b");
  ASSERT_FALSE(twice.ok());
  EXPECT_THAT(std::string(twice.status().message()), HasSubstr("given twice"));

  auto trailing_comma = ParseLabels("os=a,");
  EXPECT_FALSE(trailing_comma.ok());

  auto long_key = ParseLabels(std::string(64, 'k') + "=v");
  EXPECT_FALSE(long_key.ok());
}

TEST(LabelsTest, TooManyLabelsAreRefused) {
  std::string text;
  for (int i = 0; i < 65; ++i) text += (i ? "," : "") + std::string("k") + std::to_string(i) + "=v";
  auto labels = ParseLabels(text);
  ASSERT_FALSE(labels.ok());
  EXPECT_THAT(std::string(labels.status().message()), HasSubstr("at most 64"));
}

}  // namespace
}  // namespace fleetmark::agent

namespace fleetmark::agent {
namespace {

using ::testing::Pair;
using ::testing::UnorderedElementsAre;

TEST(AutomaticLabelsTest, AndroidGetsOsAndModelAndUserLabelsWin) {
  v1::HostInfo host;
  EXPECT_TRUE(AutomaticLabels(host).empty());  // not Android
  host.mutable_android()->set_model("Pixel 7 Pro (5G)");
  const auto automatic = AutomaticLabels(host);
  EXPECT_THAT(automatic, UnorderedElementsAre(Pair("os", "android"), Pair("model", "Pixel_7_Pro__5G_")));
  // The result is a valid label set.
  EXPECT_TRUE(ParseLabels(FormatLabels(automatic)).ok());
  auto merged = WithAutomaticLabels({{"model", "mine"}, {"rack", "b"}}, automatic);
  EXPECT_THAT(merged, UnorderedElementsAre(Pair("os", "android"), Pair("model", "mine"), Pair("rack", "b")));
  host.mutable_android()->set_model("unknown");
  EXPECT_THAT(AutomaticLabels(host), UnorderedElementsAre(Pair("os", "android")));
}

}  // namespace
}  // namespace fleetmark::agent
