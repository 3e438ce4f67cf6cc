// The `lab` workload: the producer and consumer of seeds/000 (a Vagrant lab
// with aiokafka clients), as processes on simulated hosts.
//
// LabProducer is producer.py: it sends 0, 1, 2 ... one at a time, without a
// key, waiting for each acknowledgement; a send that fails is tried again at
// once, up to `tries` times in all, and when the last try fails the process
// gives up (the script re-raises and exits). After a success it sleeps
// `pause` (10 ms) before the next value. Its client behaves like aiokafka's
// with the script's settings: acks=1, request_timeout_ms=10000, no retries
// inside send_and_wait, a random partition among those the metadata shows
// with a leader.
//
// LabConsumer is consumer.py: an AIOKafkaConsumer without a group on every
// partition of the topic (auto_offset_reset=latest), computing `missing`,
// `multiple`, `expected_value` and `value` exactly as the script does, and
// able to print its tqdm status line.
//
// Both record what they do in the run's history (model/check/history.h) in
// the shapes model/check/checkers.h lists, through workload.h: the producer
// a send invoke per try and its ok / fail / info, a connect info op per
// connection error its client logs, and an exit info op when it gives up;
// the consumer a poll loop (workload.h's PollLoop, timing out empty after
// aiokafka's fetch_max_wait_ms, 500 ms) whose every ok pairs with an invoke.
// A harness that kills either records its exit (client::record_exit).
//
// Values. producer.py sends str(i) for i = 0, 1, 2 ...; a restarted script
// starts at 0 again. A value in the history must name one message
// (checkers.h), so the wire value carries which start of the script sent it
// (the process's incarnation - 1) in bits 40 and up: lab_value(g, i) =
// g << 40 | i. The first run's values are the script's own numbers, and
// LabConsumer computes consumer.py's missing / multiple over the low bits,
// which is what the script sees when it parses the decimal string.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>

#include "model/check/history.h"
#include "model/client/consumer.h"
#include "model/client/producer.h"
#include "model/client/workload.h"

namespace client {

struct LabOptions {
  std::string topic = "mytopic";
  int32_t tries = 5;
  sim::Duration pause = sim::Duration::millis(10);
  // Each value's bytes; 0: as producer.py sends it, f"{value}".encode(),
  // the decimal digits of the script's count.
  int32_t value_size = 0;
  // The consumer's poll loop: an empty poll after this long without records
  // (aiokafka's fetch_max_wait_ms, the long poll its fetcher waits).
  sim::Duration poll_timeout = sim::Duration::millis(500);
};

inline constexpr int kLabGenerationShift = 40;
inline constexpr uint64_t kLabCounterMask = (uint64_t{1} << kLabGenerationShift) - 1;
// The wire value of number `i` sent by start `generation` (0 = the first).
inline uint64_t lab_value(uint64_t generation, uint64_t i) { return (generation << kLabGenerationShift) | i; }
// The number the scripts see: the low bits.
inline uint64_t lab_script_value(uint64_t value) { return value & kLabCounterMask; }

// aiokafka's producer defaults with the script's request_timeout_ms.
ProducerConfig lab_producer_defaults();
// aiokafka's consumer defaults with the script's request_timeout_ms.
ConsumerConfig lab_consumer_defaults();

class LabProducer final : public sim::Process, public ClientListener {
 public:
  LabProducer(ProducerConfig config, LabOptions options, check::History* history);
  void on_start() override;
  void on_connected(sim::SocketId s) override { producer_->on_connected(s); }
  void on_connect_failed(sim::SocketId s, sim::ConnectError e) override { producer_->on_connect_failed(s, e); }
  void on_message(sim::SocketId s, sim::Payload& p) override { producer_->on_message(s, p); }
  void on_closed(sim::SocketId s, sim::CloseReason r) override { producer_->on_closed(s, r); }
  void on_client_event(const std::string& event, int32_t node) override;

  uint64_t acknowledged() const { return acknowledged_; }
  // The script's next number (its `i`).
  uint64_t next_value() const { return value_; }
  // The wire value of the script's current number.
  uint64_t wire_value() const { return lab_value(generation_, value_); }

 private:
  void send_current();

  ProducerConfig config_;
  LabOptions options_;
  check::History* history_;
  OpRecorder recorder_;
  std::unique_ptr<Producer> producer_;
  uint64_t generation_ = 0;
  uint64_t value_ = 0;
  int32_t try_ = 0;
  uint64_t acknowledged_ = 0;
};

// consumer.py's bookkeeping over the numbers it reads: every number below
// the highest seen (or expected) that has not come is missing; a number that
// comes again is counted in multiple. Kept apart from the consumer so that
// it can be checked against the script's own steps.
class LabTally {
 public:
  void see(uint64_t value);
  const std::set<uint64_t>& missing() const { return missing_; }
  const std::map<uint64_t, uint64_t>& multiple() const { return multiple_; }
  uint64_t expected_value() const { return expected_value_; }
  uint64_t value() const { return value_; }
  uint64_t received() const { return received_; }

 private:
  std::set<uint64_t> missing_;
  int64_t missing_position_ = -1;
  std::map<uint64_t, uint64_t> multiple_;  // value -> times seen beyond the first
  uint64_t expected_value_ = 0;
  uint64_t value_ = 0;
  uint64_t received_ = 0;
};

class LabConsumer final : public sim::Process, public ConsumerListener {
 public:
  LabConsumer(ConsumerConfig config, LabOptions options, check::History* history);
  void on_start() override;
  void on_connected(sim::SocketId s) override { consumer_->on_connected(s); }
  void on_connect_failed(sim::SocketId s, sim::ConnectError e) override { consumer_->on_connect_failed(s, e); }
  void on_message(sim::SocketId s, sim::Payload& p) override { consumer_->on_message(s, p); }
  void on_closed(sim::SocketId s, sim::CloseReason r) override { consumer_->on_closed(s, r); }
  void on_client_event(const std::string& event, int32_t node) override;
  void on_records(const std::vector<ConsumedRecord>& records) override;
  void on_fetch_error(const kafka::TopicPartition& tp, const std::string& error) override;

  // consumer.py's state.
  const LabTally& tally() const { return tally_; }
  // "missing=[] multiple=[] expected_value=320 value=320: : 321it"
  std::string status_line() const;
  const PollLoop& poll_loop() const { return *poll_; }

 private:
  void on_polled(const std::vector<ConsumedRecord>& records);

  ConsumerConfig config_;
  LabOptions options_;
  check::History* history_;
  OpRecorder recorder_;
  std::unique_ptr<Consumer> consumer_;
  std::unique_ptr<PollLoop> poll_;
  LabTally tally_;
};

}  // namespace client
