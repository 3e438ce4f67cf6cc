// A Kafka producer as librdkafka and the Java client behave on the wire,
// embedded in a sim::Process.
//
// Metadata comes from the bootstrap servers, tried in order until one
// answers, and afterwards from any known broker; it is refreshed when a
// partition's leader is unknown or an error says it moved
// (NOT_LEADER_FOR_PARTITION, LEADER_NOT_AVAILABLE, a disconnect, a request
// timeout) and every metadata.max.age.ms. Records wait in per-partition
// batches for linger.ms (or until the partition's queued keys and values
// reach batch.size, or it holds batch.num.messages records), then go to the
// partition's leader, at most max.in.flight requests per connection, a
// request holding the records that fit min(batch.size, message.max.bytes)
// as librdkafka's message set writer counts them. A record larger than
// message.max.bytes fails at once (MSG_SIZE_TOO_LARGE).
// A batch that fails with a retriable error, or whose request times out or
// loses its connection, is retried after retry.backoff.ms until `retries` or
// message.timeout.ms runs out — and a request that timed out may well have
// been written by the broker, which is how duplicates happen without
// idempotence. With enable.idempotence the producer first gets a producer id
// (InitProducerId) and numbers each partition's records, so the broker drops
// a retried duplicate. As librdkafka's idempotent producer it keeps those
// numbers gapless: after a retriable error, or when a partition's leader
// moves, the partition sends nothing more until its requests in flight are
// done; and when records fail for good (message.timeout.ms, a permanent
// error), every partition is drained and the producer bumps its own epoch,
// numbering from 0 again.
//
// Every outcome is reported through the send's callback: ok (partition,
// offset), fail (it definitely did not happen) or info (unknown: the request
// may have been written). Connection-level errors a real client logs go to
// the listener.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "model/client/config.h"
#include "model/client/connection_errors.h"
#include "model/client/connection_wait.h"
#include "model/client/metadata.h"
#include "sim/deadline_timer.h"
#include "model/kafka/network_client.h"

namespace client {

enum class Outcome { ok, fail, info };
const char* to_string(Outcome o);

struct DeliveryReport {
  Outcome outcome = Outcome::ok;
  int32_t partition = -1;
  int64_t offset = -1;
  std::string error;  // "" when ok: a Kafka error name or a connection error
};

class ClientListener {
 public:
  virtual ~ClientListener() = default;
  // A connection-level event: "connection_refused", "connection_reset",
  // "request_timed_out" ... with the broker it concerned.
  virtual void on_client_event(const std::string& event, int32_t node) = 0;
};

class Producer {
 public:
  using Callback = std::function<void(const DeliveryReport&)>;

  Producer(sim::ProcessContext& ctx, ProducerConfig config, ClientListener* listener = nullptr);
  Producer(const Producer&) = delete;
  Producer& operator=(const Producer&) = delete;

  // Queues one record of `value_bytes` bytes. `key` absent: the null-key
  // partitioner decides.
  void send(const std::string& topic, std::optional<std::string> key, uint64_t value,
            int32_t value_bytes, Callback done);
  // Records queued or in flight.
  size_t outstanding() const { return outstanding_; }
  const ProducerConfig& config() const { return config_; }
  // The partitions of `topic` the metadata names, and which have a leader.
  std::vector<int32_t> partitions(const std::string& topic) const { return metadata_.available(topic); }

  bool on_connected(sim::SocketId s) {
    if (!net_.on_connected(s)) return false;
    if (config_.wait_for_connection) pump();  // a leader's batches may have waited for it
    return true;
  }
  bool on_connect_failed(sim::SocketId s, sim::ConnectError e) { return net_.on_connect_failed(s, e); }
  bool on_message(sim::SocketId s, sim::Payload& p) { return net_.on_message(s, p); }
  // A connection that goes down sends the client for metadata (see
  // metadata.h, refresh_on_disconnect).
  bool on_closed(sim::SocketId s, sim::CloseReason r) {
    if (!net_.on_closed(s, r)) return false;
    metadata_.refresh_on_disconnect();
    return true;
  }

 private:
  struct Pending {
    uint64_t value = 0;
    int32_t value_bytes = 0;
    int32_t key_bytes = -1;  // -1: no key
    int64_t enqueued_ms = 0;  // its CreateTime timestamp too
    Callback done;
    // Requests that carried it. Without idempotence a retry may merge
    // records tried different numbers of times, and `retries` bounds each
    // (librdkafka rd_kafka_retry_msgq).
    int32_t sends = 0;
  };
  struct Batch {
    kafka::TopicPartition tp;
    std::vector<Pending> records;
    int64_t bytes = 0;  // the records as the batch holds them (record_bytes), without its header
    int64_t key_value_bytes = 0;  // their keys' and values' bytes
    int64_t retry_at_ms = 0;
    int32_t base_sequence = -1;
    bool in_flight = false;
    bool sent_once = false;  // a request carrying it went out: its outcome may be unknown
  };
  struct Unpartitioned {
    kafka::Topic topic;  // interned once, not at every look for a partition
    std::optional<std::string> key;
    Pending record;
  };

  int64_t now_ms() const { return ctx_.now().us() / 1000; }
  void on_metadata();
  void partition_waiting();
  std::optional<int32_t> choose_partition(const kafka::Topic& topic, const std::optional<std::string>& key);
  // Adds the record to its partition's last batch, or a new one. The caller
  // pumps next: enqueue sets no timer of its own.
  void enqueue(const kafka::TopicPartition& tp, Pending record);
  // Expires what timed out, then sends what is ready, then arms the next
  // wake-up for a record's message.timeout.ms (arm_expiry).
  void pump();
  void send_ready();
  void arm_expiry();
  void schedule_pump(int64_t at_ms);
  // wait_for_connection: whether `node` is connected; if not, opens a
  // connection to it unless one is being opened or its reconnect backoff
  // has not run out (then a pump is set for its end: ConnectionWait).
  bool leader_ready(kafka::BrokerId node);
  // When `b` may be sent: after linger.ms, or once its retry backoff is over.
  int64_t ready_at_ms(const Batch& b) const;
  // A record's size as librdkafka's message set writer counts it before it
  // writes it, against batch.size and message.max.bytes: the largest its
  // record-format overhead can be, plus key and value (rd_kafka_msg_wire_size).
  static int64_t wire_bytes(const Pending& r);
  static int64_t key_value_bytes(const Pending& r);
  // Record `r`'s bytes at `index` of a batch whose first record is `first`.
  static int32_t size_in_batch(const Pending& r, size_t index, const Pending& first);
  // Appends `r` to `b`, counting its bytes as written there.
  static void add_record(Batch& b, Pending r);
  // Counts `b`'s bytes again after records left it.
  static void recount(Batch& b);
  // Whether a record of `bytes` (wire_bytes) fits batch `b` (at least one
  // record always does).
  bool fits(const Batch& b, int64_t bytes) const;
  // Whether queue[i] and what is queued behind it, not in flight, may go
  // before linger.ms (batch.size or batch.num.messages reached).
  bool queue_full(const std::deque<std::shared_ptr<Batch>>& queue, size_t i) const;
  // The requests that carried `b`: its records' most (a merged batch's
  // records may have been tried different numbers of times).
  static int32_t attempts(const Batch& b);
  // Without idempotence: the records queued behind queue[i] join it, one by
  // one while they fit (fits), before it is sent; a batch in its retry
  // backoff stops them.
  void absorb_ready_batches(std::deque<std::shared_ptr<Batch>>& queue, size_t i, int64_t now);
  void on_connect_error(kafka::BrokerId node, kafka::SendError e, bool reported);
  void send_batch(const std::shared_ptr<Batch>& batch, kafka::BrokerId leader);
  void on_batch_error(const std::shared_ptr<Batch>& batch, const std::string& error, bool retriable,
                      bool may_have_been_written);
  void complete(const std::shared_ptr<Batch>& batch, const DeliveryReport& report);
  // Runs each record's callback with `report` (offsets counted up for an ok).
  void report_records(std::vector<Pending>& records, const DeliveryReport& report);
  // Without idempotence: moves the records of `b` that `done` picks to
  // `failed`, in order, unless that would be all of them (a batch is failed
  // whole by its caller).
  template <typename Done>
  void take_records(Batch& b, Done done, std::vector<Pending>& failed);
  // The records past message.timeout.ms, so.
  void take_timed_out_records(Batch& b, int64_t now, std::vector<Pending>& failed);
  void expire_batches();
  void init_producer_id();
  // Idempotence: stop sending, and once no request is in flight bump the
  // epoch and renumber every queued batch from sequence 0.
  void drain_epoch_bump(const std::string& reason);
  bool partition_in_flight(const kafka::TopicPartition& tp) const;
  bool any_in_flight() const;
  void event(const std::string& name, int32_t node);
  static std::string send_error_name(kafka::SendError e);

  sim::ProcessContext& ctx_;
  ProducerConfig config_;
  ClientListener* listener_;
  kafka::NetworkClient net_;

  Metadata metadata_;

  std::deque<Unpartitioned> unpartitioned_;
  std::vector<int32_t> available_scratch_;  // choose_partition's, kept for its storage
  std::map<kafka::TopicPartition, std::deque<std::shared_ptr<Batch>>> batches_;
  std::map<std::string, int32_t> sticky_;        // topic -> partition (sticky partitioner)
  std::map<std::string, uint32_t> round_robin_;  // topic -> counter
  size_t outstanding_ = 0;
  sim::DeadlineTimer pump_timer_;  // schedule_pump's
  // wait_for_connection: the reconnect backoff and the metadata queries
  // while a batch waits for its leader's connection.
  ConnectionWait waits_;
  ConnectionErrors errors_;  // event()'s: one client_error per failure

  // Idempotence.
  kafka::ProducerId producer_id_ = kafka::kNoProducerId;
  int16_t producer_epoch_ = -1;
  bool init_in_flight_ = false;
  std::map<kafka::TopicPartition, int32_t> next_sequence_;
  // Partitions that wait for their requests in flight to finish before
  // sending more (librdkafka's rktp_eos.wait_drain).
  std::set<kafka::TopicPartition> wait_drain_;
  // The broker each partition's last request went to.
  std::map<kafka::TopicPartition, kafka::BrokerId> last_leader_;
  // A drain for an epoch bump is under way (librdkafka's
  // RD_KAFKA_IDEMP_STATE_DRAIN_BUMP).
  bool drain_bump_ = false;
};

// Java's murmur2 of a key's bytes, made positive (Utils.toPositive), as the
// Java client's and librdkafka's murmur2 partitioners use it.
uint32_t murmur2(const std::string& key);
// CRC-32 (IEEE 802.3, zlib's crc32) of a key's bytes: librdkafka's rd_crc32,
// which its consistent and consistent_random partitioners use.
uint32_t crc32(const std::string& key);
// 32-bit FNV-1a of a key's bytes, made positive as librdkafka's rd_fnv1a does
// (the absolute value of the hash read as int32, Sarama's NewHashPartitioner).
uint32_t fnv1a(const std::string& key);
// The partition `key` maps to under `hash` among `partition_count` partitions
// (hash % count, as librdkafka's partitioners compute it). `hash` must not
// be KeyHash::none; partition_count > 0.
int32_t key_partition(KeyHash hash, const std::string& key, int32_t partition_count);
// Where librdkafka's consistent, murmur2 and fnv1a partitioners put every
// record without a key: the hash of zero bytes, mod the partition count
// (consistent: always 0; murmur2: 0x106e08d9 % n; fnv1a: 0x7ee3623b % n).
int32_t null_key_partition(KeyHash hash, int32_t partition_count);

}  // namespace client
