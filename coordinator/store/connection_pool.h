// A small pool of libpqxx connections to the coordinator's PostgreSQL database.
//
// libpqxx connections are not thread-safe, so each is used by one thread at a time:
// Acquire() hands a connection to the calling thread exclusively until the returned
// Lease is destroyed ("one connection per thread"). Broken connections are replaced on
// the next Acquire. Prepared statements registered with AddPreparedStatement are
// prepared on every connection the pool opens (libpqxx prepares them lazily on first
// use). Only code under coordinator/store/ includes this header (it exposes pqxx).
//
//   FLEETMARK_ASSIGN_OR_RETURN(auto pool, ConnectionPool::Create(options));
//   FLEETMARK_ASSIGN_OR_RETURN(ConnectionPool::Lease conn, pool->Acquire());
//   pqxx::work txn(*conn);
//   txn.exec_prepared("fm_get_run", run_id); txn.commit();
//
// Thread-safety: Create/Acquire/Lease are safe from any thread.
// Errors: Unavailable when the database cannot be reached, DeadlineExceeded when no
// connection frees up within `acquire_timeout`.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <pqxx/pqxx>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "coordinator/store/connection_options.h"
#include "absl/time/time.h"

namespace fleetmark::store {

class ConnectionPool {
 public:
  // Exclusive use of one connection; returns it to the pool on destruction.
  class Lease {
   public:
    Lease(Lease&& other) noexcept;
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    pqxx::connection& operator*() const { return *conn_; }
    pqxx::connection* operator->() const { return conn_.get(); }
    // Marks the connection broken (closed instead of returned); call after an error
    // that may have left it unusable. Lease destruction also detects closed sockets.
    void Discard() { discard_ = true; }

   private:
    friend class ConnectionPool;
    Lease(ConnectionPool* pool, std::unique_ptr<pqxx::connection> conn) : pool_(pool), conn_(std::move(conn)) {}
    ConnectionPool* pool_;
    std::unique_ptr<pqxx::connection> conn_;
    bool discard_ = false;
  };

  // Validates options and opens one connection to check the URI (unless
  // !connect_at_create). InvalidArgument for a bad pool size or empty URI, Unavailable
  // if the server cannot be reached.
  static absl::StatusOr<std::unique_ptr<ConnectionPool>> Create(ConnectionOptions options);

  // Registers `sql` under `name` for every connection (existing and future). Call
  // before the first Acquire.
  void AddPreparedStatement(std::string name, std::string sql);

  // A connection for exclusive use by the calling thread (see errors above). Idle
  // connections the server closed are dropped here, not handed out.
  absl::StatusOr<Lease> Acquire();

  // Closes every idle connection (leased ones are unaffected), so the next Acquire
  // opens a fresh one. Call after a connection broke: after a server restart all the
  // idle ones are dead too, and a check that reads no reply cannot always tell.
  void DiscardIdle();

  const ConnectionOptions& options() const { return options_; }

  // One connection outside any pool, set up as the pool's are (connect_timeout,
  // application_name), for a thread that keeps its own (the notification listener).
  // Unavailable if the server cannot be reached. Any thread.
  static absl::StatusOr<std::unique_ptr<pqxx::connection>> Connect(const ConnectionOptions& options);

 private:
  explicit ConnectionPool(ConnectionOptions options) : options_(std::move(options)) {}
  absl::StatusOr<std::unique_ptr<pqxx::connection>> Open();
  void Return(std::unique_ptr<pqxx::connection> conn, bool discard);
  // Closes `conn` (which may be broken) without throwing.
  static void Close(std::unique_ptr<pqxx::connection> conn);

  const ConnectionOptions options_;
  absl::Mutex mu_;
  std::vector<std::unique_ptr<pqxx::connection>> idle_ ABSL_GUARDED_BY(mu_);
  int open_ ABSL_GUARDED_BY(mu_) = 0;  // idle + leased
  std::vector<std::pair<std::string, std::string>> prepared_ ABSL_GUARDED_BY(mu_);
};

// Maps a libpqxx exception to an absl::Status with `context` as prefix:
// broken_connection → Unavailable, unique/foreign-key violation → AlreadyExists /
// FailedPrecondition, data/syntax errors → InvalidArgument, serialization failure or
// deadlock → Aborted, the rest → Internal. Call inside a catch block.
absl::Status StatusFromPqxx(const std::exception& e, std::string_view context);

}  // namespace fleetmark::store
