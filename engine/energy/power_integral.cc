#include "engine/energy/power_integral.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace fleetmark::engine::energy {

absl::Status PowerIntegral::Add(double at_s, double watts) {
  if (!std::isfinite(watts) || watts < 0) {
    return absl::InvalidArgumentError(absl::StrCat("power sample ", watts, " W: finite and 0 or more expected"));
  }
  if (!std::isfinite(at_s)) return absl::InvalidArgumentError("power sample time is not finite");
  if (samples_ > 0 && !(at_s > last_at_s_)) {
    return absl::InvalidArgumentError(
        absl::StrCat("power sample at ", at_s, " s is not after the previous one at ", last_at_s_, " s"));
  }
  if (samples_ > 0) {
    const double dt = at_s - last_at_s_;
    joules_ += (last_watts_ + watts) / 2 * dt;
    seconds_ += dt;
  }
  last_at_s_ = at_s;
  last_watts_ = watts;
  ++samples_;
  return absl::OkStatus();
}

}  // namespace fleetmark::engine::energy
