-- The timed repetitions of a result (Counters.repetitions): every repetition run, also
-- the leading transient ones the stationarity check dropped (CaseResult.transient_samples),
-- which are not in sample_count. The counters (CPU time) are summed over all of them, so
-- CPU per repetition divides by this column, as the CLI does with the agent's proto
-- (report::CpuPerRepetitionText). NULL for rows from before this migration: readers fall
-- back to sample_count + the transient samples they know of (none: sample_count).
ALTER TABLE case_results ADD COLUMN IF NOT EXISTS repetitions bigint;
