#include "model/client/producer.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "model/kafka/record_format.h"
#include "sim/assert.h"

namespace client {

using kafka::BrokerId;
using kafka::ErrorCode;
using kafka::TopicPartition;

const char* to_string(Outcome o) {
  switch (o) {
    case Outcome::ok: return "ok";
    case Outcome::fail: return "fail";
    case Outcome::info: return "info";
  }
  return "?";
}

uint32_t murmur2(const std::string& key) {
  // The 32-bit MurmurHash2 with the Java client's seed, over the key's bytes.
  const uint32_t m = 0x5bd1e995u;
  const uint32_t length = static_cast<uint32_t>(key.size());
  uint32_t h = 0x9747b28cu ^ length;
  const auto byte = [&](size_t i) { return static_cast<uint32_t>(static_cast<unsigned char>(key[i])); };
  const size_t blocks = key.size() / 4;
  for (size_t i = 0; i < blocks; ++i) {
    uint32_t k = byte(4 * i) | (byte(4 * i + 1) << 8) | (byte(4 * i + 2) << 16) | (byte(4 * i + 3) << 24);
    k *= m;
    k ^= k >> 24;
    k *= m;
    h *= m;
    h ^= k;
  }
  const size_t tail = blocks * 4;
  switch (key.size() % 4) {
    case 3: h ^= byte(tail + 2) << 16; [[fallthrough]];
    case 2: h ^= byte(tail + 1) << 8; [[fallthrough]];
    case 1:
      h ^= byte(tail);
      h *= m;
      break;
    default: break;
  }
  h ^= h >> 13;
  h *= m;
  h ^= h >> 15;
  return h & 0x7fffffffu;  // Utils.toPositive
}

uint32_t crc32(const std::string& key) {
  // Bit by bit over the reflected polynomial: keys are short.
  uint32_t crc = 0xffffffffu;
  for (const char c : key) {
    crc ^= static_cast<uint32_t>(static_cast<unsigned char>(c));
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
  }
  return crc ^ 0xffffffffu;
}

uint32_t fnv1a(const std::string& key) {
  uint32_t h = 0x811c9dc5u;  // the 32-bit offset basis
  for (const char c : key) {
    h ^= static_cast<uint32_t>(static_cast<unsigned char>(c));
    h *= 0x01000193u;  // the 32-bit FNV prime
  }
  // librdkafka reads the hash as int32 and negates it when negative; in
  // unsigned arithmetic that is 2^32 - h (INT32_MIN stays itself).
  if ((h & 0x80000000u) != 0) h = 0u - h;
  return h;
}

int32_t key_partition(KeyHash hash, const std::string& key, int32_t partition_count) {
  SIM_ASSERT(partition_count > 0, "key_partition over {} partitions", partition_count);
  const uint32_t n = static_cast<uint32_t>(partition_count);
  switch (hash) {
    case KeyHash::crc32: return static_cast<int32_t>(crc32(key) % n);
    case KeyHash::murmur2: return static_cast<int32_t>(murmur2(key) % n);
    case KeyHash::fnv1a: return static_cast<int32_t>(fnv1a(key) % n);
    case KeyHash::none: break;
  }
  SIM_ASSERT(false, "key_partition without a key hash");
  return 0;
}

int32_t null_key_partition(KeyHash hash, int32_t partition_count) {
  // librdkafka calls the partitioner with key NULL and length 0: the hash of
  // zero bytes.
  return key_partition(hash, std::string(), partition_count);
}

Producer::Producer(sim::ProcessContext& ctx, ProducerConfig config, ClientListener* listener)
    : ctx_(ctx),
      config_(std::move(config)),
      listener_(listener),
      net_(ctx, kafka::NetworkClient::Options{config_.socket_timeout_ms, config_.max_in_flight,
                                              config_.connection_setup_timeout_ms}),
      metadata_(ctx, net_,
                Metadata::Options{config_.bootstrap, config_.retry_backoff_ms,
                                  config_.reconnect_backoff_ms,
                                  metadata_refresh_ms(config_.metadata_refresh_interval_ms, config_.metadata_max_age_ms)},
                [this](const std::string& e, int32_t node) { event(e, node); },
                [this] { on_metadata(); }),
      waits_(net_, ctx.rng(), {config_.reconnect_backoff_ms, config_.reconnect_backoff_max_ms},
             ctx.now().us() / 1000) {}

std::string Producer::send_error_name(kafka::SendError e) { return kafka::to_string(e); }

void Producer::event(const std::string& name, int32_t node) {
  if (!errors_.first(name, node, ctx_.now().us())) return;  // the same failure, another request
  ctx_.trace("client_error", {{"error", name}, {"node", node}});
  if (listener_ != nullptr) listener_->on_client_event(name, node);
}

// --- send --------------------------------------------------------------------------

void Producer::send(const std::string& topic, std::optional<std::string> key, uint64_t value,
                    int32_t value_bytes, Callback done) {
  const int32_t key_bytes = key ? static_cast<int32_t>(key->size()) : -1;
  Pending record{value, value_bytes, key_bytes, now_ms(), std::move(done)};
  if (wire_bytes(record) > config_.message_max_bytes) {
    // rd_kafka_msg_new0 refuses it: it never enters a queue. Reported at
    // this instant, from an event of its own, as every other outcome is.
    ctx_.after(sim::Duration::zero(), [done = std::move(record.done)] {
      done(DeliveryReport{Outcome::fail, -1, -1, "MSG_SIZE_TOO_LARGE"});
    });
    return;
  }
  ++outstanding_;
  unpartitioned_.push_back({topic, std::move(key), std::move(record)});
  metadata_.add_topic(topic);
  if (!metadata_.knows(topic)) {
    arm_expiry();  // on_metadata pumps once the topic is known
    return;
  }
  partition_waiting();
  pump();
}

std::optional<int32_t> Producer::choose_partition(const kafka::Topic& topic,
                                                  const std::optional<std::string>& key) {
  const int32_t n = metadata_.partition_count(topic);
  if (n <= 0) return std::nullopt;
  // A keyed record is hashed, unless the partitioner ignores keys (random)
  // or, under consistent_random, the key is empty (rd_kafka_msg_partitioner
  // treats it like no key).
  const bool hashed_key = key && config_.key_hash != KeyHash::none &&
                          !(key->empty() && config_.key_hash == KeyHash::crc32 &&
                            config_.null_key != NullKeyPartitioning::hashed);
  if (hashed_key) return key_partition(config_.key_hash, *key, n);
  if (config_.null_key == NullKeyPartitioning::hashed) {
    // Over every partition, available or not: the record waits for that
    // partition's leader, as in librdkafka.
    return null_key_partition(config_.key_hash, n);
  }
  std::vector<int32_t>& available = available_scratch_;
  metadata_.available_into(topic, available);
  if (available.empty()) {
    for (int32_t p = 0; p < n; ++p) available.push_back(p);
  }
  switch (config_.null_key) {
    case NullKeyPartitioning::random:
      return ctx_.rng().pick(available);
    case NullKeyPartitioning::round_robin:
      return available[round_robin_[topic]++ % available.size()];
    case NullKeyPartitioning::hashed:
      break;  // handled above
    case NullKeyPartitioning::sticky: {
      auto it = sticky_.find(topic);
      if (it != sticky_.end() &&
          std::find(available.begin(), available.end(), it->second) != available.end()) {
        return it->second;
      }
      const int32_t p = ctx_.rng().pick(available);
      sticky_[topic] = p;
      return p;
    }
  }
  return std::nullopt;
}

void Producer::partition_waiting() {
  // Each waiting record once, in order: one that still has no partition goes
  // to the back, behind the others that have none, keeping their order.
  for (size_t n = unpartitioned_.size(); n > 0; --n) {
    Unpartitioned u = std::move(unpartitioned_.front());
    unpartitioned_.pop_front();
    if (auto p = choose_partition(u.topic, u.key)) {
      enqueue({u.topic, *p}, std::move(u.record));
    } else {
      unpartitioned_.push_back(std::move(u));
    }
  }
}

void Producer::enqueue(const TopicPartition& tp, Pending record) {
  auto& queue = batches_[tp];
  if (queue.empty() || queue.back()->sent_once || queue.back()->in_flight ||
      !fits(*queue.back(), wire_bytes(record))) {
    auto b = std::make_shared<Batch>();
    b->tp = tp;
    queue.push_back(b);
  }
  add_record(*queue.back(), std::move(record));
  // No timer here: every caller pumps right after enqueueing (send,
  // on_metadata), and pump() sets the linger timer itself for a batch that
  // is not ready yet (a second wake-up at the same instant would only
  // repeat that pump, and ask for metadata twice while a leader is unknown).
}

// --- the sender ----------------------------------------------------------------------

void Producer::schedule_pump(int64_t at_ms) {
  // Due at that millisecond, or now if it has passed; a pump due no later
  // stands.
  pump_timer_.arm(ctx_, std::max(ctx_.now(), sim::Time::zero() + sim::Duration::millis(at_ms)),
                  [this] { pump(); });
}

void Producer::pump() {
  expire_batches();
  send_ready();
  arm_expiry();
}

void Producer::arm_expiry() {
  // The earliest message.timeout.ms of a record not on the wire: the first
  // unsent batch of each partition holds that partition's oldest (a queue is
  // in creation order, a retried batch keeps its place), and the first
  // record without a partition the oldest of those. Without this wake-up a
  // record waiting for a leader no metadata answer names (every broker down)
  // would wait until something else pumped; the Java Sender sleeps at most
  // until the accumulator's next expiry (RecordAccumulator.nextExpiryTimeMs),
  // librdkafka's broker threads scan their partitions' queues
  // (rd_kafka_msgq_age_scan) and its main thread the unpartitioned ones once
  // a second (rd_kafka_topic_scan_all). A record on the wire times out through its
  // request (on_batch_error).
  int64_t earliest = -1;
  const auto consider = [&](int64_t enqueued_ms) {
    const int64_t at = enqueued_ms + config_.message_timeout_ms;
    if (earliest < 0 || at < earliest) earliest = at;
  };
  for (const auto& [tp, queue] : batches_) {
    for (const std::shared_ptr<Batch>& b : queue) {
      if (b->in_flight || b->records.empty()) continue;
      consider(b->records.front().enqueued_ms);
      break;
    }
  }
  if (!unpartitioned_.empty()) consider(unpartitioned_.front().record.enqueued_ms);
  if (earliest >= 0) schedule_pump(earliest);
}

void Producer::send_ready() {
  if (config_.enable_idempotence && producer_id_ == kafka::kNoProducerId) {
    bool any = false;
    for (const auto& [tp, q] : batches_) any = any || !q.empty();
    if (any) init_producer_id();
    return;
  }
  if (drain_bump_) {
    // librdkafka rd_kafka_idemp_drain_epoch_bump0 / rd_kafka_idemp_drain_done
    // (rdkafka_idempotence.c): nothing is produced while requests are in
    // flight; once the last one is done the idempotent producer bumps its own
    // epoch (rd_kafka_pid_bump: same id, epoch + 1 wrapping at INT16_MAX) and
    // each partition's sequence restarts at 0 from the first record still
    // queued (rd_kafka_toppar_pid_change resets the base msgid). The broker
    // takes a higher epoch when its first sequence is 0 (Kafka's
    // ProducerStateManager), so the gap that stopped the old epoch is gone.
    if (any_in_flight()) return;  // each completion pumps again
    drain_bump_ = false;
    producer_epoch_ = static_cast<int16_t>((producer_epoch_ + 1) & 0x7fff);
    next_sequence_.clear();
    for (auto& [tp, queue] : batches_) {
      for (const std::shared_ptr<Batch>& b : queue) b->base_sequence = -1;
    }
    ctx_.trace("producer_epoch_bump", {{"producer_id", producer_id_}, {"epoch", producer_epoch_}});
  }
  bool need_metadata = !unpartitioned_.empty();
  bool leader_down = false;
  const int64_t now = now_ms();
  for (auto& [tp, queue] : batches_) {
    if (config_.enable_idempotence && wait_drain_.count(tp) != 0) {
      // librdkafka rd_kafka_toppar_producer_serve (rdkafka_broker.c): a
      // partition waiting to drain sends nothing until its requests in
      // flight are done, so a retry goes out with what those taught us.
      if (partition_in_flight(tp)) continue;
      wait_drain_.erase(tp);
    }
    // By index, with its own reference to the batch: an acks=0 batch is
    // completed inside send_batch, and its callbacks may send again (both
    // change this queue under the loop).
    for (size_t i = 0; i < queue.size(); ++i) {
      const std::shared_ptr<Batch> b = queue[i];
      if (b->in_flight) continue;
      const int64_t ready_at = ready_at_ms(*b);
      if (!b->sent_once && queue_full(queue, i)) {
        // No need to wait for linger.ms.
      } else if (now < ready_at) {
        schedule_pump(ready_at);
        break;  // later batches of the partition wait behind this one
      }
      const BrokerId leader = metadata_.leader_id(tp);
      if (leader == kafka::kNoBroker) {
        need_metadata = true;
        break;
      }
      // The partition waits, unsent, for its leader's connection.
      if (config_.wait_for_connection && !leader_ready(leader)) {
        leader_down = true;
        break;
      }
      if (config_.enable_idempotence) {
        // A partition that moved to another leader waits for the requests
        // still out to the old one (librdkafka marks it wait_drain when it
        // joins its new broker: "wait for outstanding requests to finish
        // before producing to new leader").
        const auto last = last_leader_.find(tp);
        if (last != last_leader_.end() && last->second != leader && partition_in_flight(tp)) {
          wait_drain_.insert(tp);
          break;
        }
        last_leader_[tp] = leader;
      }
      if (net_.pending(leader) >= static_cast<size_t>(config_.max_in_flight)) break;
      if (!config_.enable_idempotence) absorb_ready_batches(queue, i, now);
      send_batch(b, leader);
      // Completed at once (acks=0) and removed, perhaps with others: look
      // again from the front (what went out is in flight or gone).
      if (i >= queue.size() || queue[i] != b) i = static_cast<size_t>(-1);
    }
  }
  if (need_metadata) metadata_.refresh();
  if (leader_down) {
    // A new leader is learnt within a second of its election
    // (ConnectionWait::query_due, librdkafka's topic scan).
    int64_t next_ms = 0;
    if (waits_.query_due(now, &next_ms)) metadata_.refresh();
    schedule_pump(next_ms);
  }
}

int64_t Producer::ready_at_ms(const Batch& b) const {
  // linger.ms counts from the first queued record's send (librdkafka's
  // rd_kafka_msg_enq_time of the queue's head).
  SIM_ASSERT(!b.records.empty(), "an empty batch queued for {}", kafka::to_string(b.tp));
  return b.sent_once ? b.retry_at_ms : b.records.front().enqueued_ms + config_.linger_ms;
}

int64_t Producer::wire_bytes(const Pending& r) {
  // RD_KAFKAP_MESSAGE_V2_MAX_OVERHEAD: the longest each varint can be.
  constexpr int64_t kMaxRecordOverhead = 5 + 1 + 10 + 5 + 5 + 5 + 5;
  return kMaxRecordOverhead + key_value_bytes(r);
}

int64_t Producer::key_value_bytes(const Pending& r) { return std::max(r.key_bytes, 0) + r.value_bytes; }

int32_t Producer::size_in_batch(const Pending& r, size_t index, const Pending& first) {
  // DefaultRecord: its place and CreateTime relative to the batch's first.
  return kafka::record_bytes(static_cast<int32_t>(index), r.enqueued_ms - first.enqueued_ms,
                             r.key_bytes, r.value_bytes);
}

void Producer::add_record(Batch& b, Pending r) {
  b.bytes += size_in_batch(r, b.records.size(), b.records.empty() ? r : b.records.front());
  b.key_value_bytes += key_value_bytes(r);
  b.records.push_back(std::move(r));
}

void Producer::recount(Batch& b) {
  std::vector<Pending> records = std::move(b.records);
  b.records.clear();
  b.bytes = 0;
  b.key_value_bytes = 0;
  for (Pending& r : records) add_record(b, std::move(r));
}

bool Producer::fits(const Batch& b, int64_t bytes) const {
  // rd_kafka_msgset_writer_write_msgq: a message set takes records while
  // its length, with the next record counted at its largest, stays within
  // min(message.max.bytes, batch.size), and fewer than batch.num.messages;
  // the first whatever its size. Its length starts with the request's
  // headers: the request header (size, API key and version, correlation
  // id, client id), the ProduceRequest's (transactional id, acks, timeout,
  // the topic, the partition, the message set's size) and the record
  // batch's 61 bytes; the records written so far count as written.
  if (b.records.empty()) return true;
  if (b.records.size() >= static_cast<size_t>(config_.batch_num_messages)) return false;
  const int64_t headers = (4 + 2 + 2 + 4 + 2 + static_cast<int64_t>(config_.client_id.size())) +
                          (2 + 2 + 4 + 4 + 2 + static_cast<int64_t>(b.tp.topic.size()) + 4 + 4 + 4) +
                          kafka::kRecordBatchOverhead;
  const int64_t limit = std::min(config_.batch_size, config_.message_max_bytes);
  return headers + b.bytes + bytes <= limit;
}

bool Producer::queue_full(const std::deque<std::shared_ptr<Batch>>& queue, size_t i) const {
  // rd_kafka_msgq_may_wakeup: a partition's queue goes before linger.ms once
  // its records' keys and values pass batch.size, or it holds
  // batch.num.messages records (what is in flight is no longer in it). The
  // sender thread, which rd_kafka_msgq_allow_wakeup_at lets go at exactly
  // batch.size bytes, is woken by the application's produce() only once
  // they pass it: a queue of exactly batch.size bytes waits for the next
  // record or linger.ms, in the usual case.
  int64_t bytes = 0;
  size_t records = 0;
  for (size_t j = i; j < queue.size(); ++j) {
    if (queue[j]->in_flight) continue;
    bytes += queue[j]->key_value_bytes;
    records += queue[j]->records.size();
    if (bytes > config_.batch_size || records >= static_cast<size_t>(config_.batch_num_messages)) {
      return true;
    }
  }
  return false;
}

int32_t Producer::attempts(const Batch& b) {
  int32_t most = 0;
  for (const Pending& r : b.records) most = std::max(most, r.sends);
  return most;
}

void Producer::absorb_ready_batches(std::deque<std::shared_ptr<Batch>>& queue, size_t i, int64_t now) {
  // librdkafka without idempotence retries messages, not batches: a failed
  // request's messages go back to the head of their partition's queue
  // (rd_kafka_toppar_retry_msgq) and the next request takes as many queued
  // messages as fit (batch.size), so after an outage a partition's backlog
  // goes out in a few requests instead of one per batch it was first sent
  // in. The idempotent producer must keep its batches (their sequence
  // numbers), as the Java client keeps every batch.
  // The message set writer takes them one by one while they fit, and stops
  // at the first that does not, or that waits out a retry backoff
  // (rd_kafka_msgset_writer_write_msgq); a record's own linger.ms does not
  // hold it back.
  Batch& b = *queue[i];
  while (i + 1 < queue.size()) {
    Batch& next = *queue[i + 1];
    if (next.in_flight || (next.sent_once && now < next.retry_at_ms)) break;
    size_t taken = 0;
    while (taken < next.records.size() && fits(b, wire_bytes(next.records[taken]))) {
      add_record(b, std::move(next.records[taken]));
      ++taken;
    }
    if (taken == 0) break;
    b.sent_once = b.sent_once || next.sent_once;
    if (taken < next.records.size()) {
      next.records.erase(next.records.begin(), next.records.begin() + static_cast<std::ptrdiff_t>(taken));
      recount(next);
      break;
    }
    queue.erase(queue.begin() + static_cast<std::ptrdiff_t>(i + 1));
  }
}

bool Producer::leader_ready(BrokerId node) {
  // The Java Sender drains only nodes for which NetworkClient.ready() holds;
  // librdkafka serves a partition's queue only from a broker thread in state
  // UP (connection_wait.h).
  int64_t retry_at_ms = -1;
  const bool ready = waits_.ready(
      node, *metadata_.address(node), now_ms(),
      [this, node](kafka::SendError e, bool reported) { on_connect_error(node, e, reported); }, &retry_at_ms);
  if (retry_at_ms >= 0) schedule_pump(retry_at_ms);
  return ready;
}

void Producer::on_connect_error(BrokerId node, kafka::SendError e, bool reported) {
  // A request that was queued on the connection (a metadata request) has
  // logged the error already.
  if (!reported) event(send_error_name(e), node);
  waits_.failed(node, now_ms());
  metadata_.note_failure(node);
  // No metadata request here: the partitions waiting for this leader ask
  // once a second (send_ready), as librdkafka's topic scan does. (The Java
  // client asks on every failed connection, its reconnect backoff growing to a
  // second.)
  pump();  // sets the next attempt, the reconnect backoff from now
}

void Producer::send_batch(const std::shared_ptr<Batch>& batch, BrokerId leader) {
  batch->in_flight = true;
  batch->sent_once = true;
  for (Pending& r : batch->records) ++r.sends;
  if (config_.enable_idempotence && batch->base_sequence < 0) {
    int32_t& next = next_sequence_[batch->tp];
    batch->base_sequence = next;
    next += static_cast<int32_t>(batch->records.size());
  }
  // The sticky partitioner moves on once its batch has gone.
  auto sticky = sticky_.find(batch->tp.topic);
  if (sticky != sticky_.end() && sticky->second == batch->tp.partition) sticky_.erase(sticky);
  kafka::ProduceBatch pb;
  pb.tp = batch->tp;
  pb.producer_id = config_.enable_idempotence ? producer_id_ : kafka::kNoProducerId;
  pb.producer_epoch = config_.enable_idempotence ? producer_epoch_ : -1;
  pb.base_sequence = config_.enable_idempotence ? batch->base_sequence : -1;
  pb.records.reserve(batch->records.size());
  // Each record's size as the batch carries it, the batch header counted
  // with the first: a batch stays whole in every log, so its records' sizes
  // add up to the batch's.
  for (size_t i = 0; i < batch->records.size(); ++i) {
    const Pending& r = batch->records[i];
    kafka::Record rec;
    rec.value = r.value;
    rec.size = size_in_batch(r, i, batch->records.front()) + (i == 0 ? kafka::kRecordBatchOverhead : 0);
    pb.records.push_back(rec);
  }
  const bool answered = config_.acks != 0;
  // The client's own wait: socket.timeout.ms, cut to what is left of the
  // first record's message.timeout.ms (100 ms if nothing is), as
  // rd_kafka_ProduceRequest sets an absolute timeout that
  // rd_kafka_buf_calc_timeout caps by socket.timeout.ms.
  int64_t wait_ms = config_.socket_timeout_ms;
  if (!config_.single_request_timeout) {
    const int64_t left = batch->records.front().enqueued_ms + config_.message_timeout_ms - now_ms();
    wait_ms = std::min<int64_t>(wait_ms, left <= 0 ? 100 : left);
  }
  // Moved in: a braced list would copy the batch and its records.
  kafka::ProduceRequest request{config_.acks, config_.request_timeout_ms, {}};
  request.batches.push_back(std::move(pb));
  net_.send(
      leader, *metadata_.address(leader), std::move(request),
      [this, batch, leader, answered](kafka::SendError e, const kafka::Response* r) {
        batch->in_flight = false;
        if (e != kafka::SendError::none) {
          event(send_error_name(e), leader);
          metadata_.note_failure(leader);
          // The leader may have moved or gone: look again.
          metadata_.invalidate(batch->tp);
          const bool written = e != kafka::SendError::refused && e != kafka::SendError::unreachable &&
                               e != kafka::SendError::connect_timed_out;
          on_batch_error(batch, send_error_name(e), true, written);
          pump();
          return;
        }
        if (!answered) {
          // acks=0: done once on the wire, offset unknown.
          complete(batch, DeliveryReport{Outcome::ok, batch->tp.partition, -1, ""});
          pump();
          return;
        }
        const auto* resp = std::get_if<kafka::ProduceResponse>(r);
        if (resp == nullptr || resp->partitions.empty()) {
          on_batch_error(batch, "UNKNOWN_SERVER_ERROR", true, true);
          pump();
          return;
        }
        const kafka::ProducePartitionResponse& pr = resp->partitions.front();
        switch (pr.error) {
          case ErrorCode::none:
          case ErrorCode::duplicate_sequence_number:
            complete(batch, DeliveryReport{Outcome::ok, batch->tp.partition, pr.base_offset.value, ""});
            break;
          case ErrorCode::not_leader_for_partition:
          case ErrorCode::leader_not_available:
          case ErrorCode::unknown_topic_or_partition:
          case ErrorCode::fenced_leader_epoch:
          case ErrorCode::unknown_leader_epoch:
            metadata_.invalidate(batch->tp);
            // With acks=all, NOT_LEADER_FOR_PARTITION may come after the
            // append: the request waited in the leader's purgatory and the
            // partition moved away (DelayedProduce, via
            // Partition.checkEnoughReplicasReachOffset). The batch may be in
            // the log then, and the history must not say it was not written.
            on_batch_error(batch, kafka::to_string(pr.error), true,
                           config_.acks == -1 && pr.error == ErrorCode::not_leader_for_partition);
            break;
          case ErrorCode::request_timed_out:
          case ErrorCode::not_enough_replicas_after_append:
            // Appended at the leader; whether it survives is unknown.
            on_batch_error(batch, kafka::to_string(pr.error), true, true);
            break;
          case ErrorCode::out_of_order_sequence_number:
            // A batch numbered past what the broker expects: an earlier one
            // of the partition has not landed (it failed, or is being
            // retried). It was not written; it is retried, after the
            // partition drains, with its sequence unchanged — as the Java
            // client does (TransactionManager retries such a batch without
            // bumping the epoch). librdkafka
            // (rd_kafka_handle_idempotent_Produce_error, "skipped sequence
            // numbers") drains and bumps the epoch here, which its
            // maintainers note can write a record of another partition twice
            // (librdkafka issue #4953, PR #4972); the model takes the Java
            // rule. A gap that will never fill (a batch failed for good)
            // bumps the epoch where that batch fails.
            //
            // Unless nothing of the partition is ahead of this batch: every
            // earlier sequence was acknowledged, so the broker has lost
            // records it acknowledged (an unclean election, a leader that came
            // back from a power loss) and no retry will ever fit. Both clients
            // then bump the epoch and renumber from 0 — librdkafka's
            // "sequence desynchronization" (rd_kafka_handle_idempotent_Produce_error,
            // without enable.gapless.guarantee) and the Java client since
            // KIP-360. Retrying forever would stall the producer until
            // message.timeout.ms (found by `kafkasim fuzz`, docs/fidelity.md).
            if (config_.enable_idempotence) {
              const auto& queue = batches_[batch->tp];
              if (!queue.empty() && queue.front() == batch) {
                drain_epoch_bump(fmt::format("{}: the broker lost acknowledged sequences", kafka::to_string(batch->tp)));
              }
            }
            on_batch_error(batch, kafka::to_string(pr.error), config_.enable_idempotence, false);
            break;
          default:
            on_batch_error(batch, kafka::to_string(pr.error), kafka::is_retriable(pr.error), false);
            break;
        }
        pump();
      },
      answered, sim::Duration::millis(wait_ms));
}

void Producer::on_batch_error(const std::shared_ptr<Batch>& batch, const std::string& error,
                              bool retriable, bool may_have_been_written) {
  if (may_have_been_written) batch->sent_once = true;
  const int64_t now = now_ms();
  // An answer that says it was not appended is a failure; anything that
  // may have been written (a timeout, a lost connection after sending) is
  // unknown.
  const bool unknown = may_have_been_written || (attempts(*batch) > 1 && batch->sent_once);
  const Outcome outcome = unknown ? Outcome::info : Outcome::fail;
  const DeliveryReport report{outcome, batch->tp.partition, -1, error};
  bool may_retry = retriable && attempts(*batch) <= config_.retries;
  // Records that fail while the rest of the batch may go again. They are
  // reported once the batch's next step is set: a delivery callback may
  // send, and pump, and must not find this batch ready to go at once.
  std::vector<Pending> failed;
  if (retriable && !config_.enable_idempotence) {
    // librdkafka counts each message's retries (rd_kafka_retry_msgq): of a
    // batch merged from records tried different numbers of times, those
    // tried `retries` + 1 times fail and the others go again.
    take_records(*batch, [this](const Pending& r) { return r.sends > config_.retries; }, failed);
    may_retry = attempts(*batch) <= config_.retries;
  }
  if (may_retry && !config_.enable_idempotence) {
    // It times messages out one by one too: those past message.timeout.ms
    // fail, the rest of the batch is retried.
    take_timed_out_records(*batch, now, failed);
  }
  const int64_t oldest = batch->records.empty() ? now : batch->records.front().enqueued_ms;
  if (may_retry && now - oldest < config_.message_timeout_ms) {
    batch->retry_at_ms = now + config_.retry_backoff_ms;
    // librdkafka: an idempotent producer drains the partition before retrying
    // (rd_kafka_idemp_drain_toppar "drain before retrying").
    if (config_.enable_idempotence) wait_drain_.insert(batch->tp);
    report_records(failed, report);
    ctx_.trace("produce_retry", {{"partition", kafka::to_string(batch->tp)},
                                 {"error", error},
                                 {"attempt", attempts(*batch)}});
    schedule_pump(batch->retry_at_ms);
    return;
  }
  // All of it fails: out of the queue first, then every record reported, in order.
  for (Pending& r : batch->records) failed.push_back(std::move(r));
  batch->records.clear();
  complete(batch, report);
  report_records(failed, report);
  // The batch's sequence numbers will never be acknowledged: every later
  // batch of the partition would be out of order. librdkafka bumps the epoch
  // after a permanent error ("message sequence gap") and after messages time
  // out (below, expire_batches).
  if (config_.enable_idempotence) {
    drain_epoch_bump(fmt::format("{} failed for good: {}", kafka::to_string(batch->tp), error));
  }
}

void Producer::complete(const std::shared_ptr<Batch>& batch, const DeliveryReport& report) {
  auto& queue = batches_[batch->tp];
  queue.erase(std::remove(queue.begin(), queue.end(), batch), queue.end());
  std::vector<Pending> records = std::move(batch->records);
  batch->records.clear();
  report_records(records, report);
}

void Producer::report_records(std::vector<Pending>& records, const DeliveryReport& report) {
  outstanding_ -= records.size();
  for (size_t i = 0; i < records.size(); ++i) {
    DeliveryReport r = report;
    if (r.outcome == Outcome::ok && r.offset >= 0) r.offset += static_cast<int64_t>(i);
    records[i].done(r);
  }
}

template <typename Done>
void Producer::take_records(Batch& b, Done done, std::vector<Pending>& failed) {
  const size_t n = static_cast<size_t>(std::count_if(b.records.begin(), b.records.end(), done));
  if (n == 0 || n == b.records.size()) return;
  std::vector<Pending> kept;
  failed.reserve(failed.size() + n);
  kept.reserve(b.records.size() - n);
  for (Pending& r : b.records) {
    if (done(r)) {
      failed.push_back(std::move(r));
    } else {
      kept.push_back(std::move(r));
    }
  }
  b.records = std::move(kept);
  recount(b);
}

void Producer::take_timed_out_records(Batch& b, int64_t now, std::vector<Pending>& failed) {
  // The records are in the order they were queued (batches merge in queue
  // order), so the timed-out ones are a prefix; if all are, the caller
  // fails the batch whole.
  take_records(b, [this, now](const Pending& r) { return now - r.enqueued_ms >= config_.message_timeout_ms; },
               failed);
}

void Producer::expire_batches() {
  const int64_t now = now_ms();
  std::vector<std::shared_ptr<Batch>> due;  // the oldest record timed out
  for (auto& [tp, queue] : batches_) {
    for (const std::shared_ptr<Batch>& b : queue) {
      if (b->in_flight || b->records.empty()) continue;
      if (now - b->records.front().enqueued_ms >= config_.message_timeout_ms) due.push_back(b);
    }
  }
  // Reported after the walk: a delivery report may send again.
  std::vector<std::shared_ptr<Batch>> expired;
  for (const auto& b : due) {
    const Outcome outcome = b->sent_once ? Outcome::info : Outcome::fail;
    // Without idempotence, messages time out one by one (librdkafka); the
    // idempotent producer's batch goes as a whole, as the Java client's.
    if (!config_.enable_idempotence) {
      std::vector<Pending> timed_out;
      take_timed_out_records(*b, now, timed_out);
      report_records(timed_out, DeliveryReport{outcome, b->tp.partition, -1, "MSG_TIMED_OUT"});
    }
    if (now - b->records.front().enqueued_ms < config_.message_timeout_ms) continue;
    expired.push_back(b);
    complete(b, DeliveryReport{outcome, b->tp.partition, -1, "MSG_TIMED_OUT"});
  }
  // librdkafka rd_kafka_toppar_producer_serve: with a producer id, timed-out
  // messages leave a gap in the partition's sequence that would bring
  // OUT_OF_ORDER_SEQUENCE_NUMBER, so it drains and bumps the epoch.
  if (config_.enable_idempotence && !expired.empty() && producer_id_ != kafka::kNoProducerId) {
    drain_epoch_bump(fmt::format("{} batch(es) timed out on {}", expired.size(),
                                 kafka::to_string(expired.front()->tp)));
  }
  while (!unpartitioned_.empty() &&
         now - unpartitioned_.front().record.enqueued_ms >= config_.message_timeout_ms) {
    Unpartitioned u = std::move(unpartitioned_.front());
    unpartitioned_.pop_front();
    --outstanding_;
    u.record.done(DeliveryReport{Outcome::fail, -1, -1, "MSG_TIMED_OUT"});
  }
}

// --- metadata and producer ids ---------------------------------------------------------

void Producer::drain_epoch_bump(const std::string& reason) {
  if (producer_id_ == kafka::kNoProducerId) return;  // no sequences yet: nothing to renumber
  if (!drain_bump_) {
    ctx_.trace("producer_drain", {{"reason", reason}, {"epoch", producer_epoch_}});
  }
  drain_bump_ = true;
}

bool Producer::partition_in_flight(const TopicPartition& tp) const {
  const auto it = batches_.find(tp);
  if (it == batches_.end()) return false;
  return std::any_of(it->second.begin(), it->second.end(),
                     [](const std::shared_ptr<Batch>& b) { return b->in_flight; });
}

bool Producer::any_in_flight() const {
  for (const auto& [tp, queue] : batches_) {
    for (const std::shared_ptr<Batch>& b : queue) {
      if (b->in_flight) return true;
    }
  }
  return false;
}

void Producer::on_metadata() {
  partition_waiting();
  pump();
}

void Producer::init_producer_id() {
  if (init_in_flight_) return;
  const auto node_opt = metadata_.any_broker();
  if (!node_opt) {
    metadata_.refresh();
    return;
  }
  init_in_flight_ = true;
  const BrokerId node = *node_opt;
  net_.send(node, *metadata_.address(node), kafka::InitProducerIdRequest{},
            [this, node](kafka::SendError e, const kafka::Response* r) {
              init_in_flight_ = false;
              const auto* resp = r == nullptr ? nullptr : std::get_if<kafka::InitProducerIdResponse>(r);
              if (e != kafka::SendError::none || resp == nullptr || resp->error != ErrorCode::none) {
                if (e != kafka::SendError::none) event(send_error_name(e), node);
                metadata_.note_failure(node);
                metadata_.skip_broker();
                ctx_.after(sim::Duration::millis(config_.retry_backoff_ms), [this] { pump(); });
                return;
              }
              producer_id_ = resp->producer_id;
              producer_epoch_ = resp->producer_epoch;
              ctx_.trace("producer_id", {{"producer_id", producer_id_}});
              pump();
            });
}

}  // namespace client
