#include "coordinator/store/connection_pool.h"
#include "engine/common/steady_wait.h"

#include <atomic>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "coordinator/store/store.h"

namespace fleetmark::store {
namespace {

// DatabaseErrorCount() (store.h).
std::atomic<uint64_t> database_errors{0};

}  // namespace

ConnectionPool::Lease::Lease(Lease&& other) noexcept
    : pool_(other.pool_), conn_(std::move(other.conn_)), discard_(other.discard_) {
  other.pool_ = nullptr;
}

ConnectionPool::Lease::~Lease() {
  if (pool_ != nullptr && conn_ != nullptr) pool_->Return(std::move(conn_), discard_);
}

absl::StatusOr<std::unique_ptr<ConnectionPool>> ConnectionPool::Create(ConnectionOptions options) {
  if (options.uri.empty()) {
    return absl::InvalidArgumentError("database uri: must not be empty");
  }
  if (options.pool_size < 1 || options.pool_size > 256) {
    return absl::InvalidArgumentError(
        absl::StrCat("database pool_size: 1 <= pool_size <= 256, got ", options.pool_size));
  }
  std::unique_ptr<ConnectionPool> pool(new ConnectionPool(std::move(options)));
  if (!pool->options_.connect_at_create) return pool;
  auto first = pool->Open();
  if (!first.ok()) return first.status();
  {
    absl::MutexLock lock(&pool->mu_);
    pool->idle_.push_back(std::move(*first));
    pool->open_ = 1;
  }
  return pool;
}

void ConnectionPool::AddPreparedStatement(std::string name, std::string sql) {
  absl::MutexLock lock(&mu_);
  for (auto& conn : idle_) conn->prepare(name, sql);
  prepared_.emplace_back(std::move(name), std::move(sql));
}

namespace {

// `uri` with libpq's connect_timeout (10 s) unless it sets one: without it a database
// address held by a process that accepts and never answers blocks a connect (and the
// coordinator's shutdown) for good. URI and keyword=value forms (libpq docs, 34.1.1).
std::string WithConnectTimeout(const std::string& uri) {
  if (uri.find("connect_timeout") != std::string::npos) return uri;
  if (absl::StartsWith(uri, "postgresql://") || absl::StartsWith(uri, "postgres://")) {
    return absl::StrCat(uri, uri.find('?') == std::string::npos ? "?" : "&", "connect_timeout=10");
  }
  return absl::StrCat(uri, uri.empty() ? "" : " ", "connect_timeout=10");
}

// libpq's messages span lines ("ERROR:  ...\nDETAIL:  ...", "connection to server ... failed:
// Connection refused\n\tIs the server running ...?\n"): one line, its lines joined by "; ",
// so logs and CLI errors show no escaped newlines.
std::string OneLine(std::string_view message) {
  std::vector<std::string> lines;
  for (absl::string_view line : absl::StrSplit(absl::string_view(message.data(), message.size()), '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (!line.empty()) lines.emplace_back(line);
  }
  return absl::StrJoin(lines, "; ");
}

}  // namespace

absl::StatusOr<std::unique_ptr<pqxx::connection>> ConnectionPool::Connect(const ConnectionOptions& options) {
  try {
    auto conn = std::make_unique<pqxx::connection>(WithConnectTimeout(options.uri));
    pqxx::nontransaction txn(*conn);
    txn.exec_params("SELECT set_config('application_name', $1, false)", options.application_name);
    // The store's statements are short index lookups: JIT compilation (tens of ms on a
    // query the planner costs high on a large case_results) and parallel workers (a
    // gather over partitions) cost more than they save (EXPLAIN ANALYZE of the web
    // queries at 10 M results, docs/operations.md "Storage").
    txn.exec("SET jit = off");
    txn.exec("SET max_parallel_workers_per_gather = 0");
    txn.commit();
    return conn;
  } catch (const std::exception& e) {
    database_errors.fetch_add(1, std::memory_order_relaxed);
    return absl::UnavailableError(absl::StrCat("database: cannot connect: ", OneLine(e.what())));
  }
}

absl::StatusOr<std::unique_ptr<pqxx::connection>> ConnectionPool::Open() {
  std::vector<std::pair<std::string, std::string>> prepared;
  {
    absl::MutexLock lock(&mu_);
    prepared = prepared_;
  }
  absl::StatusOr<std::unique_ptr<pqxx::connection>> conn = Connect(options_);
  if (!conn.ok()) return conn.status();
  try {
    for (const auto& [name, sql] : prepared) (*conn)->prepare(name, sql);
    return conn;
  } catch (const std::exception& e) {
    database_errors.fetch_add(1, std::memory_order_relaxed);
    return absl::UnavailableError(absl::StrCat("database: cannot connect: ", OneLine(e.what())));
  }
}

namespace {

// Whether an idle connection is still usable, without a round trip: reads whatever the
// server sent meanwhile (PQconsumeInput through get_notifs), which fails, or leaves the
// connection bad, when the server closed it (a restart, pg_terminate_backend).
bool StillOpen(pqxx::connection& conn) {
  try {
    conn.get_notifs();
    return conn.is_open();
  } catch (...) {
    return false;
  }
}

}  // namespace

absl::StatusOr<ConnectionPool::Lease> ConnectionPool::Acquire() {
  mu_.Lock();
  // A connection is free, or one more may be opened.
  const auto available = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return !idle_.empty() || open_ < options_.pool_size;
  };
  if (!AwaitSteadyFor(mu_, absl::Condition(&available), options_.acquire_timeout)) {
    mu_.Unlock();
    return absl::DeadlineExceededError(absl::StrCat("database: no free connection within ",
                                                    absl::FormatDuration(options_.acquire_timeout), " (pool_size ",
                                                    options_.pool_size, ")"));
  }
  while (!idle_.empty()) {
    std::unique_ptr<pqxx::connection> conn = std::move(idle_.back());
    idle_.pop_back();
    if (StillOpen(*conn)) {
      mu_.Unlock();
      return Lease(this, std::move(conn));
    }
    --open_;
    Close(std::move(conn));
  }
  ++open_;
  mu_.Unlock();
  auto conn = Open();
  if (!conn.ok()) {
    absl::MutexLock relock(&mu_);
    --open_;
    return conn.status();
  }
  return Lease(this, std::move(*conn));
}

void ConnectionPool::Close(std::unique_ptr<pqxx::connection> conn) {
  try {
    conn.reset();
  } catch (...) {
  }
}

void ConnectionPool::DiscardIdle() {
  std::vector<std::unique_ptr<pqxx::connection>> closing;
  {
    absl::MutexLock lock(&mu_);
    closing.swap(idle_);
    open_ -= static_cast<int>(closing.size());
  }
  for (auto& conn : closing) Close(std::move(conn));
}

void ConnectionPool::Return(std::unique_ptr<pqxx::connection> conn, bool discard) {
  bool usable = !discard;
  if (usable) {
    try {
      usable = conn->is_open();
    } catch (...) {
      usable = false;
    }
  }
  if (!usable) Close(std::move(conn));
  absl::MutexLock lock(&mu_);  // waiters' conditions are re-evaluated on release
  if (usable) {
    idle_.push_back(std::move(conn));
  } else {
    --open_;
  }
}

namespace {

// StatusFromPqxx's mapping; AlreadyExists, FailedPrecondition and InvalidArgument are
// answers (a constraint, bad input), not database failures.

absl::Status MapPqxx(const std::exception& e, std::string_view context) {
  const std::string what = absl::StrCat(std::string(context), ": ", OneLine(e.what()));
  if (dynamic_cast<const pqxx::broken_connection*>(&e) != nullptr ||
      dynamic_cast<const pqxx::in_doubt_error*>(&e) != nullptr) {
    return absl::UnavailableError(what);
  }
  if (dynamic_cast<const pqxx::unique_violation*>(&e) != nullptr) return absl::AlreadyExistsError(what);
  if (dynamic_cast<const pqxx::foreign_key_violation*>(&e) != nullptr ||
      dynamic_cast<const pqxx::check_violation*>(&e) != nullptr ||
      dynamic_cast<const pqxx::not_null_violation*>(&e) != nullptr) {
    return absl::FailedPreconditionError(what);
  }
  if (dynamic_cast<const pqxx::transaction_rollback*>(&e) != nullptr) return absl::AbortedError(what);
  if (dynamic_cast<const pqxx::data_exception*>(&e) != nullptr ||
      dynamic_cast<const pqxx::conversion_error*>(&e) != nullptr) {
    return absl::InvalidArgumentError(what);
  }
  if (const auto* sql = dynamic_cast<const pqxx::sql_error*>(&e); sql != nullptr) {
    // Class 08 (connection exception), 57P01..03 (admin shutdown, crash, cannot connect now).
    const std::string& state = sql->sqlstate();
    if (absl::StartsWith(state, "08") || absl::StartsWith(state, "57P")) return absl::UnavailableError(what);
    if (absl::StartsWith(state, "53")) return absl::ResourceExhaustedError(what);
  }
  return absl::InternalError(what);
}

}  // namespace

uint64_t DatabaseErrorCount() { return database_errors.load(std::memory_order_relaxed); }

absl::Status StatusFromPqxx(const std::exception& e, std::string_view context) {
  absl::Status status = MapPqxx(e, context);
  if (!absl::IsAlreadyExists(status) && !absl::IsFailedPrecondition(status) && !absl::IsInvalidArgument(status)) {
    database_errors.fetch_add(1, std::memory_order_relaxed);
  }
  return status;
}

}  // namespace fleetmark::store
