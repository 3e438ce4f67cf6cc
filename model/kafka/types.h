// Kafka's vocabulary: broker ids, offsets, epochs, topic-partitions and the
// error codes of the protocol, with the names Kafka itself uses
// (org.apache.kafka.common.protocol.Errors), so that a trace reads like a
// broker's log.
#pragma once

#include <bit>
#include <compare>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace kafka {

// Quantities as strong types (Redpanda's model::offset, term_id ...): an
// offset never silently becomes an epoch.
template <typename Tag>
struct Quantity {
  int64_t value = 0;
  constexpr Quantity() = default;
  constexpr explicit Quantity(int64_t v) : value(v) {}
  constexpr auto operator<=>(const Quantity&) const = default;
};

struct OffsetTag {};
struct LeaderEpochTag {};
struct ControllerEpochTag {};
using Offset = Quantity<OffsetTag>;
using LeaderEpoch = Quantity<LeaderEpochTag>;
using ControllerEpoch = Quantity<ControllerEpochTag>;

inline Offset operator+(Offset o, int64_t n) { return Offset{o.value + n}; }
inline Offset operator-(Offset o, int64_t n) { return Offset{o.value - n}; }
inline int64_t operator-(Offset a, Offset b) { return a.value - b.value; }

using BrokerId = int32_t;
inline constexpr BrokerId kNoBroker = -1;
using ProducerId = int64_t;
inline constexpr ProducerId kNoProducerId = -1;
inline constexpr LeaderEpoch kNoLeaderEpoch{-1};

namespace detail {
// sizeof(T) bytes at p as a big-endian unsigned number: compared as numbers,
// two such words order as their bytes do one by one (as unsigned chars).
template <typename T>
inline T load_big_endian(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  if constexpr (std::endian::native == std::endian::little) {
    if constexpr (sizeof(T) == 8) {
      v = __builtin_bswap64(v);
    } else {
      v = __builtin_bswap32(v);
    }
  }
  return v;
}
}  // namespace detail

struct TopicPartition {
  std::string topic;
  int32_t partition = 0;
  // The order of the defaulted comparison (topic bytes as unsigned chars, a
  // prefix first, then partition), written out: TopicPartition keys most of
  // the model's maps and its topics are short, so an inline compare beats a
  // call to memcmp. Eight or four bytes are compared at a time.
  friend std::strong_ordering operator<=>(const TopicPartition& a, const TopicPartition& b) {
    const size_t n = a.topic.size() < b.topic.size() ? a.topic.size() : b.topic.size();
    const char* x = a.topic.data();
    const char* y = b.topic.data();
    if (x != y) {
      // The last word may overlap the one before: its bytes there are
      // already known equal, so its first difference is the first one.
      if (n >= 8) {
        for (size_t i = 0;; i += 8) {
          const size_t at = i + 8 <= n ? i : n - 8;
          const uint64_t u = detail::load_big_endian<uint64_t>(x + at);
          const uint64_t v = detail::load_big_endian<uint64_t>(y + at);
          if (u != v) return u <=> v;
          if (at + 8 == n) break;
        }
      } else if (n >= 4) {
        for (const size_t at : {size_t{0}, n - 4}) {
          const uint32_t u = detail::load_big_endian<uint32_t>(x + at);
          const uint32_t v = detail::load_big_endian<uint32_t>(y + at);
          if (u != v) return u <=> v;
        }
      } else {
        for (size_t i = 0; i < n; ++i) {
          if (x[i] != y[i]) {
            return static_cast<unsigned char>(x[i]) <=> static_cast<unsigned char>(y[i]);
          }
        }
      }
    }
    if (a.topic.size() != b.topic.size()) return a.topic.size() <=> b.topic.size();
    return a.partition <=> b.partition;
  }
  friend bool operator==(const TopicPartition& a, const TopicPartition& b) {
    return a.partition == b.partition && (a <=> b) == 0;
  }
};
inline std::string to_string(const TopicPartition& tp) {
  return fmt::format("{}-{}", tp.topic, tp.partition);
}

// The protocol's error codes that the model produces or reacts to.
enum class ErrorCode {
  none,
  offset_out_of_range,               // OFFSET_OUT_OF_RANGE
  unknown_topic_or_partition,        // UNKNOWN_TOPIC_OR_PARTITION
  leader_not_available,              // LEADER_NOT_AVAILABLE
  not_leader_for_partition,          // NOT_LEADER_FOR_PARTITION (NOT_LEADER_OR_FOLLOWER since 2.7)
  request_timed_out,                 // REQUEST_TIMED_OUT
  replica_not_available,             // REPLICA_NOT_AVAILABLE
  stale_controller_epoch,            // STALE_CONTROLLER_EPOCH
  not_enough_replicas,               // NOT_ENOUGH_REPLICAS
  not_enough_replicas_after_append,  // NOT_ENOUGH_REPLICAS_AFTER_APPEND
  coordinator_not_available,         // COORDINATOR_NOT_AVAILABLE
  not_controller,                    // NOT_CONTROLLER
  topic_already_exists,              // TOPIC_ALREADY_EXISTS
  invalid_partitions,                // INVALID_PARTITIONS
  invalid_replication_factor,        // INVALID_REPLICATION_FACTOR
  out_of_order_sequence_number,      // OUT_OF_ORDER_SEQUENCE_NUMBER
  duplicate_sequence_number,         // DUPLICATE_SEQUENCE_NUMBER
  invalid_producer_epoch,            // INVALID_PRODUCER_EPOCH
  unknown_producer_id,               // UNKNOWN_PRODUCER_ID
  fenced_leader_epoch,               // FENCED_LEADER_EPOCH
  unknown_leader_epoch,              // UNKNOWN_LEADER_EPOCH
  broker_not_available,              // BROKER_NOT_AVAILABLE
  invalid_topic_exception,           // INVALID_TOPIC_EXCEPTION
  invalid_config,                    // INVALID_CONFIG
  coordinator_load_in_progress,      // COORDINATOR_LOAD_IN_PROGRESS
  not_coordinator,                   // NOT_COORDINATOR
  illegal_generation,                // ILLEGAL_GENERATION
  inconsistent_group_protocol,       // INCONSISTENT_GROUP_PROTOCOL
  unknown_member_id,                 // UNKNOWN_MEMBER_ID
  invalid_session_timeout,           // INVALID_SESSION_TIMEOUT
  rebalance_in_progress,             // REBALANCE_IN_PROGRESS
  group_max_size_reached,            // GROUP_MAX_SIZE_REACHED
  unknown_server_error,              // UNKNOWN_SERVER_ERROR
};
const char* to_string(ErrorCode e);
// Errors after which a client refreshes its metadata and retries.
bool is_retriable(ErrorCode e);

// A broker's address as it advertises it: listener name, host, port.
struct Endpoint {
  std::string listener = "PLAINTEXT";
  std::string host;
  uint16_t port = 9092;
  friend bool operator==(const Endpoint&, const Endpoint&) = default;
};

}  // namespace kafka
