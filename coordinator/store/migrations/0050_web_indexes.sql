-- Indexes for the web view's read queries (coordinator/store/web_queries.cc).
-- History: per case and agent, the runs in time order; covering the columns the
-- history chart reads so the lookup does not touch the wide case_results rows.
CREATE INDEX IF NOT EXISTS case_results_web_history
  ON case_results (case_id, agent_id)
  INCLUDE (run_id, result_id, median_ns, ci_low_ns, ci_high_ns, status);
