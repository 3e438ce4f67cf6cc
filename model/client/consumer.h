// A Kafka consumer reading assigned partitions from their leaders
// (librdkafka's fetcher, the Java client's Fetcher): one fetch in flight per
// leader, covering every assigned partition it leads, long-polled with
// fetch.wait.max.ms / fetch.min.bytes; records only up to the high
// watermark, as the broker serves them. A partition without a position asks
// its leader for one (ListOffsets) following auto.offset.reset;
// OFFSET_OUT_OF_RANGE resets it the same way (or is reported, with `none`).
// A leader that moved (NOT_LEADER_FOR_PARTITION, a disconnect, a timeout)
// sends the consumer back to the metadata. A fetch for a leader it has no
// connection to waits, unsent, while it connects (librdkafka, Java:
// connection_wait.h), or, with wait_for_connection false (aiokafka, the lab
// consumer), goes out on the connection being opened and fails with it.
//
// Partitions are assigned by hand (`assign`) or all partitions of a topic
// (`assign_topic`); consumer groups build on this.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "model/client/config.h"
#include "model/client/connection_errors.h"
#include "model/client/connection_wait.h"
#include "model/client/metadata.h"
#include "model/client/producer.h"
#include "sim/deadline_timer.h"

namespace client {

struct ConsumedRecord {
  kafka::TopicPartition tp;
  int64_t offset = 0;
  uint64_t value = 0;
  int64_t timestamp_ms = 0;
  int64_t high_watermark = 0;
};

class ConsumerListener : public ClientListener {
 public:
  virtual void on_records(const std::vector<ConsumedRecord>& records) = 0;
  // A fetch for `tp` failed with a Kafka error ("OFFSET_OUT_OF_RANGE" ...).
  virtual void on_fetch_error(const kafka::TopicPartition&, const std::string&) {}
};

class Consumer {
 public:
  Consumer(sim::ProcessContext& ctx, ConsumerConfig config, ConsumerListener& listener);
  Consumer(const Consumer&) = delete;
  Consumer& operator=(const Consumer&) = delete;

  // Replaces the assignment; a partition with a known position keeps it.
  void assign(const std::vector<kafka::TopicPartition>& partitions);
  // Every partition of `topic`, now and as the metadata reveals them.
  void assign_topic(const std::string& topic);
  // Starts `tp` at `offset` (a committed offset, say).
  void seek(const kafka::TopicPartition& tp, int64_t offset);
  std::optional<int64_t> position(const kafka::TopicPartition& tp) const;
  const std::set<kafka::TopicPartition>& assignment() const { return assigned_; }
  // The consumer's view of the cluster (a group member asks it for a broker
  // to find its coordinator at and for the partition counts it assigns).
  Metadata& metadata() { return metadata_; }

  bool on_connected(sim::SocketId s) {
    if (!net_.on_connected(s)) return false;
    if (config_.wait_for_connection) pump();  // a leader's fetch may have waited for it
    return true;
  }
  bool on_connect_failed(sim::SocketId s, sim::ConnectError e) { return net_.on_connect_failed(s, e); }
  bool on_message(sim::SocketId s, sim::Payload& p) { return net_.on_message(s, p); }
  // As the producer's.
  bool on_closed(sim::SocketId s, sim::CloseReason r) {
    if (!net_.on_closed(s, r)) return false;
    metadata_.refresh_on_disconnect();
    return true;
  }

 private:
  void on_metadata();
  void pump();
  void fetch_from(kafka::BrokerId leader);
  void reset_offsets(kafka::BrokerId leader, std::vector<kafka::TopicPartition> tps);
  void backoff(kafka::BrokerId leader);
  void request_failed(kafka::BrokerId leader, kafka::SendError e);
  // wait_for_connection: whether `leader` is connected; if not, connects as
  // ConnectionWait says and sets a pump for when to try again.
  bool leader_ready(kafka::BrokerId leader);
  void on_connect_error(kafka::BrokerId node, kafka::SendError e, bool reported);
  // A pump at `at_ms` (virtual ms), unless one is due no later.
  void schedule_pump(int64_t at_ms);
  int64_t now_ms() const { return ctx_.now().us() / 1000; }
  void event(const std::string& name, int32_t node);
  // fetch_order_ after assigned_ changed: the partitions no longer assigned
  // leave it, new ones join at the back (in assigned_'s order).
  void sync_fetch_order();
  void move_to_back(const kafka::TopicPartition& tp);

  sim::ProcessContext& ctx_;
  ConsumerConfig config_;
  ConsumerListener& listener_;
  kafka::NetworkClient net_;
  Metadata metadata_;
  std::set<std::string> whole_topics_;
  std::set<kafka::TopicPartition> assigned_;
  // assigned_ in the order a fetch names them. The first partition of each
  // fetch goes to the back, so the next fetch from that leader starts one
  // partition further on (librdkafka's round robin; the Java client moves a
  // partition that got records or an error instead): when the answer's
  // limit binds, the partitions served first take turns.
  std::vector<kafka::TopicPartition> fetch_order_;
  std::map<kafka::TopicPartition, int64_t> positions_;
  std::set<kafka::BrokerId> fetching_;     // a fetch in flight to this leader
  std::set<kafka::BrokerId> resetting_;    // a ListOffsets in flight to this leader
  // Partitions whose ListOffsets answered OFFSET_NOT_AVAILABLE: not asked
  // again before this time (ms).
  std::map<kafka::TopicPartition, int64_t> reset_retry_at_ms_;
  std::set<kafka::BrokerId> backing_off_;
  // wait_for_connection: the reconnect backoff and the metadata queries
  // while a fetch waits for its leader's connection.
  ConnectionWait waits_;
  ConnectionErrors errors_;  // event()'s: one client_error per failure
  sim::DeadlineTimer pump_timer_;  // schedule_pump's
};

}  // namespace client
