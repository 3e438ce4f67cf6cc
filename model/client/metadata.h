// A client's view of the cluster (the Java client's Metadata /
// librdkafka's rd_kafka_metadata cache): the brokers, each partition's
// leader, refreshed from a bootstrap server until the first answer and from
// the known brokers afterwards, in turn when one does not answer. Producer
// and consumer share it.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "model/client/config.h"
#include "model/kafka/network_client.h"
#include "sim/deadline_timer.h"
#include "sim/flat_map.h"

namespace client {

class Metadata {
 public:
  struct Options {
    std::vector<BootstrapServer> bootstrap;
    int32_t retry_backoff_ms = 100;
    int32_t reconnect_backoff_ms = 100;
    // Asked for again this long after the last answer (metadata_refresh_ms in
    // config.h).
    int64_t refresh_ms = 300000;
  };
  // `on_error` hears connection-level failures (name, node); `on_update`
  // runs after every answer.
  Metadata(sim::ProcessContext& ctx, kafka::NetworkClient& net, Options options,
           std::function<void(const std::string&, int32_t)> on_error, std::function<void()> on_update);

  void add_topic(const std::string& topic);
  // Asks for fresh metadata: at once; or, with a request in flight,
  // retry_backoff_ms after its answer; or, while a retry is waiting (after a
  // failure or an answer lacking a leader), with that retry. One update at a
  // time, so however many callers ask while brokers are down, the client
  // keeps one retry going (docs/fidelity.md, "metadata", for how this
  // compares with the Java client and librdkafka).
  void refresh();
  // A broker connection went down: the clients look at the metadata again
  // at once — librdkafka's rd_kafka_broker_fail refreshes the known topics
  // ("broker down"), Java's NetworkClient requests an update on any
  // disconnect, aiokafka's client forces one when a connection breaks. An
  // acks=0 producer learns this way that a broker refused its request (the
  // broker closes the connection, having no answer to give).
  void refresh_on_disconnect() { refresh(); }
  // Forgets a partition's leader (an error said it moved).
  void invalidate(const kafka::TopicPartition& tp);

  bool knows(const std::string& topic) const { return counts_.count(topic) != 0; }
  int32_t partition_count(const std::string& topic) const;
  // Partitions of `topic` with a leader, ascending.
  std::vector<int32_t> available(const std::string& topic) const;
  // The same into `out` (cleared first), which keeps its storage.
  void available_into(const kafka::Topic& topic, std::vector<int32_t>& out) const;
  // The leader of `tp` when it and its broker are known, else kNoBroker (not
  // an std::optional: returned from a call, one went through the stack as two
  // narrow stores read back as one wide load, a stall for every record a
  // producer sent).
  kafka::BrokerId leader_id(const kafka::TopicPartition& tp) const;
  std::optional<kafka::NodeAddress> address(kafka::BrokerId b) const;
  // A known broker to ask something of; nullopt before the first answer.
  // Like the Java client's leastLoadedNode: a broker with an open connection
  // first, then one that has not failed lately, in turn.
  std::optional<kafka::BrokerId> any_broker();
  // A request to `b` failed at the connection level (refused, reset, timed out).
  void note_failure(kafka::BrokerId b);
  // Moves `any_broker` on to the next one (the last did not answer).
  void skip_broker() { ++next_; }

 private:
  void on_answer(const kafka::MetadataResponse& r);
  // Options::refresh_ms after the last answer (metadata_refresh_ms in
  // config.h), a refresh: on a timer, as librdkafka's
  // topic.metadata.refresh.interval.ms timer and aiokafka's synchroniser task
  // wake on their own (the Java client looks at every poll, which an
  // application calls all the time), so a client whose requests all hang
  // still asks.
  void arm_age_timer();
  void on_age();
  // refresh() after `ms`, unless a retry is already waiting.
  void retry_after(int32_t ms);

  sim::ProcessContext& ctx_;
  kafka::NetworkClient& net_;
  Options options_;
  std::function<void(const std::string&, int32_t)> on_error_;
  std::function<void()> on_update_;
  // Both looked up for every record a producer sends; a metadata answer
  // refills them. leaders_ holds every partition of the topics the client
  // uses: tens of entries, rarely inserted into.
  sim::FlatMap<kafka::BrokerId, kafka::NodeAddress> brokers_;
  sim::FlatMap<kafka::TopicPartition, kafka::BrokerId> leaders_;  // -1: none
  std::map<std::string, int32_t> counts_;
  std::set<std::string> topics_;
  bool in_flight_ = false;
  bool wanted_ = false;
  bool retry_pending_ = false;  // a retry_after timer is set: refresh() waits for it
  size_t next_ = 0;
  int64_t last_answer_ms_ = -1;
  sim::DeadlineTimer age_timer_;
  std::map<kafka::BrokerId, int64_t> failed_at_ms_;
};

}  // namespace client
