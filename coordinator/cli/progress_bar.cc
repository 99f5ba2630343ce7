#include "coordinator/cli/progress_bar.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "engine/common/duration_text.h"

namespace fleetmark::cli {

void ProgressBar::Update(const engine::RunProgress& p) {
  const double fraction = p.slices_total > 0 ? std::clamp(1.0 * p.slices_done / p.slices_total, 0.0, 1.0) : 0.0;
  const int filled = static_cast<int>(fraction * width_);
  std::string bar(static_cast<size_t>(filled), '=');
  if (filled < width_) bar += '>';
  bar.resize(static_cast<size_t>(width_), ' ');
  const std::optional<absl::Duration> rate = p.slices_done > 0 ? std::optional<absl::Duration>(p.eta) : std::nullopt;
  const std::string eta = cost_  ? engine::RemainingText(engine::EstimateRemaining(*cost_, p.elapsed, rate))
                          : rate ? RoundedDuration(*rate)
                                 : "?";
  std::string line =
      absl::StrFormat("[%s] %3.0f%%  cases %d/%d  round %d/%d  %s elapsed  ETA %s  %s", bar, fraction * 100,
                      p.cases_done, p.cases_total, p.round, p.rounds, RoundedDuration(p.elapsed), eta, p.current_case);
  if (line.size() > 150) line.resize(150);
  // \r returns to column 0; \033[K clears the rest of the previous, longer line.
  std::fprintf(stream_, "\r%s\033[K", line.c_str());
  std::fflush(stream_);
  drawn_ = true;
}

void ProgressBar::Finish() {
  if (!drawn_) return;
  std::fprintf(stream_, "\r\033[K");
  std::fflush(stream_);
  drawn_ = false;
}

}  // namespace fleetmark::cli
