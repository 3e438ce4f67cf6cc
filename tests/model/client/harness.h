// A process that only holds a producer (SendingProcess), client processes
// that record a check::History the way model/check/checkers.h
// says clients record it, and a cluster wrapper that ends a run the way the
// safety tests end one: heal, bring everything up, let the producer finish,
// let the consumer read every partition to its end, read the final state.
//
//   SafetyRun run({.brokers = 3, ...});
//   run.start_clients("t", producer_config, consumer_config, interval);
//   ... faults ...
//   run.finish();
//   check::Verdict v = check::check_all(run.history, run.final_state(), {});
#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "kafka/cluster.h"
#include "model/check/checkers.h"
#include "model/check/final_state.h"
#include "model/check/history.h"
#include "model/client/config.h"
#include "model/client/consumer.h"
#include "model/client/producer.h"

namespace kafka::testing {

// A process that only holds a producer, for tests to send through.
class SendingProcess final : public sim::Process {
 public:
  explicit SendingProcess(client::ProducerConfig config) : config_(std::move(config)) {}
  void on_start() override { producer_ = std::make_unique<client::Producer>(ctx(), config_); }
  void on_connected(sim::SocketId s) override { producer_->on_connected(s); }
  void on_connect_failed(sim::SocketId s, sim::ConnectError e) override { producer_->on_connect_failed(s, e); }
  void on_message(sim::SocketId s, sim::Payload& p) override { producer_->on_message(s, p); }
  void on_closed(sim::SocketId s, sim::CloseReason r) override { producer_->on_closed(s, r); }
  client::Producer& producer() { return *producer_; }

 private:
  client::ProducerConfig config_;
  std::unique_ptr<client::Producer> producer_;
};

// Checks that connection attempts paced by the clients' reconnect backoff
// (client/connection_wait.h, with librdkafka's defaults: reconnect.backoff.ms
// 100, the next attempt allowed the backoff later with -25 % to +50 %
// jitter, the backoff doubled each time up to reconnect.backoff.max.ms,
// `max_ms`) were refused at `refusals` (a refusal comes a round trip after
// its attempt starts): each gap is a wait of at least 75 ms and at most the
// cap, and below the cap's reach each wait is one to four times the one
// before it and two to eight times the one before that.
inline void expect_reconnect_backoff(const std::vector<sim::Time>& refusals, int64_t max_ms = 10000) {
  std::vector<int64_t> waits;
  for (size_t i = 1; i < refusals.size(); ++i) waits.push_back((refusals[i] - refusals[i - 1]).us() / 1000);
  for (size_t i = 0; i < waits.size(); ++i) {
    EXPECT_GE(waits[i], 75) << "wait " << i;
    EXPECT_LE(waits[i], max_ms + 5) << "wait " << i;
    if (waits[i] >= max_ms * 3 / 4) continue;
    // The bounds are met at the extremes of the jitter (1.5 b, then
    // 0.75 x 2b); round trips add a little either way.
    if (i >= 1) {
      EXPECT_GE(waits[i] * 100, waits[i - 1] * 95) << "wait " << i;
      EXPECT_LE(waits[i], waits[i - 1] * 4 + 5) << "wait " << i;
    }
    if (i >= 2) {
      EXPECT_GE(waits[i] * 100, waits[i - 2] * 190) << "wait " << i;
    }
  }
}

// Checks connection attempts that each hang until their setup timeout,
// `hang`, and fail then (at `failures`): as librdkafka counts the backoff
// from an attempt's start, the next starts as soon as the last has failed
// while the backoff is shorter than the hang (so the first three gaps are
// the hang itself), never sooner, and never more than the cap (10 s) after.
inline void expect_hung_attempts(const std::vector<sim::Time>& failures, sim::Duration hang) {
  for (size_t i = 1; i < failures.size(); ++i) {
    const sim::Duration gap = failures[i] - failures[i - 1];
    EXPECT_GE(gap, hang - sim::Duration::millis(2)) << "gap " << i;
    EXPECT_LE(gap, std::max(hang, sim::Duration::millis(10000)) + sim::Duration::millis(5)) << "gap " << i;
    if (i <= 3) {
      EXPECT_LE(gap, hang + sim::Duration::millis(2)) << "gap " << i;
    }
  }
}

// Checks that a client started at `start_ms` (a virtual millisecond) asked
// for metadata, at `asked`, between `from` and `to` on the ticks of a 1 s
// timer started with it (client/connection_wait.h): once a tick, all but
// three of the seconds in between, and at most three times off them.
inline void expect_metadata_on_ticks(const std::vector<sim::Time>& asked, sim::Time from, sim::Time to,
                                     int64_t start_ms) {
  int64_t on_ticks = 0;
  int64_t total = 0;
  for (sim::Time t : asked) {
    if (t < from || t >= to) continue;
    ++total;
    if (t.us() % 1000 == 0 && (t.us() / 1000 - start_ms) % 1000 == 0) ++on_ticks;
  }
  const int64_t seconds = (to - from).us() / 1000000;
  EXPECT_GE(on_ticks, seconds - 3) << total << " asked";
  EXPECT_LE(total - on_ticks, 3) << on_ticks << " on ticks";
}

// A SendingProcess on a host of its own ("app", 10.0.9.7: one per cluster)
// in `c`, started, with a producer configured by `config`, or by
// `properties` (librdkafka's names).
inline SendingProcess* start_sending_process(Cluster& c, const client::ProducerConfig& config) {
  const sim::ProcessId pid = c.world().add_process(
      c.world().add_host("app", "10.0.9.7"), "producer",
      [config] { return std::make_unique<SendingProcess>(config); });
  c.world().start(pid);
  return c.world().process_as<SendingProcess>(pid);
}
inline SendingProcess* start_sending_process(Cluster& c, const std::map<std::string, std::string>& properties) {
  model::Properties props;
  for (const auto& [key, value] : properties) props.values[key] = value;
  return start_sending_process(c, client::parse_producer_config(props));
}

// Sends 1, 2, 3 ... to `topic` without a key, one every `interval`, as long
// as fewer than `max_outstanding` are queued or in flight, until stopped.
// Every send is one invoke; its delivery report is its completion (ok with
// partition and offset; fail; info with the error).
class RecordingProducer final : public sim::Process, public client::ClientListener {
 public:
  struct Options {
    std::string topic;
    sim::Duration interval = sim::Duration::millis(5);
    size_t max_outstanding = 100;
    int32_t value_size = 100;
  };
  RecordingProducer(client::ProducerConfig config, Options options, check::History* history)
      : config_(std::move(config)), options_(std::move(options)), history_(history) {}

  void on_start() override {
    producer_ = std::make_unique<client::Producer>(ctx(), config_, this);
    tick();
  }
  void on_connected(sim::SocketId s) override { producer_->on_connected(s); }
  void on_connect_failed(sim::SocketId s, sim::ConnectError e) override { producer_->on_connect_failed(s, e); }
  void on_message(sim::SocketId s, sim::Payload& p) override { producer_->on_message(s, p); }
  void on_closed(sim::SocketId s, sim::CloseReason r) override { producer_->on_closed(s, r); }
  void on_client_event(const std::string& event, int32_t node) override {
    check::Op op = base(check::OpType::info, check::OpFunction::connect);
    op.error = history_->intern(event);
    op.detail = history_->intern(fmt::format("node={}", node));
    history_->add(op);
  }

  // No new sends from now on; what is outstanding completes as it will.
  void stop() { stopped_ = true; }
  // Sends the next value now, whatever the interval (a test that wants one
  // send at a chosen moment).
  uint64_t send_one() { return send_next(); }
  size_t outstanding() const { return producer_ == nullptr ? 0 : producer_->outstanding(); }
  uint64_t sent() const { return next_value_ - 1; }
  uint64_t acknowledged() const { return acknowledged_; }
  const std::map<std::string, int>& errors() const { return errors_; }

 private:
  check::Op base(check::OpType type, check::OpFunction f) {
    check::Op op;
    op.time_us = ctx().now().us();
    op.process = history_->process(ctx().name());
    op.type = type;
    op.f = f;
    return op;
  }

  void tick() {
    if (stopped_) return;
    if (producer_->outstanding() < options_.max_outstanding) send_next();
    ctx().after(options_.interval, [this] { tick(); });
  }

  uint64_t send_next() {
    const uint64_t value = next_value_++;
    check::Op op = base(check::OpType::invoke, check::OpFunction::send);
    op.topic = history_->intern(options_.topic);
    op.value = value;
    op.producer = op.process;
    history_->add(op);
    producer_->send(options_.topic, std::nullopt, value, options_.value_size,
                    [this, value](const client::DeliveryReport& r) {
                      check::Op done = base(r.outcome == client::Outcome::ok     ? check::OpType::ok
                                            : r.outcome == client::Outcome::fail ? check::OpType::fail
                                                                                 : check::OpType::info,
                                            check::OpFunction::send);
                      done.topic = history_->intern(options_.topic);
                      done.partition = r.partition;
                      done.offset = r.outcome == client::Outcome::ok ? r.offset : -1;
                      done.value = value;
                      done.producer = done.process;
                      done.error = history_->intern(r.error);
                      history_->add(done);
                      if (r.outcome == client::Outcome::ok) {
                        ++acknowledged_;
                      } else {
                        ++errors_[fmt::format("{}:{}", client::to_string(r.outcome), r.error)];
                      }
                    });
    return value;
  }

  client::ProducerConfig config_;
  Options options_;
  check::History* history_;
  std::unique_ptr<client::Producer> producer_;
  bool stopped_ = false;
  uint64_t next_value_ = 1;
  uint64_t acknowledged_ = 0;
  std::map<std::string, int> errors_;
};

// Reads every partition of `topic` (no group), recording one ok poll op per
// record, all of one fetch at one instant.
class RecordingConsumer final : public sim::Process, public client::ConsumerListener {
 public:
  RecordingConsumer(client::ConsumerConfig config, std::string topic, check::History* history)
      : config_(std::move(config)), topic_(std::move(topic)), history_(history) {}

  void on_start() override {
    consumer_ = std::make_unique<client::Consumer>(ctx(), config_, *this);
    consumer_->assign_topic(topic_);
  }
  void on_connected(sim::SocketId s) override { consumer_->on_connected(s); }
  void on_connect_failed(sim::SocketId s, sim::ConnectError e) override { consumer_->on_connect_failed(s, e); }
  void on_message(sim::SocketId s, sim::Payload& p) override { consumer_->on_message(s, p); }
  void on_closed(sim::SocketId s, sim::CloseReason r) override { consumer_->on_closed(s, r); }
  void on_client_event(const std::string& event, int32_t node) override {
    check::Op op;
    op.time_us = ctx().now().us();
    op.process = history_->process(ctx().name());
    op.type = check::OpType::info;
    op.f = check::OpFunction::connect;
    op.error = history_->intern(event);
    op.detail = history_->intern(fmt::format("node={}", node));
    history_->add(op);
  }
  void on_records(const std::vector<client::ConsumedRecord>& records) override {
    for (const client::ConsumedRecord& r : records) {
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
      ++received_;
    }
  }

  void on_fetch_error(const TopicPartition&, const std::string& error) override { fetch_errors_.push_back(error); }

  std::optional<int64_t> position(const TopicPartition& tp) const {
    return consumer_ == nullptr ? std::nullopt : consumer_->position(tp);
  }
  uint64_t received() const { return received_; }
  // The errors its fetches (and offset lookups) reported, in order.
  const std::vector<std::string>& fetch_errors() const { return fetch_errors_; }

 private:
  client::ConsumerConfig config_;
  std::string topic_;
  check::History* history_;
  std::unique_ptr<client::Consumer> consumer_;
  uint64_t received_ = 0;
  std::vector<std::string> fetch_errors_;
};

// A cluster, a history, a truncation recorder, and a producer and a consumer
// on a client host of their own.
class SafetyRun {
 public:
  explicit SafetyRun(ClusterOptions options)
      : cluster(std::move(options)), recorder(cluster.world(), cluster.broker_processes()) {}

  // Bootstrap lists naming every broker.
  std::vector<client::BootstrapServer> bootstrap() {
    std::vector<client::BootstrapServer> b;
    for (BrokerId id : cluster.broker_ids()) {
      const Endpoint e =
          cluster.broker_config(id).advertised_endpoint(cluster.world().network().address(cluster.broker_host(id)));
      b.push_back({e.host, e.port});
    }
    return b;
  }

  void start_clients(const std::string& topic, client::ProducerConfig pc, client::ConsumerConfig cc,
                     RecordingProducer::Options po) {
    topic_ = topic;
    pc.bootstrap = bootstrap();
    cc.bootstrap = bootstrap();
    const sim::HostId host = cluster.world().add_host("clients", "10.0.8.1");
    consumer_ = cluster.world().add_process(host, "consumer", [this, cc, topic] {
      return std::make_unique<RecordingConsumer>(cc, topic, &history);
    });
    po.topic = topic;
    producer_ = cluster.world().add_process(host, "producer", [this, pc, po] {
      return std::make_unique<RecordingProducer>(pc, po, &history);
    });
    cluster.world().start(consumer_);
    cluster.world().start(producer_);
  }

  RecordingProducer* producer() { return cluster.world().process_as<RecordingProducer>(producer_); }
  RecordingConsumer* consumer() { return cluster.world().process_as<RecordingConsumer>(consumer_); }

  // Resumes and starts every ZooKeeper server and broker, again and again
  // for `for_how_long` (a broker started within its old session's timeout
  // exits at startup).
  void bring_everything_up(sim::Duration for_how_long = sim::Duration::seconds(60)) {
    std::vector<sim::ProcessId> all;
    for (int i = 1; i <= cluster.options().zookeepers; ++i) all.push_back(cluster.zk_process(i));
    for (BrokerId id : cluster.broker_ids()) all.push_back(cluster.broker_process(id));
    const sim::Time until = cluster.world().now() + for_how_long;
    while (cluster.world().now() < until) {
      for (sim::ProcessId p : all) {
        const sim::HostId h = cluster.world().host_of(p);
        if (!cluster.world().is_up(h)) cluster.world().power_on(h);
        if (cluster.world().is_paused(p)) cluster.world().resume(p);
        if (!cluster.world().is_running(p) && cluster.world().is_up(h)) cluster.world().start(p);
      }
      cluster.run_for(sim::Duration::seconds(2));
    }
  }

  // The end of a run: heal the network, bring everything up, stop the
  // producer and wait for its last sends to complete, then wait until the
  // consumer has read every partition up to its leader's high watermark.
  // Returns "" or what did not settle.
  std::string finish(sim::Duration settle_limit = sim::Duration::seconds(180)) {
    cluster.world().network().heal();
    bring_everything_up();
    if (RecordingProducer* p = producer()) p->stop();
    std::string problem;
    if (!cluster.run_until([&] { return producer() == nullptr || producer()->outstanding() == 0; },
                           settle_limit)) {
      problem += fmt::format("the producer still has {} sends outstanding; ", producer()->outstanding());
    }
    if (!cluster.run_until([&] { return caught_up(); }, settle_limit)) problem += "the consumer never caught up; ";
    return problem;
  }

  // Every partition of the topic has a leader (by the brokers' own account)
  // and the consumer's position is its high watermark.
  bool caught_up() {
    const RecordingConsumer* c = consumer();
    if (c == nullptr) return false;
    const check::FinalState fs = final_state();
    bool any = false;
    for (const auto& [tp, replicas] : fs.partitions) {
      if (tp.topic != topic_) continue;
      any = true;
      const check::FinalState::Replica* leader = nullptr;
      for (const auto& r : replicas) {
        if (r.leader) leader = &r;
      }
      if (leader == nullptr) return false;
      const std::optional<int64_t> pos = c->position(tp);
      if (leader->high_watermark > 0 && (!pos || *pos != leader->high_watermark)) return false;
    }
    return any;
  }

  check::FinalState final_state() {
    return check::read_final_state(cluster.world(), cluster.broker_processes(), recorder.truncations());
  }

  check::History history;
  Cluster cluster;
  check::TruncationRecorder recorder;

 private:
  std::string topic_;
  sim::ProcessId consumer_, producer_;
};

}  // namespace kafka::testing
