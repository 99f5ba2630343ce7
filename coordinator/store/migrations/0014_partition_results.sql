-- case_results partitioned by month (PostgreSQL declarative range partitioning) on
-- run_created_at, the creation time of the result's run copied into each row: a run's
-- results share one partition, so a re-sent result (same result_id, same run) meets its
-- first copy there and the primary key (result_id, run_created_at) keeps ingestion
-- idempotent. Old months are dropped whole (`fleetmark results prune`); the coordinator
-- keeps --partitions_ahead months ahead (fleetmark_ensure_result_partitions below), and
-- the DEFAULT partition catches a row whose month has no partition yet (the next
-- maintenance moves such rows into their month's new partition).
--
-- Also: raw samples as real[] (a copy: the exact nanoseconds stay in `result`), lz4 on
-- the large columns, runs.exported_at (set by `fleetmark export`; prune refuses runs
-- never exported unless --force).
--
-- Existing rows move in this one transaction, ids and contents unchanged. The indexes
-- the old table had (0001, 0050/0051 when applied before this migration) are recreated
-- on the partitioned parent from their own definitions; 0050/0051 applied after this
-- migration create theirs on the parent themselves. No foreign keys: on a partitioned
-- table they would make each deleted run or job scan every partition (there is no
-- job_id index); the store writes results only for known jobs (fm_jobs_owner) and prune
-- deletes runs with their partitions.

ALTER TABLE runs ADD COLUMN IF NOT EXISTS exported_at timestamptz;

CREATE TEMP TABLE fm_case_results_indexes ON COMMIT DROP AS
  SELECT indexdef FROM pg_indexes
  WHERE schemaname = current_schema() AND tablename = 'case_results' AND indexname <> 'case_results_pkey';

CREATE TABLE case_results_partitioned (
  LIKE case_results INCLUDING DEFAULTS INCLUDING CONSTRAINTS,
  run_created_at timestamptz NOT NULL
) PARTITION BY RANGE (run_created_at);
ALTER TABLE case_results_partitioned
  ALTER COLUMN samples_ns DROP DEFAULT,
  ALTER COLUMN samples_ns TYPE real[],
  ALTER COLUMN samples_ns SET DEFAULT '{}',
  ALTER COLUMN samples_ns SET COMPRESSION lz4,
  ALTER COLUMN result SET COMPRESSION lz4,
  ALTER COLUMN fingerprint SET COMPRESSION lz4,
  ALTER COLUMN message SET COMPRESSION lz4;

-- Creates the monthly partitions (UTC calendar months) that cover [from_time, to_time]
-- and do not exist yet; answers how many it created. Rows of such a month already in
-- the DEFAULT partition move into the new partition. Serialized by a transaction-level
-- advisory lock, so concurrent coordinators are safe. Partition names:
-- case_results_yYYYYmMM.
CREATE FUNCTION fleetmark_ensure_result_partitions(from_time timestamptz, to_time timestamptz)
RETURNS integer LANGUAGE plpgsql AS $fn$
DECLARE
  month timestamptz := date_trunc('month', from_time AT TIME ZONE 'UTC') AT TIME ZONE 'UTC';
  next_month timestamptz;
  name text;
  created integer := 0;
BEGIN
  PERFORM pg_advisory_xact_lock(7380605325024588915);  -- 'fm-parts' (prune takes it too)
  WHILE month <= to_time LOOP
    next_month := ((month AT TIME ZONE 'UTC') + interval '1 month') AT TIME ZONE 'UTC';
    name := 'case_results_' || to_char(month AT TIME ZONE 'UTC', '"y"YYYY"m"MM');
    IF to_regclass(name) IS NULL THEN
      EXECUTE format('CREATE TABLE %I (LIKE case_results INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING COMPRESSION)', name);
      IF to_regclass('case_results_default') IS NOT NULL THEN
        EXECUTE format('WITH moved AS (DELETE FROM case_results_default WHERE run_created_at >= %L'
                       ' AND run_created_at < %L RETURNING *) INSERT INTO %I SELECT * FROM moved',
                       month, next_month, name);
      END IF;
      EXECUTE format('ALTER TABLE case_results ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)',
                     name, month, next_month);
      created := created + 1;
    END IF;
    month := next_month;
  END LOOP;
  RETURN created;
END
$fn$;

-- Old rows: partitions for every month that has a run, up to next month.
ALTER TABLE case_results RENAME TO case_results_unpartitioned;
ALTER TABLE case_results_unpartitioned RENAME CONSTRAINT case_results_pkey TO case_results_unpartitioned_pkey;
ALTER TABLE case_results_partitioned RENAME TO case_results;
ALTER TABLE case_results ADD PRIMARY KEY (result_id, run_created_at);
CREATE TABLE case_results_default PARTITION OF case_results DEFAULT;
SELECT fleetmark_ensure_result_partitions(coalesce(min(created_at), now()), now() + interval '1 month') FROM runs;
INSERT INTO case_results
  SELECT c.*, r.created_at FROM case_results_unpartitioned c JOIN runs r ON r.run_id = c.run_id;
DROP TABLE case_results_unpartitioned;

DO $do$
DECLARE
  definition text;
BEGIN
  FOR definition IN SELECT indexdef FROM fm_case_results_indexes LOOP
    EXECUTE definition;
  END LOOP;
END
$do$;
