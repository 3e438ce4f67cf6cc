// Client configuration by the property names librdkafka uses
// (CONFIGURATION.md), with the Java client's names accepted as aliases where
// they differ (`delivery.timeout.ms` for `message.timeout.ms`,
// `max.in.flight.requests.per.connection` for `max.in.flight` ...).
//
// Defaults are librdkafka's (1.x/2.x) unless a workload sets its own — the
// seed-000 lab workload uses aiokafka's. Unknown keys and bad values are
// errors naming the key, with a did-you-mean.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "model/properties.h"

namespace client {

// The partitioner is two choices, as librdkafka's `partitioner` property
// makes them (rdkafka_msg.c, rd_kafka_msg_partitioner_*; rdkafka_topic.c maps
// the names): how a keyed record's key is hashed, and what happens to a
// record without a key. See config.cc ("partitioner") for the names.
//
// How a keyed record picks its partition: hash(key) % partition count, over
// every partition of the topic (available or not).
enum class KeyHash {
  crc32,    // consistent, consistent_random (librdkafka's default): rd_crc32, zlib's CRC-32
  murmur2,  // murmur2, murmur2_random, the Java client and aiokafka: murmur2 & 0x7fffffff
  fnv1a,    // fnv1a, fnv1a_random: 32-bit FNV-1a, made positive as Sarama does
  none,     // random: the key is ignored, every record gets a random partition
};

// How a record without a key picks its partition.
enum class NullKeyPartitioning {
  random,      // a random partition among those with a leader (aiokafka, librdkafka's *_random)
  round_robin, // the next available partition (Java's DefaultPartitioner before 2.4)
  sticky,      // one partition until its batch is sent (KIP-480, Java 2.4+)
  hashed,      // hashed as a key of zero bytes, so always one partition (librdkafka's
               // consistent, murmur2, fnv1a): see null_key_partition() in producer.h
};

struct BootstrapServer {
  std::string host;
  uint16_t port = 9092;
  friend bool operator==(const BootstrapServer&, const BootstrapServer&) = default;
};

struct ProducerConfig {
  std::vector<BootstrapServer> bootstrap;  // bootstrap.servers (required)
  int16_t acks = -1;                        // acks / request.required.acks: 0, 1, -1|all
  int32_t retries = 2147483647;             // retries / message.send.max.retries
  int32_t retry_backoff_ms = 100;           // retry.backoff.ms
  // request.timeout.ms: the broker's ack timeout, sent in a ProduceRequest
  // (librdkafka's meaning; the Java producer also waits this long itself).
  int32_t request_timeout_ms = 30000;
  // socket.timeout.ms: how long the client waits for any answer (librdkafka,
  // 10 .. 300000). A ProduceRequest waits the shorter of this and what is
  // left of its first record's message.timeout.ms, at least 100 ms
  // (rd_kafka_ProduceRequest, rd_kafka_buf_calc_timeout).
  int32_t socket_timeout_ms = 60000;
  int64_t message_timeout_ms = 300000;      // message.timeout.ms / delivery.timeout.ms
  // aiokafka (the lab workload) has one request timeout: request_timeout_ms
  // is also the client's own wait for every answer, whatever a record's age.
  // parse_producer_config then keeps socket_timeout_ms equal to it and
  // refuses socket.timeout.ms.
  bool single_request_timeout = false;
  int32_t linger_ms = 5;                    // linger.ms / queue.buffering.max.ms
  int32_t batch_size = 1000000;             // batch.size (bytes)
  int32_t message_max_bytes = 1000000;      // message.max.bytes / max.request.size (bytes)
  int32_t batch_num_messages = 10000;       // batch.num.messages (librdkafka)
  int32_t max_in_flight = 1000000;          // max.in.flight / max.in.flight.requests.per.connection
  bool enable_idempotence = false;          // enable.idempotence
  KeyHash key_hash = KeyHash::crc32;                           // partitioner (see config.cc)
  NullKeyPartitioning null_key = NullKeyPartitioning::random;  // partitioner (see config.cc)
  int64_t metadata_max_age_ms = 900000;     // metadata.max.age.ms
  // topic.metadata.refresh.interval.ms (librdkafka; 0 or -1: no periodic refresh).
  // The metadata is asked for again min(this, metadata.max.age.ms) after the
  // last answer: see metadata_refresh_ms().
  int64_t metadata_refresh_interval_ms = 300000;
  int32_t reconnect_backoff_ms = 100;       // reconnect.backoff.ms
  int32_t reconnect_backoff_max_ms = 10000;  // reconnect.backoff.max.ms (librdkafka's default)
  int32_t connection_setup_timeout_ms = 30000;  // socket.connection.setup.timeout.ms
  // How the client treats a leader it has no connection to. true (librdkafka,
  // the Java client): its batches wait, unsent and without an attempt
  // counted, while the client connects (attempts paced by the reconnect
  // backoff, each given socket.connection.setup.timeout.ms). false (aiokafka, the lab
  // producer): the batch is sent at once and fails with the connection
  // (NodeNotReadyError in seeds/000), which counts as a try.
  bool wait_for_connection = true;
  std::string client_id = "rdkafka";        // client.id
};

struct ConsumerConfig {
  std::vector<BootstrapServer> bootstrap;   // bootstrap.servers (required)
  std::string group_id;                     // group.id ("" : no group, partitions assigned by hand)
  enum class Reset { earliest, latest, none };
  Reset auto_offset_reset = Reset::latest;  // auto.offset.reset (smallest/largest accepted)
  int32_t fetch_min_bytes = 1;              // fetch.min.bytes
  int32_t fetch_wait_max_ms = 500;          // fetch.wait.max.ms / fetch.max.wait.ms
  int32_t fetch_max_bytes = 52428800;       // fetch.max.bytes: the whole answer
  // max.partition.fetch.bytes / fetch.message.max.bytes: each partition's
  // share of an answer (KIP-74; the first partition with data still gets
  // its first batch whole).
  int32_t max_partition_fetch_bytes = 1048576;
  int32_t request_timeout_ms = 30000;       // request.timeout.ms / socket.timeout.ms
  int32_t retry_backoff_ms = 100;           // retry.backoff.ms / fetch.error.backoff.ms
  bool enable_auto_commit = true;           // enable.auto.commit
  int32_t auto_commit_interval_ms = 5000;   // auto.commit.interval.ms
  int32_t session_timeout_ms = 45000;       // session.timeout.ms
  int32_t heartbeat_interval_ms = 3000;     // heartbeat.interval.ms
  int32_t max_poll_interval_ms = 300000;    // max.poll.interval.ms
  std::string partition_assignment_strategy = "range";  // range | roundrobin
  // max.in.flight / max.in.flight.requests.per.connection: requests on the
  // wire per broker connection. librdkafka's property applies to consumers
  // too (default 1000000); the Java consumer fixes 100, aiokafka has no
  // limit. A broker still reads one request of a connection at a time.
  int32_t max_in_flight = 1000000;
  int64_t metadata_max_age_ms = 900000;
  int64_t metadata_refresh_interval_ms = 300000;  // as ProducerConfig's
  int32_t reconnect_backoff_ms = 100;
  int32_t reconnect_backoff_max_ms = 10000;
  int32_t connection_setup_timeout_ms = 30000;  // socket.connection.setup.timeout.ms (0: none)
  // As ProducerConfig::wait_for_connection, for fetches and ListOffsets.
  // true (librdkafka, the Java client): they wait, unsent, while the
  // consumer connects to the leader. false (aiokafka, the lab consumer): the
  // request goes on a connection being opened and fails with it.
  bool wait_for_connection = true;
  std::string client_id = "rdkafka";
};

// How long after its last answer a client asks for metadata again, unasked.
// librdkafka refreshes every topic.metadata.refresh.interval.ms (default 5
// minutes, on a timer at a fixed rate from the client's start; the model
// counts from the last answer); its metadata.max.age.ms, by default three
// intervals, is how long a cache entry stays usable, so a shorter one makes
// it ask sooner; the Java client and
// aiokafka call their refresh period metadata.max.age.ms (5 minutes). The
// model takes the shorter of the two settings. A refresh interval of 0 or
// -1 is none, as librdkafka starts its timer only for a positive one
// (rd_kafka_new).
inline int64_t metadata_refresh_ms(int64_t refresh_interval_ms, int64_t max_age_ms) {
  return refresh_interval_ms <= 0 ? max_age_ms : std::min(refresh_interval_ms, max_age_ms);
}

// Parses "host:port,host:port"; throws model::ConfigError naming `key`.
std::vector<BootstrapServer> parse_bootstrap(const std::string& s, const std::string& source,
                                             const std::string& key);
// Starting from `defaults` (a workload's, or the library's), applies props.
ProducerConfig parse_producer_config(const model::Properties& props, ProducerConfig defaults = {});
ConsumerConfig parse_consumer_config(const model::Properties& props, ConsumerConfig defaults = {});

}  // namespace client
