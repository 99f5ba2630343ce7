-- Fleet health (issue 14, items 3 and 4): each agent's noise score from the nightly
-- calibration block and its quarantine (coordinator/store/agent_health.h, README
-- "Noise score and quarantine"). Kept with the agent, so it survives restarts and
-- every coordinator sharing the database sees the same state; evaluated in the
-- transaction that finishes a job, under the agent row's lock.
--   health             'ok' or 'quarantined' (only `fleetmark agents release` ends it)
--   quarantine_reason  why, e.g. 'calibration drift: ...'; '' when ok
--   quarantined_at     since when; NULL when ok
--   released_at        the last release: nights before it no longer count (new baseline)
--   noise_percent      the noise score in percent; NULL = unknown (too few nights)
--   noise_nights       nights the score was computed from
--   deferred_in_a_row  jobs deferred by preflight gates since the last job that ran
ALTER TABLE agents ADD COLUMN IF NOT EXISTS health text NOT NULL DEFAULT 'ok'
  CHECK (health IN ('ok', 'quarantined'));
ALTER TABLE agents ADD COLUMN IF NOT EXISTS quarantine_reason text NOT NULL DEFAULT '';
ALTER TABLE agents ADD COLUMN IF NOT EXISTS quarantined_at timestamptz;
ALTER TABLE agents ADD COLUMN IF NOT EXISTS released_at timestamptz;
ALTER TABLE agents ADD COLUMN IF NOT EXISTS noise_percent double precision;
ALTER TABLE agents ADD COLUMN IF NOT EXISTS noise_nights integer NOT NULL DEFAULT 0;
ALTER TABLE agents ADD COLUMN IF NOT EXISTS deferred_in_a_row integer NOT NULL DEFAULT 0;
