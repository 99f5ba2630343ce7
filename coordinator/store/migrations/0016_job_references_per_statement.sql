-- A job's references to its run and its agent, checked once per statement instead of
-- once per row (issue 17, fan-out). The two foreign keys ran two referential-integrity
-- queries per job and took a FOR KEY SHARE lock on every job's agent row: 8 of the
-- 16-18 ms that inserting a 1 000-agent fan-out's jobs took (EXPLAIN ANALYZE). Jobs are
-- inserted only together with their run, in its transaction (InsertRun), never change
-- run or agent, and agents are never deleted (removal sets removed_at). The triggers
-- keep what the foreign keys guaranteed:
--   * every new job's run and agent exist (one anti-join over the statement's rows);
--   * a job's run_id and agent_id never change;
--   * deleting runs deletes their jobs (was ON DELETE CASCADE);
--   * deleting an agent that still has jobs is refused (was NO ACTION).
-- Each raises foreign_key_violation (SQLSTATE 23503), as the foreign keys did.
ALTER TABLE jobs DROP CONSTRAINT IF EXISTS jobs_run_id_fkey;
ALTER TABLE jobs DROP CONSTRAINT IF EXISTS jobs_agent_id_fkey;

CREATE OR REPLACE FUNCTION fm_jobs_check_references() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  bad record;
BEGIN
  SELECT n.job_id, n.run_id, n.agent_id, r.run_id IS NULL AS no_run INTO bad
    FROM fm_new_jobs n LEFT JOIN runs r ON r.run_id = n.run_id
    WHERE r.run_id IS NULL OR NOT EXISTS (SELECT 1 FROM agents a WHERE a.agent_id = n.agent_id)
    LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION USING ERRCODE = 'foreign_key_violation', MESSAGE = CASE
      WHEN bad.no_run THEN format('jobs: job %s refers to run %s, which does not exist', bad.job_id, bad.run_id)
      ELSE format('jobs: job %s refers to agent %s, which does not exist', bad.job_id, bad.agent_id) END;
  END IF;
  RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS jobs_check_references ON jobs;
CREATE TRIGGER jobs_check_references AFTER INSERT ON jobs REFERENCING NEW TABLE AS fm_new_jobs
  FOR EACH STATEMENT EXECUTE FUNCTION fm_jobs_check_references();

CREATE OR REPLACE FUNCTION fm_jobs_keep_references() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION USING ERRCODE = 'foreign_key_violation',
    MESSAGE = format('jobs: job %s: run_id and agent_id never change', OLD.job_id);
END $$;
-- UPDATE OF: fires only for statements that set these columns (none of the store's).
DROP TRIGGER IF EXISTS jobs_keep_references ON jobs;
CREATE TRIGGER jobs_keep_references BEFORE UPDATE OF run_id, agent_id ON jobs FOR EACH ROW
  WHEN (NEW.run_id IS DISTINCT FROM OLD.run_id OR NEW.agent_id IS DISTINCT FROM OLD.agent_id)
  EXECUTE FUNCTION fm_jobs_keep_references();

CREATE OR REPLACE FUNCTION fm_runs_delete_jobs() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM jobs j USING fm_old_runs o WHERE j.run_id = o.run_id;
  RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS runs_delete_jobs ON runs;
CREATE TRIGGER runs_delete_jobs AFTER DELETE ON runs REFERENCING OLD TABLE AS fm_old_runs
  FOR EACH STATEMENT EXECUTE FUNCTION fm_runs_delete_jobs();

CREATE OR REPLACE FUNCTION fm_agents_keep_jobs() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  bad record;
BEGIN
  SELECT j.job_id, j.agent_id INTO bad FROM jobs j JOIN fm_old_agents o ON o.agent_id = j.agent_id LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION USING ERRCODE = 'foreign_key_violation',
      MESSAGE = format('agents: agent %s still has jobs (job %s)', bad.agent_id, bad.job_id);
  END IF;
  RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS agents_keep_jobs ON agents;
CREATE TRIGGER agents_keep_jobs AFTER DELETE ON agents REFERENCING OLD TABLE AS fm_old_agents
  FOR EACH STATEMENT EXECUTE FUNCTION fm_agents_keep_jobs();
