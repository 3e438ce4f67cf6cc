// Tests for model/kafka/log: one partition replica's log on a simulated disk.
//
// Each test holds a PartitionLog on a one-host World, through the context of
// a process that does nothing by itself. The disk is set up to be
// predictable: fsyncs take exactly 1 ms and background writeback is off, so
// only an fsync makes data durable. What a power loss keeps beyond that is a
// random prefix of the unsynced records (the kernel may have been part-way
// through writing them); the tests about power loss therefore run over many
// seeds and check what must hold for every one, plus that the random part
// really happens.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "model/kafka/log.h"
#include "model/kafka/record_format.h"
#include "sim/world.h"

namespace kafka {
namespace {

using sim::Duration;

constexpr const char* kDir = "/tmp/kafka-logs/tiny-0";
constexpr Duration kFsyncLatency = Duration::millis(1);

// A process that only lends its context to the log under test.
class Idle final : public sim::Process {
 public:
  void on_start() override {}
  sim::ProcessContext& context() { return ctx(); }
};

sim::DiskOptions predictable_disk(uint32_t torn_write_percent = 0) {
  sim::DiskOptions o;
  o.fsync_latency_min = kFsyncLatency;
  o.fsync_latency_max = kFsyncLatency;
  o.writeback_delay = Duration::max();
  o.torn_write_percent = torn_write_percent;
  return o;
}

// One host, one process, and the log in its directory.
class Bed {
 public:
  explicit Bed(LogConfig config = {}, uint64_t seed = 1, sim::DiskOptions disk = predictable_disk())
      : world_(seed, options(disk)), config_(config) {
    world_.trace().keep_lines(true);
    host_ = world_.add_host("node1", "10.0.0.1");
    process_ = world_.add_process(host_, "broker", [] { return std::make_unique<Idle>(); });
    world_.boot();
    open();
  }

  sim::World& world() { return world_; }
  PartitionLog& log() { return *log_; }
  sim::Disk& disk() { return world_.disk(host_); }
  int64_t now_ms() const { return world_.now().since_start().ms(); }
  sim::ProcessContext& ctx() { return world_.process_as<Idle>(process_)->context(); }

  // A fresh PartitionLog object that has read the directory back.
  // `cut_epochs_at_log_start`: as a 2.x broker loads (StartupRules).
  PartitionLog::LoadResult open(bool cut_epochs_at_log_start = true) {
    log_ = std::make_unique<PartitionLog>(ctx(), kDir, config_);
    return log_->load(cut_epochs_at_log_start);
  }
  // kill -9 and restart: the page cache survives.
  PartitionLog::LoadResult restart(bool cut_epochs_at_log_start = true) {
    log_.reset();
    world_.kill(process_);
    world_.start(process_);
    return open(cut_epochs_at_log_start);
  }
  // Power off and on: only what was durable (plus chance) survives.
  PartitionLog::LoadResult power_cycle() {
    power_off();
    return power_on();
  }
  void power_off() {
    log_.reset();
    world_.power_off(host_);
  }
  PartitionLog::LoadResult power_on() {
    world_.power_on(host_);
    world_.start(process_);
    return open();
  }

  // Appends `n` records of `size` bytes as the leader of `epoch`.
  Offset produce(int n, int32_t size = 100, LeaderEpoch epoch = LeaderEpoch{1}) {
    std::vector<Record> batch(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      batch[static_cast<size_t>(i)].value = next_value_++;
      batch[static_cast<size_t>(i)].size = size;
    }
    return log_->append_as_leader(std::move(batch), epoch, now_ms());
  }
  void run_for(Duration d) { world_.run_for(d); }

  // Segment files in the directory, by base offset.
  std::vector<int64_t> segment_files() {
    std::vector<int64_t> out;
    for (const std::string& path : disk().list(std::string(kDir) + "/")) {
      if (path.ends_with(".log")) {
        out.push_back(std::stoll(path.substr(std::string(kDir).size() + 1, 20)));
      }
    }
    return out;
  }
  sim::File* segment_file(int64_t base) {
    return disk().find(fmt::format("{}/{:020}.log", kDir, base));
  }
  std::vector<std::string> checkpoint_lines() {
    std::vector<std::string> out;
    if (sim::File* f = disk().find(std::string(kDir) + "/leader-epoch-checkpoint")) {
      for (const sim::Record& r : f->records()) out.emplace_back(r.data);
    }
    return out;
  }
  int traced(std::string_view kind) {
    const std::string needle = fmt::format("\"kind\":\"{}\"", kind);
    int n = 0;
    for (const std::string& line : world_.trace().lines()) {
      n += line.find(needle) != std::string::npos;
    }
    return n;
  }

 private:
  static sim::WorldOptions options(sim::DiskOptions disk) {
    sim::WorldOptions o;
    o.disk = disk;
    return o;
  }

  sim::World world_;
  LogConfig config_;
  sim::HostId host_;
  sim::ProcessId process_;
  std::unique_ptr<PartitionLog> log_;
  uint64_t next_value_ = 1000;
};

std::vector<int64_t> bases_of(const PartitionLog& log) {
  std::vector<int64_t> out;
  for (const SegmentInfo& s : log.segments()) out.push_back(s.base.value);
  return out;
}

std::vector<int64_t> offsets_of(const std::vector<Record>& records) {
  std::vector<int64_t> out;
  for (const Record& r : records) out.push_back(r.offset.value);
  return out;
}

Record sample_record() {
  Record r;
  r.offset = Offset{391};
  r.leader_epoch = LeaderEpoch{7};
  r.timestamp_ms = 1'700'000'000'123;
  r.producer_id = 4001;
  r.producer_epoch = 3;
  r.sequence = 17;
  r.value = 18'446'744'073'709'551'615ULL;
  r.size = 70;
  return r;
}

// --- the record format -------------------------------------------------------

TEST(KafkaLogRecord, EncodeDecodeRoundTrip) {
  const Record r = sample_record();
  EXPECT_EQ(decode_record(encode_record(r)), r);

  // The layout, byte by byte: offset 0, epoch 0, timestamp 0 (zig-zag 0),
  // producer id, epoch and sequence -1 (zig-zag 1), value 0, size 0,
  // attributes 1 (the record ends its batch), a key of length 0.
  Record plain;  // no producer id, epoch or sequence: the -1s survive
  plain.offset = Offset{0};
  plain.leader_epoch = LeaderEpoch{0};
  EXPECT_EQ(encode_record(plain), std::string("\x00\x00\x00\x01\x01\x01\x00\x00\x01\x00", 10));
  EXPECT_EQ(decode_record(encode_record(plain)), plain);

  // A record inside its batch: attributes 0.
  Record inside = plain;
  inside.batch_end = false;
  EXPECT_EQ(encode_record(inside), std::string("\x00\x00\x00\x01\x01\x01\x00\x00\x00\x00", 10));
  EXPECT_EQ(decode_record(encode_record(inside)), inside);

  // Varints, least significant group first: offset 391 = 0x87 0x03; the
  // leader epoch zig-zag encoded, 7 -> 14; value 300 = 0xac 0x02; size 70.
  Record small = plain;
  small.offset = Offset{391};
  small.leader_epoch = LeaderEpoch{7};
  small.size = 70;
  small.value = 300;
  EXPECT_EQ(encode_record(small),
            std::string("\x87\x03\x0e\x00\x01\x01\x01\xac\x02\x46\x01\x00", 12));

  Record keyed = plain;  // a committed offset's key, with the bytes a group id may hold
  keyed.key = std::string("o\x01grp,1\xff\x00,", 10);
  const std::string keyed_bytes = encode_record(keyed);
  EXPECT_EQ(keyed_bytes, std::string("\x00\x00\x00\x01\x01\x01\x00\x00\x01\x0a", 10) + keyed.key);
  EXPECT_EQ(decode_record(keyed_bytes), keyed);

  // Every byte value in a key longer than one varint byte can count.
  Record long_key = sample_record();
  for (int i = 0; i < 300; ++i) long_key.key += static_cast<char>(i % 256);
  EXPECT_EQ(decode_record(encode_record(long_key)), long_key);

  // Every field at its extremes.
  Record extreme;
  extreme.offset = Offset{INT64_MAX};
  extreme.leader_epoch = LeaderEpoch{INT64_MAX};
  extreme.timestamp_ms = INT64_MIN;
  extreme.producer_id = INT64_MAX;
  extreme.producer_epoch = INT16_MIN;
  extreme.sequence = INT32_MIN;
  extreme.value = UINT64_MAX;
  extreme.size = INT32_MAX;
  extreme.key = std::string(1, '\0');
  EXPECT_EQ(decode_record(encode_record(extreme)), extreme);
  extreme.leader_epoch = kNoLeaderEpoch;
  extreme.timestamp_ms = INT64_MAX;
  extreme.producer_id = INT64_MIN;
  extreme.producer_epoch = INT16_MAX;
  extreme.sequence = INT32_MAX;
  EXPECT_EQ(decode_record(encode_record(extreme)), extreme);
}

// Random records, keys of arbitrary bytes: each round-trips, and no strict
// prefix of one (what a torn write leaves) decodes.
RC_GTEST_PROP(KafkaLogRecordProperty, RoundTripsAndRejectsEveryPrefix, ()) {
  Record r;
  r.offset = Offset{*rc::gen::inRange<int64_t>(0, INT64_MAX)};
  r.leader_epoch = LeaderEpoch{*rc::gen::inRange<int64_t>(-1, INT64_MAX)};
  r.timestamp_ms = *rc::gen::arbitrary<int64_t>();
  r.producer_id = *rc::gen::arbitrary<int64_t>();
  r.producer_epoch = *rc::gen::arbitrary<int16_t>();
  r.sequence = *rc::gen::arbitrary<int32_t>();
  r.value = *rc::gen::arbitrary<uint64_t>();
  r.size = *rc::gen::inRange<int32_t>(0, INT32_MAX);
  r.batch_end = *rc::gen::arbitrary<bool>();
  r.key = *rc::gen::container<std::string>(rc::gen::arbitrary<char>());
  const std::string bytes = encode_record(r);
  RC_ASSERT(decode_record(bytes) == std::optional<Record>(r));
  for (size_t n = 0; n < bytes.size(); ++n) {
    RC_ASSERT(decode_record(std::string_view(bytes).substr(0, n)) == std::nullopt);
  }
  // Nor does the record with anything after it.
  RC_ASSERT(decode_record(bytes + std::string(1, '\0')) == std::nullopt);
}

// The same with fields of one to three varint bytes, the decoder's short
// paths: offsets, timestamps and value ids of a run are mostly that size.
RC_GTEST_PROP(KafkaLogRecordProperty, ShortFieldsRoundTripAndRejectEveryPrefix, ()) {
  const auto small = [] { return *rc::gen::inRange<int64_t>(0, int64_t{1} << 22); };
  Record r;
  r.offset = Offset{small()};
  r.leader_epoch = LeaderEpoch{small() - 1};
  r.timestamp_ms = small() - (int64_t{1} << 21);
  r.producer_id = small() - 1;
  r.producer_epoch = static_cast<int16_t>(*rc::gen::inRange<int32_t>(-1, INT16_MAX));
  r.sequence = static_cast<int32_t>(small() - 1);
  r.value = static_cast<uint64_t>(small());
  r.size = static_cast<int32_t>(small());
  r.batch_end = *rc::gen::arbitrary<bool>();
  r.key = *rc::gen::container<std::string>(rc::gen::arbitrary<char>());
  const std::string bytes = encode_record(r);
  RC_ASSERT(decode_record(bytes) == std::optional<Record>(r));
  for (size_t n = 0; n < bytes.size(); ++n) {
    RC_ASSERT(decode_record(std::string_view(bytes).substr(0, n)) == std::nullopt);
  }
}

TEST(KafkaLogRecord, EveryStrictPrefixIsRejected) {
  Record keyed = sample_record();
  keyed.key = std::string("g\0,1", 4);
  for (const Record& r : {sample_record(), keyed}) {
    const std::string bytes = encode_record(r);
    ASSERT_EQ(decode_record(bytes), r);
    for (size_t n = 0; n < bytes.size(); ++n) {
      EXPECT_EQ(decode_record(bytes.substr(0, n)), std::nullopt) << n << " of " << bytes.size();
    }
  }
}

TEST(KafkaLogRecord, DecodeRejectsAnythingMalformed) {
  const std::string ok = encode_record(sample_record());
  const std::string zeros(10, '\0');  // a valid all-zero record with an empty key
  ASSERT_TRUE(decode_record(zeros).has_value());
  auto with = [&](size_t field, std::string_view bytes) {  // `zeros` with one field replaced
    std::string s = zeros.substr(0, field);
    s += bytes;
    s += zeros.substr(field + 1);
    return s;
  };
  const std::vector<std::string> bad = {
      "",
      "391,7,1700000000123,4001,3,17,18446744073709551615,70",  // the old text form
      ok + std::string(1, '\0'),                   // trailing byte after the record
      zeros.substr(0, 9),                          // no key length
      with(9, "\x01"),                             // a key length with no key
      with(9, "\x02") + "a",                       // a key shorter than its length
      with(8, "\x02"),                             // an attribute bit that is never set
      with(8, std::string("\x81\x00", 2)),         // attributes 1 with a needless zero group
      with(0, std::string(9, '\xff') + "\x01"),     // offset 2^64 - 1: a negative one
      with(1, "\x03"),                             // leader epoch -2
      with(4, std::string("\x80\x80\x04", 3)),     // producer epoch 32768, beyond int16
      with(5, std::string("\x80\x80\x80\x80\x10", 5)),  // sequence 2^31, beyond int32
      with(7, std::string("\xff\xff\xff\xff\x0f", 5)),  // size 2^32 - 1: a negative one
      with(7, std::string("\x80\x80\x80\x80\x08", 5)),  // size 2^31, beyond int32
      with(0, std::string("\x80\x00", 2)),         // a needless zero group
      with(0, std::string("\x80\x80\x00", 3)),     // one after two bytes
      with(3, std::string("\xff\x80\x00", 3)),     // and after a full first group
      with(6, std::string(10, '\xff') + "\x01"),   // a varint of 11 bytes
      with(6, std::string(9, '\xff') + "\x02"),    // a varint past 64 bits
      std::string(1, '\x80'),                      // ends inside a varint
  };
  for (size_t i = 0; i < bad.size(); ++i) {
    EXPECT_EQ(decode_record(bad[i]), std::nullopt) << "case " << i;
  }
  // The largest 10-byte varint is UINT64_MAX, which the value field takes.
  const auto decoded = decode_record(with(6, std::string(9, '\xff') + "\x01"));
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->value, UINT64_MAX);
}

// --- appending and reading ---------------------------------------------------

TEST(KafkaLog, AnAbsentDirectoryLoadsAsAnEmptyLogWithoutFiles) {
  Bed bed;
  EXPECT_TRUE(bed.log().empty());
  EXPECT_EQ(bed.log().log_start(), Offset{0});
  EXPECT_EQ(bed.log().log_end(), Offset{0});
  EXPECT_TRUE(bed.log().segments().empty());
  EXPECT_TRUE(bed.segment_files().empty());
  EXPECT_EQ(bed.log().latest_epoch(), kNoLeaderEpoch);
  EXPECT_EQ(bed.log().at(Offset{0}), nullptr);
  EXPECT_TRUE(bed.log().read(Offset{0}, Offset{10}, 1'000'000).empty());
}

TEST(KafkaLog, LeaderAppendAssignsOffsetsEpochAndTimestamp) {
  Bed bed;
  EXPECT_EQ(bed.produce(3, 100, LeaderEpoch{1}), Offset{0});
  bed.run_for(Duration::seconds(2));
  EXPECT_EQ(bed.produce(2, 50, LeaderEpoch{2}), Offset{3});

  PartitionLog& log = bed.log();
  EXPECT_EQ(log.log_end(), Offset{5});
  ASSERT_NE(log.at(Offset{4}), nullptr);
  EXPECT_EQ(log.at(Offset{4})->offset, Offset{4});
  EXPECT_EQ(log.at(Offset{4})->leader_epoch, LeaderEpoch{2});
  EXPECT_EQ(log.at(Offset{4})->timestamp_ms, 2'000);
  EXPECT_EQ(log.at(Offset{1})->leader_epoch, LeaderEpoch{1});
  EXPECT_EQ(log.at(Offset{1})->timestamp_ms, 0);
  EXPECT_EQ(log.at(Offset{5}), nullptr);

  // One segment file, one disk record per Kafka record, in the record format.
  EXPECT_EQ(bed.segment_files(), std::vector<int64_t>{0});
  const sim::File* file = bed.segment_file(0);
  ASSERT_NE(file, nullptr);
  ASSERT_EQ(file->size(), 5u);
  EXPECT_EQ(decode_record(file->records()[3].data), *log.at(Offset{3}));

  ASSERT_EQ(log.segments().size(), 1u);
  EXPECT_EQ(log.segments()[0].bytes, 400);
  EXPECT_EQ(log.segments()[0].records, 5);
  EXPECT_EQ(log.segments()[0].first_timestamp_ms, 0);
  EXPECT_EQ(log.segments()[0].max_timestamp_ms, 2'000);
  EXPECT_EQ(log.size_bytes(), 400);

  // Log.append records each batch's epoch in the cache (a leader has usually
  // done so already through assign_epoch).
  EXPECT_EQ(log.epochs(), (std::vector<EpochEntry>{{LeaderEpoch{1}, Offset{0}},
                                                   {LeaderEpoch{2}, Offset{3}}}));
}

TEST(KafkaLog, ReadHonoursMaxBytesButAlwaysReturnsOneRecord) {
  Bed bed;
  for (int i = 0; i < 4; ++i) bed.produce(1, 100);  // four batches of one record
  PartitionLog& log = bed.log();
  EXPECT_EQ(offsets_of(log.read(Offset{0}, Offset{10}, 250)), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(offsets_of(log.read(Offset{0}, Offset{10}, 300)), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(offsets_of(log.read(Offset{1}, Offset{3}, 1'000)), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(offsets_of(log.read(Offset{2}, Offset{10}, 1)), (std::vector<int64_t>{2}));
  EXPECT_TRUE(log.read(Offset{4}, Offset{10}, 1'000).empty());
  EXPECT_TRUE(log.read(Offset{2}, Offset{2}, 1'000).empty());

  // read_into replaces what the vector held, and an empty range empties it.
  std::vector<Record> into = log.read(Offset{0}, Offset{4}, 1'000);
  log.read_into(Offset{1}, Offset{3}, 1'000, true, into);
  EXPECT_EQ(offsets_of(into), (std::vector<int64_t>{1, 2}));
  log.read_into(Offset{4}, Offset{10}, 1'000, true, into);
  EXPECT_TRUE(into.empty());

  EXPECT_EQ(log.bytes_between(Offset{0}, Offset{4}), 400);
  EXPECT_EQ(log.bytes_between(Offset{1}, Offset{3}), 200);
  EXPECT_EQ(log.bytes_between(Offset{3}, Offset{100}), 100);
  EXPECT_EQ(log.bytes_between(Offset{3}, Offset{3}), 0);
}

// read takes a short range record by record and a long one by binary search:
// both must stop where the budget does, at a batch's end, checked against a
// plain running sum over the pieces of batches in range; with min_one the
// first piece is taken whatever its size, without it only if it fits.
TEST(KafkaLog, ReadStopsAtTheBudgetOverShortAndLongRanges) {
  Bed bed;
  for (int32_t size : {10, 70, 30, 100, 5, 60, 45, 80, 20, 90, 15, 50}) bed.produce(2, size);
  for (int32_t size : {25, 35, 55}) bed.produce(3, size);
  for (int32_t size : {40, 10, 90, 30}) bed.produce(1, size);
  PartitionLog& log = bed.log();
  const std::vector<Record> all = log.read(Offset{0}, Offset{100}, INT64_MAX);
  ASSERT_EQ(all.size(), 37u);
  for (int64_t from = 0; from <= 37; ++from) {
    for (int64_t upto = from; upto <= 38; ++upto) {
      for (int64_t max_bytes : {int64_t{0}, int64_t{1}, int64_t{45}, int64_t{100}, int64_t{333},
                                int64_t{1'000}}) {
        for (bool min_one : {true, false}) {
          // Whole pieces: a piece ends with its batch or at `upto`; the first
          // is taken with min_one, the others (and without min_one, the first
          // too) while the total stays within budget.
          std::vector<int64_t> want;
          std::vector<int64_t> piece;
          int64_t total = 0;
          int64_t piece_bytes = 0;
          const int64_t hi = std::min<int64_t>(upto, 37);
          for (int64_t o = from; o < hi; ++o) {
            const Record& r = all[static_cast<size_t>(o)];
            piece.push_back(o);
            piece_bytes += r.size;
            if (!r.batch_end && o + 1 < hi) continue;
            if ((!want.empty() || !min_one) && total + piece_bytes > max_bytes) break;
            want.insert(want.end(), piece.begin(), piece.end());
            total += piece_bytes;
            piece.clear();
            piece_bytes = 0;
          }
          EXPECT_EQ(offsets_of(log.read(Offset{from}, Offset{upto}, max_bytes, min_one)), want)
              << "from " << from << " upto " << upto << " max_bytes " << max_bytes << " min_one "
              << min_one;
        }
      }
    }
  }
}

// fetch_read is a fetch's read of one partition: within one segment, the
// records read returns, and the size of the byte slice Kafka would send —
// max_bytes of the bytes there are (at least the first batch with min_one),
// or nothing when no record is read.
TEST(KafkaLog, FetchReadReturnsWhatReadDoesAndTheSliceKafkaSends) {
  Bed bed;
  bed.produce(3, 100);
  bed.produce(2, 40);
  PartitionLog& log = bed.log();
  for (int64_t from = 0; from <= 6; ++from) {
    for (int64_t upto = 0; upto <= 6; ++upto) {
      for (int64_t max_bytes : {int64_t{0}, int64_t{1}, int64_t{99}, int64_t{100}, int64_t{139},
                                int64_t{140}, int64_t{250}, int64_t{1'000}}) {
        for (bool min_one : {true, false}) {
          const std::vector<Record> want = log.read(Offset{from}, Offset{upto}, max_bytes, min_one);
          std::vector<Record> got{Record{}};
          const int64_t slice = log.fetch_read(Offset{from}, Offset{upto}, max_bytes, min_one, &got);
          EXPECT_EQ(offsets_of(got), offsets_of(want))
              << "from " << from << " upto " << upto << " max_bytes " << max_bytes << " min_one " << min_one;
          // The first batch: offsets 0-2 (300 bytes) or 3-4 (80), from `from` on.
          const int64_t first_batch = from < 3 ? (3 - from) * 100 : (5 - from) * 40;
          const int64_t there = log.bytes_between(Offset{from}, Offset{upto});
          const int64_t expected =
              want.empty() ? 0 : std::min(min_one ? std::max(max_bytes, first_batch) : max_bytes, there);
          EXPECT_EQ(slice, expected)
              << "from " << from << " upto " << upto << " max_bytes " << max_bytes << " min_one " << min_one;
          EXPECT_EQ(log.fetch_read(Offset{from}, Offset{upto}, max_bytes, min_one, nullptr), slice);
        }
      }
    }
  }
  // The slice ends inside the second batch, which is not read.
  std::vector<Record> out;
  EXPECT_EQ(log.fetch_read(Offset{0}, Offset{5}, 350, true, &out), 350);
  EXPECT_EQ(offsets_of(out), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(log.fetch_read(Offset{3}, Offset{5}, 50, true, &out), 80);  // the first batch, whole
  EXPECT_EQ(log.fetch_read(Offset{3}, Offset{5}, 50, false, &out), 0);  // unless it must fit
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(log.fetch_read(Offset{4}, Offset{5}, 1, true, &out), 40);   // from inside a batch
}

// A fetch's read stays in the segment holding its offset (Log.read reads
// one segment): the next segment's records wait for the next fetch.
TEST(KafkaLog, FetchReadStopsAtTheEndOfItsSegment) {
  LogConfig config;
  config.segment_bytes = 250;
  Bed bed(config);
  bed.produce(1, 100);
  bed.produce(1, 100);
  bed.produce(1, 100);  // 300 > 250: a segment at 2
  bed.produce(1, 100);
  ASSERT_EQ(bases_of(bed.log()), (std::vector<int64_t>{0, 2}));
  PartitionLog& log = bed.log();
  std::vector<Record> out;
  EXPECT_EQ(log.fetch_read(Offset{0}, Offset{4}, 1'000, true, &out), 200);
  EXPECT_EQ(offsets_of(out), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(log.fetch_read(Offset{1}, Offset{4}, 1'000, true, &out), 100);
  EXPECT_EQ(offsets_of(out), (std::vector<int64_t>{1}));
  EXPECT_EQ(log.fetch_read(Offset{2}, Offset{4}, 1'000, true, &out), 200);
  EXPECT_EQ(offsets_of(out), (std::vector<int64_t>{2, 3}));
  // read() is not a fetch: it reads across segments.
  EXPECT_EQ(offsets_of(log.read(Offset{0}, Offset{4}, 1'000)), (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(log.segment_base(Offset{1}), Offset{0});
  EXPECT_EQ(log.segment_base(Offset{2}), Offset{2});  // a segment's base is in it
  EXPECT_EQ(log.segment_base(Offset{4}), Offset{2});  // the log end, in the active segment
}

// Kafka answers a fetch in whole batches: it slices the segment's bytes, and
// the reader drops the incomplete batch a slice ends with; the first batch
// is whole however large. Every replica keeps the leader's batches.
TEST(KafkaLog, ReadReturnsWholeBatches) {
  Bed bed;
  bed.produce(3, 100);  // [0, 3)
  bed.produce(2, 100);  // [3, 5)
  bed.produce(1, 100);  // [5, 6)
  PartitionLog& log = bed.log();
  std::vector<bool> ends;
  for (const Record& r : log.read(Offset{0}, Offset{6}, INT64_MAX)) ends.push_back(r.batch_end);
  EXPECT_EQ(ends, (std::vector<bool>{false, false, true, false, true, true}));
  EXPECT_EQ(offsets_of(log.read(Offset{0}, Offset{10}, 450)), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(offsets_of(log.read(Offset{0}, Offset{10}, 500)),
            (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(offsets_of(log.read(Offset{0}, Offset{10}, 50)), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(offsets_of(log.read(Offset{1}, Offset{10}, 50)), (std::vector<int64_t>{1, 2}));
  // Only the upper bound (a consumer's high watermark) may cut a batch.
  EXPECT_EQ(offsets_of(log.read(Offset{0}, Offset{4}, INT64_MAX)),
            (std::vector<int64_t>{0, 1, 2, 3}));

  // A follower appends them as they are: its log has the same batches.
  Bed follower;
  follower.log().append_as_follower(log.read(Offset{0}, Offset{10}, 450), follower.now_ms());
  follower.log().append_as_follower(log.read(Offset{3}, Offset{10}, 250), follower.now_ms());
  EXPECT_EQ(follower.log().read(Offset{0}, Offset{10}, INT64_MAX),
            log.read(Offset{0}, Offset{10}, 500));
  // Records that end inside a batch are a bug in the caller.
  std::vector<Record> partial = log.read(Offset{5}, Offset{6}, INT64_MAX);
  partial.back().batch_end = false;
  EXPECT_THROW(follower.log().append_as_follower(partial, follower.now_ms()),
               sim::InvariantViolation);
  EXPECT_EQ(follower.log().log_end(), Offset{5});
}

TEST(KafkaLog, FollowerAppendKeepsOffsetsAndLearnsNewEpochs) {
  Bed bed;
  std::vector<Record> fetched;
  for (int i = 0; i < 5; ++i) {
    Record r;
    r.offset = Offset{i};
    r.leader_epoch = LeaderEpoch{i < 2 ? 3 : 5};
    r.timestamp_ms = 10 * i;
    r.size = 10;
    fetched.push_back(r);
  }
  bed.log().append_as_follower(fetched, bed.now_ms());
  EXPECT_EQ(bed.log().log_end(), Offset{5});
  EXPECT_EQ(*bed.log().at(Offset{4}), fetched[4]);  // the leader's timestamps are kept
  EXPECT_EQ(bed.log().epochs(), (std::vector<EpochEntry>{{LeaderEpoch{3}, Offset{0}},
                                                         {LeaderEpoch{5}, Offset{2}}}));
  EXPECT_EQ(bed.checkpoint_lines(), (std::vector<std::string>{"3 0", "5 2"}));

  // A record that does not continue the log end is a bug in the caller.
  Record gap = fetched[4];
  gap.offset = Offset{7};
  EXPECT_THROW(bed.log().append_as_follower({gap}, bed.now_ms()), sim::InvariantViolation);
}

// --- rolling -----------------------------------------------------------------

TEST(KafkaLogRoll, RollsWhenTheNextBatchWouldPassSegmentBytes) {
  LogConfig config;
  config.segment_bytes = 250;
  Bed bed(config);
  bed.produce(5, 100);  // one batch never splits: 500 bytes in the first segment
  bed.produce(1, 100);  // 500 > 250 - 100: roll
  bed.produce(1, 100);
  bed.produce(1, 100);  // 200 > 150: roll
  EXPECT_EQ(bases_of(bed.log()), (std::vector<int64_t>{0, 5, 7}));
  EXPECT_EQ(bed.segment_files(), (std::vector<int64_t>{0, 5, 7}));
  EXPECT_EQ(bed.segment_file(5)->size(), 2u);
  EXPECT_EQ(bed.log().segments()[1].bytes, 200);
  EXPECT_EQ(bed.traced("segment_rolled"), 2);
}

TEST(KafkaLogRoll, RollsBySegmentMsAboutEveryMinute) {
  LogConfig config;
  config.segment_ms = 60'000;
  Bed bed(config);
  // One 70-byte record a second for eleven minutes.
  for (int s = 0; s < 660; ++s) {
    bed.world().run_until(sim::Time::zero() + Duration::seconds(s));
    bed.produce(1, 70);
  }
  // LogSegment.shouldRoll rolls once the batch is *more* than segment.ms
  // past the segment's first record: the record at 60 s still joins the
  // segment that began at 0 s, the one at 61 s starts the next.
  const std::vector<SegmentInfo>& segments = bed.log().segments();
  ASSERT_EQ(segments.size(), 11u);
  for (size_t i = 0; i < segments.size(); ++i) {
    EXPECT_EQ(segments[i].base, Offset{61 * static_cast<int64_t>(i)}) << i;
    EXPECT_EQ(segments[i].first_timestamp_ms, 61'000 * static_cast<int64_t>(i)) << i;
  }
  EXPECT_EQ(segments[0].records, 61);
  EXPECT_EQ(segments[0].max_timestamp_ms, 60'000);
  EXPECT_EQ(segments.back().records, 660 - 610);
  EXPECT_EQ(bed.traced("segment_rolled"), 10);
}

TEST(KafkaLogRoll, ExplicitRollOnlyWhenTheActiveSegmentHoldsData) {
  Bed bed;
  bed.produce(2);
  bed.log().roll(bed.now_ms());
  bed.log().roll(bed.now_ms());  // the new active segment is empty: nothing
  EXPECT_EQ(bases_of(bed.log()), (std::vector<int64_t>{0, 2}));
  bed.produce(1);
  EXPECT_EQ(bed.segment_file(2)->size(), 1u);
}

// --- retention ---------------------------------------------------------------

TEST(KafkaLogRetention, RetentionMsDeletesTheOldestSegmentAfterTenMinutes) {
  LogConfig config;
  config.segment_ms = 60'000;
  config.retention_ms = 600'000;
  Bed bed(config);
  for (int s = 0; s < 660; ++s) {
    bed.world().run_until(sim::Time::zero() + Duration::seconds(s));
    bed.produce(1, 70);
    // The retention check runs all along; nothing is ten minutes old yet.
    ASSERT_EQ(bed.log().delete_expired_segments(bed.now_ms()), 0) << s;
  }
  // The first segment's newest record is from 60 s: at 660 s it is exactly
  // retention.ms old, which is not yet past it.
  bed.world().run_until(sim::Time::zero() + Duration::seconds(660));
  EXPECT_EQ(bed.log().delete_expired_segments(bed.now_ms()), 0);
  bed.world().run_until(sim::Time::zero() + Duration::millis(660'001));
  EXPECT_EQ(bed.log().delete_expired_segments(bed.now_ms()), 1);

  EXPECT_EQ(bed.log().log_start(), Offset{61});
  EXPECT_EQ(bases_of(bed.log()).front(), 61);
  EXPECT_EQ(bed.segment_file(0), nullptr);
  EXPECT_EQ(bed.log().at(Offset{60}), nullptr);
  EXPECT_EQ(bed.log().read(Offset{0}, Offset{1'000}, 1).front().offset, Offset{61});
  EXPECT_EQ(bed.traced("segment_deleted"), 1);
  EXPECT_EQ(bed.log().log_end(), Offset{660});
}

TEST(KafkaLogRetention, AWhollyExpiredActiveSegmentIsReplacedByAFreshOne) {
  LogConfig config;
  config.retention_ms = 1'000;
  Bed bed(config);
  bed.produce(3);
  bed.run_for(Duration::seconds(5));
  EXPECT_EQ(bed.log().delete_expired_segments(bed.now_ms()), 1);
  // Kafka keeps one segment: it rolled a new, empty one at the log end first.
  EXPECT_EQ(bases_of(bed.log()), std::vector<int64_t>{3});
  EXPECT_EQ(bed.segment_files(), std::vector<int64_t>{3});
  EXPECT_TRUE(bed.log().empty());
  EXPECT_EQ(bed.log().log_start(), Offset{3});
  EXPECT_EQ(bed.log().log_end(), Offset{3});
  // An empty active segment is never deleted.
  bed.run_for(Duration::seconds(5));
  EXPECT_EQ(bed.log().delete_expired_segments(bed.now_ms()), 0);
  EXPECT_EQ(bed.produce(1), Offset{3});
  EXPECT_EQ(bed.segment_file(3)->size(), 1u);
}

TEST(KafkaLogRetention, RetentionBytesDeletesTheOldestWhileTheRestStillReachesTheLimit) {
  LogConfig config;
  config.segment_bytes = 300;
  config.retention_bytes = 450;
  Bed bed(config);
  for (int i = 0; i < 10; ++i) bed.produce(1, 100);
  EXPECT_EQ(bases_of(bed.log()), (std::vector<int64_t>{0, 3, 6, 9}));
  EXPECT_EQ(bed.log().size_bytes(), 1'000);
  // 1000 - 300 = 700 >= 450: delete; 700 - 300 = 400 < 450: keep.
  EXPECT_EQ(bed.log().delete_expired_segments(bed.now_ms()), 1);
  EXPECT_EQ(bases_of(bed.log()), (std::vector<int64_t>{3, 6, 9}));
  EXPECT_EQ(bed.log().log_start(), Offset{3});
  EXPECT_EQ(bed.log().size_bytes(), 700);
  EXPECT_EQ(bed.log().delete_expired_segments(bed.now_ms()), 0);

  LogConfig unlimited = config;
  unlimited.retention_bytes = -1;
  bed.log().set_config(unlimited);
  for (int i = 0; i < 10; ++i) bed.produce(1, 100);
  EXPECT_EQ(bed.log().delete_expired_segments(bed.now_ms()), 0);
}

TEST(KafkaLogRetention, AdvancingTheLogStartDeletesWholeSegmentsBelowIt) {
  LogConfig config;
  config.segment_bytes = 300;
  Bed bed(config);
  for (int i = 0; i < 10; ++i) bed.produce(1, 100);  // segments 0, 3, 6, 9
  bed.log().advance_log_start(Offset{7});
  EXPECT_EQ(bed.log().log_start(), Offset{7});
  EXPECT_EQ(bases_of(bed.log()), (std::vector<int64_t>{6, 9}));
  EXPECT_EQ(bed.segment_files(), (std::vector<int64_t>{6, 9}));
  EXPECT_EQ(bed.log().at(Offset{6}), nullptr);
  ASSERT_NE(bed.log().at(Offset{7}), nullptr);
  EXPECT_EQ(offsets_of(bed.log().read(Offset{0}, Offset{9}, 1'000)), (std::vector<int64_t>{7, 8}));
  EXPECT_EQ(bed.log().bytes_between(Offset{0}, Offset{10}), 300);
  // The segment file keeps offset 6 until the whole segment goes.
  EXPECT_EQ(bed.segment_file(6)->size(), 3u);
  bed.log().advance_log_start(Offset{5});  // never backwards
  EXPECT_EQ(bed.log().log_start(), Offset{7});

  // Without a log-start-offset checkpoint, a restart reads the log start
  // back from the first segment's base.
  bed.restart();
  EXPECT_EQ(bed.log().log_start(), Offset{6});
  EXPECT_EQ(bed.log().log_end(), Offset{10});
}

TEST(KafkaLogRetention, AdvancingTheLogStartPastTheEndStartsOver) {
  Bed bed;
  bed.produce(3);
  bed.log().advance_log_start(Offset{50});
  EXPECT_TRUE(bed.log().empty());
  EXPECT_EQ(bed.log().log_start(), Offset{50});
  EXPECT_EQ(bed.log().log_end(), Offset{50});
  EXPECT_EQ(bed.segment_files(), std::vector<int64_t>{50});
}

// --- truncation --------------------------------------------------------------

// Ten 100-byte records in segments 0, 3, 6, 9, written in epochs 1 (0-3),
// 2 (4-6) and 3 (7-9).
void produce_three_epochs(Bed& bed) {
  bed.log().assign_epoch(LeaderEpoch{1}, Offset{0});
  bed.produce(1, 100, LeaderEpoch{1});
  bed.produce(1, 100, LeaderEpoch{1});
  bed.produce(1, 100, LeaderEpoch{1});
  bed.produce(1, 100, LeaderEpoch{1});
  bed.log().assign_epoch(LeaderEpoch{2}, bed.log().log_end());
  bed.produce(1, 100, LeaderEpoch{2});
  bed.produce(1, 100, LeaderEpoch{2});
  bed.produce(1, 100, LeaderEpoch{2});
  bed.log().assign_epoch(LeaderEpoch{3}, bed.log().log_end());
  bed.produce(1, 100, LeaderEpoch{3});
  bed.produce(1, 100, LeaderEpoch{3});
  bed.produce(1, 100, LeaderEpoch{3});
}

LogConfig three_records_a_segment() {
  LogConfig config;
  config.segment_bytes = 300;
  return config;
}

TEST(KafkaLogTruncate, TruncateAcrossSegmentsCutsFilesAndEpochs) {
  Bed bed(three_records_a_segment());
  produce_three_epochs(bed);
  ASSERT_EQ(bases_of(bed.log()), (std::vector<int64_t>{0, 3, 6, 9}));
  ASSERT_EQ(bed.checkpoint_lines(), (std::vector<std::string>{"1 0", "2 4", "3 7"}));

  bed.log().truncate_to(Offset{5});
  EXPECT_EQ(bed.log().log_end(), Offset{5});
  EXPECT_EQ(bed.log().at(Offset{5}), nullptr);
  EXPECT_EQ(bases_of(bed.log()), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(bed.segment_files(), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(bed.segment_file(3)->size(), 2u);
  EXPECT_EQ(bed.log().segments()[1].bytes, 200);
  EXPECT_EQ(bed.log().segments()[1].records, 2);
  EXPECT_EQ(bed.log().size_bytes(), 500);
  // Epoch 3 started at 7, above the truncation point; epoch 2 (from 4) stays.
  EXPECT_EQ(bed.log().epochs(), (std::vector<EpochEntry>{{LeaderEpoch{1}, Offset{0}},
                                                         {LeaderEpoch{2}, Offset{4}}}));
  EXPECT_EQ(bed.checkpoint_lines(), (std::vector<std::string>{"1 0", "2 4"}));

  // The log goes on from the truncation point, in the cut segment.
  EXPECT_EQ(bed.produce(1, 100, LeaderEpoch{4}), Offset{5});
  EXPECT_EQ(bed.segment_file(3)->size(), 3u);
  EXPECT_EQ(bed.log().at(Offset{5})->leader_epoch, LeaderEpoch{4});
}

TEST(KafkaLogTruncate, TruncateToASegmentBaseLeavesThatSegmentEmpty) {
  Bed bed(three_records_a_segment());
  produce_three_epochs(bed);
  bed.log().truncate_to(Offset{3});
  EXPECT_EQ(bases_of(bed.log()), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(bed.segment_file(3)->size(), 0u);
  EXPECT_EQ(bed.log().epochs(), (std::vector<EpochEntry>{{LeaderEpoch{1}, Offset{0}}}));
  // The empty active segment takes the next record; no roll for an empty one.
  bed.produce(1);
  EXPECT_EQ(bases_of(bed.log()), (std::vector<int64_t>{0, 3}));
}

// A log cut inside a batch loses the whole batch (LogSegment.truncateTo
// cuts the file where that batch starts), in memory and on disk, so that
// what remains is whole batches and reloads the same.
TEST(KafkaLogTruncate, TruncatingInsideABatchTakesTheWholeBatch) {
  Bed bed;
  bed.produce(3);  // [0, 3)
  bed.produce(2);  // [3, 5)
  bed.produce(3);  // [5, 8)
  bed.log().truncate_to(Offset{7});
  EXPECT_EQ(bed.log().log_end(), Offset{5});
  EXPECT_EQ(bed.segment_file(0)->size(), 5u);
  EXPECT_TRUE(bed.log().at(Offset{4})->batch_end);
  bed.log().truncate_to(Offset{4});
  EXPECT_EQ(bed.log().log_end(), Offset{3});
  bed.log().truncate_to(Offset{1});
  EXPECT_TRUE(bed.log().empty());
  EXPECT_EQ(bed.log().log_start(), Offset{0});
  bed.produce(2);
  const PartitionLog::LoadResult loaded = bed.restart();
  EXPECT_EQ(loaded.truncated_records, 0);
  EXPECT_EQ(bed.log().log_end(), Offset{2});
}

TEST(KafkaLogTruncate, TruncateAtOrPastTheEndChangesNothing) {
  Bed bed(three_records_a_segment());
  produce_three_epochs(bed);
  bed.log().assign_epoch(LeaderEpoch{4}, Offset{10});
  bed.log().truncate_to(Offset{10});
  bed.log().truncate_to(Offset{42});
  EXPECT_EQ(bed.log().log_end(), Offset{10});
  EXPECT_EQ(bed.log().latest_epoch(), LeaderEpoch{4});
  EXPECT_EQ(bed.segment_files(), (std::vector<int64_t>{0, 3, 6, 9}));
}

TEST(KafkaLogTruncate, TruncateFullyStartsAnEmptyLogAtTheNewOffset) {
  Bed bed(three_records_a_segment());
  produce_three_epochs(bed);
  bed.log().truncate_fully_and_start_at(Offset{100});
  EXPECT_TRUE(bed.log().empty());
  EXPECT_EQ(bed.log().log_start(), Offset{100});
  EXPECT_EQ(bed.log().log_end(), Offset{100});
  EXPECT_EQ(bed.log().recovery_point(), Offset{100});
  EXPECT_TRUE(bed.log().epochs().empty());
  EXPECT_TRUE(bed.checkpoint_lines().empty());
  EXPECT_EQ(bed.segment_files(), std::vector<int64_t>{100});
  EXPECT_EQ(bed.log().size_bytes(), 0);

  // A restart finds the new start in the empty segment's name.
  bed.restart();
  EXPECT_EQ(bed.log().log_start(), Offset{100});
  EXPECT_EQ(bed.produce(2), Offset{100});
  EXPECT_EQ(bed.segment_file(100)->size(), 2u);
}

TEST(KafkaLogTruncate, TruncateBelowTheLogStartTruncatesFully) {
  Bed bed(three_records_a_segment());
  produce_three_epochs(bed);
  bed.log().advance_log_start(Offset{6});
  bed.log().truncate_to(Offset{4});
  EXPECT_TRUE(bed.log().empty());
  EXPECT_EQ(bed.log().log_start(), Offset{4});
  EXPECT_EQ(bed.segment_files(), std::vector<int64_t>{4});
}

// --- the leader epoch cache --------------------------------------------------

TEST(KafkaLogEpochs, EndOffsetForEpochAnswersAsOffsetsForLeaderEpoch) {
  Bed bed;
  bed.log().assign_epoch(LeaderEpoch{2}, Offset{0});
  bed.produce(3, 100, LeaderEpoch{2});
  bed.log().assign_epoch(LeaderEpoch{4}, Offset{3});
  bed.produce(2, 100, LeaderEpoch{4});
  bed.log().assign_epoch(LeaderEpoch{7}, Offset{5});
  bed.produce(1, 100, LeaderEpoch{7});
  using Answer = std::optional<std::pair<LeaderEpoch, Offset>>;
  const PartitionLog& log = bed.log();
  // Below the first known epoch: that epoch ended where the first began
  // (LeaderEpochFileCache.endOffsetFor answers (requested, first start)).
  EXPECT_EQ(log.end_offset_for_epoch(LeaderEpoch{1}), Answer({LeaderEpoch{1}, Offset{0}}));
  EXPECT_EQ(log.end_offset_for_epoch(LeaderEpoch{2}), Answer({LeaderEpoch{2}, Offset{3}}));
  // Between epochs: the largest known epoch below, ending where the next starts.
  EXPECT_EQ(log.end_offset_for_epoch(LeaderEpoch{3}), Answer({LeaderEpoch{2}, Offset{3}}));
  EXPECT_EQ(log.end_offset_for_epoch(LeaderEpoch{4}), Answer({LeaderEpoch{4}, Offset{5}}));
  EXPECT_EQ(log.end_offset_for_epoch(LeaderEpoch{6}), Answer({LeaderEpoch{4}, Offset{5}}));
  // The latest epoch ends at the log end.
  EXPECT_EQ(log.end_offset_for_epoch(LeaderEpoch{7}), Answer({LeaderEpoch{7}, Offset{6}}));
  // Above every known epoch: UNDEFINED_EPOCH.
  EXPECT_EQ(log.end_offset_for_epoch(LeaderEpoch{9}), Answer());
  EXPECT_EQ(log.end_offset_for_epoch(LeaderEpoch{-1}), Answer());
}

TEST(KafkaLogEpochs, AssignIgnoresOldEpochsAndIsCheckpointedDurably) {
  Bed bed;
  bed.log().assign_epoch(LeaderEpoch{3}, Offset{0});
  bed.produce(2, 100, LeaderEpoch{3});
  bed.log().assign_epoch(LeaderEpoch{3}, Offset{2});  // not above the latest
  bed.log().assign_epoch(LeaderEpoch{1}, Offset{2});
  EXPECT_EQ(bed.log().epochs(), (std::vector<EpochEntry>{{LeaderEpoch{3}, Offset{0}}}));
  EXPECT_EQ(bed.log().latest_epoch(), LeaderEpoch{3});

  // An epoch that began where the next one begins held no records of its
  // own: LeaderEpochFileCache replaces it.
  bed.log().assign_epoch(LeaderEpoch{4}, Offset{2});
  bed.log().assign_epoch(LeaderEpoch{5}, Offset{2});
  EXPECT_EQ(bed.log().epochs(), (std::vector<EpochEntry>{{LeaderEpoch{3}, Offset{0}},
                                                         {LeaderEpoch{5}, Offset{2}}}));
  EXPECT_EQ(bed.checkpoint_lines(), (std::vector<std::string>{"3 0", "5 2"}));

  // The checkpoint is fsynced: it survives a power loss once that completes.
  bed.log().flush();
  bed.run_for(Duration::millis(10));
  bed.power_cycle();
  EXPECT_EQ(bed.log().log_end(), Offset{2});
  // Epoch 5 starts at the log end, so the load drops it, as Kafka's
  // truncateFromEnd(log end offset) does: no record of it exists.
  EXPECT_EQ(bed.log().epochs(), (std::vector<EpochEntry>{{LeaderEpoch{3}, Offset{0}}}));
  EXPECT_EQ(bed.checkpoint_lines(), (std::vector<std::string>{"3 0"}));
}

TEST(KafkaLogEpochs, LoadSkipsBadCheckpointLinesAndCutsTheCacheToTheLogEnd) {
  Bed bed;
  bed.produce(4, 100, LeaderEpoch{1});
  bed.log().assign_epoch(LeaderEpoch{2}, Offset{4});
  sim::File& checkpoint = bed.disk().open(std::string(kDir) + "/leader-epoch-checkpoint");
  checkpoint.rewrite({"1 0", "garbage", "2 2", "1 3", "6 9"}, bed.world().now());
  bed.restart();
  // "garbage" does not parse, "1 3" goes backwards, "6 9" is past the end.
  EXPECT_EQ(bed.log().epochs(), (std::vector<EpochEntry>{{LeaderEpoch{1}, Offset{0}},
                                                         {LeaderEpoch{2}, Offset{2}}}));
  EXPECT_EQ(bed.checkpoint_lines(), (std::vector<std::string>{"1 0", "2 2"}));
}

TEST(KafkaLogEpochs, TheCacheFollowsTheLogStart) {
  LogConfig config = three_records_a_segment();
  config.retention_bytes = 700;
  Bed bed(config);
  produce_three_epochs(bed);  // epochs 1 from 0, 2 from 4, 3 from 7; segments 0, 3, 6, 9
  using Answer = std::optional<std::pair<LeaderEpoch, Offset>>;
  // Retention takes segment 0 (1000 - 300 >= 700, 700 - 300 < 700): the log
  // now starts at 3, inside epoch 1, and so does epoch 1's entry
  // (LeaderEpochFileCache.truncateFromStart).
  ASSERT_EQ(bed.log().delete_expired_segments(bed.now_ms()), 1);
  ASSERT_EQ(bed.log().log_start(), Offset{3});
  EXPECT_EQ(bed.log().epochs(), (std::vector<EpochEntry>{{LeaderEpoch{1}, Offset{3}},
                                                         {LeaderEpoch{2}, Offset{4}},
                                                         {LeaderEpoch{3}, Offset{7}}}));
  EXPECT_EQ(bed.checkpoint_lines(), (std::vector<std::string>{"1 3", "2 4", "3 7"}));
  // An epoch older than the log ends no lower than the log start.
  EXPECT_EQ(bed.log().end_offset_for_epoch(LeaderEpoch{0}), Answer({LeaderEpoch{0}, Offset{3}}));

  // Following a leader's log start to exactly where epoch 2 starts: epoch
  // 1's entry goes, epoch 2's stays as it was.
  bed.log().advance_log_start(Offset{4});
  EXPECT_EQ(bed.log().epochs(), (std::vector<EpochEntry>{{LeaderEpoch{2}, Offset{4}},
                                                         {LeaderEpoch{3}, Offset{7}}}));
  EXPECT_EQ(bed.log().end_offset_for_epoch(LeaderEpoch{1}), Answer({LeaderEpoch{1}, Offset{4}}));
  bed.log().advance_log_start(Offset{8});
  EXPECT_EQ(bed.log().epochs(), (std::vector<EpochEntry>{{LeaderEpoch{3}, Offset{8}}}));
  EXPECT_EQ(bed.checkpoint_lines(), (std::vector<std::string>{"3 8"}));
  EXPECT_EQ(bed.log().end_offset_for_epoch(LeaderEpoch{2}), Answer({LeaderEpoch{2}, Offset{8}}));

  // A checkpoint that still names older entries (its write lost to a power
  // loss, or, in 3.x, not yet made in the background) is cut again as a 2.x
  // log loads, at the first segment's base: the log start the model reads
  // back.
  ASSERT_EQ(bases_of(bed.log()), (std::vector<int64_t>{6, 9}));
  sim::File& checkpoint = bed.disk().open(std::string(kDir) + "/leader-epoch-checkpoint");
  checkpoint.rewrite({"1 0", "2 4", "3 7"}, bed.world().now());
  bed.restart();
  ASSERT_EQ(bed.log().log_start(), Offset{6});
  EXPECT_EQ(bed.log().epochs(), (std::vector<EpochEntry>{{LeaderEpoch{2}, Offset{6}},
                                                         {LeaderEpoch{3}, Offset{7}}}));
  EXPECT_EQ(bed.checkpoint_lines(), (std::vector<std::string>{"2 6", "3 7"}));
  // 3.x's LogLoader cuts at the checkpointed log start, absent for a log
  // start at a segment's base: the entries below it stay, and an older
  // epoch ends below the log start, until the log start next moves.
  checkpoint.rewrite({"1 0", "2 4", "3 7"}, bed.world().now());
  bed.restart(/*cut_epochs_at_log_start=*/false);
  EXPECT_EQ(bed.log().epochs(), (std::vector<EpochEntry>{{LeaderEpoch{1}, Offset{0}},
                                                         {LeaderEpoch{2}, Offset{4}},
                                                         {LeaderEpoch{3}, Offset{7}}}));
  EXPECT_EQ(bed.log().end_offset_for_epoch(LeaderEpoch{1}), Answer({LeaderEpoch{1}, Offset{4}}));
  bed.log().advance_log_start(Offset{7});
  EXPECT_EQ(bed.log().epochs(), (std::vector<EpochEntry>{{LeaderEpoch{3}, Offset{7}}}));
}

// --- flush and durability ----------------------------------------------------

TEST(KafkaLogDurability, AKillLosesNothingTheLogWrote) {
  LogConfig config = three_records_a_segment();
  Bed bed(config);
  produce_three_epochs(bed);
  const std::vector<Record> before = bed.log().read(Offset{0}, Offset{100}, 1'000'000);
  const std::vector<SegmentInfo> segments_before = bed.log().segments();

  const PartitionLog::LoadResult loaded = bed.restart();
  EXPECT_EQ(loaded.records, 10);
  EXPECT_EQ(loaded.truncated_records, 0);
  EXPECT_EQ(loaded.deleted_segments, 0);
  EXPECT_EQ(bed.log().read(Offset{0}, Offset{100}, 1'000'000), before);
  EXPECT_EQ(bases_of(bed.log()), (std::vector<int64_t>{0, 3, 6, 9}));
  EXPECT_EQ(bed.log().segments()[2].bytes, segments_before[2].bytes);
  EXPECT_EQ(bed.log().segments()[2].max_timestamp_ms, segments_before[2].max_timestamp_ms);
  EXPECT_EQ(bed.log().epochs(), (std::vector<EpochEntry>{{LeaderEpoch{1}, Offset{0}},
                                                         {LeaderEpoch{2}, Offset{4}},
                                                         {LeaderEpoch{3}, Offset{7}}}));
  // The data came back from the page cache, not the platter: the rolls'
  // fsyncs had not completed when the kill came, and the recovery point says so.
  EXPECT_EQ(bed.log().recovery_point(), Offset{0});
}

TEST(KafkaLogDurability, PowerLossKeepsTheFlushedPrefixAndMayLoseTheRest) {
  int lost_something = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    Bed bed({}, seed);
    bed.produce(5);
    bed.log().flush();
    EXPECT_EQ(bed.log().recovery_point(), Offset{0}) << "the fsync has not completed yet";
    bed.run_for(Duration::millis(10));
    ASSERT_EQ(bed.log().recovery_point(), Offset{5});
    bed.produce(5);
    const std::vector<Record> written = bed.log().read(Offset{0}, Offset{100}, 1'000'000);

    const PartitionLog::LoadResult loaded = bed.power_cycle();
    const std::vector<Record> left = bed.log().read(Offset{0}, Offset{100}, 1'000'000);
    ASSERT_GE(left.size(), 5u) << "seed " << seed;
    ASSERT_LE(left.size(), 10u) << "seed " << seed;
    ASSERT_TRUE(std::equal(left.begin(), left.end(), written.begin())) << "seed " << seed;
    EXPECT_EQ(loaded.records, static_cast<int64_t>(left.size()));
    // What a power loss left is, by definition, on the platter.
    EXPECT_EQ(bed.log().recovery_point(), bed.log().log_end());
    lost_something += left.size() < 10;
  }
  EXPECT_GT(lost_something, 10);
}

TEST(KafkaLogDurability, FlushMessagesOneMakesEveryRecordSurvivePowerLoss) {
  LogConfig config;
  config.flush_interval_messages = 1;
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    Bed bed(config, seed);
    for (int i = 0; i < 20; ++i) {
      bed.produce(1);
      bed.run_for(Duration::micros(200));  // appends outpace the 1 ms fsyncs
    }
    bed.run_for(Duration::millis(50));  // let the queued fsyncs finish
    EXPECT_EQ(bed.log().recovery_point(), Offset{20});
    bed.power_cycle();
    EXPECT_EQ(bed.log().log_end(), Offset{20}) << "seed " << seed;
  }
}

TEST(KafkaLogDurability, FlushMsFlushesOnlyWhenDueAndDirty) {
  LogConfig config;
  config.flush_interval_ms = 1'000;
  Bed bed(config);
  bed.run_for(Duration::millis(1'500));
  bed.log().maybe_flush_by_time(bed.now_ms());  // due, but nothing to flush
  bed.produce(3);
  bed.run_for(Duration::millis(100));
  bed.log().maybe_flush_by_time(bed.now_ms());  // dirty, but due since load at 0 ms
  bed.run_for(Duration::millis(10));
  EXPECT_EQ(bed.log().recovery_point(), Offset{3});

  bed.produce(2);
  bed.run_for(Duration::millis(500));
  bed.log().maybe_flush_by_time(bed.now_ms());  // 510 ms since the last flush: not due
  bed.run_for(Duration::millis(10));
  EXPECT_EQ(bed.log().recovery_point(), Offset{3});
  bed.run_for(Duration::millis(500));
  bed.log().maybe_flush_by_time(bed.now_ms());
  bed.run_for(Duration::millis(10));
  EXPECT_EQ(bed.log().recovery_point(), Offset{5});
}

TEST(KafkaLogDurability, ARolledSegmentIsFlushedWhileTheActiveOneIsNot) {
  LogConfig config;
  config.segment_bytes = 500;
  int active_lost = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    Bed bed(config, seed);
    bed.produce(5);
    bed.produce(3);  // rolls at 5 and schedules the flush of [0, 5)
    ASSERT_EQ(bases_of(bed.log()), (std::vector<int64_t>{0, 5}));
    EXPECT_EQ(bed.log().recovery_point(), Offset{0});
    // Behind the epoch checkpoint's fsync, then its own.
    bed.run_for(kFsyncLatency * 3);
    ASSERT_EQ(bed.log().recovery_point(), Offset{5});
    EXPECT_EQ(bed.segment_file(0)->durable_size(), 5u);
    EXPECT_EQ(bed.segment_file(5)->durable_size(), 0u);

    bed.power_cycle();
    ASSERT_GE(bed.log().log_end(), Offset{5}) << "seed " << seed;
    EXPECT_EQ(bases_of(bed.log()), (std::vector<int64_t>{0, 5}));
    active_lost += bed.log().log_end() < Offset{8};
  }
  EXPECT_GT(active_lost, 10);
}

// Kafka counts the unflushed messages as log end minus recovery point
// (Log.unflushedMessages), so the flush a roll schedules lowers the count:
// flush.messages counts from there, not from the last flush it made itself.
TEST(KafkaLogDurability, TheFlushOfARollCountsAgainstFlushMessages) {
  LogConfig config;
  config.segment_bytes = 500;
  config.flush_interval_messages = 9;
  Bed bed(config);
  bed.produce(5);
  bed.produce(3);  // rolls at 5 and schedules the flush of [0, 5)
  bed.run_for(kFsyncLatency * 3);
  ASSERT_EQ(bed.log().recovery_point(), Offset{5});
  bed.produce(2, 10);  // 5 above the recovery point, 10 appended since the load
  bed.run_for(kFsyncLatency * 3);
  EXPECT_EQ(bed.log().recovery_point(), Offset{5}) << "flushed by a count that ignored the roll's flush";
  bed.produce(4, 10);  // 9 above it: flushed
  bed.run_for(kFsyncLatency * 3);
  EXPECT_EQ(bed.log().recovery_point(), Offset{14});
  EXPECT_EQ(bases_of(bed.log()), (std::vector<int64_t>{0, 5}));
}

TEST(KafkaLogDurability, WithoutAnyFlushAPowerLossMayTakeEverything) {
  int emptied = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    Bed bed({}, seed);
    bed.produce(3);
    bed.run_for(Duration::seconds(60));  // no writeback, no flush policy
    bed.power_cycle();
    // The segment file itself is metadata and survives, empty or not.
    EXPECT_EQ(bed.segment_files(), std::vector<int64_t>{0});
    emptied += bed.log().empty();
  }
  EXPECT_GT(emptied, 0);
}

TEST(KafkaLogDurability, ALogDestroyedWithAFlushInFlightIsNeverCalledBack) {
  Bed bed;
  bed.produce(3);
  bed.log().flush();
  bed.open();  // replaces the log object while its fsync is pending
  bed.run_for(Duration::millis(10));
  EXPECT_EQ(bed.log().log_end(), Offset{3});
  EXPECT_EQ(bed.segment_file(0)->durable_size(), 3u);
}

TEST(KafkaLogDurability, ATruncationLowersTheTargetOfAFlushInFlight) {
  Bed bed;
  bed.produce(2);
  bed.produce(4);
  bed.log().flush();         // will make [0, 6) durable ...
  bed.log().truncate_to(Offset{2});  // ... but [2, 6) is gone before it completes
  bed.produce(2);
  bed.run_for(Duration::millis(10));
  EXPECT_EQ(bed.log().recovery_point(), Offset{2});
}

// --- recovery from damage ----------------------------------------------------

TEST(KafkaLogRecovery, AnUnreadableRecordEndsTheLogAndLaterSegmentsGo) {
  Bed bed(three_records_a_segment());
  for (int i = 0; i < 7; ++i) bed.produce(1);  // segments 0, 3, 6
  // Damage in the middle segment: its third record cannot be read, and a
  // readable one follows it.
  sim::File* middle = bed.segment_file(3);
  middle->truncate(2, bed.world().now());
  middle->append("5,1,0,-1,-1", bed.world().now());
  middle->append("6,1,0,-1,-1,-1,99,100", bed.world().now());

  const PartitionLog::LoadResult loaded = bed.restart();
  EXPECT_EQ(loaded.records, 5);
  EXPECT_EQ(loaded.truncated_records, 3);  // the bad record, the one after it, offset 6's segment
  EXPECT_EQ(loaded.deleted_segments, 1);
  EXPECT_EQ(bed.log().log_end(), Offset{5});
  EXPECT_EQ(bases_of(bed.log()), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(bed.segment_files(), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(bed.segment_file(3)->size(), 2u);
  EXPECT_EQ(bed.traced("log_recovered"), 1);
  // It goes on from there.
  EXPECT_EQ(bed.produce(1), Offset{5});
}

TEST(KafkaLogRecovery, ARecordOutOfSequenceEndsTheLog) {
  Bed bed;
  bed.produce(3);
  Record stray = *bed.log().at(Offset{2});
  stray.offset = Offset{7};
  bed.segment_file(0)->append(encode_record(stray), bed.world().now());
  const PartitionLog::LoadResult loaded = bed.restart();
  EXPECT_EQ(loaded.truncated_records, 1);
  EXPECT_EQ(bed.log().log_end(), Offset{3});
}

TEST(KafkaLogRecovery, ASegmentThatDoesNotContinueTheLogIsDeleted) {
  LogConfig config;
  config.segment_bytes = 300;
  Bed bed(config);
  for (int i = 0; i < 9; ++i) bed.produce(1);  // segments 0, 3, 6
  bed.disk().remove(fmt::format("{}/{:020}.log", kDir, 3));
  const PartitionLog::LoadResult loaded = bed.restart();
  EXPECT_EQ(loaded.deleted_segments, 1);
  EXPECT_EQ(loaded.truncated_records, 3);
  EXPECT_EQ(bed.log().log_end(), Offset{3});
  EXPECT_EQ(bed.segment_files(), std::vector<int64_t>{0});
}

// A power loss may leave any prefix of the unsynced records, the last of
// them torn. Recovery keeps whole batches only: a batch checks by one CRC.
TEST(KafkaLogRecovery, ATornWriteFromAPowerLossIsCutOff) {
  LogConfig config;
  config.segment_bytes = 500;
  int torn_seen = 0;
  int partial_seen = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    Bed bed(config, seed, predictable_disk(/*torn_write_percent=*/100));
    bed.produce(5);
    bed.produce(2);  // rolls: segment 0 is flushed, segment 5 is not
    bed.produce(3);  // [5, 7) and [7, 10) in segment 5
    bed.run_for(Duration::millis(10));
    const std::vector<Record> written = bed.log().read(Offset{0}, Offset{100}, 1'000'000);

    bed.power_off();
    const sim::File* active = bed.segment_file(5);
    const bool torn = active->size() > 0 && !active->records().back().intact;
    const size_t intact = active->size() - (torn ? 1 : 0);
    const size_t whole = intact == 5 ? 5 : intact >= 2 ? 2 : 0;  // records of whole batches
    const size_t on_disk = active->size();
    torn_seen += torn;
    partial_seen += whole < intact;

    const PartitionLog::LoadResult loaded = bed.power_on();
    EXPECT_EQ(loaded.truncated_records, static_cast<int64_t>(on_disk - whole))
        << "seed " << seed;
    EXPECT_EQ(bed.log().log_end(), Offset{5 + static_cast<int64_t>(whole)}) << "seed " << seed;
    const std::vector<Record> left = bed.log().read(Offset{0}, Offset{100}, 1'000'000);
    ASSERT_TRUE(std::equal(left.begin(), left.end(), written.begin())) << "seed " << seed;
    EXPECT_EQ(bed.segment_file(5)->size(), whole) << "seed " << seed;
    for (const sim::Record& r : bed.segment_file(5)->records()) EXPECT_TRUE(r.intact);
  }
  EXPECT_GT(torn_seen, 10);
  EXPECT_GT(partial_seen, 10);
}

// A batch of which only some records are on disk is cut away whole, and a
// log cut there deletes the segments after it (LogLoader: damage ends the log).
TEST(KafkaLogRecovery, ABatchOnlyPartlyOnDiskIsCutWhole) {
  Bed bed(three_records_a_segment());
  bed.produce(1);
  bed.produce(2);  // segment 0: [0, 1) and [1, 3)
  bed.produce(3);  // segment 3: [3, 6)
  bed.produce(1);  // segment 6
  sim::File* middle = bed.segment_file(3);
  middle->truncate(2, bed.world().now());  // two of the batch's three records remain

  const PartitionLog::LoadResult loaded = bed.restart();
  EXPECT_EQ(loaded.records, 3);
  EXPECT_EQ(loaded.truncated_records, 3);  // the two of the cut batch, offset 6's segment
  EXPECT_EQ(loaded.deleted_segments, 1);
  EXPECT_EQ(bed.log().log_end(), Offset{3});
  EXPECT_EQ(bases_of(bed.log()), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(bed.segment_files(), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(bed.segment_file(3)->size(), 0u);
  EXPECT_EQ(bed.log().segments().back().records, 0);
  EXPECT_EQ(bed.log().size_bytes(), 300);
  EXPECT_EQ(bed.traced("log_recovered"), 1);
  EXPECT_EQ(bed.produce(2), Offset{3});
}

// Record format v2 sizes, counted by hand from the protocol guide's layout.
TEST(RecordFormat, SizesAsTheProtocolGuideLaysThemOut) {
  // Null key, empty value: 1 attributes + 1 + 1 + 1 (length -1) + 1 (length
  // 0) + 1 header count = 6, and 1 for the length.
  EXPECT_EQ(record_bytes(0, 0, -1, 0), 7);
  // A 64 ms timestamp delta takes two bytes (zig-zag 128); 63 ms one.
  EXPECT_EQ(record_bytes(0, 64, -1, 0), 8);
  EXPECT_EQ(record_bytes(0, 63, -1, 0), 7);
  // A negative delta is zig-zag encoded too: -64 fits one byte, -65 not.
  EXPECT_EQ(record_bytes(0, -64, -1, 0), 7);
  EXPECT_EQ(record_bytes(0, -65, -1, 0), 8);
  // Offset delta 64: two bytes. A 3-byte key: its length (one byte) and
  // itself.
  EXPECT_EQ(record_bytes(64, 0, 3, 0), 7 + 1 + 3);
  // 100-byte value: length 2 bytes; body 107, its length 2 more.
  EXPECT_EQ(record_bytes(0, 0, -1, 100), 109);
  // A body of 8192 bytes or more takes a 3-byte length (zig-zag 16384).
  EXPECT_EQ(record_bytes(0, 0, -1, 8184), 1 + 1 + 1 + 1 + 2 + 8184 + 1 + 2);
  EXPECT_EQ(record_bytes(0, 0, -1, 8185), 1 + 1 + 1 + 1 + 2 + 8185 + 1 + 3);
  EXPECT_EQ(kRecordBatchOverhead, 8 + 4 + 4 + 1 + 4 + 2 + 4 + 8 + 8 + 8 + 2 + 4 + 4);
}

}  // namespace
}  // namespace kafka
