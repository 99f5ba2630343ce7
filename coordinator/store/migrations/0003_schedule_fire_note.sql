-- Why a schedule fire created no run (e.g. "skipped: no online agent matches selector
-- ..."), shown by `schedules list` as the schedule's last fire outcome. '' for a fire
-- that created a run.
ALTER TABLE schedule_fires ADD COLUMN note text NOT NULL DEFAULT '';
