// Sizes in Kafka's record format v2 (magic 2, KIP-98, the format of every
// release the model covers), as the brokers and clients count them against
// segment.bytes, retention.bytes, the fetch limits, batch.size and the
// message size limits. The layout is the protocol guide's ("Record Batch",
// https://kafka.apache.org/documentation/#recordbatch):
//
//   a batch:  baseOffset int64, batchLength int32, partitionLeaderEpoch int32,
//             magic int8, crc int32, attributes int16, lastOffsetDelta int32,
//             baseTimestamp int64, maxTimestamp int64, producerId int64,
//             producerEpoch int16, baseSequence int32, record count int32
//             (61 bytes), then its records;
//   a record: length varint, attributes int8, timestampDelta varlong,
//             offsetDelta varint, keyLength varint, key, valueLength varint,
//             value, header count varint, headers.
//
// Varints are zig-zag encoded, seven bits a byte; a null key or value has
// length -1. The model's records carry no headers.
#pragma once

#include <algorithm>
#include <cstdint>

namespace kafka {

// The batch header before the first record (DefaultRecordBatch.RECORD_BATCH_OVERHEAD).
inline constexpr int32_t kRecordBatchOverhead = 61;

// The length of `v` as a zig-zag varint (ByteUtils.sizeOfVarlong).
constexpr int32_t varint_bytes(int64_t v) {
  uint64_t z = (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
  int32_t n = 1;
  while (z >= 0x80) {
    z >>= 7;
    ++n;
  }
  return n;
}

// One record inside a batch: its place (offsetDelta) and time
// (timestampDelta) relative to the batch's first record, its key and value
// lengths (-1: null). DefaultRecord.sizeInBytes.
constexpr int32_t record_bytes(int32_t offset_delta, int64_t timestamp_delta_ms, int32_t key_bytes,
                               int32_t value_bytes) {
  const int32_t body = 1 + varint_bytes(timestamp_delta_ms) + varint_bytes(offset_delta) +
                       varint_bytes(key_bytes) + std::max(key_bytes, 0) +
                       varint_bytes(value_bytes) + std::max(value_bytes, 0) + varint_bytes(0);
  return varint_bytes(body) + body;
}

static_assert(varint_bytes(0) == 1 && varint_bytes(-1) == 1 && varint_bytes(63) == 1 &&
              varint_bytes(64) == 2 && varint_bytes(-64) == 1 && varint_bytes(-65) == 2);
// 1 attributes + 1 + 1 + 1 (null key) + 2 (length 75) + 75 + 1 headers = 82,
// and 2 for the length itself.
static_assert(record_bytes(0, 0, -1, 75) == 84);

}  // namespace kafka
