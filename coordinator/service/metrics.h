// Prometheus metrics for the coordinator's `GET /metrics`: counters, gauges and
// histograms cheap enough for hot paths (atomics only, no lock, no allocation per
// update), and a writer of the text exposition format 0.0.4
// (https://prometheus.io/docs/instrumenting/exposition_formats/).
//
//   metrics::Counter ingested;
//   metrics::Histogram commit_seconds(metrics::ExponentialBuckets(0.001, 2, 14));
//   ingested.Add(batch.size());             // any thread
//   commit_seconds.Observe(0.0042);         // seconds; any thread
//   metrics::ExpositionWriter out;          // at scrape time
//   out.Counter("fleetmark_results_ingested_total", "Results committed.", ingested);
//   out.Histogram("fleetmark_ingest_commit_seconds", "Commit latency.", commit_seconds);
//   std::string body = out.Finish();        // served with kExpositionContentType
//
// Thread-safety: Counter, Gauge and Histogram are safe from any thread; a scrape reads
// each value atomically (a histogram's buckets one by one: its _count is the sum of the
// buckets read, so _count and the +Inf bucket always agree). ExpositionWriter is one
// scrape's, used by one thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include "absl/strings/string_view.h"
#include <utility>
#include <vector>

namespace fleetmark::metrics {

// The Content-Type of a text exposition body.
inline constexpr char kExpositionContentType[] = "text/plain; version=0.0.4; charset=utf-8";

// A monotonically increasing count (events since the process started).
class Counter {
 public:
  void Add(uint64_t n = 1) { value_.fetch_add(n, std::memory_order_relaxed); }
  uint64_t value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> value_{0};
};

// A value that goes up and down (e.g. open streams).
class Gauge {
 public:
  void Set(int64_t value) { value_.store(value, std::memory_order_relaxed); }
  void Add(int64_t delta) { value_.fetch_add(delta, std::memory_order_relaxed); }
  int64_t value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> value_{0};
};

// Observations counted into fixed buckets (upper bounds inclusive, as Prometheus's
// `le`), plus their sum. Non-finite observations are counted in +Inf and left out of
// the sum.
class Histogram {
 public:
  // `upper_bounds`: finite, strictly increasing (else sorted and deduplicated, and
  // non-finite bounds dropped); +Inf is implicit.
  explicit Histogram(std::vector<double> upper_bounds);

  void Observe(double value);

  struct Snapshot {
    std::vector<double> upper_bounds;  // without +Inf
    std::vector<uint64_t> cumulative;  // per bound, then +Inf (= count)
    uint64_t count = 0;
    double sum = 0;
  };
  Snapshot Read() const;

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> buckets_;  // bounds_.size() + 1 (last: above every bound)
  std::atomic<double> sum_{0};
};

// `count` bounds start, start*factor, start*factor^2, ... (start > 0, factor > 1).
std::vector<double> ExponentialBuckets(double start, double factor, int count);

using Labels = std::vector<std::pair<std::string, std::string>>;

// Writes families in the text format 0.0.4: `# HELP`, `# TYPE`, then the samples. Names
// must match [a-zA-Z_:][a-zA-Z0-9_:]* (callers pass constants); label values and help
// text are escaped as the format requires.
class ExpositionWriter {
 public:
  // A family header; `type` is "counter", "gauge" or "histogram". Follow with Sample().
  void Family(absl::string_view name, absl::string_view help, absl::string_view type);
  // One sample line `name{labels} value`.
  void Sample(absl::string_view name, const Labels& labels, double value);

  void WriteCounter(absl::string_view name, absl::string_view help, const Counter& counter);
  void WriteGauge(absl::string_view name, absl::string_view help, double value);
  // `_bucket` lines (cumulative, `le` ascending, ending with +Inf), `_sum`, `_count`.
  void WriteHistogram(absl::string_view name, absl::string_view help, const Histogram& histogram);

  // The body; the writer is empty afterwards.
  std::string Finish() { return std::move(out_); }

 private:
  std::string out_;
};

// A sample value as the format writes it: shortest round-trip decimal, "+Inf", "-Inf",
// "NaN".
std::string FormatValue(double value);

}  // namespace fleetmark::metrics
