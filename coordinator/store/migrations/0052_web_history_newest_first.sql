-- The web view's reads stay index-bounded on a partitioned case_results of tens of
-- millions of rows (migration 0014; EXPLAIN ANALYZE at 1 M and 10 M results,
-- tests/bench/web_api_bench):
-- * History: per agent and case, each partition's rows newest run first, in the order
--   that picks a job's newest attempt, so the newest N runs are a merge of the
--   partitions' index walks stopped after N (not a sort of every run of the case). It
--   also serves the case-id list (a loose index scan: per agent, from one case id to the
--   next, each step a seek on (agent_id, case_id)) and any (case_id, agent_id) lookup, so
--   the two older (case_id, agent_id) indexes go.
-- * The newest finished run holding an agent's results: done runs newest first.
CREATE INDEX IF NOT EXISTS case_results_web_history_newest
  ON case_results (agent_id, case_id, run_created_at DESC, job_id, finished_at DESC NULLS LAST,
                   received_at DESC, result_id DESC)
  INCLUDE (run_id, median_ns, ci_low_ns, ci_high_ns, status);
DROP INDEX IF EXISTS case_results_web_history_latest;
DROP INDEX IF EXISTS case_results_case;
CREATE INDEX IF NOT EXISTS runs_done_created ON runs (created_at DESC) WHERE status = 'done';
