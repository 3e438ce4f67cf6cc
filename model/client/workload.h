// What the workloads (lab.h, steady.h) share: recording a client's ops in a
// check::History exactly in the shapes model/check/checkers.h lists, and the
// application's poll loop of a consumer.
//
// The poll loop. A real consumer application calls poll(timeout) in a loop
// (librdkafka's rd_kafka_consumer_poll, the Java client's
// KafkaConsumer.poll(Duration)) while the library's fetcher runs behind it
// and buffers what the brokers return. PollLoop is that application: each
// poll is an invoke; it completes with the records buffered (one ok op per
// record, at one time) as soon as there are any, or empty after `timeout`
// (one ok op with partition -1), and the next poll begins at once. So a
// consumer that is caught up but healthy keeps succeeding, and the history
// pairs every poll ok with its invoke (pair_index in history.h).
//
// Exits. A killed process gets no callback (sim::World::kill, power_off), so
// it cannot record its own end: whoever kills it (a test, the scenario
// runner) calls record_exit(). As a safety net a workload process records,
// when it starts again, the exit of its previous incarnation if nothing
// recorded one (at the restart time, with detail "recorded at restart").
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/check/history.h"
#include "model/client/consumer.h"
#include "model/client/producer.h"
#include "sim/world.h"

namespace client {

// The exit of client `process` at `time_us`: an info op, f=exit, with
// `reason` as its error ("killed", "power_off" ...) and `detail`.
void record_exit(check::History& history, std::string_view process, int64_t time_us,
                 std::string_view reason, std::string_view detail = "");
// Whether the last op `process` recorded is its exit (false when it has none).
bool last_op_is_exit(const check::History& history, std::string_view process);

// One client's ops. Every method does nothing when the history is null.
class OpRecorder {
 public:
  OpRecorder() = default;
  OpRecorder(check::History* history, std::string process) : history_(history), process_(std::move(process)) {}

  check::History* history() const { return history_; }
  const std::string& process() const { return process_; }
  // Who produced a value, as a process name, when a consumer can tell from
  // the value (steady.h); without it a poll's producer stays 0.
  void set_producer_of(std::function<std::optional<std::string>(uint64_t)> f) { producer_of_ = std::move(f); }

  // A send: invoke (partition -1: not chosen yet) and its completion.
  void send_invoke(int64_t time_us, const std::string& topic, uint64_t value);
  void send_done(int64_t time_us, const std::string& topic, uint64_t value, const DeliveryReport& r);
  // A poll: invoke; its records (one ok op each, or one ok op with
  // partition -1 when there are none); or fail / info with an error.
  void poll_invoke(int64_t time_us, const std::string& topic);
  void poll_ok(int64_t time_us, const std::vector<ConsumedRecord>& records);
  void poll_error(int64_t time_us, check::OpType type, const std::string& topic, const std::string& error);
  // A connection-level event a real client logs: error = the event
  // ("connection_refused" ...), detail = "node=N".
  void connect(int64_t time_us, const std::string& event, int32_t node);
  // The process stops by itself (the lab producer giving up).
  void exit(int64_t time_us, const std::string& error, const std::string& detail);
  // At start: the previous incarnation's exit, if it went unrecorded.
  void note_start(int64_t time_us, uint64_t incarnation);

 private:
  // A new op in the history, with its time, process, type and function set,
  // for the caller to fill in place (valid until the next op is added).
  check::Op& op(int64_t time_us, check::OpType type, check::OpFunction f) const;

  check::History* history_ = nullptr;
  std::string process_;
  std::function<std::optional<std::string>(uint64_t)> producer_of_;
};

class PollLoop {
 public:
  using Deliver = std::function<void(const std::vector<ConsumedRecord>&)>;
  struct Options {
    sim::Duration timeout = sim::Duration::millis(500);
    size_t max_records = 500;  // the Java client's max.poll.records
    std::string topic;         // recorded on the poll invoke ("" when several)
  };
  // `deliver` gets each poll's records (after they are recorded);
  // `on_poll`, if given, runs as each poll begins (GroupConsumer::polled).
  PollLoop(sim::ProcessContext& ctx, OpRecorder& recorder, Options options, Deliver deliver,
           std::function<void()> on_poll = {});
  PollLoop(const PollLoop&) = delete;
  PollLoop& operator=(const PollLoop&) = delete;

  // Begins the first poll.
  void start();
  // The fetcher's records (ConsumerListener::on_records).
  void add(const std::vector<ConsumedRecord>& records);
  // An error the poll returns to the application: the poll ends with a fail
  // op and the next begins.
  void fail(const std::string& error);
  uint64_t polls() const { return polls_; }
  uint64_t empty_polls() const { return empty_polls_; }

 private:
  void begin();
  void complete();

  sim::ProcessContext& ctx_;
  OpRecorder& recorder_;
  Options options_;
  Deliver deliver_;
  std::function<void()> on_poll_;
  std::vector<ConsumedRecord> buffer_;
  bool waiting_ = false;
  sim::TimerId timer_;
  uint64_t polls_ = 0;
  uint64_t empty_polls_ = 0;
};

}  // namespace client
