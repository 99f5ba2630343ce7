-- Imported results (issue 34, item 1): `fleetmark results import FILE` stores a results
-- file (`fleetmark run --format json`, `fleetmark export --format json`) in one new run
-- per import, marked imported: its jobs are done, its plan row holds only the plan's
-- name. Each device of the file is stored under an agent of that machine when one
-- exists (same host name, CPU, architecture, core classes and memory:
-- coordinator/store/result_import.h), else under a device record marked imported: an
-- agents row with no credential (credential_sha256 '' matches no SHA-256), never
-- online, left out of every selection (ListAgentSummaries), so never given a job;
-- `agents list` shows its state as "imported".
ALTER TABLE runs ADD COLUMN IF NOT EXISTS imported boolean NOT NULL DEFAULT false;
ALTER TABLE agents ADD COLUMN IF NOT EXISTS imported boolean NOT NULL DEFAULT false;
