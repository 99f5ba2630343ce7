// The synthetic workload (synthetic.h).
#include "engine/workloads/synthetic.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <string_view>
#include <vector>

namespace fleetmark::engine {
namespace {

// SplitMix64 (Steele, Lea, Flood 2014): a well-mixed 64-bit hash of (seed, i).
uint64_t SplitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Uniform in (0, 1): 53 random bits, never 0 (so logarithms are finite).
double Unit(uint64_t bits) { return (static_cast<double>(bits >> 11) + 0.5) * 0x1.0p-53; }

// Keeps `p` and the memory it points to alive for the optimiser (GCC/Clang).
void Escape(void* p) { asm volatile("" : : "g"(p) : "memory"); }

double Calibrate() {
  using Clock = std::chrono::steady_clock;
  constexpr auto kMinTrial = std::chrono::microseconds(500);
  constexpr int kTrials = 9;
  uint64_t iterations = 1 << 12;
  double best = std::numeric_limits<double>::infinity();
  uint64_t sink = 0;
  for (int trial = 0; trial < kTrials;) {
    const Clock::time_point t0 = Clock::now();
    sink ^= SyntheticSpin(iterations, static_cast<uint64_t>(trial) + 1);
    const Clock::duration elapsed = Clock::now() - t0;
    if (elapsed < kMinTrial && iterations < (uint64_t{1} << 40)) {
      iterations *= 2;  // too short to time well: not a trial
      continue;
    }
    best = std::min(best, std::chrono::duration<double, std::nano>(elapsed).count() / static_cast<double>(iterations));
    ++trial;
  }
  Escape(&sink);
  return best > 0 && std::isfinite(best) ? best : 1.0;
}

class SyntheticWorkload final : public Workload {
 public:
  explicit SyntheticWorkload(const v1::SyntheticParams& params)
      : params_(params), ns_per_iteration_(params.cpu_ns() > 0 ? SyntheticNsPerIteration() : 0) {
    iterations_ = params.cpu_ns() > 0 ? static_cast<uint64_t>(std::llround(params.cpu_ns() / ns_per_iteration_)) : 0;
  }

  std::string_view name() const override { return "synthetic"; }

  uint64_t Compute(int i) const override {
    uint64_t sink = iterations_ > 0 ? SyntheticSpin(iterations_, static_cast<uint64_t>(i) + 1) : 0;
    if (params_.alloc_bytes() > 0) {
      std::unique_ptr<char[]> block(new char[params_.alloc_bytes()]);
      block[0] = static_cast<char>(sink);
      block[params_.alloc_bytes() - 1] = static_cast<char>(i);
      Escape(block.get());
      sink += static_cast<unsigned char>(block[0]);
    }
    if (params_.touch_kib() > 0) {
      // One buffer per carrier thread, grown once: writes, not allocations, per task.
      thread_local std::vector<char> buffer;
      const size_t bytes = size_t{params_.touch_kib()} * 1024;
      if (buffer.size() < bytes) buffer.resize(bytes);
      for (size_t b = 0; b < bytes; b += 64) buffer[b] = static_cast<char>(b + static_cast<size_t>(i));
      Escape(buffer.data());
      sink += static_cast<unsigned char>(buffer[bytes - 64]);
    }
    return sink;
  }

  absl::Duration Wait(int i) const override { return SyntheticWait(params_, i); }

  double calibration_ns_per_iteration() const override { return ns_per_iteration_; }

 private:
  v1::SyntheticParams params_;
  double ns_per_iteration_;
  uint64_t iterations_ = 0;
};

}  // namespace

uint64_t SyntheticSpin(uint64_t iterations, uint64_t seed) {
  uint64_t x = seed | 1;
  for (uint64_t k = 0; k < iterations; ++k) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    asm volatile("" : "+r"(x));  // one dependent step per iteration, never vectorised away
  }
  return x;
}

double SyntheticNsPerIteration() {
  static const double ns = Calibrate();
  return ns;
}

absl::Duration SyntheticWait(const v1::SyntheticParams& params, int i) {
  const double mean_us = params.wait_us();
  if (mean_us <= 0) return absl::ZeroDuration();
  const std::string_view distribution = params.wait_distribution();
  const uint64_t key = SplitMix64(params.wait_seed() ^ SplitMix64(static_cast<uint64_t>(i)));
  double us = mean_us;
  if (distribution == "uniform") {
    us = 2 * mean_us * Unit(key);
  } else if (distribution == "exponential") {
    us = -mean_us * std::log(Unit(key));
  } else if (distribution == "lognormal") {
    // Box-Muller normal z; exp(mu + z) with mu = ln(mean) - 1/2 has mean `mean` (sigma 1).
    constexpr double kPi = 3.14159265358979323846;
    const double z = std::sqrt(-2 * std::log(Unit(key))) * std::cos(2 * kPi * Unit(SplitMix64(key)));
    us = std::exp(std::log(mean_us) - 0.5 + z);
  }
  return absl::Nanoseconds(std::llround(us * 1000));
}

std::unique_ptr<Workload> MakeSyntheticWorkload(const v1::SyntheticParams& params) {
  return std::make_unique<SyntheticWorkload>(params);
}

}  // namespace fleetmark::engine
