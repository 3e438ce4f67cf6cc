// One partition replica's log: segments on the host's simulated disk, the
// leader-epoch cache beside them, and the in-memory index a broker reads from.
//
// Layout on disk, as a real broker lays out a log directory
// (kafka.log.Log / LocalLog, kafka.server.epoch.LeaderEpochFileCache):
//   <dir>/<base offset, 20 digits>.log   one disk record per Kafka record
//   <dir>/leader-epoch-checkpoint         one record per "epoch start_offset"
// (no .index / .timeindex: a lookup is a binary search in memory).
//
// Records are compact (offset, leader epoch, timestamp, producer id / epoch /
// sequence, a value id, a size in bytes); the size is what counts against
// segment.bytes and retention.bytes. Nothing is fsynced unless the flush
// policy (flush.messages / flush.ms, and the flush Kafka schedules for a
// segment it has just rolled) says so: until then data lives in the page
// cache, survives a kill and may vanish, or be torn, on a power-off.
//
// Recovery (kafka.log.LogLoader): on load every segment is read back; the
// first record that is torn or unreadable truncates its segment there and
// every later segment is deleted. A batch is checked whole, by its CRC
// (LogSegment.recover, DefaultRecordBatch.ensureValid): a batch of which only
// some records reached the disk is cut away whole, so the cut falls at the
// last batch boundary before the damage. The epoch cache is then cut to the
// log end and from the start (truncateFromEnd, then truncateFromStart), and
// it follows the log start whenever that moves up.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/kafka/config.h"
#include "model/kafka/types.h"
#include "sim/fifo.h"
#include "sim/world.h"

namespace kafka {

struct Record {
  Offset offset;
  LeaderEpoch leader_epoch;  // the epoch of the leader that appended it
  int64_t timestamp_ms = 0;  // virtual time of the append at the leader
  ProducerId producer_id = kNoProducerId;
  int16_t producer_epoch = -1;
  int32_t sequence = -1;
  uint64_t value = 0;  // an opaque value id chosen by the producer
  int32_t size = 0;    // bytes, as they count against segment.bytes
  // The last record of the batch it was appended in. Kafka writes and checks
  // a batch as one unit (one CRC over all its records), and every replica
  // holds the leader's batches as they were appended: a follower appends the
  // fetched batches unchanged. Recovery keeps only whole batches and a fetch
  // answers with whole batches. A lone record is its own batch.
  // (Here, in the padding after `size`: a Record is copied at every hop.)
  bool batch_end = true;
  // The record key where it matters to the model: empty for the clients'
  // records (their key only chose the partition), the group and partition of
  // a committed offset, or the group of a group's metadata followed by that
  // metadata's bytes, in __consumer_offsets (group_coordinator.h explains why
  // the value rides in the key: client records stay one string long).
  std::string key;
  friend bool operator==(const Record&, const Record&) = default;
};

// The bytes `records` count against the limits; for the records of one
// batch, the batch's size (its header is counted with its first record).
inline int64_t batch_bytes(const std::vector<Record>& records) {
  int64_t bytes = 0;
  for (const Record& r : records) bytes += r.size;
  return bytes;
}

// One record of a segment file, and back: every field as a varint (signed ones
// zig-zag encoded), then the key's length and its bytes, as Kafka's record
// format v2 writes a record (log.cc has the layout). decode returns nullopt
// for anything encode would not write, in particular any strict prefix of a
// record (a torn write). The encoded length is not Record::size: the model
// counts only the latter.
std::string encode_record(const Record& r);
// The same bytes, appended to `out`.
void encode_record_into(const Record& r, std::string& out);
std::optional<Record> decode_record(std::string_view s);

struct SegmentInfo {
  Offset base;
  int64_t bytes = 0;
  int64_t records = 0;
  int64_t first_timestamp_ms = -1;  // of its first record: what segment.ms counts from
  int64_t max_timestamp_ms = -1;    // what retention.ms counts from
};

struct EpochEntry {
  LeaderEpoch epoch;
  Offset start_offset;
  friend bool operator==(const EpochEntry&, const EpochEntry&) = default;
};

class PartitionLog {
 public:
  // `dir` is the partition's directory, e.g. "/tmp/kafka-logs/tiny-0".
  // Nothing is read or written until load() or the first append.
  PartitionLog(sim::ProcessContext& ctx, std::string dir, LogConfig config);
  PartitionLog(const PartitionLog&) = delete;
  PartitionLog& operator=(const PartitionLog&) = delete;

  struct LoadResult {
    int64_t records = 0;            // records found intact
    int64_t truncated_records = 0;  // torn or unreadable records dropped, and what followed them
    int64_t deleted_segments = 0;   // segments after the point of damage
  };
  // Reads the directory back (segments, epoch cache). An absent directory is
  // an empty log. The epoch cache is cut to the log end, then from the
  // start: at the log start up to 2.8, at 0 from 3.0
  // (StartupRules::load_cuts_epochs_at_log_start).
  LoadResult load(bool cut_epochs_at_log_start = true);

  const std::string& dir() const { return dir_; }
  const LogConfig& config() const { return config_; }
  void set_config(const LogConfig& c) { config_ = c; }

  Offset log_start() const { return log_start_; }
  Offset log_end() const { return Offset{log_start_.value + static_cast<int64_t>(records_.size())}; }
  // The offset below which everything is known to be fsynced.
  Offset recovery_point() const { return recovery_point_; }
  bool empty() const { return records_.empty(); }
  // The record at `o`, or null when outside [log_start, log_end).
  const Record* at(Offset o) const;
  // Records from `from` (inclusive) up to `upto` (exclusive), in whole
  // batches: at most `max_bytes` of them by size (a batch that does not fit
  // is left out, as a reader drops the incomplete batch a byte slice ends
  // with). With `min_one` (Kafka's minOneMessage) the whole first batch is
  // read however large; without it, a first batch larger than `max_bytes`
  // gives nothing (ReplicaManager.read answers an incomplete first batch with
  // an empty one). Only `upto` may cut a batch (a consumer's high watermark).
  std::vector<Record> read(Offset from, Offset upto, int64_t max_bytes, bool min_one = true) const;
  // The same records into `out` (replacing what it held): a vector returned
  // by value is written to the stack and read back, which stalled.
  void read_into(Offset from, Offset upto, int64_t max_bytes, bool min_one,
                 std::vector<Record>& out) const;
  // One partition's part of a fetch (Log.read, LogSegment.read): the
  // records read() gives, but from the segment holding `from` only (a read
  // never crosses into the next segment). Returns the size of the byte slice
  // Kafka would send: `max_bytes` (with `min_one`, at least the first batch)
  // of the segment's bytes from `from`, up to `upto`, which may end inside a
  // batch the reader drops; 0 when nothing is read. The records go to `out`
  // (replacing what it held) unless it is null.
  int64_t fetch_read(Offset from, Offset upto, int64_t max_bytes, bool min_one,
                     std::vector<Record>* out) const;
  // The base offset of the segment holding `o` (an offset at a segment's
  // base is in that segment; the log end is in the active segment): what
  // LogOffsetMetadata.segmentBaseOffset says of it now.
  Offset segment_base(Offset o) const;
  // Bytes held in [from, upto).
  int64_t bytes_between(Offset from, Offset upto) const;
  int64_t size_bytes() const;
  const std::vector<SegmentInfo>& segments() const { return segments_; }

  // Appends records as the leader: offsets are assigned from log_end() and
  // the leader epoch and timestamp are set here. Rolls a segment first when
  // segment.bytes or segment.ms says so. Returns the first offset assigned.
  Offset append_as_leader(std::vector<Record> records, LeaderEpoch epoch, int64_t now_ms);
  // Appends records fetched from the leader; their offsets must continue
  // log_end() exactly (SIM_ASSERT). Epoch-cache entries are added for any
  // new leader epoch they carry (as LeaderEpochFileCache.assign does).
  void append_as_follower(const std::vector<Record>& records, int64_t now_ms);

  // Removes every record at or above `o` (no-op if o >= log_end), and the
  // epoch-cache entries that start at or above it. An `o` inside a batch
  // takes the whole batch (the log then ends below `o`).
  void truncate_to(Offset o);
  // Drops the epoch-cache entries that start at or above `o`
  // (LeaderEpochFileCache.truncateFromEnd), writing the checkpoint if any go.
  void trim_epochs_from(Offset o);
  // Empties the log and restarts it at `o` (a follower that fell below the
  // leader's log start offset).
  void truncate_fully_and_start_at(Offset o);
  // Deletes whole segments below `o` and moves the log start offset up to
  // it (a follower following the leader's log start offset).
  void advance_log_start(Offset o);

  // --- leader epoch cache (KIP-101) ----------------------------------------
  const std::vector<EpochEntry>& epochs() const { return epochs_; }
  LeaderEpoch latest_epoch() const;
  // Records that `epoch` starts at `start` (a new leader does this with its
  // log end offset). Ignored if epoch is not above the latest; written to
  // leader-epoch-checkpoint and fsynced, as Kafka does.
  void assign_epoch(LeaderEpoch epoch, Offset start);
  // The answer to OffsetsForLeaderEpoch (LeaderEpochFileCache.endOffsetFor):
  // the latest epoch -> (it, log_end); an epoch between known ones -> (the
  // largest known epoch <= it, where the next known epoch starts); one below
  // every known epoch -> (it, where the first known epoch starts); one above
  // every known epoch, or no epochs at all -> nullopt (UNDEFINED_EPOCH).
  std::optional<std::pair<LeaderEpoch, Offset>> end_offset_for_epoch(LeaderEpoch requested) const;

  // --- flush and retention ---------------------------------------------------
  // fsyncs everything up to log_end; the recovery point moves when the fsync
  // completes.
  void flush();
  // When the last flush that flush.messages triggered inside an append
  // completes (not a roll's or the scheduler's background flush). Kafka flushes synchronously inside the append, so whoever
  // appended — the produce request, the follower's fetcher — waits for it.
  sim::Time flush_done_at() const { return flush_done_at_; }
  // Flushes when flush.ms has passed since the last flush and there is
  // unflushed data (the log.flush.scheduler's check).
  void maybe_flush_by_time(int64_t now_ms);
  // Deletes closed segments past retention.ms / retention.bytes (the active
  // segment too when it is wholly past retention.ms, after rolling a fresh
  // one), moving the log start offset. Returns how many were deleted.
  // Only segments wholly below `high_watermark` go (Log.deletableSegments).
  int delete_expired_segments(int64_t now_ms, Offset high_watermark = Offset{INT64_MAX});
  // Rolls a new active segment at log_end() (if the active one is not empty).
  void roll(int64_t now_ms);

 private:
  // An fsync of one or more segment files that, when the last completes,
  // moves the recovery point to `target`. A truncation lowers the target of
  // every flush in flight: what was cut away is no longer what was synced.
  struct PendingFlush {
    size_t remaining = 0;
    Offset target;
  };

  std::string segment_path(Offset base) const;
  // The active segment's file (segments_ must not be empty); its path is
  // cached, as every append needs it.
  sim::File& active_segment_file();
  std::string epoch_checkpoint_path() const;
  void write_epoch_checkpoint();
  // Returns when the last of its fsyncs completes.
  sim::Time flush_upto(Offset end);
  // Log.append's own flush (flush.messages): synchronous in Kafka.
  void flush_in_append();

  // The segment holding offset `o`: the last one whose base is <= o (the
  // first when o is below every base). segments_ must not be empty.
  size_t segment_index(Offset o) const;
  // The positions in records_ that read() returns: [first, end).
  std::pair<size_t, size_t> read_range(Offset from, Offset upto, int64_t max_bytes, bool min_one) const;
  // Creates an empty segment file at `base` and makes it the active segment.
  void create_segment(Offset base);
  // LogSegment.shouldRoll (segment.jitter.ms = 0), then the roll.
  void maybe_roll(int64_t batch_bytes, int64_t batch_max_timestamp_ms);
  // Log.roll: a new active segment at log_end() and a flush scheduled for
  // everything below it.
  void roll_segment(std::string_view reason);
  // Writes `records` (offsets already log_end() onward) to the active segment.
  void append_to_active(const std::vector<Record>& records);
  void append_to_active(std::vector<Record>&& records);
  // Both of the above: `take(r)` gives what goes into records_ (a copy or a move).
  template <typename Records, typename Take>
  void append_records(Records& records, Take take);
  // LeaderEpochFileCache.assign without the checkpoint write; false if ignored.
  bool assign_epoch_entry(LeaderEpoch epoch, Offset start);
  // Cuts the epoch cache at `start` (truncateFromStart): the entries that
  // start at or below it go and the last of them comes back starting there;
  // true if any went, leaving the checkpoint to the caller.
  bool drop_epochs_below(Offset start);
  // Moves log_start_ up to `o` (<= log_end()), dropping records from memory.
  void drop_records_below(Offset o);
  // Deletes the `n` oldest segments (rolling first if that is all of them).
  int delete_oldest_segments(size_t n, std::string_view reason);
  // Re-reads a segment file to rebuild its SegmentInfo.
  SegmentInfo scan_segment(Offset base);
  void check_invariants() const;

  sim::ProcessContext& ctx_;
  std::string dir_;
  LogConfig config_;
  Offset log_start_{0};
  Offset recovery_point_{0};
  sim::Fifo<Record> records_;          // [log_start_, log_end)
  std::vector<SegmentInfo> segments_;  // ascending base; the last is active
  std::vector<EpochEntry> epochs_;     // ascending epoch and start offset
  // No entry starts below the log start: false after a 3.x load found some,
  // until the log start next moves (checked by check_invariants).
  bool epochs_follow_log_start_ = true;
  int64_t unflushed_messages_ = 0;
  int64_t last_flush_ms_ = 0;
  sim::Time flush_done_at_ = sim::Time::zero();
  // Running byte total through each record, parallel to records_, so that
  // bytes_between is O(1).
  sim::Fifo<int64_t> bytes_through_;
  std::vector<std::weak_ptr<PendingFlush>> flushes_in_flight_;
  // fsync callbacks hold a weak reference: a log destroyed while its process
  // lives (a deleted partition) never hears back.
  std::shared_ptr<int> lifetime_ = std::make_shared<int>(0);
  // segment_path(active_path_base_), kept for the appends to the active segment.
  std::string active_path_;
  Offset active_path_base_{0};
  // Its file, while no file of the disk has been removed since (Disk::removals).
  sim::File* active_file_ = nullptr;
  uint64_t active_file_removals_ = 0;
};

}  // namespace kafka
