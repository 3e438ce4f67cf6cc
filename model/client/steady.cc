#include "model/client/steady.h"

#include <stdexcept>
#include <utility>

#include <fmt/format.h>

namespace client {

ProducerConfig steady_producer_defaults() {
  ProducerConfig c;  // librdkafka's defaults
  c.key_hash = KeyHash::murmur2;             // partitioner=murmur2_random: Java-compatible keys
  c.null_key = NullKeyPartitioning::random;
  return c;
}

ConsumerConfig steady_consumer_defaults() {
  ConsumerConfig c;  // librdkafka's defaults
  c.auto_offset_reset = ConsumerConfig::Reset::earliest;
  // socket.timeout.ms: librdkafka's 60000, not the Java consumer's
  // request.timeout.ms 30000 that ConsumerConfig keeps (config.cc). It caps
  // a group member's heartbeat timeout: with 60 s above the 45 s session
  // timeout, the member's own session check fires first when its
  // coordinator stops answering, as with librdkafka's defaults.
  c.request_timeout_ms = 60000;
  return c;
}

void validate(const SteadyOptions& o) {
  auto bad = [](const std::string& field, const std::string& why) {
    throw std::invalid_argument(fmt::format("steady workload: {} {}", field, why));
  };
  if (o.topic.empty()) bad("topic", "is empty");
  if (o.producers < 0 || o.producers > (1 << 16)) bad("producers", fmt::format("must be in [0, 65536], got {}", o.producers));
  if (o.rate_per_s <= 0 || o.rate_per_s > 1'000'000) {
    bad("rate_per_s", fmt::format("must be in [1, 1000000], got {}", o.rate_per_s));
  }
  if (o.keys < 0) bad("keys", fmt::format("must be >= 0, got {}", o.keys));
  if (o.value_size <= 0) bad("value_size", fmt::format("must be > 0, got {}", o.value_size));
  if (o.max_outstanding == 0) bad("max_outstanding", "must be > 0");
  if (o.consumers < 0) bad("consumers", fmt::format("must be >= 0, got {}", o.consumers));
  if (o.poll_timeout <= sim::Duration::zero()) bad("poll_timeout", "must be positive");
  if (o.producer_prefix.empty() || o.consumer_prefix.empty() || o.producer_prefix == o.consumer_prefix) {
    bad("producer_prefix/consumer_prefix", "must be non-empty and differ");
  }
  if (!o.producer_names.empty() && o.producer_names.size() != static_cast<size_t>(o.producers)) {
    bad("producer_names", fmt::format("{} names for {} producers", o.producer_names.size(), o.producers));
  }
  if (!o.consumer_names.empty() && o.consumer_names.size() != static_cast<size_t>(o.consumers)) {
    bad("consumer_names", fmt::format("{} names for {} consumers", o.consumer_names.size(), o.consumers));
  }
}

uint64_t steady_value(uint64_t producer, uint64_t generation, uint64_t sequence) {
  return (producer << kSteadyProducerShift) | ((generation & 0xffffu) << kSteadyGenerationShift) |
         (sequence & 0xffffffffu);
}
uint64_t steady_producer_of(uint64_t value) { return value >> kSteadyProducerShift; }
uint64_t steady_generation_of(uint64_t value) { return (value >> kSteadyGenerationShift) & 0xffffu; }
uint64_t steady_sequence_of(uint64_t value) { return value & 0xffffffffu; }

std::string steady_producer_name(const SteadyOptions& o, int32_t index) {
  if (!o.producer_names.empty()) return o.producer_names.at(static_cast<size_t>(index));
  return fmt::format("{}{}", o.producer_prefix, index);
}
std::string steady_consumer_name(const SteadyOptions& o, int32_t index) {
  if (!o.consumer_names.empty()) return o.consumer_names.at(static_cast<size_t>(index));
  return fmt::format("{}{}", o.consumer_prefix, index);
}
std::string steady_group_of(const SteadyOptions& o, int32_t index) {
  if (o.groups.empty()) return "";
  return o.groups[static_cast<size_t>(index) % o.groups.size()];
}

// --- producer ---------------------------------------------------------------------------

SteadyProducer::SteadyProducer(SteadyOptions options, int32_t index, check::History* history)
    : options_(std::move(options)), index_(index), history_(history) {}

void SteadyProducer::on_start() {
  recorder_ = OpRecorder(history_, ctx().name());
  recorder_.note_start(ctx().now().us(), ctx().incarnation());
  generation_ = ctx().incarnation() - 1;
  SIM_ASSERT(generation_ <= 0xffffu, "steady producer {}: more than 65536 restarts", index_);
  sequence_ = 0;
  producer_ = std::make_unique<Producer>(ctx(), options_.producer, this);
  ctx().after(next_interval(), [this] { tick(); });
}

void SteadyProducer::on_terminate() {
  // SIGTERM: the application stops at once (what is queued is dropped, as
  // rd_kafka_destroy without a flush does).
  recorder_.exit(ctx().now().us(), "terminated", "");
  ctx().exit();
}

void SteadyProducer::on_client_event(const std::string& event, int32_t node) {
  recorder_.connect(ctx().now().us(), event, node);
}

sim::Duration SteadyProducer::next_interval() {
  const sim::Duration mean = sim::Duration::micros(1'000'000 / options_.rate_per_s);
  if (options_.arrivals == SteadyOptions::Arrivals::fixed) return mean;
  return ctx().rng().exponential(mean);
}

void SteadyProducer::tick() {
  if (stopped_) return;
  SIM_ASSERT(sequence_ <= 0xffffffffu, "steady producer {}: sequence overflow", index_);
  const uint64_t value = steady_value(static_cast<uint64_t>(index_), generation_, sequence_++);
  std::optional<std::string> key;
  if (options_.keys > 0) {
    key = fmt::format("k{}", ctx().rng().below(static_cast<uint64_t>(options_.keys)));
  }
  ++sent_;
  recorder_.send_invoke(ctx().now().us(), options_.topic, value);
  if (producer_->outstanding() >= options_.max_outstanding) {
    // rd_kafka_produce refuses it at once: it never left the application.
    recorder_.send_done(ctx().now().us(), options_.topic, value,
                        DeliveryReport{Outcome::fail, -1, -1, "QUEUE_FULL"});
  } else {
    producer_->send(options_.topic, std::move(key), value, options_.value_size,
                    [this, value](const DeliveryReport& r) {
                      if (r.outcome == Outcome::ok) ++acknowledged_;
                      recorder_.send_done(ctx().now().us(), options_.topic, value, r);
                    });
  }
  ctx().after(next_interval(), [this] { tick(); });
}

// --- consumer ---------------------------------------------------------------------------

SteadyConsumer::SteadyConsumer(SteadyOptions options, int32_t index, check::History* history)
    : options_(std::move(options)), index_(index), history_(history) {
  group_id_ = steady_group_of(options_, index_);
}

void SteadyConsumer::on_start() {
  recorder_ = OpRecorder(history_, ctx().name());
  recorder_.note_start(ctx().now().us(), ctx().incarnation());
  const int32_t producers = options_.producers;
  const SteadyOptions& o = options_;
  recorder_.set_producer_of([producers, o](uint64_t value) -> std::optional<std::string> {
    const uint64_t p = steady_producer_of(value);
    if (p >= static_cast<uint64_t>(producers)) return std::nullopt;
    return steady_producer_name(o, static_cast<int32_t>(p));
  });
  ConsumerConfig config = options_.consumer;
  config.group_id = group_id_;
  if (group_id_.empty()) {
    config.enable_auto_commit = false;  // nothing to commit to
    consumer_ = std::make_unique<Consumer>(ctx(), config, *this);
    consumer_->assign_topic(options_.topic);
  } else {
    group_ = std::make_unique<GroupConsumer>(ctx(), config, std::vector<std::string>{options_.topic}, *this,
                                             history_, ctx().name());
  }
  poll_ = std::make_unique<PollLoop>(
      ctx(), recorder_, PollLoop::Options{options_.poll_timeout, 500, options_.topic},
      [this](const std::vector<ConsumedRecord>& records) { received_ += records.size(); },
      [this] {
        if (group_) group_->polled();
      });
  poll_->start();
}

void SteadyConsumer::on_terminate() {
  recorder_.exit(ctx().now().us(), "terminated", "");
  if (!group_) {
    ctx().exit();
    return;
  }
  // Commit and leave the group first, as a consumer's close() does.
  group_->close([this] { ctx().exit(); });
}

void SteadyConsumer::on_connected(sim::SocketId s) {
  if (group_) {
    group_->on_connected(s);
  } else {
    consumer_->on_connected(s);
  }
}
void SteadyConsumer::on_connect_failed(sim::SocketId s, sim::ConnectError e) {
  if (group_) {
    group_->on_connect_failed(s, e);
  } else {
    consumer_->on_connect_failed(s, e);
  }
}
void SteadyConsumer::on_message(sim::SocketId s, sim::Payload& p) {
  if (group_) {
    group_->on_message(s, p);
  } else {
    consumer_->on_message(s, p);
  }
}
void SteadyConsumer::on_closed(sim::SocketId s, sim::CloseReason r) {
  if (group_) {
    group_->on_closed(s, r);
  } else {
    consumer_->on_closed(s, r);
  }
}

void SteadyConsumer::on_client_event(const std::string& event, int32_t node) {
  recorder_.connect(ctx().now().us(), event, node);
}

void SteadyConsumer::on_records(const std::vector<ConsumedRecord>& records) { poll_->add(records); }

void SteadyConsumer::on_fetch_error(const kafka::TopicPartition& tp, const std::string& error) {
  // NO_OFFSET (auto.offset.reset=none) reaches the application as an error
  // from poll, as librdkafka and the Java client raise it; the rest the
  // fetcher handles itself.
  if (error == "NO_OFFSET") {
    poll_->fail(error);
    return;
  }
  ctx().trace("fetch_error", {{"partition", kafka::to_string(tp)}, {"error", error}});
}

// --- factories ----------------------------------------------------------------------------

sim::ProcessFactory steady_producer_factory(const SteadyOptions& o, int32_t index, check::History* history) {
  return [o, index, history] { return std::make_unique<SteadyProducer>(o, index, history); };
}

sim::ProcessFactory steady_consumer_factory(const SteadyOptions& o, int32_t index, check::History* history) {
  return [o, index, history] { return std::make_unique<SteadyConsumer>(o, index, history); };
}

SteadyProcesses add_steady(sim::World& world, sim::HostId host, const SteadyOptions& o,
                           check::History* history, sim::Autostart autostart) {
  validate(o);
  SteadyProcesses out;
  for (int32_t j = 0; j < o.consumers; ++j) {
    out.consumers.push_back(
        world.add_process(host, steady_consumer_name(o, j), steady_consumer_factory(o, j, history), autostart));
  }
  for (int32_t i = 0; i < o.producers; ++i) {
    out.producers.push_back(
        world.add_process(host, steady_producer_name(o, i), steady_producer_factory(o, i, history), autostart));
  }
  return out;
}

}  // namespace client
