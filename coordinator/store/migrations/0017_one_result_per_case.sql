-- One result per (job, case) whatever the attempt (issue 32, item 2): two processes
-- running one job (a copied credential) stored 25 rows for 20 cases. Ingestion inserts
-- with ON CONFLICT DO NOTHING (PgStore::InsertResults): a second result of a case is
-- acknowledged as a duplicate and not stored. `cancelled` rows are placeholders of a
-- case cut short (the case is measured again by a later attempt: fm_stored_case_ids
-- skips them) and are not counted. The index holds the partition key (a run's results
-- share one partition), as every unique index of the partitioned table must.
--
-- Cases already stored twice keep the row every reader shows (the newest: finished_at
-- DESC NULLS LAST, received_at DESC, as export, the CLI and the web view pick it); the
-- hidden older copies are deleted.
DELETE FROM case_results c USING (
  SELECT result_id, run_created_at,
         row_number() OVER (PARTITION BY job_id, case_id
                            ORDER BY finished_at DESC NULLS LAST, received_at DESC, result_id DESC) AS n
  FROM case_results WHERE status <> 'cancelled') d
WHERE d.n > 1 AND c.result_id = d.result_id AND c.run_created_at = d.run_created_at;
CREATE UNIQUE INDEX IF NOT EXISTS case_results_one_per_case
  ON case_results (job_id, case_id, run_created_at) WHERE status <> 'cancelled';
