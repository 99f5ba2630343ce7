-- fleetmark schema v1: agents, enrollment tokens (hashed), plans, runs, jobs, case
-- results, host snapshots, schedules and schedule fires. Applied by Store::Migrate().

CREATE TABLE enrollment_tokens (
  token_id      text PRIMARY KEY,
  token_sha256  text NOT NULL UNIQUE,          -- hex SHA-256 of the secret; the secret is never stored
  description   text NOT NULL DEFAULT '',
  created_at    timestamptz NOT NULL DEFAULT now(),
  revoked_at    timestamptz
);

CREATE TABLE agents (
  agent_id           uuid PRIMARY KEY,
  name               text NOT NULL UNIQUE,
  credential_sha256  text NOT NULL,
  token_id           text REFERENCES enrollment_tokens (token_id),
  host               bytea NOT NULL,            -- serialized fleetmark.v1.HostInfo
  arch               text NOT NULL DEFAULT '',
  cpu_model          text NOT NULL DEFAULT '',
  logical_cpus       integer NOT NULL DEFAULT 0,
  physical_cores     integer NOT NULL DEFAULT 0,
  labels             jsonb NOT NULL DEFAULT '{}'::jsonb,
  engine_version     text NOT NULL DEFAULT '',
  strategies         text[] NOT NULL DEFAULT '{}',
  workloads          text[] NOT NULL DEFAULT '{}',
  scenarios          text[] NOT NULL DEFAULT '{}',
  state              text NOT NULL DEFAULT 'offline' CHECK (state IN ('online', 'offline')),
  coordinator_id     text NOT NULL DEFAULT '',
  session_id         text NOT NULL DEFAULT '',  -- the live stream's id; offline only from that stream
  last_seen          timestamptz,
  rss_bytes          bigint NOT NULL DEFAULT 0,
  cpu_seconds        double precision NOT NULL DEFAULT 0,
  created_at         timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE host_snapshots (
  snapshot_id  bigserial PRIMARY KEY,
  agent_id     uuid NOT NULL REFERENCES agents (agent_id) ON DELETE CASCADE,
  taken_at     timestamptz NOT NULL DEFAULT now(),
  host         bytea NOT NULL                   -- serialized fleetmark.v1.HostInfo
);
CREATE INDEX host_snapshots_agent ON host_snapshots (agent_id, taken_at);

CREATE TABLE plans (
  plan_id     uuid PRIMARY KEY,
  name        text NOT NULL,
  plan        bytea NOT NULL,                   -- serialized fleetmark.v1.Plan
  plan_text   text NOT NULL,                    -- protobuf text format, for people
  created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE runs (
  run_id        uuid PRIMARY KEY,
  plan_id       uuid NOT NULL REFERENCES plans (plan_id),
  plan_name     text NOT NULL,
  status        text NOT NULL DEFAULT 'queued'
                CHECK (status IN ('queued', 'running', 'done', 'failed', 'cancelled')),
  selector      text NOT NULL DEFAULT '',
  quick         boolean NOT NULL DEFAULT false,
  filter        text NOT NULL DEFAULT '',
  submitted_by  text NOT NULL DEFAULT '',
  created_at    timestamptz NOT NULL DEFAULT now(),
  finished_at   timestamptz
);
CREATE INDEX runs_created ON runs (created_at DESC);

CREATE TABLE jobs (
  job_id            uuid PRIMARY KEY,
  run_id            uuid NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
  agent_id          uuid NOT NULL REFERENCES agents (agent_id),
  status            text NOT NULL DEFAULT 'queued'
                    CHECK (status IN ('queued', 'assigned', 'running', 'done', 'failed', 'cancelled')),
  -- Why a job failed: 'infrastructure' (agent lost past its lease, attempts used up)
  -- or 'benchmark' (the agent reported a failure); '' otherwise.
  failure_kind      text NOT NULL DEFAULT '' CHECK (failure_kind IN ('', 'infrastructure', 'benchmark')),
  message           text NOT NULL DEFAULT '',
  attempts          integer NOT NULL DEFAULT 0,
  max_attempts      integer NOT NULL DEFAULT 3 CHECK (max_attempts BETWEEN 1 AND 100),
  lease_expires_at  timestamptz,
  cases_done        integer NOT NULL DEFAULT 0,
  cases_total       integer NOT NULL DEFAULT 0,
  coordinator_id    text NOT NULL DEFAULT '',
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now(),
  finished_at       timestamptz
);
CREATE INDEX jobs_run ON jobs (run_id);
CREATE INDEX jobs_agent_status ON jobs (agent_id, status, created_at);
CREATE INDEX jobs_lease ON jobs (lease_expires_at) WHERE status IN ('assigned', 'running');
-- A device runs one job at a time: at most one assigned/running job per agent, even
-- with several coordinators claiming.
CREATE UNIQUE INDEX jobs_one_active_per_agent ON jobs (agent_id) WHERE status IN ('assigned', 'running');

CREATE TABLE case_results (
  result_id              uuid PRIMARY KEY,      -- chosen by the agent; replays are idempotent
  run_id                 uuid NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
  job_id                 uuid NOT NULL REFERENCES jobs (job_id) ON DELETE CASCADE,
  agent_id               uuid NOT NULL REFERENCES agents (agent_id),
  -- dimensions
  case_id                text NOT NULL,
  scenario               text NOT NULL,
  workload               text NOT NULL,
  io_mode                text NOT NULL,
  strategy               text NOT NULL,
  strategy_label         text NOT NULL,
  threads                integer NOT NULL,      -- as requested (0 = default)
  placement              text NOT NULL,
  status                 text NOT NULL,         -- CaseStatus name without prefix, e.g. 'ok'
  message                text NOT NULL DEFAULT '',
  stop_reason            text NOT NULL DEFAULT '',
  -- statistics (ns)
  sample_count           bigint NOT NULL DEFAULT 0,
  min_ns                 double precision,
  median_ns              double precision,
  max_ns                 double precision,
  mean_ns                double precision,
  stddev_ns              double precision,
  mad_ns                 double precision,
  ci_low_ns              double precision,
  ci_high_ns             double precision,
  ci_half_width_percent  double precision,
  outliers               bigint,
  -- counters
  threads_used           integer NOT NULL DEFAULT 0,
  peak_in_flight         integer NOT NULL DEFAULT 0,
  cpu_user_seconds       double precision,
  cpu_system_seconds     double precision,
  allocations            bigint,
  allocated_bytes        bigint,
  peak_threads           integer,
  rss_delta_bytes        bigint,
  throttled              boolean NOT NULL DEFAULT false,
  samples_ns             bigint[] NOT NULL DEFAULT '{}',
  started_at             timestamptz,
  finished_at            timestamptz,
  engine_version         text NOT NULL DEFAULT '',
  result                 bytea NOT NULL,        -- the full serialized fleetmark.v1.CaseResult
  received_at            timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX case_results_run ON case_results (run_id, agent_id);
CREATE INDEX case_results_case ON case_results (case_id, agent_id);

CREATE TABLE schedules (
  schedule_id   uuid PRIMARY KEY,
  name          text NOT NULL UNIQUE,
  cron          text NOT NULL,                  -- 5 fields, UTC
  plan_id       uuid NOT NULL REFERENCES plans (plan_id),
  selector      text NOT NULL DEFAULT '',
  quick         boolean NOT NULL DEFAULT false,
  created_at    timestamptz NOT NULL DEFAULT now(),
  next_fire_at  timestamptz
);

CREATE TABLE schedule_fires (
  schedule_id     uuid NOT NULL REFERENCES schedules (schedule_id) ON DELETE CASCADE,
  slot            timestamptz NOT NULL,
  run_id          uuid REFERENCES runs (run_id) ON DELETE SET NULL,
  coordinator_id  text NOT NULL DEFAULT '',
  fired_at        timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (schedule_id, slot)             -- a slot fires exactly once
);
