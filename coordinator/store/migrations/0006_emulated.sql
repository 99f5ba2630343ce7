-- Agents under user-mode emulation (qemu-user: HostInfo.emulated) and the results they
-- measured are kept apart from hardware numbers. agents.emulated mirrors the agent's
-- current HostInfo (the full HostInfo, with what the check saw, stays in agents.host and
-- host_snapshots.host); case_results.emulated is the agent's flag when the result was
-- stored, so a result keeps it even if the agent later re-registers natively.
-- Rows from before this migration were measured by agents that did not check: false.
ALTER TABLE agents ADD COLUMN IF NOT EXISTS emulated boolean NOT NULL DEFAULT false;
ALTER TABLE case_results ADD COLUMN IF NOT EXISTS emulated boolean NOT NULL DEFAULT false;
