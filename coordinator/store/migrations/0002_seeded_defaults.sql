-- Defaults a coordinator installs once per database, such as the schedule "nightly" of
-- --nightly_plan (Store::SeedDefaultSchedule): once a default was seeded, a user
-- deleting it (`fleetmark schedules delete nightly`) is not undone by the next start.
CREATE TABLE seeded_defaults (
  name       text PRIMARY KEY,                -- e.g. 'schedule:nightly'
  seeded_at  timestamptz NOT NULL DEFAULT now(),
  seeded_by  text NOT NULL DEFAULT ''         -- coordinator_id
);
-- Databases from before this table: a schedule "nightly" that exists, or that already
-- fired runs, was seeded.
INSERT INTO seeded_defaults (name)
  SELECT 'schedule:nightly'
  WHERE EXISTS (SELECT 1 FROM schedules WHERE name = 'nightly')
     OR EXISTS (SELECT 1 FROM runs WHERE submitted_by = 'schedule:nightly');
