// The exposition writer and the histogram of coordinator/service/metrics.h: text format
// 0.0.4 lines, escaping, cumulative `le` buckets (inclusive bounds), _sum and _count.
#include "coordinator/service/metrics.h"

#include <cmath>
#include <limits>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace fleetmark::metrics {
namespace {

TEST(MetricsTest, HistogramBucketsAreCumulativeWithInclusiveBounds) {
  Histogram histogram({0.1, 1, 10});
  for (double v : {0.05, 0.1, 0.5, 1.0, 3.0, 100.0}) histogram.Observe(v);
  histogram.Observe(std::numeric_limits<double>::quiet_NaN());  // counted in +Inf, not summed
  const Histogram::Snapshot s = histogram.Read();
  EXPECT_THAT(s.cumulative, ::testing::ElementsAre(2, 4, 5, 7));
  EXPECT_EQ(s.count, 7u);
  EXPECT_DOUBLE_EQ(s.sum, 0.05 + 0.1 + 0.5 + 1.0 + 3.0 + 100.0);
}

TEST(MetricsTest, HistogramBoundsAreSortedAndFinite) {
  Histogram histogram({10, 1, 1, std::numeric_limits<double>::infinity()});
  EXPECT_THAT(histogram.Read().upper_bounds, ::testing::ElementsAre(1, 10));
  EXPECT_THAT(ExponentialBuckets(0.5, 2, 4), ::testing::ElementsAre(0.5, 1, 2, 4));
  EXPECT_TRUE(ExponentialBuckets(0, 2, 4).empty());
}

TEST(MetricsTest, ConcurrentUpdatesAreAllCounted) {
  Counter counter;
  Histogram histogram({1});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) {
        counter.Add();
        histogram.Observe(0.5);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(counter.value(), 40000u);
  EXPECT_EQ(histogram.Read().count, 40000u);
  EXPECT_DOUBLE_EQ(histogram.Read().sum, 20000);
}

TEST(MetricsTest, WriterEmitsTextFormat004) {
  Counter counter;
  counter.Add(3);
  Histogram histogram({0.25, 1});
  histogram.Observe(0.25);
  histogram.Observe(2);
  ExpositionWriter out;
  out.WriteCounter("x_total", "Help with \\ and\nnewline.", counter);
  out.Family("y", "By state.", "gauge");
  out.Sample("y", {{"state", "a\"b\\c\nd"}}, 2);
  out.WriteHistogram("z_seconds", "Latency.", histogram);
  EXPECT_EQ(out.Finish(),
            "# HELP x_total Help with \\\\ and\\nnewline.\n"
            "# TYPE x_total counter\n"
            "x_total 3\n"
            "# HELP y By state.\n"
            "# TYPE y gauge\n"
            "y{state=\"a\\\"b\\\\c\\nd\"} 2\n"
            "# HELP z_seconds Latency.\n"
            "# TYPE z_seconds histogram\n"
            "z_seconds_bucket{le=\"0.25\"} 1\n"
            "z_seconds_bucket{le=\"1\"} 1\n"
            "z_seconds_bucket{le=\"+Inf\"} 2\n"
            "z_seconds_sum 2.25\n"
            "z_seconds_count 2\n");
}

TEST(MetricsTest, ValuesRoundTrip) {
  EXPECT_EQ(FormatValue(0.1), "0.1");
  EXPECT_EQ(FormatValue(12345678901234.0), "12345678901234");
  EXPECT_EQ(FormatValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(FormatValue(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(FormatValue(std::nan("")), "NaN");
}

}  // namespace
}  // namespace fleetmark::metrics
