-- A schedule's case filter (`schedules create --filter REGEX`: RE2 on case ids, applied
-- to every run it fires; '' = every case) and whether it is paused (`schedules pause`:
-- a paused schedule does not fire until `schedules resume`). Schedules from before this
-- migration ran every case and were not paused.
ALTER TABLE schedules ADD COLUMN IF NOT EXISTS filter text NOT NULL DEFAULT '';
ALTER TABLE schedules ADD COLUMN IF NOT EXISTS paused boolean NOT NULL DEFAULT false;
