// Store: schedules and their fires (one per schedule and slot across coordinators).
#include <algorithm>

#include <pqxx/pqxx>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "coordinator/store/pg_store.h"
#include "coordinator/store/store_internal.h"
#include "coordinator/store/store_runs.h"
#include "engine/common/name_rule.h"
#include "engine/common/status_macros.h"

namespace fleetmark::store {

using internal::InTransaction;
using internal::InTransactionOr;

namespace internal {

// Schedule names follow the agent name rule (agent_service.cc): they appear in
// commands (`schedules delete NAME`) and in runs' submitted_by ("schedule:NAME").
constexpr size_t kMaxScheduleName = 64;

absl::Status CheckSchedule(const v1::Schedule& schedule) {
  const std::string& name = schedule.name();
  if (!IsName(name, kMaxScheduleName)) {
    return absl::InvalidArgumentError(NameRuleMessage("schedule.name", name, kMaxScheduleName));
  }
  if (schedule.cron().empty()) return absl::InvalidArgumentError("schedule.cron: must not be empty");
  return absl::OkStatus();
}

}  // namespace internal

using internal::CheckSchedule;

absl::StatusOr<v1::Schedule> PgStore::CreateSchedule(const v1::Schedule& schedule, absl::Time next_fire) {
  FLEETMARK_RETURN_IF_ERROR(CheckSchedule(schedule));
  auto created = InTransactionOr(
      *pool_, absl::StrCat("create schedule ", schedule.name()), [&](pqxx::work& txn) -> absl::StatusOr<v1::Schedule> {
        const std::string plan_id = internal::InsertPlan(txn, schedule.plan());
        pqxx::result r = txn.exec_params(
            "INSERT INTO schedules (schedule_id, name, cron, plan_id, selector, quick, next_fire_at, filter) "
            "VALUES (gen_random_uuid(), $1, $2, $3::uuid, $4, $5, $6::timestamptz, $7) RETURNING " +
                internal::UnixNs("created_at"),
            schedule.name(), schedule.cron(), plan_id, schedule.selector(), schedule.quick(),
            internal::TimeParam(next_fire), schedule.filter());
        v1::Schedule out = schedule;
        out.set_paused(false);
        out.set_created_unix_ns(r[0][0].as<int64_t>());
        out.set_next_fire_unix_ns(absl::ToUnixNanos(next_fire));
        return out;
      });
  if (absl::IsAlreadyExists(created.status())) {
    return absl::AlreadyExistsError(absl::StrCat("schedule \"", schedule.name(),
                                                 "\" already exists; to replace it, delete it first: "
                                                 "fleetmark schedules delete ",
                                                 schedule.name()));
  }
  return created;
}

absl::StatusOr<PgStore::SeedOutcome> PgStore::SeedDefaultSchedule(const v1::Schedule& schedule, absl::Time next_fire) {
  FLEETMARK_RETURN_IF_ERROR(CheckSchedule(schedule));
  const std::string seed_name = absl::StrCat("schedule:", schedule.name());
  return InTransactionOr(
      *pool_, absl::StrCat("seed schedule ", schedule.name()), [&](pqxx::work& txn) -> absl::StatusOr<SeedOutcome> {
        // A coordinator seeding at the same moment holds this key until it commits; then
        // the conflict is seen here and the schedule it created is updated below.
        const bool first_seed = !txn.exec_params(
                                        "INSERT INTO seeded_defaults (name, seeded_by) VALUES ($1, $2) "
                                        "ON CONFLICT (name) DO NOTHING RETURNING 1",
                                        seed_name, options_.coordinator_id)
                                     .empty();
        const bool exists =
            !txn.exec_params("SELECT 1 FROM schedules WHERE name = $1 FOR UPDATE", schedule.name()).empty();
        if (!exists && !first_seed) return SeedOutcome::kLeftDeleted;
        const std::string plan_id = internal::InsertPlan(txn, schedule.plan());
        txn.exec_params(
            "INSERT INTO schedules (schedule_id, name, cron, plan_id, selector, quick, next_fire_at, filter) "
            "VALUES (gen_random_uuid(), $1, $2, $3::uuid, $4, $5, $6::timestamptz, $7) "
            "ON CONFLICT (name) DO UPDATE SET cron = EXCLUDED.cron, plan_id = EXCLUDED.plan_id,"
            " selector = EXCLUDED.selector, quick = EXCLUDED.quick, next_fire_at = EXCLUDED.next_fire_at,"
            " filter = EXCLUDED.filter",
            schedule.name(), schedule.cron(), plan_id, schedule.selector(), schedule.quick(),
            internal::TimeParam(next_fire), schedule.filter());
        return exists ? SeedOutcome::kUpdated : SeedOutcome::kCreated;
      });
}

absl::StatusOr<std::vector<v1::Schedule>> PgStore::ListSchedules() {
  return InTransaction(*pool_, "list schedules", [&](pqxx::work& txn) {
    std::vector<v1::Schedule> schedules;
    // The latest fire per schedule: the newest entry of schedule_fires' primary key.
    pqxx::result r =
        txn.exec("SELECT s.name, s.cron, p.plan, s.selector, s.quick, " + internal::UnixNs("s.created_at") +
                 ", coalesce(" + internal::UnixNs("s.next_fire_at") + ", 0), coalesce(" + internal::UnixNs("f.slot") +
                 ", 0), f.run_id::text, coalesce(f.note, ''), s.filter, s.paused "
                 "FROM schedules s JOIN plans p ON p.plan_id = s.plan_id "
                 "LEFT JOIN LATERAL (SELECT slot, run_id, note FROM schedule_fires WHERE schedule_id = s.schedule_id"
                 "                   ORDER BY slot DESC LIMIT 1) f ON true "
                 "ORDER BY s.name");
    for (const auto& row : r) {
      v1::Schedule& s = schedules.emplace_back();
      s.set_name(row[0].as<std::string>());
      s.set_cron(row[1].as<std::string>());
      internal::ParseProtoField(row[2], s.mutable_plan());
      s.set_selector(row[3].as<std::string>());
      s.set_quick(row[4].as<bool>());
      s.set_created_unix_ns(row[5].as<int64_t>());
      s.set_next_fire_unix_ns(row[6].as<int64_t>());
      s.set_last_fire_slot_unix_ns(row[7].as<int64_t>());
      s.set_filter(row[10].as<std::string>());
      s.set_paused(row[11].as<bool>());
      if (!row[8].is_null()) {
        s.set_last_fire_outcome(absl::StrCat("run ", row[8].as<std::string>()));
      } else if (s.last_fire_slot_unix_ns() != 0) {
        // No run: skipped (the note says why), or its run was deleted since.
        const std::string note = row[9].as<std::string>();
        s.set_last_fire_outcome(note.empty() ? "no run" : note);
      }
    }
    return schedules;
  });
}

absl::Status PgStore::DeleteSchedule(const std::string& name) {
  return InTransactionOr(*pool_, "delete schedule", [&](pqxx::work& txn) -> absl::Status {
    pqxx::result r = txn.exec_params("DELETE FROM schedules WHERE name = $1", name);
    if (r.affected_rows() == 0) return absl::NotFoundError(absl::StrCat("schedule \"", name, "\" not found"));
    return absl::OkStatus();
  });
}

absl::Status PgStore::SetSchedulePaused(const std::string& name, bool paused) {
  return InTransactionOr(*pool_, "pause schedule", [&](pqxx::work& txn) -> absl::Status {
    pqxx::result r = txn.exec_params("UPDATE schedules SET paused = $2 WHERE name = $1", name, paused);
    if (r.affected_rows() == 0) return absl::NotFoundError(absl::StrCat("schedule \"", name, "\" not found"));
    return absl::OkStatus();
  });
}

absl::Status PgStore::SetScheduleNextFire(const std::string& name, absl::Time next_fire) {
  return InTransaction(*pool_, "schedule next fire",
                       [&](pqxx::work& txn) {
                         txn.exec_params("UPDATE schedules SET next_fire_at = $2::timestamptz WHERE name = $1", name,
                                         internal::TimeParam(next_fire));
                         return true;
                       })
      .status();
}

absl::StatusOr<std::optional<v1::RunInfo>> PgStore::FireSchedule(const std::string& schedule_name, absl::Time slot,
                                                                 const NewRun& run, const std::string& skipped) {
  if (!run.agent_ids.empty()) FLEETMARK_RETURN_IF_ERROR(internal::ValidateNewRun(run));
  return InTransactionOr(
      *pool_, absl::StrCat("fire schedule ", schedule_name),
      [&](pqxx::work& txn) -> absl::StatusOr<std::optional<v1::RunInfo>> {
        pqxx::result s = txn.exec_params("SELECT schedule_id::text FROM schedules WHERE name = $1", schedule_name);
        if (s.empty()) return absl::NotFoundError(absl::StrCat("schedule \"", schedule_name, "\" not found"));
        const std::string schedule_id = s[0][0].as<std::string>();
        pqxx::result fired = txn.exec_params(
            "INSERT INTO schedule_fires (schedule_id, slot, coordinator_id, note)"
            " VALUES ($1::uuid, $2::timestamptz, $3, $4) "
            "ON CONFLICT (schedule_id, slot) DO NOTHING RETURNING 1",
            schedule_id, internal::TimeParam(slot), options_.coordinator_id,
            run.agent_ids.empty() ? (skipped.empty() ? std::string("skipped: no agent selected") : skipped)
                                  : std::string());
        if (fired.empty()) return std::optional<v1::RunInfo>();
        if (run.agent_ids.empty()) return std::optional<v1::RunInfo>(v1::RunInfo());
        v1::RunInfo info = internal::CreateRunInTxn(txn, run);
        txn.exec_params(
            "UPDATE schedule_fires SET run_id = $3::uuid WHERE schedule_id = $1::uuid AND slot = $2::timestamptz",
            schedule_id, internal::TimeParam(slot), info.run_id());
        return std::optional<v1::RunInfo>(std::move(info));
      });
}

absl::StatusOr<std::optional<absl::Time>> PgStore::LastFiredSlot(const std::string& schedule_name) {
  return InTransaction(*pool_, "last fired slot", [&](pqxx::work& txn) {
    pqxx::result r = txn.exec_params(
        "SELECT " + internal::UnixNs("max(f.slot)") +
            " FROM schedule_fires f JOIN schedules s ON s.schedule_id = f.schedule_id WHERE s.name = $1",
        schedule_name);
    if (r.empty() || r[0][0].is_null()) return std::optional<absl::Time>();
    return std::optional<absl::Time>(absl::FromUnixNanos(r[0][0].as<int64_t>()));
  });
}

}  // namespace fleetmark::store
