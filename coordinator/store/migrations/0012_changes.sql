-- Confirmed changes (issue 14, item 5; coordinator/service/change_monitor.h, README
-- "Confirmed changes"). When a nightly (scheduled) run ends, each agent's series of the
-- cases it measured is scanned once; a newest point that starts a change segment is a
-- `suspected` change, and one confirmation run of the changed cases on that agent
-- decides it.
--   change_scans  (run, agent) pairs already scanned, so a scan happens once (several
--                 coordinators share the database: the insert is the claim)
--   changes       one row per suspected change:
--     run_id                the nightly run whose point starts the new segment
--     result_id             that point's result
--     old_level_ns          geometric mean of the segment before it; new_level_ns its median
--     noise_percent         the agent's noise score when it was found (NULL = unknown)
--     min_change_percent    the threshold at that noise: max(3 %, 3 × noise)
--     state                 suspected | confirmed | not_reproduced | unconfirmed
--     reason                why it is unconfirmed, or the verdict's figures
--     confirmation_run_id   the run submitted to confirm it (several changes of one scan
--                           share one run)
--     confirmation_median_ns  the confirmation run's median of the case
CREATE TABLE IF NOT EXISTS change_scans (
  run_id      uuid NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
  agent_id    uuid NOT NULL REFERENCES agents (agent_id),
  scanned_at  timestamptz NOT NULL DEFAULT now(),
  changes     integer NOT NULL DEFAULT 0,
  PRIMARY KEY (run_id, agent_id)
);

CREATE TABLE IF NOT EXISTS changes (
  change_id               bigserial PRIMARY KEY,
  agent_id                uuid NOT NULL REFERENCES agents (agent_id),
  case_id                 text NOT NULL,
  run_id                  uuid NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
  result_id               uuid,
  old_level_ns            double precision NOT NULL,
  new_level_ns            double precision NOT NULL,
  noise_percent           double precision,
  min_change_percent      double precision NOT NULL,
  state                   text NOT NULL DEFAULT 'suspected'
                          CHECK (state IN ('suspected', 'confirmed', 'not_reproduced', 'unconfirmed')),
  reason                  text NOT NULL DEFAULT '',
  confirmation_run_id     uuid REFERENCES runs (run_id) ON DELETE SET NULL,
  confirmation_median_ns  double precision,
  created_at              timestamptz NOT NULL DEFAULT now(),
  decided_at              timestamptz
);
CREATE INDEX IF NOT EXISTS changes_created ON changes (created_at DESC);
CREATE INDEX IF NOT EXISTS changes_agent ON changes (agent_id, created_at);
CREATE INDEX IF NOT EXISTS changes_pending ON changes (confirmation_run_id) WHERE state = 'suspected';

-- Nightly runs that ended before this migration are history, not news: marked scanned.
INSERT INTO change_scans (run_id, agent_id)
SELECT DISTINCT j.run_id, j.agent_id FROM jobs j JOIN runs r ON r.run_id = j.run_id
WHERE r.submitted_by LIKE 'schedule:%' AND r.status IN ('done', 'failed', 'cancelled')
ON CONFLICT DO NOTHING;
