-- An agent's name belongs to its credential: a new enrollment under the name of an
-- agent that exists is refused, fleet-wide (this unique index, not one coordinator's
-- memory). `fleetmark agents remove NAME` marks the agent removed (removed_at): its
-- results and history are kept, its credential stops working, it is listed only by
-- `agents list --all` and never selected, and the name is free for a new enrollment,
-- which gets a new agent id.
ALTER TABLE agents ADD COLUMN removed_at timestamptz;
ALTER TABLE agents DROP CONSTRAINT IF EXISTS agents_name_key;
CREATE UNIQUE INDEX agents_name_active ON agents (name) WHERE removed_at IS NULL;
