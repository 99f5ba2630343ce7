// WaitEpisodesPerRepetition, SetContention (contention_evidence.h).
#include "engine/measure/contention_evidence.h"

namespace fleetmark::engine {

WaitEpisodes WaitEpisodesPerRepetition(const v1::CaseResult& result) {
  const v1::Counters& c = result.counters();
  if (c.repetitions() == 0 || c.voluntary_context_switches() < 0 || c.involuntary_context_switches() < 0) return {};
  const double repetitions = static_cast<double>(c.repetitions());
  return {.wakeups = static_cast<double>(c.voluntary_context_switches()) / repetitions,
          .preemptions = static_cast<double>(c.involuntary_context_switches()) / repetitions +
                         static_cast<double>(result.threads_used())};
}

void SetContention(const v1::CaseResult& result, Contender& contender) {
  contender.contended = result.contended();
  contender.other_cpu_share = result.other_cpu_share();
  const WaitEpisodes episodes = WaitEpisodesPerRepetition(result);
  contender.wakeups_per_repetition = episodes.wakeups;
  contender.preemptions_per_repetition = episodes.preemptions;
  contender.wakeup_delay_ns = result.wakeup_delay_ns();
  contender.preemption_delay_ns = result.preemption_delay_ns();
}

}  // namespace fleetmark::engine
