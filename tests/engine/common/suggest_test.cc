// Did-you-mean (engine/common/suggest.h): the distance, the threshold, the messages.
#include "engine/common/suggest.h"

#include <string>
#include <vector>

#include "engine/common/registry.h"
#include "gtest/gtest.h"

namespace fleetmark {
namespace {

TEST(SuggestTest, EditDistanceCountsAdjacentTranspositionsAsOne) {
  EXPECT_EQ(EditDistance("", ""), 0u);
  EXPECT_EQ(EditDistance("abc", ""), 3u);
  EXPECT_EQ(EditDistance("fibre", "fiber"), 1u);  // "re" <-> "er"
  EXPECT_EQ(EditDistance("quik", "quick"), 1u);
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
  EXPECT_EQ(EditDistance("CA", "abc"), 3u);   // optimal string alignment: no edit of a transposed pair
  EXPECT_EQ(EditDistance("Run", "rnu"), 1u);  // case ignored
}

TEST(SuggestTest, ClosestNamesWithinAThirdOfTheLength) {
  const std::vector<std::string> strategies = {"direct", "single_thread", "fixed_pool", "work_stealing",
                                               "fiber",  "event_loop",    "coroutine",  "async"};
  EXPECT_EQ(ClosestNames("fibre", strategies), std::vector<std::string>{"fiber"});
  EXPECT_EQ(ClosestNames("fixed_pol", strategies), std::vector<std::string>{"fixed_pool"});
  EXPECT_EQ(ClosestNames("work", strategies), std::vector<std::string>{"work_stealing"});  // a prefix of 4+
  EXPECT_TRUE(ClosestNames("gpu", strategies).empty());
  EXPECT_TRUE(ClosestNames("", strategies).empty());
  EXPECT_TRUE(ClosestNames("fiber", strategies).empty());  // a valid name needs no help
  EXPECT_TRUE(ClosestNames(std::string(1000, 'x'), strategies).empty());
  // Nearest first, at most three.
  EXPECT_EQ(ClosestNames("lmit", {"limited", "lint", "limit", "list", "lit"}),
            (std::vector<std::string>{"limit", "lit"}));
  EXPECT_EQ(ClosestNames("abcdef", {"abcdxx", "abcdex", "abcdey", "abcdez", "abcdef1"}),
            (std::vector<std::string>{"abcdex", "abcdey", "abcdez"}));
}

TEST(SuggestTest, MessagesNameTheClosestAndEveryAllowedName) {
  EXPECT_EQ(DidYouMean("quik", {"quiet", "quick", "quit"}, "--"), " (did you mean \"--quick\" or \"--quit\"?)");
  EXPECT_EQ(DidYouMean("zzz", {"quick"}), "");
  std::vector<std::string> workloads;
  for (const auto& w : engine::kWorkloads) workloads.emplace_back(w.name);
  EXPECT_EQ(OneOfMessage("workload", workloads),
            "one of arithmetic, collections, storage, network, mixed, synthetic; got \"workload\"");
  EXPECT_EQ(OneOfMessage("synthetc", workloads),
            "one of arithmetic, collections, storage, network, mixed, synthetic; got \"synthetc\" (did you mean "
            "\"synthetic\"?)");
  EXPECT_EQ(OneOfMessage("x\x1b", {"a"}, " (empty = a)"), "one of a (empty = a); got \"x\\x1b\"");
}

}  // namespace
}  // namespace fleetmark
