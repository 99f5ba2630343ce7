#include "agent/spool.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "agent/file_util.h"
#include "engine/common/status_macros.h"

namespace fleetmark::agent {
namespace {

constexpr absl::string_view kHeader = "FMSPOOL1";
constexpr uint32_t kResultRecord = 1;
constexpr uint32_t kAckRecord = 2;
constexpr uint32_t kFinishedRecord = 3;
constexpr uint32_t kFinishedAckRecord = 4;
constexpr size_t kRecordHeaderBytes = 12;  // type, length, crc
constexpr size_t kMaxIdBytes = 256;

void Put32(char* out, uint32_t value) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>((value >> (8 * i)) & 0xff);
}

uint32_t Get32(const char* in) {
  uint32_t value = 0;
  for (int i = 0; i < 4; ++i) value |= static_cast<uint32_t>(static_cast<uint8_t>(in[i])) << (8 * i);
  return value;
}

uint32_t RecordCrc(const char* type_and_length, absl::string_view payload) {
  uLong crc = crc32(0L, Z_NULL, 0);
  crc = crc32(crc, reinterpret_cast<const Bytef*>(type_and_length), 8);
  crc = crc32(crc, reinterpret_cast<const Bytef*>(payload.data()), static_cast<uInt>(payload.size()));
  return static_cast<uint32_t>(crc);
}

std::string EncodeRecord(uint32_t type, absl::string_view payload) {
  std::string record(kRecordHeaderBytes, '\0');
  Put32(record.data(), type);
  Put32(record.data() + 4, static_cast<uint32_t>(payload.size()));
  Put32(record.data() + 8, RecordCrc(record.data(), payload));
  record.append(payload.data(), payload.size());
  return record;
}

// Result payload: [u32 id length][id][serialized CaseResult].
std::string EncodeResultPayload(absl::string_view id, absl::string_view proto) {
  std::string payload(4, '\0');
  Put32(payload.data(), static_cast<uint32_t>(id.size()));
  payload.append(id.data(), id.size());
  payload.append(proto.data(), proto.size());
  return payload;
}

// Reads exactly `length` bytes at `offset`; false on a short read (end of file).
absl::StatusOr<bool> PreadExact(int fd, uint64_t offset, size_t length, char* out, const std::string& path) {
  size_t done = 0;
  while (done < length) {
    const ssize_t n = ::pread(fd, out + done, length - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, "read", path);
    }
    if (n == 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

absl::Status CheckId(absl::string_view field, absl::string_view id) {
  if (id.empty() || id.size() > kMaxIdBytes) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": 1 to ", kMaxIdBytes, " bytes, got ", id.size()));
  }
  return absl::OkStatus();
}

// A live record in append order, for compaction.
struct LiveRecord {
  uint64_t sequence;
  bool finished;   // a JobFinished report, else a case result
  std::string id;  // result id or job id
  bool operator<(const LiveRecord& other) const { return sequence < other.sequence; }
};

absl::Status PwriteAll(int fd, uint64_t offset, absl::string_view data, const std::string& path) {
  while (!data.empty()) {
    const ssize_t n = ::pwrite(fd, data.data(), data.size(), static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, "write", path);
    }
    data.remove_prefix(static_cast<size_t>(n));
    offset += static_cast<uint64_t>(n);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Spool>> Spool::Open(const std::string& dir, const SpoolOptions& options) {
  const std::string path = absl::StrCat(dir, "/", kFileName);
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return ErrnoStatus(errno, "open spool", path);
  std::unique_ptr<Spool> spool(new Spool(dir, path, fd, options));
  FLEETMARK_RETURN_IF_ERROR(spool->Recover());
  return spool;
}

Spool::Spool(std::string dir, std::string path, int fd, SpoolOptions options)
    : dir_(std::move(dir)), path_(std::move(path)), options_(options), fd_(fd) {}

Spool::~Spool() {
  absl::MutexLock lock(&mu_);
  if (fd_ >= 0) ::close(fd_);
}

namespace {

// A record header's type and payload length when both are plausible (a known type, at
// most `max_record_bytes`); its CRC is not checked.
bool PlausibleHeader(const char* header, uint32_t max_record_bytes, uint32_t* type, uint32_t* length) {
  *type = Get32(header);
  *length = Get32(header + 4);
  return *type >= kResultRecord && *type <= kFinishedAckRecord && *length <= max_record_bytes;
}

}  // namespace

absl::StatusOr<std::string> Spool::ReadRecordAt(uint64_t offset, uint64_t file_size, uint32_t* type,
                                                std::string* payload) const {
  char header[kRecordHeaderBytes];
  payload->clear();
  if (file_size - offset < kRecordHeaderBytes) return std::string("torn record header");
  FLEETMARK_ASSIGN_OR_RETURN(bool complete, PreadExact(fd_, offset, kRecordHeaderBytes, header, path_));
  if (!complete) return std::string("torn record header");
  uint32_t length = 0;
  if (!PlausibleHeader(header, options_.max_record_bytes, type, &length)) {
    return *type < kResultRecord || *type > kFinishedAckRecord
               ? absl::StrCat("unknown record type ", *type)
               : absl::StrCat("record length ", length, " > max_record_bytes ", options_.max_record_bytes);
  }
  if (file_size - offset - kRecordHeaderBytes < length) return std::string("torn record payload");
  payload->resize(length);
  FLEETMARK_ASSIGN_OR_RETURN(complete, PreadExact(fd_, offset + kRecordHeaderBytes, length, payload->data(), path_));
  if (!complete) return std::string("torn record payload");
  if (RecordCrc(header, *payload) != Get32(header + 8)) return std::string("CRC mismatch");
  return std::string();
}

absl::StatusOr<Spool::Damage> Spool::ScanDamage(uint64_t offset, uint64_t file_size) const {
  // The rest of the file, read once (damage is rare).
  std::string rest(file_size - offset, '\0');
  FLEETMARK_ASSIGN_OR_RETURN(bool complete, PreadExact(fd_, offset, rest.size(), rest.data(), path_));
  if (!complete) return absl::DataLossError(absl::StrCat(path_, ": shrank while it was read"));
  Damage damage;
  damage.end = file_size;
  // The next readable record: a plausible header whose CRC matches its payload (a
  // false match of CRC-32 over random bytes is a 1 in 2^32 event).
  for (uint64_t p = 1; p + kRecordHeaderBytes <= rest.size(); ++p) {
    uint32_t type = 0, length = 0;
    if (!PlausibleHeader(rest.data() + p, options_.max_record_bytes, &type, &length)) continue;
    if (rest.size() - p - kRecordHeaderBytes < length) continue;
    const absl::string_view payload(rest.data() + p + kRecordHeaderBytes, length);
    if (RecordCrc(rest.data() + p, payload) != Get32(rest.data() + p + 8)) continue;
    damage.end = offset + p;
    break;
  }
  // The records the damaged bytes held, walked by their headers as far as they hold
  // together; a header whose payload runs past the damage (a damaged length, or a record
  // cut short by the end of the file: a crash in its append) ends the walk.
  const uint64_t span = damage.end - offset;
  uint64_t p = 0;
  while (p < span) {
    uint32_t type = 0, length = 0;
    if (span - p < kRecordHeaderBytes || !PlausibleHeader(rest.data() + p, options_.max_record_bytes, &type, &length)) {
      break;
    }
    if (span - p - kRecordHeaderBytes < length) {
      if (type == kResultRecord) ++damage.results;
      if (damage.end == file_size) p = span;  // a record cut short by the end of the file
      break;
    }
    if (type == kResultRecord) ++damage.results;
    p += kRecordHeaderBytes + length;
  }
  damage.exact = p == span;
  return damage;
}

std::string Spool::ApplyRecordLocked(uint32_t type, std::string& payload, uint64_t offset, bool after_damage) {
  if (type == kResultRecord) {
    const uint32_t length = static_cast<uint32_t>(payload.size());
    const uint32_t id_length = length >= 4 ? Get32(payload.data()) : UINT32_MAX;
    if (id_length == 0 || id_length > kMaxIdBytes || 4 + id_length > length) return "malformed result record";
    std::string id = payload.substr(4, id_length);
    live_[id] = Location{next_sequence_++, offset + kRecordHeaderBytes + 4 + id_length, length - 4 - id_length};
  } else if (type == kFinishedRecord) {
    fleetmark::v1::JobFinished report;
    if (!report.ParseFromString(payload) || !CheckId("job_id", report.job_id()).ok()) {
      return "malformed job-finished record";
    }
    const std::string job_id = report.job_id();
    if (finished_.contains(job_id)) ++dead_records_;  // replaced; cannot happen via the API
    finished_[job_id] = Finished{next_sequence_++, std::move(report)};
  } else if (type == kAckRecord) {
    if (live_.erase(payload) > 0) {
      ++dead_records_;
    } else if (after_damage) {
      ++acked_unseen_;  // the ack of a result whose record was damaged: it was stored
    }
    ++dead_records_;  // the ack record itself
  } else {            // kFinishedAckRecord
    if (finished_.erase(payload) > 0) ++dead_records_;
    ++dead_records_;
  }
  return "";
}

absl::Status Spool::Recover() {
  absl::MutexLock lock(&mu_);
  struct stat st;
  if (::fstat(fd_, &st) != 0) return ErrnoStatus(errno, "stat", path_);
  const uint64_t file_size = static_cast<uint64_t>(st.st_size);

  char header[8];
  FLEETMARK_ASSIGN_OR_RETURN(bool have_header,
                             PreadExact(fd_, 0, std::min<uint64_t>(file_size, kHeader.size()), header, path_));
  (void)have_header;
  const size_t header_bytes = static_cast<size_t>(std::min<uint64_t>(file_size, kHeader.size()));
  if (absl::string_view(header, header_bytes) != kHeader.substr(0, header_bytes)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path_, ": not a fleetmark spool (expected header \"", kHeader, "\")"));
  }
  if (file_size < kHeader.size()) {
    // New file, or a crash while writing the header: start afresh.
    if (::ftruncate(fd_, 0) != 0) return ErrnoStatus(errno, "truncate", path_);
    FLEETMARK_RETURN_IF_ERROR(PwriteAll(fd_, 0, kHeader, path_));
    if (::fsync(fd_) != 0) return ErrnoStatus(errno, "fsync", path_);
    FLEETMARK_RETURN_IF_ERROR(SyncDirectory(dir_));
    size_ = kHeader.size();
    return absl::OkStatus();
  }

  uint64_t offset = kHeader.size();
  uint64_t damaged_results = 0;
  std::string payload;
  while (offset < file_size) {
    uint32_t type = 0;
    FLEETMARK_ASSIGN_OR_RETURN(std::string error, ReadRecordAt(offset, file_size, &type, &payload));
    const bool whole = error.empty();  // its CRC matches: its extent is right
    if (whole) {
      error = ApplyRecordLocked(type, payload, offset, recovery_.damaged_records > 0);
      if (error.empty()) {
        ++recovery_.records_read;
        offset += kRecordHeaderBytes + payload.size();
        continue;
      }
    }
    // Unreadable from `offset`: skip to the next readable record, or cut the tail.
    Damage damage;
    if (whole) {  // well framed but malformed: skip just this record
      damage.end = offset + kRecordHeaderBytes + payload.size();
      damage.results = type == kResultRecord ? 1 : 0;
    } else {
      FLEETMARK_ASSIGN_OR_RETURN(damage, ScanDamage(offset, file_size));
    }
    ++recovery_.damaged_records;
    damaged_results += damage.results;
    recovery_.results_lost_is_lower_bound = recovery_.results_lost_is_lower_bound || !damage.exact;
    const std::string where = absl::StrCat(error, " at offset ", offset);
    if (recovery_.first_damage.empty()) recovery_.first_damage = where;
    if (damage.end < file_size) {
      recovery_.skipped_bytes += damage.end - offset;
      offset = damage.end;
      continue;
    }
    recovery_.truncated_bytes = file_size - offset;
    recovery_.tail_error = where;
    if (::ftruncate(fd_, static_cast<off_t>(offset)) != 0) return ErrnoStatus(errno, "truncate", path_);
    if (::fsync(fd_) != 0) return ErrnoStatus(errno, "fsync", path_);
    break;
  }
  size_ = std::min(offset, file_size);
  recovery_.results_lost = damaged_results > acked_unseen_ ? damaged_results - acked_unseen_ : 0;
  recovery_.pending = live_.size();
  recovery_.pending_finished = finished_.size();
  if (recovery_.skipped_bytes > 0) {
    // Rewrite the readable records without the damaged bytes between them.
    if (absl::Status rewritten = CompactLocked(); !rewritten.ok()) {
      recovery_.rewrite_error = std::string(rewritten.message());
    }
  }
  return absl::OkStatus();
}

std::string RecoveryWarning(absl::string_view path, const SpoolRecovery& recovery) {
  if (recovery.damaged_records == 0) return "";
  std::string text = absl::StrCat(
      "spool ", path, ": ", recovery.results_lost_is_lower_bound ? "at least " : "", recovery.results_lost,
      recovery.results_lost == 1 ? " result" : " results",
      " lost (unreadable records the coordinator had not acknowledged); ", recovery.damaged_records,
      recovery.damaged_records == 1 ? " damaged stretch" : " damaged stretches",
      " skipped, the first: ", recovery.first_damage, " (a crash in the middle of an append, or a damaged file); ",
      recovery.records_read, " readable records kept (", recovery.pending, " results and ", recovery.pending_finished,
      " job reports to replay)");
  if (recovery.truncated_bytes > 0) absl::StrAppend(&text, "; its unreadable end was cut off");
  if (!recovery.rewrite_error.empty()) {
    absl::StrAppend(&text, "; rewriting it without the damaged bytes failed: ", recovery.rewrite_error);
  }
  return text;
}

absl::Status Spool::WriteFault(size_t bytes) const {
  return options_.write_fault ? options_.write_fault(bytes) : absl::OkStatus();
}

absl::Status Spool::AppendRecord(uint32_t type, absl::string_view payload, bool sync, uint64_t* payload_offset) {
  const std::string record = EncodeRecord(type, payload);
  absl::Status status = WriteFault(record.size());
  if (status.ok()) status = PwriteAll(fd_, size_, record, path_);
  if (status.ok() && sync && ::fdatasync(fd_) != 0) status = ErrnoStatus(errno, "fsync", path_);
  if (!status.ok()) {
    refused_write_ = true;
    // Cut a partial record so that later appends stay readable.
    if (::ftruncate(fd_, static_cast<off_t>(size_)) != 0) {
      return absl::InternalError(
          absl::StrCat(status.message(), "; and truncating ", path_, " back failed: ", std::strerror(errno)));
    }
    return status;
  }
  if (payload_offset != nullptr) *payload_offset = size_ + kRecordHeaderBytes;
  size_ += record.size();
  return absl::OkStatus();
}

absl::Status Spool::Append(const fleetmark::v1::CaseResult& result) {
  const std::string& id = result.result_id();
  FLEETMARK_RETURN_IF_ERROR(CheckId("result.result_id", id));
  std::string proto;
  if (!result.SerializeToString(&proto)) {
    return absl::InternalError(absl::StrCat("result ", id, ": serialization failed"));
  }
  const std::string payload = EncodeResultPayload(id, proto);
  if (payload.size() > options_.max_record_bytes) {
    return absl::InvalidArgumentError(absl::StrCat("result ", id, ": ", payload.size(),
                                                   " bytes > spool max_record_bytes ", options_.max_record_bytes));
  }
  absl::MutexLock lock(&mu_);
  if (live_.contains(id)) {
    return absl::AlreadyExistsError(absl::StrCat("result ", id, " is already spooled"));
  }
  uint64_t payload_offset = 0;
  FLEETMARK_RETURN_IF_ERROR(AppendRecord(kResultRecord, payload, /*sync=*/true, &payload_offset));
  live_[id] = Location{next_sequence_++, payload_offset + 4 + id.size(), static_cast<uint32_t>(proto.size())};
  return absl::OkStatus();
}

absl::Status Spool::Ack(absl::string_view result_id) {
  absl::MutexLock lock(&mu_);
  auto it = live_.find(result_id);
  if (it == live_.end()) return absl::OkStatus();
  const absl::Status written = AppendRecord(kAckRecord, result_id, /*sync=*/false, nullptr);
  live_.erase(it);
  return AfterAckLocked(written);
}

absl::Status Spool::AfterAckLocked(const absl::Status& written) {
  if (refused_write_ && live_.empty() && finished_.empty()) {
    // Nothing left to keep: free the disk in place.
    if (::ftruncate(fd_, static_cast<off_t>(kHeader.size())) != 0) return ErrnoStatus(errno, "truncate", path_);
    if (::fdatasync(fd_) != 0) return ErrnoStatus(errno, "fsync", path_);
    size_ = kHeader.size();
    dead_records_ = 0;
    refused_write_ = false;
    return absl::OkStatus();
  }
  // Without its ack record the acked record stays in the file (a restart replays it: a
  // duplicate the coordinator acks again).
  if (!written.ok()) {
    ++dead_records_;
    return written;
  }
  return AddDeadLocked(2);  // the record and its ack
}

absl::Status Spool::AddDeadLocked(uint64_t dead) {
  dead_records_ += dead;
  if (dead_records_ > options_.compact_min_dead && dead_records_ > live_.size() + finished_.size()) {
    return CompactLocked();
  }
  return absl::OkStatus();
}

absl::Status Spool::AppendFinished(const fleetmark::v1::JobFinished& finished) {
  FLEETMARK_RETURN_IF_ERROR(CheckId("job_finished.job_id", finished.job_id()));
  std::string payload;
  if (!finished.SerializeToString(&payload)) {
    return absl::InternalError(absl::StrCat("job ", finished.job_id(), ": JobFinished serialization failed"));
  }
  if (payload.size() > options_.max_record_bytes) {
    return absl::InvalidArgumentError(absl::StrCat("job ", finished.job_id(), ": JobFinished of ", payload.size(),
                                                   " bytes > spool max_record_bytes ", options_.max_record_bytes));
  }
  absl::MutexLock lock(&mu_);
  if (finished_.contains(finished.job_id())) {
    return absl::AlreadyExistsError(absl::StrCat("the JobFinished of job ", finished.job_id(), " is already spooled"));
  }
  FLEETMARK_RETURN_IF_ERROR(AppendRecord(kFinishedRecord, payload, /*sync=*/true, nullptr));
  finished_[finished.job_id()] = Finished{next_sequence_++, finished};
  return absl::OkStatus();
}

absl::Status Spool::AckFinished(absl::string_view job_id) {
  absl::MutexLock lock(&mu_);
  auto it = finished_.find(job_id);
  if (it == finished_.end()) return absl::OkStatus();
  const absl::Status written = AppendRecord(kFinishedAckRecord, job_id, /*sync=*/false, nullptr);
  finished_.erase(it);
  return AfterAckLocked(written);
}

std::vector<fleetmark::v1::JobFinished> Spool::PendingFinished() const {
  std::vector<std::pair<uint64_t, fleetmark::v1::JobFinished>> ordered;
  {
    absl::MutexLock lock(&mu_);
    ordered.reserve(finished_.size());
    for (const auto& [job_id, entry] : finished_) ordered.emplace_back(entry.sequence, entry.report);
  }
  std::sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<fleetmark::v1::JobFinished> reports;
  reports.reserve(ordered.size());
  for (auto& [sequence, report] : ordered) reports.push_back(std::move(report));
  return reports;
}

std::vector<std::string> Spool::PendingIds() const {
  std::vector<std::pair<uint64_t, std::string>> ordered;
  {
    absl::MutexLock lock(&mu_);
    ordered.reserve(live_.size());
    for (const auto& [id, location] : live_) ordered.emplace_back(location.sequence, id);
  }
  std::sort(ordered.begin(), ordered.end());
  std::vector<std::string> ids;
  ids.reserve(ordered.size());
  for (auto& [sequence, id] : ordered) ids.push_back(std::move(id));
  return ids;
}

absl::StatusOr<fleetmark::v1::CaseResult> Spool::Read(absl::string_view result_id) const {
  absl::MutexLock lock(&mu_);
  auto it = live_.find(result_id);
  if (it == live_.end()) {
    return absl::NotFoundError(absl::StrCat("result ", result_id, " is not spooled"));
  }
  std::string proto(it->second.length, '\0');
  FLEETMARK_ASSIGN_OR_RETURN(bool complete, PreadExact(fd_, it->second.offset, proto.size(), proto.data(), path_));
  fleetmark::v1::CaseResult result;
  if (!complete || !result.ParseFromString(proto)) {
    return absl::DataLossError(absl::StrCat(path_, ": result ", result_id, " is unreadable"));
  }
  return result;
}

size_t Spool::pending() const {
  absl::MutexLock lock(&mu_);
  return live_.size();
}

uint64_t Spool::file_bytes() const {
  absl::MutexLock lock(&mu_);
  return size_;
}

absl::Status Spool::Compact() {
  absl::MutexLock lock(&mu_);
  return CompactLocked();
}

absl::Status Spool::CompactLocked() {
  std::vector<LiveRecord> ordered;
  ordered.reserve(live_.size() + finished_.size());
  for (const auto& [id, location] : live_) ordered.push_back({location.sequence, false, id});
  for (const auto& [id, entry] : finished_) ordered.push_back({entry.sequence, true, id});
  std::sort(ordered.begin(), ordered.end());

  const std::string tmp = absl::StrCat(path_, ".compact");
  const int out = ::open(tmp.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (out < 0) return ErrnoStatus(errno, "create", tmp);
  absl::flat_hash_map<std::string, Location> moved;
  uint64_t offset = 0;
  auto write = [&](absl::string_view data) -> absl::Status {
    FLEETMARK_RETURN_IF_ERROR(WriteFault(data.size()));
    FLEETMARK_RETURN_IF_ERROR(PwriteAll(out, offset, data, tmp));
    offset += data.size();
    return absl::OkStatus();
  };
  absl::Status status = write(kHeader);
  std::string proto;
  for (const auto& [sequence, finished, id] : ordered) {
    if (!status.ok()) break;
    if (finished) {
      if (!finished_.at(id).report.SerializeToString(&proto)) {
        status = absl::InternalError(absl::StrCat("job ", id, ": JobFinished serialization failed"));
        break;
      }
      status = write(EncodeRecord(kFinishedRecord, proto));
      continue;
    }
    const Location& from = live_.at(id);
    proto.resize(from.length);
    absl::StatusOr<bool> complete = PreadExact(fd_, from.offset, from.length, proto.data(), path_);
    if (!complete.ok() || !*complete) {
      status = complete.ok() ? absl::DataLossError(absl::StrCat(path_, ": short read of ", id)) : complete.status();
      break;
    }
    const uint64_t payload_start = offset + kRecordHeaderBytes;
    status = write(EncodeRecord(kResultRecord, EncodeResultPayload(id, proto)));
    moved[id] = Location{sequence, payload_start + 4 + id.size(), from.length};
  }
  if (status.ok() && ::fsync(out) != 0) status = ErrnoStatus(errno, "fsync", tmp);
  if (status.ok() && ::rename(tmp.c_str(), path_.c_str()) != 0) {
    status = ErrnoStatus(errno, "rename to " + path_, tmp);
  }
  if (!status.ok()) {
    ::close(out);
    ::unlink(tmp.c_str());
    return status;  // the old log is intact and still in use
  }
  ::close(fd_);
  fd_ = out;
  size_ = offset;
  live_ = std::move(moved);
  dead_records_ = 0;
  refused_write_ = false;
  return SyncDirectory(dir_);
}

}  // namespace fleetmark::agent
