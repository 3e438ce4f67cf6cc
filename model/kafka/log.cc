// PartitionLog: segments, flush policy, retention, truncation and recovery,
// after kafka.log.Log / LocalLog / LogLoader and LeaderEpochFileCache.
//
// Choices worth knowing (each also noted where it is made):
//   - A log that has never been written has no segment file; the first append
//     creates one at log_end(). Every truncation and retention pass leaves at
//     least one (possibly empty) segment, as Kafka does, so that a restart
//     reads the log start offset back from the first segment's base.
//   - advance_log_start keeps the records below the new log start in their
//     segment file until the whole segment goes (Kafka does too); there is no
//     log-start-offset-checkpoint, so a restarted replica may come back with
//     a lower log start offset, the first segment's base.
//   - load() checks every record, not only those past the recovery point, and
//     sets the recovery point from what the disk reports as durable.
#include "model/kafka/log.h"

#include <algorithm>
#include <charconv>
#include <system_error>

#include <fmt/format.h>

#include "sim/assert.h"

namespace kafka {
namespace {

constexpr std::string_view kSegmentSuffix = ".log";
constexpr size_t kBaseOffsetDigits = 20;

int64_t now_ms_of(const sim::ProcessContext& ctx) { return ctx.now().since_start().ms(); }

// Parses one whole decimal field into `out`; false for anything else (empty,
// a sign where the type has none, trailing characters, out of range).
template <typename T>
bool parse_field(std::string_view s, T& out) {
  if (s.empty()) return false;
  const char* end = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(s.data(), end, out);
  return ec == std::errc() && ptr == end;
}

// "00000000000000000391.log" -> 391; nullopt for any other name.
std::optional<int64_t> parse_segment_name(std::string_view name) {
  if (name.size() != kBaseOffsetDigits + kSegmentSuffix.size()) return std::nullopt;
  if (name.substr(kBaseOffsetDigits) != kSegmentSuffix) return std::nullopt;
  int64_t base = 0;
  if (!parse_field(name.substr(0, kBaseOffsetDigits), base) || base < 0) return std::nullopt;
  return base;
}

std::optional<EpochEntry> parse_epoch_line(std::string_view line) {
  // Exactly two fields, one space between them.
  const size_t space = line.find(' ');
  if (space == std::string_view::npos || line.find(' ', space + 1) != std::string_view::npos) {
    return std::nullopt;
  }
  int64_t epoch = 0;
  int64_t start = 0;
  if (!parse_field(line.substr(0, space), epoch) || !parse_field(line.substr(space + 1), start)) {
    return std::nullopt;
  }
  if (epoch < 0 || start < 0) return std::nullopt;
  return EpochEntry{LeaderEpoch{epoch}, Offset{start}};
}

void add_to_segment(SegmentInfo& info, const Record& r) {
  info.bytes += r.size;
  info.records += 1;
  if (info.first_timestamp_ms < 0) info.first_timestamp_ms = r.timestamp_ms;
  info.max_timestamp_ms = std::max(info.max_timestamp_ms, r.timestamp_ms);
}

}  // namespace

// --- records on disk ---------------------------------------------------------
//
// A record is stored the way Kafka's record format v2 stores a record's
// fields (DefaultRecord.java, with ByteUtils.writeVarlong / writeUnsignedVarint;
// KIP-98): each number as a base-128 varint, seven bits a byte, least
// significant group first, the high bit set on every byte but the last; signed
// numbers zig-zag encoded first so that -1 takes one byte. In order: offset
// (unsigned), leader epoch, timestamp, producer id, producer epoch, sequence
// (zig-zag), value id, size, attributes (bit 0: the record ends its batch,
// which in Kafka's format is where the batch's CRC closes; no other bit is
// ever set), the key's length (unsigned), then the key's bytes, which end
// the record. (A negative offset or size, which no log
// holds, encodes as its two's complement and is rejected on decode.) Every
// field is always there, so any strict prefix of a record (a torn write) is
// rejected: it ends inside a varint, lacks a field, or holds fewer key bytes
// than its length says. (load() also drops whatever the disk marks torn.)
// What the model accounts for (segment.bytes, retention.bytes, fetch sizes)
// is Record::size, never the encoded length; the encoded length only decides
// where sim::Disk cuts a torn record, which is then discarded whatever it holds.

namespace {

constexpr size_t kMaxVarintBytes = 10;  // 64 bits, 7 a byte
constexpr size_t kRecordNumbers = 10;   // the nine fields and the key's length

uint64_t zigzag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}

int64_t unzigzag(uint64_t u) {
  return static_cast<int64_t>(u >> 1) ^ -static_cast<int64_t>(u & 1);
}

char* put_varint(char* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<char>(v);
  return p;
}

// Reads one varint at `p`, advancing it; false if the input ends inside it, it
// runs past 64 bits, or it has a needless trailing zero group (encode never
// writes one).
bool get_long_varint(const unsigned char*& p, const unsigned char* end, uint64_t& out) {
  uint64_t v = 0;
  for (unsigned shift = 0; shift < 64; shift += 7) {
    if (p == end) return false;
    const uint64_t b = *p++;
    if (shift == 63 && b > 1) return false;
    v |= (b & 0x7f) << shift;
    if ((b & 0x80) == 0) {
      if (b == 0 && shift > 0) return false;
      out = v;
      return true;
    }
  }
  return false;
}

// The common cases inline: one, two or three bytes (offsets, timestamps in
// milliseconds and value ids mostly take two or three). The same rules as
// get_long_varint: a last byte of zero after the first is not canonical.
inline bool get_varint(const unsigned char*& p, const unsigned char* end, uint64_t& out) {
  if (p != end && *p < 0x80) {
    out = *p++;
    return true;
  }
  if (end - p >= 3) {
    const uint64_t b0 = p[0] & 0x7fu;
    const uint64_t b1 = p[1];
    if (b1 < 0x80) {
      if (b1 == 0) return false;
      out = b0 | (b1 << 7);
      p += 2;
      return true;
    }
    const uint64_t b2 = p[2];
    if (b2 < 0x80) {
      if (b2 == 0) return false;
      out = b0 | ((b1 & 0x7fu) << 7) | (b2 << 14);
      p += 3;
      return true;
    }
  }
  return get_long_varint(p, end, out);
}

inline bool get_signed(const unsigned char*& p, const unsigned char* end, int64_t& out) {
  uint64_t u = 0;
  if (!get_varint(p, end, u)) return false;
  out = unzigzag(u);
  return true;
}

}  // namespace

void encode_record_into(const Record& r, std::string& out) {
  char head[kRecordNumbers * kMaxVarintBytes];
  char* p = head;
  p = put_varint(p, static_cast<uint64_t>(r.offset.value));
  p = put_varint(p, zigzag(r.leader_epoch.value));
  p = put_varint(p, zigzag(r.timestamp_ms));
  p = put_varint(p, zigzag(r.producer_id));
  p = put_varint(p, zigzag(r.producer_epoch));
  p = put_varint(p, zigzag(r.sequence));
  p = put_varint(p, r.value);
  p = put_varint(p, static_cast<uint32_t>(r.size));
  p = put_varint(p, r.batch_end ? 1 : 0);
  p = put_varint(p, r.key.size());
  out.append(head, static_cast<size_t>(p - head));
  out.append(r.key);
}

std::string encode_record(const Record& r) {
  std::string out;
  encode_record_into(r, out);
  return out;
}

namespace {

// decode_record into `r`, whose fields are all overwritten; false (and `r` in
// some unspecified state) for anything encode_record would not write.
bool decode_record_into(std::string_view s, Record& r) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const unsigned char* const end = p + s.size();
  uint64_t offset = 0;
  int64_t epoch = 0;
  int64_t producer_epoch = 0;
  int64_t sequence = 0;
  uint64_t size = 0;
  uint64_t attributes = 0;
  uint64_t key_size = 0;
  if (!get_varint(p, end, offset) || !get_signed(p, end, epoch) ||
      !get_signed(p, end, r.timestamp_ms) || !get_signed(p, end, r.producer_id) ||
      !get_signed(p, end, producer_epoch) || !get_signed(p, end, sequence) ||
      !get_varint(p, end, r.value) || !get_varint(p, end, size) ||
      !get_varint(p, end, attributes) || !get_varint(p, end, key_size)) {
    return false;
  }
  if (attributes > 1) return false;
  if (key_size != static_cast<uint64_t>(end - p)) return false;
  if (offset > INT64_MAX || epoch < kNoLeaderEpoch.value) return false;
  if (producer_epoch < INT16_MIN || producer_epoch > INT16_MAX) return false;
  if (sequence < INT32_MIN || sequence > INT32_MAX) return false;
  if (size > INT32_MAX) return false;
  r.offset = Offset{static_cast<int64_t>(offset)};
  r.leader_epoch = LeaderEpoch{epoch};
  r.producer_epoch = static_cast<int16_t>(producer_epoch);
  r.sequence = static_cast<int32_t>(sequence);
  r.size = static_cast<int32_t>(size);
  r.batch_end = attributes == 1;
  r.key.assign(reinterpret_cast<const char*>(p), key_size);
  return true;
}

}  // namespace

std::optional<Record> decode_record(std::string_view s) {
  std::optional<Record> r(std::in_place);
  if (!decode_record_into(s, *r)) return std::nullopt;
  return r;
}

// --- construction, paths -----------------------------------------------------

PartitionLog::PartitionLog(sim::ProcessContext& ctx, std::string dir, LogConfig config)
    : ctx_(ctx), dir_(std::move(dir)), config_(config), last_flush_ms_(now_ms_of(ctx)) {}

std::string PartitionLog::segment_path(Offset base) const {
  // "<dir>/<base, zero-padded to 20 digits>.log", written by hand: it is on
  // every append and flush. (No base offset is negative; fmt keeps the form.)
  if (base.value < 0) {
    return fmt::format("{}/{:0{}}{}", dir_, base.value, kBaseOffsetDigits, kSegmentSuffix);
  }
  char digits[kBaseOffsetDigits];
  auto v = static_cast<uint64_t>(base.value);
  for (size_t i = kBaseOffsetDigits; i-- > 0;) {
    digits[i] = static_cast<char>('0' + v % 10);
    v /= 10;
  }
  std::string path;
  path.reserve(dir_.size() + 1 + kBaseOffsetDigits + kSegmentSuffix.size());
  path.append(dir_);
  path += '/';
  path.append(digits, kBaseOffsetDigits);
  path.append(kSegmentSuffix);
  return path;
}

sim::File& PartitionLog::active_segment_file() {
  SIM_ASSERT(!segments_.empty(), "{}: append without a segment", dir_);
  const Offset base = segments_.back().base;
  sim::Disk& disk = ctx_.disk();
  if (active_path_.empty() || active_path_base_ != base) {
    active_path_ = segment_path(base);
    active_path_base_ = base;
    active_file_ = nullptr;
  }
  if (active_file_ == nullptr || active_file_removals_ != disk.removals()) {
    active_file_ = &disk.open(active_path_);
    active_file_removals_ = disk.removals();
  }
  return *active_file_;
}

std::string PartitionLog::epoch_checkpoint_path() const {
  return dir_ + "/leader-epoch-checkpoint";
}

size_t PartitionLog::segment_index(Offset o) const {
  SIM_ASSERT(!segments_.empty(), "{}: no segment", dir_);
  // Mostly the active segment (a fetch near the log end): no search.
  if (o >= segments_.back().base) return segments_.size() - 1;
  auto it = std::upper_bound(segments_.begin(), segments_.end(), o,
                             [](Offset v, const SegmentInfo& s) { return v < s.base; });
  if (it == segments_.begin()) return 0;
  return static_cast<size_t>(it - segments_.begin()) - 1;
}

// --- load (kafka.log.LogLoader) ----------------------------------------------

PartitionLog::LoadResult PartitionLog::load(bool cut_epochs_at_log_start) {
  LoadResult result;
  sim::Disk& disk = ctx_.disk();
  const sim::Time now = ctx_.now();

  records_.clear();
  bytes_through_.clear();
  segments_.clear();
  epochs_.clear();
  flushes_in_flight_.clear();
  log_start_ = Offset{0};

  const std::string prefix = dir_ + "/";
  std::vector<int64_t> bases;
  for (const std::string& path : disk.list(prefix)) {
    if (auto base = parse_segment_name(std::string_view(path).substr(prefix.size()))) {
      bases.push_back(*base);
    }
  }
  std::sort(bases.begin(), bases.end());
  // Room for every record on disk at once: a log of tens of thousands of
  // records would otherwise be copied a dozen times as it grows.
  size_t on_disk = 0;
  for (const int64_t base : bases) on_disk += disk.open(segment_path(Offset{base})).size();
  records_.reserve(on_disk);
  bytes_through_.reserve(on_disk);

  // Segments are read in order; the first record that is torn, unreadable or
  // out of sequence ends the log. Its segment is cut there and every later
  // segment is deleted (a segment whose base does not continue the log is
  // damage too: the records before it were lost).
  bool damaged = false;
  for (const int64_t base_value : bases) {
    const Offset base{base_value};
    const std::string path = segment_path(base);
    sim::File& file = disk.open(path);
    if (damaged || (!segments_.empty() && base != log_end())) {
      damaged = true;
      result.truncated_records += static_cast<int64_t>(file.size());
      result.deleted_segments += 1;
      disk.remove(path);
      ctx_.trace("segment_deleted", {{"dir", dir_}, {"base", base.value}, {"reason", "recovery"}});
      continue;
    }
    if (segments_.empty()) log_start_ = base;
    SegmentInfo info{base};
    size_t good = 0;   // records read back intact and in sequence
    size_t whole = 0;  // of them, those of complete batches
    for (const sim::Record& disk_record : file.records()) {
      // Decoded in place, at the end of records_, and taken back if bad.
      Record& r = records_.emplace_back();
      if (!disk_record.intact || !decode_record_into(disk_record.data, r) ||
          r.offset != base + static_cast<int64_t>(good)) {
        records_.pop_back();
        damaged = true;
        break;
      }
      ++good;
      if (!r.batch_end) continue;
      // The batch is complete: its records count.
      for (size_t i = records_.size() - (good - whole); i < records_.size(); ++i) {
        add_to_segment(info, records_[i]);
        bytes_through_.push_back((bytes_through_.empty() ? 0 : bytes_through_.back()) +
                                 records_[i].size);
      }
      whole = good;
    }
    if (whole < good) {
      // A batch only partly on disk fails its CRC check and is cut away with
      // everything after it.
      for (size_t i = whole; i < good; ++i) records_.pop_back();
      damaged = true;
    }
    if (whole < file.size()) {
      result.truncated_records += static_cast<int64_t>(file.size() - whole);
      file.truncate(whole, now);
    }
    segments_.push_back(info);
  }
  result.records = static_cast<int64_t>(records_.size());
  if (result.truncated_records > 0 || result.deleted_segments > 0) {
    ctx_.trace("log_recovered", {{"dir", dir_},
                                 {"log_end", log_end().value},
                                 {"truncated_records", result.truncated_records},
                                 {"deleted_segments", result.deleted_segments}});
  }

  // The recovery point: the longest prefix the disk reports as durable. After
  // a power loss that is everything read back; after a kill the page cache
  // may still hold unsynced records, which a later power loss could take.
  recovery_point_ = log_start_;
  for (const SegmentInfo& s : segments_) {
    const size_t durable = disk.open(segment_path(s.base)).durable_size();
    if (durable < static_cast<size_t>(s.records)) {
      recovery_point_ = std::max(recovery_point_, s.base + static_cast<int64_t>(durable));
      break;
    }
    recovery_point_ = s.base + s.records;
  }
  unflushed_messages_ = log_end() - recovery_point_;
  last_flush_ms_ = now_ms_of(ctx_);

  // The epoch cache: unreadable or non-monotonic lines are skipped, then the
  // cache is cut to the log end (LeaderEpochFileCache.truncateFromEnd(LEO),
  // which removes every entry starting at or above it).
  bool epochs_changed = false;
  if (sim::File* f = disk.find(epoch_checkpoint_path())) {
    for (const sim::Record& line : f->records()) {
      std::optional<EpochEntry> e;
      if (line.intact) e = parse_epoch_line(line.data);
      if (!e || (!epochs_.empty() && (e->epoch <= epochs_.back().epoch ||
                                      e->start_offset < epochs_.back().start_offset))) {
        epochs_changed = true;
        continue;
      }
      epochs_.push_back(*e);
    }
  }
  while (!epochs_.empty() && epochs_.back().start_offset >= log_end()) {
    epochs_.pop_back();
    epochs_changed = true;
  }
  // Then from the start (truncateFromStart), as Log's constructor does after
  // truncateFromEnd up to 2.8, at the log start, the first segment's base: a
  // checkpoint written before retention moved the log start may still name
  // entries below it. 3.x's LogLoader cuts at the log-start-offset
  // checkpoint instead, which Kafka writes only for a log start above the
  // first segment's base and the model does not keep: it cuts at 0, and
  // such entries stay until the log start next moves.
  epochs_changed |= drop_epochs_below(cut_epochs_at_log_start ? log_start_ : Offset{0});
  epochs_follow_log_start_ = epochs_.empty() || epochs_.front().start_offset >= log_start_;
  if (epochs_changed) write_epoch_checkpoint();

  check_invariants();
  return result;
}

// --- reading -----------------------------------------------------------------

const Record* PartitionLog::at(Offset o) const {
  if (o < log_start_ || o >= log_end()) return nullptr;
  return &records_[static_cast<size_t>(o - log_start_)];
}

std::pair<size_t, size_t> PartitionLog::read_range(Offset from, Offset upto, int64_t max_bytes,
                                                   bool min_one) const {
  const Offset lo = std::max(from, log_start_);
  const Offset hi = std::min(upto, log_end());
  if (lo >= hi) return {0, 0};
  // Sizes are never negative, so the running total through each record only
  // grows: the first record that would take the total past max_bytes is found
  // by binary search over bytes_through_ (always taking the first record).
  const auto first = static_cast<size_t>(lo - log_start_);
  const auto last = static_cast<size_t>(hi - log_start_);
  const int64_t before = bytes_through_[first] - records_[first].size;
  size_t end = last;
  if (max_bytes < INT64_MAX - before) {
    const int64_t limit = before + max_bytes;
    if (last - first <= 8) {
      // A fetch mostly finds a record or two: walk them (the same answer as
      // the binary search).
      end = first + 1;
      while (end < last && bytes_through_[end] <= limit) ++end;
    } else {
      const auto base = bytes_through_.begin();
      end = static_cast<size_t>(std::upper_bound(base + static_cast<std::ptrdiff_t>(first) + 1,
                                                 base + static_cast<std::ptrdiff_t>(last), limit) -
                                base);
    }
  }
  if (end < last && !records_[end - 1].batch_end) {
    // The limit falls inside a batch. Kafka slices the segment's bytes and
    // the reader drops the incomplete batch the slice ends with
    // (LogSegment.read, then the batch iterator); with minOneMessage the
    // first batch is read whole however large.
    size_t cut = end - 1;
    while (cut > first && !records_[cut - 1].batch_end) --cut;
    if (cut > first) {
      end = cut;
    } else if (min_one) {
      while (end < last && !records_[end - 1].batch_end) ++end;
    } else {
      return {first, first};
    }
  } else if (!min_one && records_[first].size > max_bytes) {
    // The first record alone is over the limit (the walk above always takes
    // it): a first batch that does not fit gives nothing.
    return {first, first};
  }
  return {first, end};
}

std::vector<Record> PartitionLog::read(Offset from, Offset upto, int64_t max_bytes, bool min_one) const {
  std::vector<Record> out;
  read_into(from, upto, max_bytes, min_one, out);
  return out;
}

void PartitionLog::read_into(Offset from, Offset upto, int64_t max_bytes, bool min_one,
                             std::vector<Record>& out) const {
  const auto [first, end] = read_range(from, upto, max_bytes, min_one);
  out.assign(records_.begin() + static_cast<std::ptrdiff_t>(first),
             records_.begin() + static_cast<std::ptrdiff_t>(end));
}

int64_t PartitionLog::fetch_read(Offset from, Offset upto, int64_t max_bytes, bool min_one,
                                 std::vector<Record>* out) const {
  const Offset lo = std::max(from, log_start_);
  Offset hi = std::min(upto, log_end());
  if (lo < hi) {
    const size_t segment = segment_index(lo);
    if (segment + 1 < segments_.size()) hi = std::min(hi, segments_[segment + 1].base);
  }
  const auto [first, end] = read_range(lo, hi, max_bytes, min_one);
  if (out != nullptr) {
    out->assign(records_.begin() + static_cast<std::ptrdiff_t>(first),
                records_.begin() + static_cast<std::ptrdiff_t>(end));
  }
  if (first == end) return 0;
  // minOneMessage reads at least the first batch (LogSegment.read's
  // adjustedMaxSize): its size, from `lo` to the record that ends it.
  size_t first_batch_end = first;
  while (first_batch_end + 1 < records_.size() && !records_[first_batch_end].batch_end) ++first_batch_end;
  const int64_t before = bytes_through_[first] - records_[first].size;
  const int64_t first_batch = bytes_through_[first_batch_end] - before;
  const int64_t slice = min_one ? std::max(max_bytes, first_batch) : max_bytes;
  return std::min(slice, bytes_between(lo, hi));
}

Offset PartitionLog::segment_base(Offset o) const {
  if (segments_.empty()) return log_start_;
  return segments_[segment_index(o)].base;
}

int64_t PartitionLog::bytes_between(Offset from, Offset upto) const {
  const Offset lo = std::max(from, log_start_);
  const Offset hi = std::min(upto, log_end());
  if (lo >= hi) return 0;
  const size_t first = static_cast<size_t>(lo - log_start_);
  const size_t last = static_cast<size_t>(hi - log_start_) - 1;
  const int64_t before = bytes_through_[first] - records_[first].size;
  return bytes_through_[last] - before;
}

// What the segment files hold, including records below the log start offset
// that are still in the first segment (Kafka's Log.size does the same).
int64_t PartitionLog::size_bytes() const {
  int64_t total = 0;
  for (const SegmentInfo& s : segments_) total += s.bytes;
  return total;
}

// --- appending ---------------------------------------------------------------

Offset PartitionLog::append_as_leader(std::vector<Record> records, LeaderEpoch epoch,
                                      int64_t now_ms) {
  const Offset first = log_end();
  if (records.empty()) return first;
  int64_t batch_bytes = 0;
  for (size_t i = 0; i < records.size(); ++i) {
    Record& r = records[i];
    SIM_ASSERT(r.size >= 0, "{}: record of negative size {}", dir_, r.size);
    r.offset = first + static_cast<int64_t>(i);
    r.leader_epoch = epoch;
    r.timestamp_ms = now_ms;
    r.batch_end = i + 1 == records.size();
    batch_bytes += r.size;
  }
  maybe_roll(batch_bytes, now_ms);
  // Log.append assigns the batch's epoch for a leader as for a follower; the
  // caller has normally done it already with assign_epoch.
  if (assign_epoch_entry(epoch, first)) write_epoch_checkpoint();
  append_to_active(std::move(records));
  if (unflushed_messages_ >= config_.flush_interval_messages) flush_in_append();
  check_invariants();
  return first;
}

void PartitionLog::append_as_follower(const std::vector<Record>& records, int64_t now_ms) {
  if (records.empty()) return;
  SIM_ASSERT(records.back().batch_end, "{}: fetched records at {} end inside a batch", dir_,
             records.front().offset.value);
  int64_t batch_bytes = 0;
  int64_t batch_max_timestamp_ms = -1;
  for (size_t i = 0; i < records.size(); ++i) {
    const Record& r = records[i];
    SIM_ASSERT(r.offset == log_end() + static_cast<int64_t>(i),
               "{}: fetched record at offset {} does not continue the log end {}", dir_,
               r.offset.value, (log_end() + static_cast<int64_t>(i)).value);
    SIM_ASSERT(r.size >= 0, "{}: record of negative size {}", dir_, r.size);
    batch_bytes += r.size;
    batch_max_timestamp_ms = std::max(batch_max_timestamp_ms, r.timestamp_ms);
  }
  // segment.ms compares the batch's largest timestamp (the leader's clock)
  // with the segment's first; now_ms stands in only for a batch without any.
  maybe_roll(batch_bytes, batch_max_timestamp_ms >= 0 ? batch_max_timestamp_ms : now_ms);
  bool epochs_changed = false;
  for (const Record& r : records) epochs_changed |= assign_epoch_entry(r.leader_epoch, r.offset);
  if (epochs_changed) write_epoch_checkpoint();
  append_to_active(records);
  if (unflushed_messages_ >= config_.flush_interval_messages) flush_in_append();
  check_invariants();
}

void PartitionLog::maybe_roll(int64_t batch_bytes, int64_t batch_max_timestamp_ms) {
  if (segments_.empty()) {
    create_segment(log_end());
    return;
  }
  const SegmentInfo& active = segments_.back();
  if (active.records == 0) return;
  // LogSegment.shouldRoll: size > segment.bytes - batch size, or (non-empty
  // and) the batch's timestamp more than segment.ms past the segment's first.
  if (active.bytes > config_.segment_bytes - batch_bytes) {
    roll_segment("segment.bytes");
  } else if (active.first_timestamp_ms >= 0 &&
             batch_max_timestamp_ms - active.first_timestamp_ms > config_.segment_ms) {
    roll_segment("segment.ms");
  }
}

void PartitionLog::roll(int64_t /*now_ms*/) {
  if (segments_.empty()) {
    create_segment(log_end());
  } else if (segments_.back().records > 0) {
    roll_segment("requested");
  }
  check_invariants();
}

void PartitionLog::roll_segment(std::string_view reason) {
  const Offset base = log_end();
  create_segment(base);
  ctx_.trace("segment_rolled", {{"dir", dir_}, {"base", base.value}, {"reason", reason}});
  // Log.roll schedules flush-log up to the new segment's base offset.
  flush_upto(base);
}

void PartitionLog::create_segment(Offset base) {
  SIM_ASSERT(segments_.empty() || segments_.back().base < base,
             "{}: new segment at {} not after the active one", dir_, base.value);
  const std::string path = segment_path(base);
  sim::Disk& disk = ctx_.disk();
  // A fresh segment is empty: a stale file by that name (none should exist)
  // is replaced, not continued.
  if (const sim::File* stale = disk.find(path); stale != nullptr && stale->size() > 0) {
    disk.remove(path);
  }
  disk.open(path);
  segments_.push_back(SegmentInfo{base});
}

template <typename Records, typename Take>
void PartitionLog::append_records(Records& records, Take take) {
  sim::File& file = active_segment_file();
  SegmentInfo& active = segments_.back();
  const sim::Time now = ctx_.now();
  for (auto& r : records) {
    file.append_with(now, [&r](std::string& bytes) { encode_record_into(r, bytes); });
    add_to_segment(active, r);
    bytes_through_.push_back((bytes_through_.empty() ? 0 : bytes_through_.back()) + r.size);
    records_.push_back(take(r));
  }
  unflushed_messages_ += static_cast<int64_t>(records.size());
}
void PartitionLog::append_to_active(const std::vector<Record>& records) {
  append_records(records, [](const Record& r) -> const Record& { return r; });
}
void PartitionLog::append_to_active(std::vector<Record>&& records) {
  append_records(records, [](Record& r) -> Record&& { return std::move(r); });
}

// --- truncation --------------------------------------------------------------

void PartitionLog::truncate_to(Offset o) {
  if (o >= log_end()) return;
  // While replicas hold the same batches an offset a log is truncated to
  // ends a batch (an epoch's end offset is where the next epoch's first
  // batch starts, a high watermark is some replica's log end). Logs that
  // diverged (an unclean election, a leader that lost power and led on) can
  // be cut inside a batch: LogSegment.truncateTo cuts the file where the
  // batch holding `o` starts, so the whole batch goes. (Kafka then sets the
  // log end offset to `o` all the same, counting records its file no longer
  // has; the model's log ends where its records do, and the follower
  // fetches the rest again.)
  while (o > log_start_ && !records_[static_cast<size_t>(o - log_start_) - 1].batch_end) o = o - 1;
  if (o < log_start_) {
    // Log.truncateTo below the log start offset.
    truncate_fully_and_start_at(o);
    return;
  }
  for (const auto& weak : flushes_in_flight_) {
    if (auto pending = weak.lock()) pending->target = std::min(pending->target, o);
  }
  while (log_end() > o) {
    records_.pop_back();
    bytes_through_.pop_back();
  }
  sim::Disk& disk = ctx_.disk();
  // Segments starting above `o` go; the one holding `o` (or starting at it)
  // is cut and becomes the active segment.
  while (segments_.size() > 1 && segments_.back().base > o) {
    const Offset base = segments_.back().base;
    disk.remove(segment_path(base));
    ctx_.trace("segment_deleted", {{"dir", dir_}, {"base", base.value}, {"reason", "truncate"}});
    segments_.pop_back();
  }
  SegmentInfo& last = segments_.back();
  SIM_ASSERT(last.base <= o, "{}: truncating to {} below the first segment {}", dir_, o.value,
             last.base.value);
  disk.open(segment_path(last.base)).truncate(static_cast<size_t>(o - last.base), ctx_.now());
  last = scan_segment(last.base);

  trim_epochs_from(o);

  recovery_point_ = std::min(recovery_point_, o);
  unflushed_messages_ = std::min(unflushed_messages_, log_end() - recovery_point_);
  check_invariants();
}

void PartitionLog::trim_epochs_from(Offset o) {
  bool changed = false;
  while (!epochs_.empty() && epochs_.back().start_offset >= o) {
    epochs_.pop_back();
    changed = true;
  }
  if (changed) write_epoch_checkpoint();
}

void PartitionLog::truncate_fully_and_start_at(Offset o) {
  SIM_ASSERT(o.value >= 0, "{}: log start {} is negative", dir_, o.value);
  for (const auto& weak : flushes_in_flight_) {
    if (auto pending = weak.lock()) pending->target = std::min(pending->target, o);
  }
  sim::Disk& disk = ctx_.disk();
  for (const SegmentInfo& s : segments_) {
    disk.remove(segment_path(s.base));
    ctx_.trace("segment_deleted",
               {{"dir", dir_}, {"base", s.base.value}, {"reason", "truncate_fully"}});
  }
  segments_.clear();
  records_.clear();
  bytes_through_.clear();
  if (!epochs_.empty()) {
    epochs_.clear();
    write_epoch_checkpoint();
  }
  epochs_follow_log_start_ = true;
  log_start_ = o;
  recovery_point_ = o;
  unflushed_messages_ = 0;
  // Kafka opens the new, empty active segment at once, so that a restart
  // reads the new log start offset back from its name.
  create_segment(o);
  check_invariants();
}

void PartitionLog::advance_log_start(Offset o) {
  if (o <= log_start_) return;
  if (o > log_end()) {
    // Nothing of this log remains in the leader's: start over at `o`.
    truncate_fully_and_start_at(o);
    return;
  }
  drop_records_below(o);
  // Log.deleteLogStartOffsetBreachedSegments: closed segments whose next
  // segment starts at or below the log start offset. The active segment stays.
  size_t n = 0;
  while (n + 1 < segments_.size() && segments_[n + 1].base <= log_start_) ++n;
  delete_oldest_segments(n, "log_start_offset");
  check_invariants();
}

void PartitionLog::drop_records_below(Offset o) {
  SIM_ASSERT(o <= log_end(), "{}: log start {} beyond log end {}", dir_, o.value,
             log_end().value);
  while (log_start_ < o) {
    records_.pop_front();
    bytes_through_.pop_front();
    log_start_ = log_start_ + 1;
  }
  if (drop_epochs_below(log_start_)) write_epoch_checkpoint();
  epochs_follow_log_start_ = true;
}

bool PartitionLog::drop_epochs_below(Offset start) {
  // LeaderEpochFileCache.truncateFromStart (2.2.2 and 3.9 alike): the entries
  // that start at or below `start` go, and the last of them comes back
  // starting there, so that, cut at the log start, the cache never names an
  // offset the log no longer has. Kafka 3.x flushes this change in the
  // background; the model writes it at once.
  auto above = std::upper_bound(
      epochs_.begin(), epochs_.end(), start,
      [](Offset o, const EpochEntry& entry) { return o < entry.start_offset; });
  if (above == epochs_.begin()) return false;
  const EpochEntry kept{(above - 1)->epoch, start};
  above = epochs_.erase(epochs_.begin(), above);
  epochs_.insert(above, kept);
  return true;
}

SegmentInfo PartitionLog::scan_segment(Offset base) {
  SegmentInfo info{base};
  const sim::File& file = ctx_.disk().open(segment_path(base));
  for (const sim::Record& disk_record : file.records()) {
    const std::optional<Record> r = decode_record(disk_record.data);
    SIM_ASSERT(disk_record.intact && r.has_value(), "{}: unreadable record in live segment {}",
               dir_, base.value);
    add_to_segment(info, *r);
  }
  return info;
}

// --- leader epoch cache ------------------------------------------------------

LeaderEpoch PartitionLog::latest_epoch() const {
  return epochs_.empty() ? kNoLeaderEpoch : epochs_.back().epoch;
}

void PartitionLog::assign_epoch(LeaderEpoch epoch, Offset start) {
  if (assign_epoch_entry(epoch, start)) write_epoch_checkpoint();
  check_invariants();
}

bool PartitionLog::assign_epoch_entry(LeaderEpoch epoch, Offset start) {
  if (epoch <= latest_epoch()) return false;
  SIM_ASSERT(epoch.value >= 0 && start.value >= 0, "{}: bad epoch entry {} {}", dir_, epoch.value,
             start.value);
  // LeaderEpochFileCache.maybeTruncateNonMonotonicEntries: an entry starting at
  // or after the new one held no records of its own; it is replaced.
  while (!epochs_.empty() && epochs_.back().start_offset >= start) epochs_.pop_back();
  epochs_.push_back(EpochEntry{epoch, start});
  return true;
}

std::optional<std::pair<LeaderEpoch, Offset>> PartitionLog::end_offset_for_epoch(
    LeaderEpoch requested) const {
  // LeaderEpochFileCache.endOffsetFor, case by case.
  if (requested.value < 0 || epochs_.empty()) return std::nullopt;
  if (requested == epochs_.back().epoch) return std::make_pair(requested, log_end());
  auto higher = std::upper_bound(
      epochs_.begin(), epochs_.end(), requested,
      [](LeaderEpoch e, const EpochEntry& entry) { return e < entry.epoch; });
  if (higher == epochs_.end()) return std::nullopt;  // above every known epoch
  // Below every known epoch: that epoch ended where the first known began.
  if (higher == epochs_.begin()) return std::make_pair(requested, higher->start_offset);
  return std::make_pair((higher - 1)->epoch, higher->start_offset);
}

void PartitionLog::write_epoch_checkpoint() {
  std::vector<std::string> lines;
  lines.reserve(epochs_.size());
  for (const EpochEntry& e : epochs_) {
    lines.push_back(fmt::format("{} {}", e.epoch.value, e.start_offset.value));
  }
  const std::string path = epoch_checkpoint_path();
  ctx_.disk().open(path).rewrite(std::move(lines), ctx_.now());
  ctx_.fsync(path, [] {});
}

// --- flush -------------------------------------------------------------------

void PartitionLog::flush() {
  last_flush_ms_ = now_ms_of(ctx_);
  unflushed_messages_ = 0;
  flush_upto(log_end());
}

void PartitionLog::flush_in_append() {
  last_flush_ms_ = now_ms_of(ctx_);
  unflushed_messages_ = 0;
  flush_done_at_ = std::max(flush_done_at_, flush_upto(log_end()));
}

void PartitionLog::maybe_flush_by_time(int64_t now_ms) {
  if (config_.flush_interval_ms == INT64_MAX) return;
  if (now_ms - last_flush_ms_ < config_.flush_interval_ms) return;
  if (unflushed_messages_ == 0) return;
  flush();
}

sim::Time PartitionLog::flush_upto(Offset end) {
  end = std::min(end, log_end());
  if (end <= recovery_point_ || segments_.empty()) return ctx_.now();
  // Log.flush(offset) syncs logSegments(recoveryPoint, offset): the segment
  // holding the recovery point (which also carries any unsynced truncation)
  // and every later one starting below `end`.
  std::vector<std::string> paths;
  for (size_t i = segment_index(recovery_point_); i < segments_.size(); ++i) {
    if (segments_[i].base >= end) break;
    paths.push_back(segment_path(segments_[i].base));
  }
  auto pending = std::make_shared<PendingFlush>(PendingFlush{paths.size(), end});
  std::erase_if(flushes_in_flight_, [](const auto& weak) { return weak.expired(); });
  flushes_in_flight_.push_back(pending);
  const std::weak_ptr<int> lifetime = lifetime_;
  sim::Time done = ctx_.now();
  for (const std::string& path : paths) {
    done = std::max(done, ctx_.fsync(path, [this, lifetime, pending] {
      if (lifetime.expired()) return;
      if (--pending->remaining > 0) return;
      // Only forward, and never past what the log holds now.
      recovery_point_ = std::max(recovery_point_, std::min(pending->target, log_end()));
      // Kafka counts the unflushed messages as log end minus recovery point
      // (Log.unflushedMessages): the flush a roll schedules lowers the count
      // too, not only a flush by flush.messages or flush.ms.
      unflushed_messages_ = std::min(unflushed_messages_, log_end() - recovery_point_);
    }));
  }
  return done;
}

// --- retention ---------------------------------------------------------------

int PartitionLog::delete_expired_segments(int64_t now_ms, Offset high_watermark) {
  if (segments_.empty()) return 0;
  int deleted = 0;
  // How many of the oldest segments satisfy `pred`, in order; the active
  // segment counts only when it is not empty, and only segments wholly
  // below the high watermark count (Log.deletableSegments).
  auto leading = [this, high_watermark](auto&& pred) {
    size_t n = 0;
    while (n < segments_.size()) {
      const SegmentInfo& s = segments_[n];
      if (n + 1 == segments_.size() && s.records == 0) break;
      const Offset end = n + 1 < segments_.size() ? segments_[n + 1].base : log_end();
      if (end > high_watermark) break;
      if (!pred(s)) break;
      ++n;
    }
    return n;
  };
  // retention.ms: the segment's newest record is older than the limit.
  // Neither this nor retention.bytes applies to a log whose cleanup.policy
  // lacks delete (Log.deleteOldSegments).
  if (config_.retention_deletes && config_.retention_ms >= 0) {
    const size_t n = leading([&](const SegmentInfo& s) {
      return now_ms - s.max_timestamp_ms > config_.retention_ms;
    });
    deleted += delete_oldest_segments(n, "retention.ms");
  }
  // retention.bytes: drop the oldest while what is left still reaches the
  // limit (Log.deleteRetentionSizeBreachedSegments).
  if (config_.retention_deletes && config_.retention_bytes >= 0) {
    int64_t excess = size_bytes() - config_.retention_bytes;
    if (excess >= 0) {
      const size_t n = leading([&](const SegmentInfo& s) {
        if (excess - s.bytes < 0) return false;
        excess -= s.bytes;
        return true;
      });
      deleted += delete_oldest_segments(n, "retention.bytes");
    }
  }
  // Segments wholly below the log start offset.
  size_t n = 0;
  while (n + 1 < segments_.size() && segments_[n + 1].base <= log_start_) ++n;
  deleted += delete_oldest_segments(n, "log_start_offset");
  check_invariants();
  return deleted;
}

int PartitionLog::delete_oldest_segments(size_t n, std::string_view reason) {
  if (n == 0) return 0;
  SIM_ASSERT(n <= segments_.size(), "{}: deleting {} of {} segments", dir_, n, segments_.size());
  // A log always keeps one segment: when all are going, roll first.
  if (n == segments_.size()) roll_segment(reason);
  sim::Disk& disk = ctx_.disk();
  for (size_t i = 0; i < n; ++i) {
    const SegmentInfo& s = segments_[i];
    disk.remove(segment_path(s.base));
    ctx_.trace("segment_deleted", {{"dir", dir_},
                                   {"base", s.base.value},
                                   {"records", s.records},
                                   {"reason", reason}});
  }
  segments_.erase(segments_.begin(), segments_.begin() + static_cast<std::ptrdiff_t>(n));
  const Offset first_base = segments_.front().base;
  if (first_base > log_start_) drop_records_below(first_base);
  // What was below the first remaining segment no longer needs syncing.
  recovery_point_ = std::max(recovery_point_, first_base);
  return static_cast<int>(n);
}

// --- invariants --------------------------------------------------------------

void PartitionLog::check_invariants() const {
  SIM_ASSERT(bytes_through_.size() == records_.size(), "{}: byte index out of step", dir_);
  SIM_ASSERT(records_.empty() || records_.front().offset == log_start_,
             "{}: first record {} is not the log start {}", dir_, records_.front().offset.value,
             log_start_.value);
  SIM_ASSERT(recovery_point_ <= log_end(), "{}: recovery point {} beyond log end {}", dir_,
             recovery_point_.value, log_end().value);
  if (!segments_.empty()) {
    SIM_ASSERT(segments_.front().base <= log_start_, "{}: log start {} below first segment {}",
               dir_, log_start_.value, segments_.front().base.value);
    SIM_ASSERT(segments_.back().base <= log_end(), "{}: active segment {} beyond log end {}",
               dir_, segments_.back().base.value, log_end().value);
  }
  SIM_ASSERT(!epochs_follow_log_start_ || epochs_.empty() || epochs_.front().start_offset >= log_start_,
             "{}: epoch {} starts at {} below log start {}", dir_, epochs_.front().epoch.value,
             epochs_.front().start_offset.value, log_start_.value);
  SIM_ASSERT(epochs_.empty() || epochs_.back().start_offset <= log_end(),
             "{}: epoch {} starts at {} beyond log end {}", dir_, epochs_.back().epoch.value,
             epochs_.back().start_offset.value, log_end().value);
}

}  // namespace kafka
