#include "coordinator/store/store_statements.h"

namespace fleetmark::store::internal {

const std::vector<std::pair<std::string, std::string>>& PreparedStatements() {
  static const auto* kStatements = new std::vector<std::pair<std::string, std::string>>{
      {"fm_find_token", "SELECT token_id, revoked_at FROM enrollment_tokens WHERE token_sha256 = $1"},
      {"fm_find_agent",
       "SELECT a.agent_id::text, a.name, a.credential_sha256, coalesce(t.revoked_at IS NOT NULL, false) "
       "FROM agents a LEFT JOIN enrollment_tokens t ON t.token_id = a.token_id "
       "WHERE a.name = $1 AND a.removed_at IS NULL"},
      {"fm_agent_offline",
       "UPDATE agents SET state = 'offline', last_seen = now() "
       "WHERE agent_id = $1::uuid AND session_id = $2"},
      // Liveness counts only for the stream holding the agent's session (a displaced one
      // must not keep another process's session alive).
      // The liveness flush never waits for a row lock, so it is never part of a deadlock:
      // rows another transaction holds (a job finishing: job row, then its agent row,
      // then its run row) are skipped and written by the next flush, one heartbeat
      // interval later (the lease is many intervals long). Waiting for them deadlocked
      // against job ends in every fan-out of the fleet benchmark: the flush held
      // agent rows and waited for job rows, the job ends the reverse, each cycle cost
      // deadlock_timeout (1 s), and the stalled acks ended 1 000 agents' streams.
      {"fm_liveness_agents",
       "WITH v AS (SELECT * FROM unnest($1::uuid[], $2::timestamptz[], $3::bigint[], $4::float8[], $5::text[])"
       "           AS v(id, seen, rss, cpu, session)), "
       "l AS (SELECT a.agent_id FROM agents a WHERE a.agent_id IN (SELECT id FROM v) "
       "      ORDER BY a.agent_id FOR NO KEY UPDATE SKIP LOCKED) "
       "UPDATE agents a SET last_seen = v.seen, rss_bytes = v.rss, cpu_seconds = v.cpu "
       "FROM v, l WHERE a.agent_id = l.agent_id AND v.id = l.agent_id AND a.session_id = v.session"},
      {"fm_liveness_leases",
       "WITH l AS (SELECT job_id FROM jobs WHERE agent_id = ANY($1::uuid[]) AND status IN ('assigned', 'running')"
       "           ORDER BY job_id FOR NO KEY UPDATE SKIP LOCKED) "
       "UPDATE jobs j SET lease_expires_at = now() + $2::interval FROM l WHERE j.job_id = l.job_id"},
      {"fm_claim_jobs",
       "WITH cand AS ("
       "  SELECT j.job_id FROM jobs j"
       "  WHERE j.agent_id = ANY($1::uuid[]) AND j.status = 'queued'"
       "    AND j.job_id = (SELECT j2.job_id FROM jobs j2 WHERE j2.agent_id = j.agent_id"
       "                    AND j2.status = 'queued' ORDER BY j2.created_at, j2.job_id LIMIT 1)"
       "    AND NOT EXISTS (SELECT 1 FROM jobs b WHERE b.agent_id = j.agent_id"
       "                    AND b.status IN ('assigned', 'running'))"
       "  FOR UPDATE OF j SKIP LOCKED) "
       "UPDATE jobs j SET status = 'assigned', attempts = j.attempts + 1,"
       "  lease_expires_at = now() + $2::interval, coordinator_id = $3, updated_at = now() "
       "FROM cand WHERE j.job_id = cand.job_id "
       "RETURNING j.job_id::text, j.run_id::text, j.agent_id::text, j.attempts"},
      {"fm_job_assignment_data",
       "SELECT r.run_id::text, r.quick, r.filter, p.plan FROM runs r JOIN plans p ON p.plan_id = r.plan_id "
       "WHERE r.run_id = ANY($1::uuid[])"},
      {"fm_jobs_update",
       "UPDATE jobs j SET status = 'running',"
       // Never backwards: a new attempt reports from its skipped (stored) cases up, and
       // a late report of an earlier moment must not undo a later one.
       " cases_done = CASE WHEN v.total >= 0 THEN greatest(j.cases_done, v.done) ELSE j.cases_done END,"
       " cases_total = CASE WHEN v.total >= 0 THEN v.total ELSE j.cases_total END,"
       " lease_expires_at = now() + $5::interval, updated_at = now() "
       "FROM unnest($1::uuid[], $2::uuid[], $3::int[], $4::int[]) AS v(job, agent, done, total) "
       "WHERE j.job_id = v.job AND j.agent_id = v.agent AND j.status IN ('assigned', 'running')"},
      // Job ends (FinishJobs): the live jobs among (job, agent) pairs, locked in job id
      // order (two batches never wait for each other in a cycle), ended; one row per job
      // ended now. A pair repeated in the batch ends its job once (the first pair's
      // status).
      {"fm_jobs_finish",
       "WITH v AS (SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[])"
       "           WITH ORDINALITY AS v(job, agent, status, kind, message, i)), "
       "l AS (SELECT j.job_id, (SELECT min(v.i) FROM v WHERE v.job = j.job_id AND v.agent = j.agent_id) AS i"
       "      FROM jobs j WHERE j.job_id IN (SELECT job FROM v) AND j.status IN ('assigned', 'running')"
       "        AND EXISTS (SELECT 1 FROM v WHERE v.job = j.job_id AND v.agent = j.agent_id)"
       "      ORDER BY j.job_id FOR NO KEY UPDATE) "
       "UPDATE jobs j SET status = v.status, failure_kind = v.kind, message = v.message, lease_expires_at = NULL,"
       " finished_at = now(), updated_at = now(),"
       " cases_done = CASE WHEN v.status = 'done' THEN greatest(j.cases_done, j.cases_total) ELSE j.cases_done END "
       "FROM l, v WHERE j.job_id = l.job_id AND v.i = l.i AND j.status IN ('assigned', 'running') "
       "RETURNING v.i, j.run_id::text"},
      // Of (job, agent) pairs reported done, the live jobs with fewer cases stored (any
      // status: a cancelled placeholder accounts for its case) than their run's case
      // ids: 1-based position, cases, cases stored. Runs without case ids (from before
      // migration 0005) are not checked.
      {"fm_jobs_missing_results",
       "SELECT v.i, cardinality(r.case_ids), s.stored "
       "FROM unnest($1::uuid[], $2::uuid[]) WITH ORDINALITY AS v(job, agent, i) "
       "JOIN jobs j ON j.job_id = v.job AND j.agent_id = v.agent AND j.status IN ('assigned', 'running') "
       "JOIN runs r ON r.run_id = j.run_id "
       "CROSS JOIN LATERAL (SELECT count(DISTINCT c.case_id) AS stored FROM case_results c"
       "  WHERE c.run_created_at = r.created_at AND c.run_id = j.run_id AND c.agent_id = j.agent_id"
       "    AND c.job_id = j.job_id) s "
       "WHERE cardinality(r.case_ids) > s.stored"},
      // Of (job, agent) pairs, the 1-based positions of those naming no job of that agent.
      {"fm_jobs_not_owned",
       "SELECT v.i FROM unnest($1::uuid[], $2::uuid[]) WITH ORDINALITY AS v(job, agent, i) "
       "WHERE NOT EXISTS (SELECT 1 FROM jobs j WHERE j.job_id = v.job AND j.agent_id = v.agent)"},
      // Health after job ends (UpdateAgentsHealth), one row per agent: locked in id order,
      // the deferred streak extended (deferred) or reset; returns it and the health.
      {"fm_agents_job_end",
       "WITH v AS (SELECT * FROM unnest($1::uuid[], $2::bool[]) AS v(agent, deferred)), "
       "l AS (SELECT a.agent_id FROM agents a WHERE a.agent_id IN (SELECT agent FROM v)"
       "      ORDER BY a.agent_id FOR NO KEY UPDATE) "
       "UPDATE agents a SET deferred_in_a_row = CASE WHEN v.deferred THEN a.deferred_in_a_row + 1 ELSE 0 END "
       "FROM l, v WHERE a.agent_id = l.agent_id AND v.agent = a.agent_id "
       "RETURNING a.agent_id::text, a.health, a.deferred_in_a_row"},
      // Of (job, agent, run) triples, the jobs that stored a result of a strategy label
      // LIKE $4 (calibration): through case_results_run (run_id, agent_id), pruned to the
      // run's partition by its creation time.
      {"fm_calibrated_jobs",
       "SELECT DISTINCT v.job::text FROM unnest($1::uuid[], $2::uuid[], $3::uuid[]) AS v(job, agent, run) "
       "JOIN runs r ON r.run_id = v.run "
       "WHERE EXISTS (SELECT 1 FROM case_results c WHERE c.run_created_at = r.created_at AND c.run_id = v.run"
       "              AND c.agent_id = v.agent AND c.job_id = v.job AND c.strategy_label LIKE $4)"},
      {"fm_refresh_run",
       "UPDATE runs r SET status = s.new_status,"
       " finished_at = CASE WHEN s.new_status IN ('done', 'failed', 'cancelled')"
       "                    THEN coalesce(r.finished_at, now()) ELSE NULL END "
       "FROM (SELECT CASE"
       "  WHEN count(*) FILTER (WHERE status IN ('queued', 'assigned', 'running')) > 0 THEN"
       "    CASE WHEN count(*) FILTER (WHERE status <> 'queued' OR attempts > 0) > 0"
       "         THEN 'running' ELSE 'queued' END"
       "  WHEN count(*) FILTER (WHERE status = 'failed') > 0 THEN 'failed'"
       "  WHEN count(*) FILTER (WHERE status = 'cancelled') > 0 THEN 'cancelled'"
       "  ELSE 'done' END AS new_status FROM jobs WHERE run_id = $1::uuid) s "
       "WHERE r.run_id = $1::uuid AND r.status <> 'cancelled' AND r.status <> s.new_status"},
      // Leases that ran out (or, with $1, agent $2's jobs but $3): each job's end is
      // done when every case of its run has a stored result that is not a cancelled
      // placeholder (measured; only the report is missing), else failed at its last
      // attempt, else queued again.
      {"fm_expire_jobs",
       "WITH locked AS ("
       "  SELECT job_id FROM jobs WHERE status IN ('assigned', 'running')"
       "    AND ((NOT $1 AND lease_expires_at < now()) OR ($1 AND agent_id = $2::uuid AND job_id::text <> $3))"
       "  FOR UPDATE SKIP LOCKED), "
       "expired AS ("
       "  SELECT l.job_id, CASE"
       "    WHEN cardinality(r.case_ids) > 0 AND cardinality(r.case_ids) <= ("
       "      SELECT count(DISTINCT c.case_id) FROM case_results c"
       "      WHERE c.run_created_at = r.created_at AND c.run_id = j.run_id AND c.agent_id = j.agent_id"
       "        AND c.job_id = j.job_id AND c.status <> 'cancelled') THEN 'done'"
       "    WHEN j.attempts >= j.max_attempts THEN 'failed' ELSE 'queued' END AS outcome"
       "  FROM locked l JOIN jobs j ON j.job_id = l.job_id JOIN runs r ON r.run_id = j.run_id) "
       "UPDATE jobs j SET status = e.outcome,"
       " failure_kind = CASE WHEN e.outcome = 'failed' THEN 'infrastructure' ELSE '' END,"
       " message = CASE WHEN e.outcome = 'done' THEN 'every case stored; agent ' || a.name"
       "   || CASE WHEN $1 THEN ' restarted' ELSE ' lost (lease expired)' END"
       "   || ' before its report came, after attempt ' || j.attempts || ' of ' || j.max_attempts"
       "   ELSE 'infrastructure: agent ' || a.name"
       "   || CASE WHEN $1 THEN ' restarted' ELSE ' lost (lease expired)' END ||"
       "   CASE WHEN e.outcome = 'failed'"
       "        THEN ' after ' || j.attempts || ' of ' || j.max_attempts || ' attempts'"
       "        ELSE ', re-queued after attempt ' || j.attempts || ' of ' || j.max_attempts END END,"
       " lease_expires_at = NULL, updated_at = now(),"
       // A re-queued job waits for its agent at most the re-queue timeout ($4; a later
       // expiry of submit --queue_offline stands): then fm_expire_queued fails it.
       " expires_at = CASE WHEN e.outcome = 'queued' THEN greatest(j.expires_at, now() + $4::interval)"
       "                   ELSE j.expires_at END,"
       " finished_at = CASE WHEN e.outcome = 'queued' THEN NULL ELSE now() END,"
       " cases_done = CASE WHEN e.outcome = 'done' THEN greatest(j.cases_done, j.cases_total) ELSE j.cases_done END "
       "FROM expired e, agents a WHERE j.job_id = e.job_id AND a.agent_id = j.agent_id "
       "RETURNING j.job_id::text, j.run_id::text, j.agent_id::text, j.status, j.attempts"},
      // Queued jobs past their expiry (submit --queue_offline; a re-queued job, attempts
      // > 0, the re-queue timeout): failed as infrastructure.
      {"fm_expire_queued",
       "WITH expired AS ("
       "  SELECT job_id FROM jobs WHERE status = 'queued' AND expires_at < now() FOR UPDATE SKIP LOCKED) "
       "UPDATE jobs j SET status = 'failed', failure_kind = 'infrastructure',"
       " message = CASE WHEN j.attempts > 0"
       "   THEN j.message || '; not taken back by '"
       "     || to_char(j.expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')"
       "     || ' UTC (coordinator --requeue_timeout)'"
       "   ELSE 'infrastructure: expired: agent ' || a.name || ' did not take the job by '"
       "   || to_char(j.expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') || ' UTC (submit --queue_offline)' END,"
       " updated_at = now(), finished_at = now() "
       "FROM expired, agents a WHERE j.job_id = expired.job_id AND a.agent_id = j.agent_id "
       "RETURNING j.job_id::text, j.run_id::text, j.agent_id::text, j.status, j.attempts"},
      // Ids of one run's creation time: the partition key prunes the scan to its month at
      // executor start (without it every monthly partition's index was probed per id).
      {"fm_existing_results",
       "SELECT result_id::text FROM case_results WHERE result_id = ANY($1::uuid[]) AND run_created_at = "
       "$2::timestamptz"},
      // The runs' case ids, one row each; a run without them (from before migration
      // 0005) is one row with NULL. Read once per run (RunCaseIds).
      {"fm_run_case_ids",
       "SELECT r.run_id::text, c.case_id FROM runs r LEFT JOIN LATERAL unnest(r.case_ids) AS c(case_id) ON true "
       "WHERE r.run_id = ANY($1::uuid[])"},
      // The case ids of each job's stored results (not the cancelled placeholders), for a
      // job claimed again: case_results_run (run_id, agent_id) narrows to the job's rows.
      {"fm_stored_case_ids",
       "SELECT DISTINCT j.job_id::text, c.case_id FROM jobs j JOIN case_results c"
       " ON c.run_id = j.run_id AND c.agent_id = j.agent_id AND c.job_id = j.job_id "
       "WHERE j.job_id = ANY($1::uuid[]) AND c.status <> 'cancelled' ORDER BY 1, 2"},
      {"fm_jobs_owner",
       "SELECT j.job_id::text, j.agent_id::text, j.run_id::text, a.emulated,"
       " to_char(r.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') || '+00' FROM jobs j"
       " JOIN agents a ON a.agent_id = j.agent_id JOIN runs r ON r.run_id = j.run_id WHERE j.job_id = ANY($1::uuid[])"},
  };
  return *kStatements;
}

}  // namespace fleetmark::store::internal
