-- One live session per agent identity, fleet-wide (issue 32, item 2): a second process
-- presenting a copy of an agent's credential file was welcomed as that agent on another
-- coordinator, took its job as a second attempt and marked the first process offline.
-- agents.session_id and last_seen already say which stream holds the identity and when
-- it was last heard; a registration takes the identity only while that session is not
-- live (PgStore::RegisterAgent). session_instance is the Hello.instance_id of the
-- process holding it: the same process reconnecting (its old stream stale) takes its
-- session back at once, any other process waits until it ends or falls silent.
ALTER TABLE agents ADD COLUMN IF NOT EXISTS session_instance text NOT NULL DEFAULT '';
