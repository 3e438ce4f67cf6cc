// The `steady` workload: N producers, each sending at a steady rate over K
// keys to one topic, and M consumers in one or more consumer groups (or
// without a group), every client a process on a simulated host, everything
// recorded in a check::History in the shapes model/check/checkers.h lists.
// The parameters (SteadyOptions) are meant to be filled from a scenario file.
//
// Producers. Producer i sends one record per tick; ticks are `1 / rate`
// apart (Arrivals::fixed) or exponentially distributed with that mean
// (Arrivals::poisson, a Poisson stream), drawn from the process's own random
// stream. Each record has the key "k<j>" with j uniform in [0, keys) (no key
// when keys = 0), hashed by the producer's partitioner — murmur2_random by
// default, the Java client's DefaultPartitioner — and its send is one
// invoke, completed by its delivery report (ok / fail / info). When the
// client already holds `max_outstanding` records (librdkafka's
// queue.buffering.max.messages) the send fails at once with QUEUE_FULL, as
// rd_kafka_produce does: an invoke and a fail.
//
// Values. A value names one message (checkers.h):
//   bits 48-63  the producer's index i
//   bits 32-47  its restart generation: the process's incarnation - 1
//   bits  0-31  the sequence number within that generation, from 0 (a
//               generation that would pass 2^32 sends stops the run)
// The generation is derived from the simulator's count of the process's
// starts (sim::ProcessContext::incarnation), not kept on the host's disk: a
// counter on disk would need an fsync per start to survive a power-off, and a
// real deployment would get the same effect from a launcher passing a run
// number. Either way a restarted producer never reuses a value.
//
// Consumers. Consumer j is in group groups[j % groups.size()]; it subscribes
// through GroupConsumer (model/client/group.h), which records its rebalance
// and commit ops. An empty group id (or no groups) makes a consumer without a
// group that reads every partition of the topic (Consumer::assign_topic).
// Either way the application is workload.h's PollLoop: a poll invoke, its
// records as ok ops (with the producing process, read from the value's high
// bits), or one empty ok op after `poll_timeout`.
//
// Exits. SIGTERM (World::terminate) records an exit and, for a group member,
// closes it (commit, LeaveGroup) before the process exits. A kill records
// nothing (no callback): the killer calls client::record_exit (workload.h);
// failing that the restarted process records the missing exit.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/check/history.h"
#include "model/client/config.h"
#include "model/client/consumer.h"
#include "model/client/group.h"
#include "model/client/producer.h"
#include "model/client/workload.h"
#include "sim/world.h"

namespace client {

// librdkafka's producer defaults with the Java-compatible partitioner
// (murmur2_random); bootstrap servers still to be given.
ProducerConfig steady_producer_defaults();
// librdkafka's consumer defaults, reading from the earliest offset when a
// partition has no committed one; bootstrap servers still to be given.
ConsumerConfig steady_consumer_defaults();

struct SteadyOptions {
  enum class Arrivals { fixed, poisson };

  std::string topic = "steady";
  // --- producers
  int32_t producers = 1;                   // N
  int32_t rate_per_s = 100;                // messages per second, each producer
  Arrivals arrivals = Arrivals::poisson;   // inter-send times: fixed 1/rate, or exponential
  int32_t keys = 16;                       // K; 0: records without a key
  int32_t value_size = 100;                // bytes per record on the wire
  size_t max_outstanding = 100000;         // librdkafka's queue.buffering.max.messages
  ProducerConfig producer = steady_producer_defaults();
  // --- consumers
  int32_t consumers = 1;                   // M
  // Consumer j joins groups[j % size]; "" or an empty list: no group.
  std::vector<std::string> groups = {"steady"};
  ConsumerConfig consumer = steady_consumer_defaults();
  sim::Duration poll_timeout = sim::Duration::millis(500);
  // --- process names (the history's process names)
  std::string producer_prefix = "steady-producer-";
  std::string consumer_prefix = "steady-consumer-";
  // Names given one by one (a scenario file's client names); when set, they
  // replace the prefixes: producer i is producer_names[i].
  std::vector<std::string> producer_names;
  std::vector<std::string> consumer_names;
};

// Throws std::invalid_argument naming the field when `o` cannot run (no
// topic, negative counts, a rate of 0, more than 65536 producers ...).
void validate(const SteadyOptions& o);

inline constexpr int kSteadyProducerShift = 48;
inline constexpr int kSteadyGenerationShift = 32;
uint64_t steady_value(uint64_t producer, uint64_t generation, uint64_t sequence);
uint64_t steady_producer_of(uint64_t value);
uint64_t steady_generation_of(uint64_t value);
uint64_t steady_sequence_of(uint64_t value);

std::string steady_producer_name(const SteadyOptions& o, int32_t index);
std::string steady_consumer_name(const SteadyOptions& o, int32_t index);
// The group consumer `index` joins; "" for none.
std::string steady_group_of(const SteadyOptions& o, int32_t index);

class SteadyProducer final : public sim::Process, public ClientListener {
 public:
  SteadyProducer(SteadyOptions options, int32_t index, check::History* history);
  void on_start() override;
  void on_terminate() override;
  void on_connected(sim::SocketId s) override { producer_->on_connected(s); }
  void on_connect_failed(sim::SocketId s, sim::ConnectError e) override { producer_->on_connect_failed(s, e); }
  void on_message(sim::SocketId s, sim::Payload& p) override { producer_->on_message(s, p); }
  void on_closed(sim::SocketId s, sim::CloseReason r) override { producer_->on_closed(s, r); }
  void on_client_event(const std::string& event, int32_t node) override;

  // Stops sending new records (outstanding ones still complete).
  void stop() { stopped_ = true; }
  uint64_t sent() const { return sent_; }
  uint64_t acknowledged() const { return acknowledged_; }
  uint64_t generation() const { return generation_; }

 private:
  void tick();
  sim::Duration next_interval();

  SteadyOptions options_;
  int32_t index_;
  check::History* history_;
  OpRecorder recorder_;
  std::unique_ptr<Producer> producer_;
  uint64_t generation_ = 0;
  uint64_t sequence_ = 0;
  uint64_t sent_ = 0;
  uint64_t acknowledged_ = 0;
  bool stopped_ = false;
};

class SteadyConsumer final : public sim::Process, public ConsumerListener {
 public:
  SteadyConsumer(SteadyOptions options, int32_t index, check::History* history);
  void on_start() override;
  void on_terminate() override;
  void on_connected(sim::SocketId s) override;
  void on_connect_failed(sim::SocketId s, sim::ConnectError e) override;
  void on_message(sim::SocketId s, sim::Payload& p) override;
  void on_closed(sim::SocketId s, sim::CloseReason r) override;
  void on_client_event(const std::string& event, int32_t node) override;
  void on_records(const std::vector<ConsumedRecord>& records) override;
  void on_fetch_error(const kafka::TopicPartition& tp, const std::string& error) override;

  const std::string& group() const { return group_id_; }
  // Null without a group.
  const GroupConsumer* group_consumer() const { return group_.get(); }
  uint64_t received() const { return received_; }

 private:
  SteadyOptions options_;
  int32_t index_;
  check::History* history_;
  std::string group_id_;
  OpRecorder recorder_;
  std::unique_ptr<Consumer> consumer_;     // without a group
  std::unique_ptr<GroupConsumer> group_;   // in a group
  std::unique_ptr<PollLoop> poll_;
  uint64_t received_ = 0;
};

// Process factories, for World::add_process (tests, the scenario runner).
// Add each under steady_producer_name / steady_consumer_name: the consumers
// name a record's producer by that convention.
sim::ProcessFactory steady_producer_factory(const SteadyOptions& o, int32_t index, check::History* history);
sim::ProcessFactory steady_consumer_factory(const SteadyOptions& o, int32_t index, check::History* history);

struct SteadyProcesses {
  std::vector<sim::ProcessId> producers;
  std::vector<sim::ProcessId> consumers;
};
// Validates `o` and adds its producers and consumers to `host` (not started
// unless `autostart`).
SteadyProcesses add_steady(sim::World& world, sim::HostId host, const SteadyOptions& o,
                           check::History* history, sim::Autostart autostart = sim::Autostart::no);

}  // namespace client
