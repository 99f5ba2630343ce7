-- Agents on one host (issue 31, item 5): several agents started on one machine looked
-- like separate devices, ran jobs at the same time (measuring each other's load) and
-- `compare` reported ratios between "devices" that were one machine. Each hello now
-- says which machine and boot the agent runs on (Hello.machine_id, boot_id; '' =
-- unknown) and whether it is pinned to CPUs of its own (Hello.exclusive_cpus). Agents
-- with equal, non-empty machine_id and boot_id are on one host
-- (coordinator/scheduler/same_host.h): the job claims give one job per host at a time
-- unless both were started with --exclusive_cpus.
ALTER TABLE agents ADD COLUMN IF NOT EXISTS machine_id text NOT NULL DEFAULT '';
ALTER TABLE agents ADD COLUMN IF NOT EXISTS boot_id text NOT NULL DEFAULT '';
ALTER TABLE agents ADD COLUMN IF NOT EXISTS exclusive_cpus boolean NOT NULL DEFAULT false;
-- The claims look up the busy agents of a host by its machine id.
CREATE INDEX IF NOT EXISTS agents_machine_id ON agents (machine_id) WHERE machine_id <> '';
