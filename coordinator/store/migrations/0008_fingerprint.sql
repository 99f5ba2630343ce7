-- Device fingerprints (issue 14, item 2): what a result was measured under (CPU, core
-- classes, allowed CPUs and quota, memory, kernel, OS build, governor, engine version,
-- compiler and flags, emulation; engine/topology/fingerprint.h). The full fingerprint
-- stays inside case_results.result (CaseResult.fingerprint); these columns copy it for
-- the reads that never open the result (History, the web's result lists):
-- fingerprint is the serialized fleetmark.v1.DeviceFingerprint, fingerprint_hash its
-- hash as the coordinator recomputed it. Results from before (or from agents that send
-- none) keep NULL: unknown, never a change.
ALTER TABLE case_results ADD COLUMN IF NOT EXISTS fingerprint_hash text;
ALTER TABLE case_results ADD COLUMN IF NOT EXISTS fingerprint bytea;
