// The agent's spool: a crash-safe local log of what the coordinator has not confirmed
// yet — case results and the JobFinished reports of jobs.
//
// Every case result is appended and fsync'ed *before* it is sent; it leaves the spool
// only when the coordinator acks it (after committing its row). A job's JobFinished is
// spooled the same way after the job's last result, and leaves only on the
// coordinator's JobFinishedAck (sent after FinishJob committed, or for a stale report).
// After a reconnect or a restart the agent replays PendingIds(), then
// PendingFinished(). Result ids are UUIDs, so a replay of an already stored result is
// acknowledged as a duplicate and never stored twice; a replayed JobFinished of a job
// that already ended is acknowledged without changing it.
//
// File format (`<dir>/results.spool`): an 8-byte header "FMSPOOL1", then records
//   [u32 type][u32 payload length][u32 CRC-32 of type, length and payload][payload]
// (little endian; CRC-32 as in zlib). Types: 1 = a case result
// ([u32 id length][result id][serialized CaseResult]), 2 = the result id of an ack,
// 3 = a serialized JobFinished, 4 = the job id of a JobFinishedAck. Records are only
// appended; an ack makes its record dead. When dead records outnumber live ones (and
// exceed `compact_min_dead`), the spool rewrites the live records, in append order, to
// a temporary file, fsyncs it and renames it over the log (atomic on POSIX), then
// fsyncs the directory. (Agent builds from before types 3 and 4 existed treat such a
// record as a corrupt tail: do not downgrade an agent over a non-empty spool.)
//
// Recovery: Open() reads records in order. At an unreadable record (torn by a crash in
// the middle of an append, or damaged on disk) it resynchronises on the next readable
// record: a plausible header whose CRC-32 matches its payload. The records after the
// damage are kept and the file is rewritten without the damaged bytes; an unreadable
// end of file (no readable record after it) is cut off with ftruncate. A crash loses
// only the record being appended, which had not been sent yet (the send happens after
// the fsync returns); SpoolRecovery says how many results damage lost.
//
//   FLEETMARK_ASSIGN_OR_RETURN(auto spool, Spool::Open("/var/lib/fleetmark-agent", {}));
//   FLEETMARK_RETURN_IF_ERROR(spool->Append(result));   // durable when this returns
//   ... send result ...
//   FLEETMARK_RETURN_IF_ERROR(spool->Ack(result.result_id()));
//   FLEETMARK_RETURN_IF_ERROR(spool->AppendFinished(finished));  // after the last result
//   ... send JobFinished, receive JobFinishedAck ...
//   FLEETMARK_RETURN_IF_ERROR(spool->AckFinished(finished.job_id()));
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "fleetmark/v1/agent.pb.h"
#include "fleetmark/v1/result.pb.h"

namespace fleetmark::agent {

struct SpoolOptions {
  // Compact when dead records exceed this many and outnumber live results.
  uint32_t compact_min_dead = 256;
  // Largest accepted record payload, bytes; Append refuses bigger results.
  uint32_t max_record_bytes = 64u << 20;
  // The file-writing seam, for tests: called before each write of `bytes` bytes to a
  // spool file; a non-OK status is that write's error (e.g. an injected ENOSPC).
  // Empty = no fault. Called with the spool's lock held, from any thread.
  std::function<absl::Status(size_t bytes)> write_fault;
};

// What Open() found in an existing spool file.
struct SpoolRecovery {
  uint64_t records_read = 0;      // valid records
  uint64_t pending = 0;           // live results
  uint64_t pending_finished = 0;  // live JobFinished reports
  uint64_t truncated_bytes = 0;   // bytes of a torn/corrupt tail that were cut off
  std::string tail_error;         // why the tail was cut ("" if nothing was cut)
  // Unreadable stretches (a torn tail included) and the first one's reason and offset.
  uint64_t damaged_records = 0;
  std::string first_damage;
  // Results lost in them: the result records the damaged bytes held (walked by their
  // headers), less the acks read after the damage for results never seen (those were
  // stored). A lower bound when a stretch could not be walked record by record.
  uint64_t results_lost = 0;
  bool results_lost_is_lower_bound = false;
  // Damaged bytes between readable records, dropped by rewriting the file (as a
  // compaction); why that rewrite failed, if it did (the file is then kept as it is).
  uint64_t skipped_bytes = 0;
  std::string rewrite_error;
};

// The agent's warning about a damaged spool: how many results were lost and what was
// kept; "" when nothing was damaged.
std::string RecoveryWarning(absl::string_view path, const SpoolRecovery& recovery);

// Thread-safe: every method may be called from any thread.
class Spool {
 public:
  static constexpr absl::string_view kFileName = "results.spool";

  // Opens (creating if needed) `<dir>/results.spool`; `dir` must exist. Recovers as
  // described above. Errors: InvalidArgument for a file that is not a spool (bad
  // header), Internal/PermissionDenied/NotFound for I/O errors (naming the path).
  static absl::StatusOr<std::unique_ptr<Spool>> Open(const std::string& dir, const SpoolOptions& options);
  ~Spool();
  Spool(const Spool&) = delete;
  Spool& operator=(const Spool&) = delete;

  // Appends `result` and fsyncs (fdatasync) before returning. Its result_id must be
  // non-empty and not already pending (AlreadyExists otherwise). InvalidArgument for an
  // oversized result; Internal for write/fsync errors (the spool stays usable).
  absl::Status Append(const fleetmark::v1::CaseResult& result);

  // Marks `result_id` delivered. Unknown ids (an ack for a result acked before) are
  // ignored and return OK. The ack record is appended without fsync: losing it in a
  // crash only causes a harmless duplicate replay. May compact. Internal on I/O errors.
  // An ack record the disk refuses (full) is lost the same way: the result is no
  // longer pending all the same. After any refused write (a full disk), the ack that
  // leaves nothing pending cuts the file back to its header (no temporary file, which
  // a full disk could not hold), so the spool has room again.
  absl::Status Ack(absl::string_view result_id);

  // Ids of the live results, in append order.
  std::vector<std::string> PendingIds() const;

  // Reads one live result back from the file. NotFound if it is not pending (acked
  // meanwhile), Internal/DataLoss on I/O errors.
  absl::StatusOr<fleetmark::v1::CaseResult> Read(absl::string_view result_id) const;

  // Number of live results.
  size_t pending() const;

  // Appends a job's final report and fsyncs (fdatasync) before returning. Its job_id
  // must be 1 to 256 bytes (InvalidArgument otherwise) and have no report pending
  // (AlreadyExists). Internal for write/fsync errors (the spool stays usable).
  absl::Status AppendFinished(const fleetmark::v1::JobFinished& finished);

  // Marks the report of `job_id` confirmed. Unknown ids return OK. Like Ack, the
  // record is appended without fsync (losing it only replays a report the coordinator
  // acknowledges again), and a refused record is handled as Ack's. May compact.
  // Internal on I/O errors.
  absl::Status AckFinished(absl::string_view job_id);

  // The live JobFinished reports, in append order (reports are small: held in memory).
  std::vector<fleetmark::v1::JobFinished> PendingFinished() const;

  // Rewrites the file with only the live records (see above). Called automatically.
  absl::Status Compact();

  // Current file size in bytes.
  uint64_t file_bytes() const;

  const SpoolRecovery& recovery() const { return recovery_; }
  const std::string& path() const { return path_; }

 private:
  struct Location {
    uint64_t sequence;  // append order
    uint64_t offset;    // of the payload
    uint32_t length;    // payload bytes
  };

  struct Finished {
    uint64_t sequence;  // append order, shared with results
    fleetmark::v1::JobFinished report;
  };

  // An unreadable stretch of the file from a given offset.
  struct Damage {
    uint64_t end = 0;      // offset of the next readable record, or the file size
    uint64_t results = 0;  // result records it held
    bool exact = true;     // false: its records could not all be walked
  };

  Spool(std::string dir, std::string path, int fd, SpoolOptions options);
  absl::Status Recover();
  // Reads the record at `offset` (of a file of `file_size` bytes): "" with its type and
  // payload, or why it is unreadable (payload empty unless the record is whole).
  absl::StatusOr<std::string> ReadRecordAt(uint64_t offset, uint64_t file_size, uint32_t* type,
                                           std::string* payload) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The damaged stretch from `offset` (see Damage).
  absl::StatusOr<Damage> ScanDamage(uint64_t offset, uint64_t file_size) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Applies a readable record found at `offset` to the live maps; "" or why it is
  // malformed. `after_damage`: a damaged stretch came before (acks of unseen results
  // then count in acked_unseen_).
  std::string ApplyRecordLocked(uint32_t type, std::string& payload, uint64_t offset, bool after_damage)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status AppendRecord(uint32_t type, absl::string_view payload, bool sync, uint64_t* payload_offset)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status CompactLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Counts `dead` more dead records and compacts when they dominate.
  absl::Status AddDeadLocked(uint64_t dead) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // After an ack (`written`: whether its record was written): counts the dead records,
  // cuts the file back to its header when a write was refused since the last cut and
  // nothing is live, else compacts when dead records dominate.
  absl::Status AfterAckLocked(const absl::Status& written) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // options_.write_fault's verdict on a write of `bytes`.
  absl::Status WriteFault(size_t bytes) const;

  const std::string dir_;
  const std::string path_;
  const SpoolOptions options_;
  SpoolRecovery recovery_;

  mutable absl::Mutex mu_;
  int fd_ ABSL_GUARDED_BY(mu_);
  uint64_t size_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t next_sequence_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t dead_records_ ABSL_GUARDED_BY(mu_) = 0;
  bool refused_write_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t acked_unseen_ ABSL_GUARDED_BY(mu_) = 0;  // Recover: acks after damage of results never read  // a write
                                                    // failed since the file was last cut or compacted
  absl::flat_hash_map<std::string, Location> live_ ABSL_GUARDED_BY(mu_);      // by result id
  absl::flat_hash_map<std::string, Finished> finished_ ABSL_GUARDED_BY(mu_);  // by job id
};

}  // namespace fleetmark::agent
