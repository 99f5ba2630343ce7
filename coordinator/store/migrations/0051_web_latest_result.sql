-- A job re-run after its agent was lost measures its cases again and every attempt's
-- results stay stored; the web view, like the CLI, shows only the newest result per
-- (job_id, case_id) (coordinator/store/web_queries.cc). The history index gains the
-- columns that pick the newest attempt (job_id, finished_at, received_at) so the
-- per-case, per-agent history stays an index-only scan.
CREATE INDEX IF NOT EXISTS case_results_web_history_latest
  ON case_results (case_id, agent_id)
  INCLUDE (run_id, job_id, result_id, median_ns, ci_low_ns, ci_high_ns, status, finished_at, received_at);
DROP INDEX IF EXISTS case_results_web_history;
