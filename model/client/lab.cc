#include "model/client/lab.h"

#include <fmt/format.h>

namespace client {

ProducerConfig lab_producer_defaults() {
  ProducerConfig c;
  c.acks = 1;                      // aiokafka's default
  c.request_timeout_ms = 10000;    // the script's request_timeout_ms
  c.message_timeout_ms = 10000;    // send_and_wait fails once the request does
  c.retries = 0;                   // the script retries, not the client
  c.linger_ms = 0;                 // aiokafka's linger_ms
  c.max_in_flight = 5;
  c.null_key = NullKeyPartitioning::random;
  c.client_id = "aiokafka";
  return c;
}

ConsumerConfig lab_consumer_defaults() {
  ConsumerConfig c;
  c.request_timeout_ms = 10000;   // the script's request_timeout_ms
  c.fetch_wait_max_ms = 500;      // aiokafka's fetch_max_wait_ms
  c.auto_offset_reset = ConsumerConfig::Reset::latest;
  c.enable_auto_commit = false;   // no group
  c.client_id = "aiokafka";
  return c;
}

// --- producer.py ----------------------------------------------------------------------

LabProducer::LabProducer(ProducerConfig config, LabOptions options, check::History* history)
    : config_(std::move(config)), options_(std::move(options)), history_(history) {}

void LabProducer::record(check::OpType type, check::OpFunction f, int32_t partition, int64_t offset,
                         const std::string& error) {
  if (history_ == nullptr) return;
  check::Op op;
  op.time_us = ctx().now().us();
  op.process = history_->process(ctx().name());
  op.type = type;
  op.f = f;
  op.topic = history_->intern(options_.topic);
  op.partition = partition;
  op.offset = offset;
  op.value = value_;
  op.producer = op.process;
  op.error = history_->intern(error);
  history_->add(op);
}

void LabProducer::on_start() {
  producer_ = std::make_unique<Producer>(ctx(), config_, this);
  value_ = 0;  // itertools.count(0): a restarted script starts over
  try_ = 0;
  send_current();
}

void LabProducer::on_client_event(const std::string& event, int32_t node) {
  record(check::OpType::info, check::OpFunction::connect, -1, -1, fmt::format("{} node={}", event, node));
}

void LabProducer::send_current() {
  record(check::OpType::invoke, check::OpFunction::send, -1, -1, "");
  producer_->send(options_.topic, std::nullopt, value_, options_.value_size,
                  [this](const DeliveryReport& r) {
                    if (r.outcome == Outcome::ok) {
                      record(check::OpType::ok, check::OpFunction::send, r.partition, r.offset, "");
                      ++acknowledged_;
                      ++value_;
                      try_ = 0;
                      ctx().after(options_.pause, [this] { send_current(); });
                      return;
                    }
                    record(r.outcome == Outcome::fail ? check::OpType::fail : check::OpType::info,
                           check::OpFunction::send, r.partition, -1, r.error);
                    ctx().trace("unable_to_send", {{"value", value_}, {"error", r.error}, {"try", try_ + 1}});
                    if (++try_ >= options_.tries) {
                      // `if i == 4: raise`: the script dies.
                      record(check::OpType::info, check::OpFunction::exit, -1, -1, r.error);
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
  consumer_ = std::make_unique<Consumer>(ctx(), config_, *this);
  consumer_->assign_topic(options_.topic);
}

void LabConsumer::on_client_event(const std::string& event, int32_t node) {
  if (history_ == nullptr) return;
  check::Op op;
  op.time_us = ctx().now().us();
  op.process = history_->process(ctx().name());
  op.type = check::OpType::info;
  op.f = check::OpFunction::connect;
  op.error = history_->intern(fmt::format("{} node={}", event, node));
  history_->add(op);
}

void LabConsumer::on_fetch_error(const kafka::TopicPartition& tp, const std::string& error) {
  ctx().trace("fetch_error", {{"partition", kafka::to_string(tp)}, {"error", error}});
}

void LabConsumer::on_records(const std::vector<ConsumedRecord>& records) {
  for (const ConsumedRecord& r : records) {
    if (history_ != nullptr) {
      check::Op op;
      op.time_us = ctx().now().us();
      op.process = history_->process(ctx().name());
      op.type = check::OpType::ok;
      op.f = check::OpFunction::poll;
      op.topic = history_->intern(r.tp.topic);
      op.partition = r.tp.partition;
      op.offset = r.offset;
      op.value = r.value;
      history_->add(op);
    }
    // consumer.py, line by line.
    const uint64_t value = r.value;
    value_ = value;
    const int64_t next_missing_position =
        std::max<int64_t>(missing_position_, static_cast<int64_t>(std::max(expected_value_, value)));
    for (int64_t i = missing_position_ + 1; i <= next_missing_position; ++i) {
      missing_.insert(static_cast<uint64_t>(i));
    }
    missing_position_ = next_missing_position;
    if (missing_.count(value) == 0) ++multiple_[value];
    missing_.erase(value);
    ++received_;
    ++expected_value_;
  }
}

std::string LabConsumer::status_line() const {
  std::string missing = "[";
  for (uint64_t v : missing_) missing += (missing.size() > 1 ? ", " : "") + std::to_string(v);
  missing += "]";
  std::string multiple = "[";
  for (const auto& [v, n] : multiple_) {
    multiple += fmt::format("{}({}, {})", multiple.size() > 1 ? ", " : "", v, n);
  }
  multiple += "]";
  // expected_value was already incremented past the last record, as the
  // script prints before incrementing: show the value it printed.
  const uint64_t shown_expected = expected_value_ == 0 ? 0 : expected_value_ - 1;
  return fmt::format("missing={} multiple={} expected_value={} value={}: : {}it", missing, multiple,
                     shown_expected, value_, received_);
}

}  // namespace client
