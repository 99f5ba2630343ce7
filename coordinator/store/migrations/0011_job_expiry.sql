-- A job's expiry (`submit --queue_offline=DURATION`: jobs queued for agents that are
-- offline now): a job still queued at expires_at fails as infrastructure ("expired").
-- NULL = no expiry (every job before this migration, and submits without the flag).
ALTER TABLE jobs ADD COLUMN IF NOT EXISTS expires_at timestamptz;
CREATE INDEX IF NOT EXISTS jobs_queued_expiry ON jobs (expires_at) WHERE status = 'queued' AND expires_at IS NOT NULL;
