#include "coordinator/service/metrics.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace fleetmark::metrics {
namespace {

// Label values: backslash, double quote and line feed escaped. Help text: backslash
// and line feed (text format 0.0.4).
std::string Escape(absl::string_view text, bool quote) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (quote && c == '"') {
      out += "\\\"";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

Histogram::Histogram(std::vector<double> upper_bounds) {
  upper_bounds.erase(
      std::remove_if(upper_bounds.begin(), upper_bounds.end(), [](double b) { return !std::isfinite(b); }),
      upper_bounds.end());
  std::sort(upper_bounds.begin(), upper_bounds.end());
  upper_bounds.erase(std::unique(upper_bounds.begin(), upper_bounds.end()), upper_bounds.end());
  bounds_ = std::move(upper_bounds);
  buckets_ = std::make_unique<std::atomic<uint64_t>[]>(bounds_.size() + 1);
  for (size_t i = 0; i <= bounds_.size(); ++i) buckets_[i].store(0, std::memory_order_relaxed);
}

void Histogram::Observe(double value) {
  // First bound >= value (le is inclusive); NaN compares false everywhere: +Inf.
  const size_t index =
      std::isnan(value)
          ? bounds_.size()
          : static_cast<size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin());
  buckets_[index].fetch_add(1, std::memory_order_relaxed);
  if (std::isfinite(value)) sum_.fetch_add(value, std::memory_order_relaxed);
}

Histogram::Snapshot Histogram::Read() const {
  Snapshot snapshot;
  snapshot.upper_bounds = bounds_;
  snapshot.cumulative.reserve(bounds_.size() + 1);
  uint64_t running = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    running += buckets_[i].load(std::memory_order_relaxed);
    snapshot.cumulative.push_back(running);
  }
  snapshot.count = running;
  snapshot.sum = sum_.load(std::memory_order_relaxed);
  return snapshot;
}

std::vector<double> ExponentialBuckets(double start, double factor, int count) {
  std::vector<double> bounds;
  if (!(start > 0) || !(factor > 1)) return bounds;
  double bound = start;
  for (int i = 0; i < count; ++i, bound *= factor) bounds.push_back(bound);
  return bounds;
}

std::string FormatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buffer[32];
  const auto [end, error] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  if (error != std::errc()) return absl::StrCat(value);
  return std::string(buffer, end);
}

void ExpositionWriter::Family(absl::string_view name, absl::string_view help, absl::string_view type) {
  absl::StrAppend(&out_, "# HELP ", name, " ", Escape(help, false), "\n# TYPE ", name, " ", type, "\n");
}

void ExpositionWriter::Sample(absl::string_view name, const Labels& labels, double value) {
  out_.append(name.data(), name.size());
  if (!labels.empty()) {
    out_ += '{';
    for (size_t i = 0; i < labels.size(); ++i) {
      absl::StrAppend(&out_, i == 0 ? "" : ",", labels[i].first, "=\"", Escape(labels[i].second, true), "\"");
    }
    out_ += '}';
  }
  absl::StrAppend(&out_, " ", FormatValue(value), "\n");
}

void ExpositionWriter::WriteCounter(absl::string_view name, absl::string_view help, const Counter& counter) {
  Family(name, help, "counter");
  Sample(name, {}, static_cast<double>(counter.value()));
}

void ExpositionWriter::WriteGauge(absl::string_view name, absl::string_view help, double value) {
  Family(name, help, "gauge");
  Sample(name, {}, value);
}

void ExpositionWriter::WriteHistogram(absl::string_view name, absl::string_view help, const Histogram& histogram) {
  Family(name, help, "histogram");
  const Histogram::Snapshot snapshot = histogram.Read();
  const std::string bucket = absl::StrCat(name, "_bucket");
  for (size_t i = 0; i < snapshot.upper_bounds.size(); ++i) {
    Sample(bucket, {{"le", FormatValue(snapshot.upper_bounds[i])}}, static_cast<double>(snapshot.cumulative[i]));
  }
  Sample(bucket, {{"le", "+Inf"}}, static_cast<double>(snapshot.count));
  Sample(absl::StrCat(name, "_sum"), {}, snapshot.sum);
  Sample(absl::StrCat(name, "_count"), {}, static_cast<double>(snapshot.count));
}

}  // namespace fleetmark::metrics
