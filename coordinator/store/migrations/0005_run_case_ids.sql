-- The case ids a run measures (its plan's expanded cases after --quick and --filter,
-- as the coordinator computed them when it created the run): a result for a case id
-- not among them is rejected. NULL for runs created before this migration (their
-- results are not checked against the plan).
ALTER TABLE runs ADD COLUMN case_ids text[];
