#include "model/client/lab.h"

#include <algorithm>

#include <fmt/format.h>

namespace client {

ProducerConfig lab_producer_defaults() {
  ProducerConfig c;
  c.acks = 1;                      // aiokafka's default
  c.request_timeout_ms = 10000;    // the script's request_timeout_ms
  c.single_request_timeout = true;  // aiokafka waits request_timeout_ms itself too
  c.socket_timeout_ms = c.request_timeout_ms;
  c.message_timeout_ms = 10000;    // send_and_wait fails once the request does
  c.retries = 0;                   // the script retries, not the client
  c.linger_ms = 0;                 // aiokafka's linger_ms
  c.max_in_flight = 5;
  c.key_hash = KeyHash::murmur2;    // aiokafka's DefaultPartitioner: Java's murmur2 for keys
  c.null_key = NullKeyPartitioning::random;  // ... and a random available partition without one
  c.client_id = "aiokafka";
  c.metadata_max_age_ms = 300000;  // aiokafka's (AIOKafkaClient's metadata_max_age_ms)
  // aiokafka sends to a node it cannot connect to and fails the batch
  // (NodeNotReadyError, which the notebook's producer.py prints).
  c.wait_for_connection = false;
  return c;
}

ConsumerConfig lab_consumer_defaults() {
  ConsumerConfig c;
  c.request_timeout_ms = 10000;   // the script's request_timeout_ms
  c.fetch_wait_max_ms = 500;      // aiokafka's fetch_max_wait_ms
  c.auto_offset_reset = ConsumerConfig::Reset::latest;
  c.enable_auto_commit = false;   // no group
  c.client_id = "aiokafka";
  c.metadata_max_age_ms = 300000;  // aiokafka's (AIOKafkaClient's metadata_max_age_ms)
  // aiokafka's fetcher sends to a node it is still connecting to and the
  // request fails with the connection. The model gives it no connection
  // setup timeout: a request's own timeout bounds the wait.
  c.wait_for_connection = false;
  c.connection_setup_timeout_ms = 0;
  return c;
}

// --- producer.py ----------------------------------------------------------------------

LabProducer::LabProducer(ProducerConfig config, LabOptions options, check::History* history)
    : config_(std::move(config)), options_(std::move(options)), history_(history) {}

void LabProducer::on_start() {
  recorder_ = OpRecorder(history_, ctx().name());
  recorder_.note_start(ctx().now().us(), ctx().incarnation());
  producer_ = std::make_unique<Producer>(ctx(), config_, this);
  generation_ = ctx().incarnation() - 1;
  value_ = 0;  // itertools.count(0): a restarted script starts over (in a new generation)
  try_ = 0;
  send_current();
}

void LabProducer::on_client_event(const std::string& event, int32_t node) {
  recorder_.connect(ctx().now().us(), event, node);
}

void LabProducer::send_current() {
  // Each try is a new invoke of the same value (checkers.h): the script
  // calls send_and_wait again.
  const uint64_t value = wire_value();
  recorder_.send_invoke(ctx().now().us(), options_.topic, value);
  const int32_t bytes =
      options_.value_size > 0 ? options_.value_size : static_cast<int32_t>(fmt::formatted_size("{}", value_));
  producer_->send(options_.topic, std::nullopt, value, bytes,
                  [this, value](const DeliveryReport& r) {
                    recorder_.send_done(ctx().now().us(), options_.topic, value, r);
                    if (r.outcome == Outcome::ok) {
                      ++acknowledged_;
                      ++value_;
                      try_ = 0;
                      ctx().after(options_.pause, [this] { send_current(); });
                      return;
                    }
                    ctx().trace("unable_to_send", {{"value", value_}, {"error", r.error}, {"try", try_ + 1}});
                    if (++try_ >= options_.tries) {
                      // `if i == 4: raise`: the script dies.
                      recorder_.exit(ctx().now().us(), r.error,
                                     fmt::format("gave up after {} tries", try_));
                      ctx().trace("gave_up", {{"value", value_}, {"tries", try_}});
                      ctx().exit();
                      return;
                    }
                    send_current();
                  });
}

// --- consumer.py ----------------------------------------------------------------------

LabConsumer::LabConsumer(ConsumerConfig config, LabOptions options, check::History* history)
    : config_(std::move(config)), options_(std::move(options)), history_(history) {}

void LabConsumer::on_start() {
  recorder_ = OpRecorder(history_, ctx().name());
  recorder_.note_start(ctx().now().us(), ctx().incarnation());
  consumer_ = std::make_unique<Consumer>(ctx(), config_, *this);
  poll_ = std::make_unique<PollLoop>(
      ctx(), recorder_, PollLoop::Options{options_.poll_timeout, 500, options_.topic},
      [this](const std::vector<ConsumedRecord>& records) { on_polled(records); });
  consumer_->assign_topic(options_.topic);
  poll_->start();
}

void LabConsumer::on_client_event(const std::string& event, int32_t node) {
  recorder_.connect(ctx().now().us(), event, node);
}

void LabConsumer::on_fetch_error(const kafka::TopicPartition& tp, const std::string& error) {
  // The fetcher handles these itself (a new leader, a reset position);
  // aiokafka's iterator does not raise them to the script.
  ctx().trace("fetch_error", {{"partition", kafka::to_string(tp)}, {"error", error}});
}

void LabConsumer::on_records(const std::vector<ConsumedRecord>& records) { poll_->add(records); }

void LabTally::see(uint64_t value) {
  // consumer.py, line by line, over the number the script parses.
  value_ = value;
  const int64_t next_missing_position =
      std::max<int64_t>(missing_position_, static_cast<int64_t>(std::max(expected_value_, value)));
  // The script adds every number up to the new position to `missing` and
  // then removes this value. A value past the old position is one of those
  // just added (and nothing else could hold it): it is not added at all,
  // the same outcome without a set node made and freed per record.
  const bool fresh = static_cast<int64_t>(value) > missing_position_ &&
                     static_cast<int64_t>(value) <= next_missing_position;
  for (int64_t i = missing_position_ + 1; i <= next_missing_position; ++i) {
    if (static_cast<uint64_t>(i) != value) missing_.insert(static_cast<uint64_t>(i));
  }
  missing_position_ = next_missing_position;
  if (!fresh) {
    if (missing_.count(value) == 0) ++multiple_[value];
    missing_.erase(value);
  }
  ++received_;
  ++expected_value_;
}

void LabConsumer::on_polled(const std::vector<ConsumedRecord>& records) {
  for (const ConsumedRecord& r : records) tally_.see(lab_script_value(r.value));
}

std::string LabConsumer::status_line() const {
  std::string missing = "[";
  for (uint64_t v : tally_.missing()) missing += (missing.size() > 1 ? ", " : "") + std::to_string(v);
  missing += "]";
  std::string multiple = "[";
  for (const auto& [v, n] : tally_.multiple()) {
    multiple += fmt::format("{}({}, {})", multiple.size() > 1 ? ", " : "", v, n);
  }
  multiple += "]";
  // expected_value was already incremented past the last record, as the
  // script prints before incrementing: show the value it printed.
  const uint64_t shown_expected = tally_.expected_value() == 0 ? 0 : tally_.expected_value() - 1;
  return fmt::format("missing={} multiple={} expected_value={} value={}: : {}it", missing, multiple,
                     shown_expected, tally_.value(), tally_.received());
}

}  // namespace client
