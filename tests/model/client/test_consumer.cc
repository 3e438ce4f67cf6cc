// The consumer and a leader it cannot reach. librdkafka and the Java client
// hold a fetch (or a ListOffsets) for a leader they have no connection to,
// unsent, while they connect (attempts paced by the reconnect backoff, each
// given up after socket.connection.setup.timeout.ms), and ask for metadata
// once a second meanwhile (client/connection_wait.h). The lab's aiokafka
// consumer sends the fetch on the connection being opened, fails with it,
// and asks for metadata after each failure.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "client/harness.h"
#include "kafka/cluster.h"
#include "model/check/history.h"
#include "model/client/config.h"
#include "model/client/consumer.h"
#include "model/client/lab.h"

namespace kafka::testing {
namespace {

using sim::Duration;
using sim::Time;

constexpr const char* kBootstrap = "10.0.1.1:9092,10.0.1.2:9092,10.0.1.3:9092";

// Three brokers, one ZooKeeper, topic "t" with one partition, RF 3, and a
// producer on host "app"; start_reader() adds a consumer of the topic.
class Readers {
 public:
  Readers() : c({.zookeepers = 1, .brokers = 3, .seed = 11}) {
    c.start();
    EXPECT_TRUE(c.await_ready());
    EXPECT_EQ(c.create_topic("t", 1, 3), ErrorCode::none);
    EXPECT_TRUE(c.await_topic_known("t", 1));
    leader = c.state({"t", 0})->leader;
    producer = start_sending_process(c, {{"bootstrap.servers", kBootstrap}, {"acks", "1"}});
  }

  // A consumer of "t" (host "reader", 10.0.9.8; process "consumer"),
  // configured by `properties` (librdkafka's names) over `defaults`, started
  // and given `settle` to find its position (the partition's end: latest).
  void start_reader(const std::map<std::string, std::string>& properties,
                    const client::ConsumerConfig& defaults = {},
                    Duration settle = Duration::seconds(2)) {
    model::Properties props;
    for (const auto& [key, value] : properties) props.values[key] = value;
    props.values["bootstrap.servers"] = kBootstrap;
    const client::ConsumerConfig config = client::parse_consumer_config(props, defaults);
    const sim::ProcessId pid = c.world().add_process(
        c.world().add_host("reader", "10.0.9.8"), "consumer",
        [config, this] { return std::make_unique<RecordingConsumer>(config, "t", &history); });
    c.world().start(pid);
    reader = c.world().process_as<RecordingConsumer>(pid);
    reader_host = c.world().host_of(pid);
    c.run_for(settle);
  }

  // Sends ten records, 100 ms apart, waits 2 s, and returns how many of
  // them the consumer read.
  uint64_t read_of_ten() {
    const uint64_t before = reader->received();
    for (uint64_t v = 0; v < 10; ++v) {
      producer->producer().send("t", std::nullopt, v, 100, [](const client::DeliveryReport&) {});
      c.run_for(Duration::millis(100));
    }
    c.run_for(Duration::seconds(2));
    return reader->received() - before;
  }

  // Kills the leader's broker (its host stays up: connections are refused)
  // and runs until the controller has moved leadership, once the broker's
  // ZooKeeper session expired. Returns when it was killed.
  Time kill_leader_until_moved() {
    c.kill_broker(leader);
    const Time killed = c.world().now();
    EXPECT_TRUE(c.run_until([&] { return c.state({"t", 0})->leader != leader; }, Duration::seconds(60)));
    return killed;
  }

  Cluster c;
  check::History history;
  BrokerId leader = kNoBroker;
  SendingProcess* producer = nullptr;
  RecordingConsumer* reader = nullptr;
  sim::HostId reader_host;
};

// When the consumer put each trace record of `kind` on record (with error
// `error`, if given), from now on.
std::shared_ptr<std::vector<Time>> consumer_records(Cluster& c, std::string kind, std::string error = "") {
  auto times = std::make_shared<std::vector<Time>>();
  c.world().trace().add_observer([times, kind, error](const sim::TraceRecord& r) {
    if (r.process != "consumer" || r.kind != kind) return;
    if (!error.empty()) {
      const auto* e = r.field("error");
      if (e == nullptr || std::get<std::string_view>(*e) != error) return;
    }
    times->push_back(r.time);
  });
  return times;
}

int64_t count_between(const std::vector<Time>& times, Time from, Time to) {
  int64_t n = 0;
  for (Time t : times) n += t >= from && t < to ? 1 : 0;
  return n;
}

// Ten records are read; the leader's broker is killed, leadership moves,
// and ten more records are sent.
struct RefusedLeaderRun {
  Time killed;
  Time moved;
  int64_t metadata_requests = 0;  // the consumer's, while the leader was down
  int64_t refused = 0;            // its refused connections, meanwhile
  std::vector<Time> refused_at;   // when each was
  uint64_t read_before = 0;       // records read before the kill
  uint64_t read_after = 0;        // and after the move
};

RefusedLeaderRun refused_leader(const client::ConsumerConfig& defaults) {
  Readers r;
  r.start_reader({}, defaults);
  RefusedLeaderRun run;
  run.read_before = r.read_of_ten();
  const auto metadata = consumer_records(r.c, "metadata_request");
  const auto refused = consumer_records(r.c, "client_error", "connection_refused");
  run.killed = r.kill_leader_until_moved();
  run.moved = r.c.world().now();
  run.metadata_requests = count_between(*metadata, run.killed, run.moved);
  run.refused = count_between(*refused, run.killed, run.moved);
  for (Time t : *refused) {
    if (t < run.moved) run.refused_at.push_back(t);
  }
  r.c.run_for(Duration::seconds(2));  // the consumer learns of the new leader
  run.read_after = r.read_of_ten();
  return run;
}

TEST(ConsumerConnection, AFetchForALeaderThatRefusesConnectionsWaitsUnsent) {
  const RefusedLeaderRun run = refused_leader(client::ConsumerConfig{});  // librdkafka's defaults
  EXPECT_EQ(run.read_before, 10u);
  EXPECT_EQ(run.read_after, 10u);
  const int64_t down_ms = (run.moved - run.killed).us() / 1000;
  ASSERT_GT(down_ms, 5000);  // the session timeout
  // Connection attempts ever further apart (the backoff doubling from 100 or
  // 200 ms, jittered, up to 10 s) ...
  EXPECT_GE(run.refused, 5) << down_ms << " ms down";
  EXPECT_LE(run.refused, 10) << down_ms << " ms down";
  expect_reconnect_backoff(run.refused_at);
  // ... and metadata once a second, not after every refused attempt.
  EXPECT_LE(run.metadata_requests, down_ms / 1000 + 3) << down_ms << " ms down";
}

TEST(ConsumerConnection, TheLabConsumerFailsEachFetchAndAsksForMetadataEachTime) {
  // aiokafka sends the fetch on the connection being opened; it fails with
  // the connection, and the consumer looks the leader up again each time
  // (every retry.backoff.ms).
  const RefusedLeaderRun run = refused_leader(client::lab_consumer_defaults());
  EXPECT_EQ(run.read_before, 10u);
  EXPECT_EQ(run.read_after, 10u);
  const int64_t down_ms = (run.moved - run.killed).us() / 1000;
  EXPECT_GE(run.refused, down_ms / 100 / 2) << down_ms << " ms down";
  EXPECT_GE(run.metadata_requests, down_ms / 100 / 2) << down_ms << " ms down";
}

// While it waits, the consumer asks for metadata on the ticks of a 1 s
// timer started with it (librdkafka's), here 400 ms past a whole second of
// virtual time, not on the virtual clock's whole seconds.
TEST(ConsumerConnection, MetadataIsAskedOnTheTicksOfATimerStartedWithTheConsumer) {
  Readers r;
  const int64_t now_ms = r.c.world().now().us() / 1000;
  r.c.run_for(Duration::millis(1000 + 400 - now_ms % 1000));
  const int64_t start_ms = r.c.world().now().us() / 1000;
  ASSERT_EQ(start_ms % 1000, 400);
  r.start_reader({});
  const auto metadata = consumer_records(r.c, "metadata_request");
  const Time killed = r.kill_leader_until_moved();
  const Time moved = r.c.world().now();
  expect_metadata_on_ticks(*metadata, killed, moved, start_ms);
}

// A consumer that starts while the leader refuses connections has no
// position yet: its ListOffsets waits like a fetch, and it finds its
// position at the new leader once leadership moves.
TEST(ConsumerConnection, AnOffsetLookupForALeaderThatRefusesConnectionsWaitsUnsent) {
  Readers r;
  r.c.kill_broker(r.leader);
  const Time killed = r.c.world().now();
  const auto metadata = consumer_records(r.c, "metadata_request");
  const auto refused = consumer_records(r.c, "client_error", "connection_refused");
  r.start_reader({}, {}, Duration::millis(0));
  EXPECT_TRUE(r.c.run_until([&] { return r.c.state({"t", 0})->leader != r.leader; }, Duration::seconds(60)));
  const Time moved = r.c.world().now();
  const int64_t down_ms = (moved - killed).us() / 1000;
  EXPECT_FALSE(r.reader->position({"t", 0}).has_value());  // no answer from the dead leader
  EXPECT_GE(count_between(*refused, killed, moved), 5) << down_ms << " ms down";
  EXPECT_LE(count_between(*refused, killed, moved), 10) << down_ms << " ms down";
  expect_reconnect_backoff(*refused);
  EXPECT_LE(count_between(*metadata, killed, moved), down_ms / 1000 + 3) << down_ms << " ms down";
  r.c.run_for(Duration::seconds(2));
  EXPECT_TRUE(r.reader->position({"t", 0}).has_value());
  EXPECT_EQ(r.read_of_ten(), 10u);
}

// With auto.offset.reset none, a partition without a position is reported
// (NO_OFFSET) at once, without a connection to its leader: nothing there
// is asked.
TEST(ConsumerConnection, NoOffsetIsReportedWithoutWaitingForTheLeader) {
  Readers r;
  r.c.kill_broker(r.leader);
  r.start_reader({{"auto.offset.reset", "none"}}, {}, Duration::seconds(2));
  ASSERT_FALSE(r.reader->fetch_errors().empty());
  EXPECT_EQ(r.reader->fetch_errors().front(), "NO_OFFSET");
}

// The consumer is cut off from the leader (packets dropped both ways: a SYN
// is never answered); the leader stays. Once the fetch in flight has timed
// out (request.timeout.ms, 5 s), each connection attempt is given up after
// socket.connection.setup.timeout.ms (2 s) and the next starts at once
// while the reconnect backoff (from the start of the last) is shorter than
// that. Healed, the consumer reads again.
TEST(ConsumerConnection, AnUnansweredConnectIsGivenUpAfterTheSetupTimeout) {
  Readers r;
  r.start_reader({{"request.timeout.ms", "5000"}, {"socket.connection.setup.timeout.ms", "2000"}});
  Cluster& c = r.c;
  const auto timed_out = consumer_records(c, "client_error", "connect_timed_out");
  c.world().network().block(r.reader_host, c.broker_host(r.leader));
  c.world().network().block(c.broker_host(r.leader), r.reader_host);
  const Time cut = c.world().now();
  c.run_for(Duration::seconds(20));
  // The fetch in flight times out 4.5 to 5 s after the cut (it went out up
  // to fetch.wait.max.ms before it), the first attempt 100 ms later
  // (retry.backoff.ms) is given up 2 s after that; then one every 2 s, the
  // later ones further apart as the backoff passes 2 s.
  ASSERT_GE(timed_out->size(), 5u);
  EXPECT_LE(timed_out->size(), 7u);
  EXPECT_GE(timed_out->front(), cut + Duration::millis(6500));
  EXPECT_LE(timed_out->front(), cut + Duration::millis(7200));
  expect_hung_attempts(*timed_out, Duration::millis(2000));
  c.world().network().heal();
  c.run_for(Duration::seconds(3));
  EXPECT_EQ(r.read_of_ten(), 10u);
}

// Requests are pipelined on a connection (max.in.flight). The leader's host
// loses power while a fetch waits for its answer: nothing answers it and
// nothing resets it. A metadata request (every 2 s here, metadata.max.age.ms)
// goes to the leader's broker, the one connected, on the wire behind the
// fetch; unacknowledged, it is retransmitted, and once the host is back its
// kernel, which no longer knows the connection, resets it: the fetch fails
// then, long before its 30 s timeout, and the consumer asks again. Held back
// behind the fetch (one request in flight, the model until 2026-12) the
// metadata request never reached the wire, and the consumer heard nothing
// until the fetch timed out.
TEST(ConsumerConnection, ARequestBehindAHungFetchLearnsOfTheRebootAtItsNextRetransmission) {
  Readers r;
  r.start_reader({{"metadata.max.age.ms", "2000"}});
  Cluster& c = r.c;
  const auto metadata = consumer_records(c, "metadata_request");
  const auto resets = consumer_records(c, "client_error", "connection_reset");
  const auto timeouts = consumer_records(c, "client_error", "request_timed_out");
  c.power_off_broker(r.leader);
  const Time off = c.world().now();
  c.run_for(Duration::seconds(5));
  ASSERT_GE(count_between(*metadata, off, c.world().now()), 1) << "no metadata request while the host was off";
  c.power_on_broker(r.leader);
  const Time on = c.world().now();
  c.run_for(Duration::seconds(10));
  // Sent within 2 s of the power-off, the request is retransmitted 0.2, 0.6,
  // 1.4, 3.0 and 6.2 s after it was sent: the first retransmission after the
  // power-on lands within 3.2 s of it.
  ASSERT_FALSE(resets->empty()) << "the connection was never reset";
  EXPECT_GE(resets->front(), on);
  EXPECT_LE(resets->front(), on + Duration::millis(3300));
  EXPECT_EQ(count_between(*timeouts, off, c.world().now()), 0);
}

// Unasked, a consumer asks for metadata again the shorter of
// topic.metadata.refresh.interval.ms (librdkafka's default 5 minutes) and
// metadata.max.age.ms (15) after its last answer: twice in 11 quiet
// minutes; every minute with a 1-minute interval. Until 2026-12 the model
// used metadata.max.age.ms alone, and only when the client next sent
// something.
TEST(ConsumerMetadata, AskedAgainEveryRefreshInterval) {
  for (const auto& [interval, expected] : std::vector<std::pair<std::string, int64_t>>{{"", 2}, {"60000", 10}}) {
    SCOPED_TRACE(interval);
    Readers r;
    std::map<std::string, std::string> props;
    if (!interval.empty()) props["topic.metadata.refresh.interval.ms"] = interval;
    r.start_reader(props);
    const auto metadata = consumer_records(r.c, "metadata_request");
    const Time from = r.c.world().now();
    r.c.run_for(Duration::seconds(10 * 60 + 30));
    EXPECT_EQ(count_between(*metadata, from, r.c.world().now()), expected);
  }
}

// --- fetch limits (KIP-74) ------------------------------------------------------------

// One broker, topic "t" with three partitions of six one-record batches
// (70 bytes) each, and a consumer reading the topic from the start with
// `properties`. Returns the partitions of the first `n` records it read, in
// the order it read them.
std::vector<int32_t> first_partitions_read(const std::map<std::string, std::string>& properties,
                                           size_t n) {
  Cluster c({.zookeepers = 1, .brokers = 1, .seed = 5});
  c.start();
  EXPECT_TRUE(c.await_ready());
  EXPECT_EQ(c.create_topic("t", 3, 1), ErrorCode::none);
  for (int32_t p = 0; p < 3; ++p) {
    for (uint64_t v = 0; v < 6; ++v) EXPECT_EQ(c.produce({"t", p}, {v}, 1)->error, ErrorCode::none);
  }
  model::Properties props;
  for (const auto& [key, value] : properties) props.values[key] = value;
  props.values["bootstrap.servers"] = "10.0.1.1:9092";
  props.values["auto.offset.reset"] = "earliest";
  const client::ConsumerConfig config = client::parse_consumer_config(props);
  check::History history;
  const sim::ProcessId pid =
      c.world().add_process(c.world().add_host("reader", "10.0.9.8"), "consumer", [config, &history] {
        return std::make_unique<RecordingConsumer>(config, "t", &history);
      });
  c.world().start(pid);
  c.run_for(Duration::seconds(5));
  std::vector<int32_t> partitions;
  for (const check::Op& op : history.ops()) {
    if (op.f == check::OpFunction::poll && partitions.size() < n) partitions.push_back(op.partition);
  }
  return partitions;
}

// fetch.max.bytes binds: each answer has room for two batches, which the
// first partition takes; each fetch starts one partition further on
// (librdkafka's round robin), so the partitions take turns rather than the
// first being read to its end.
TEST(ConsumerFetch, PartitionsTakeTurnsWhenTheAnswersLimitBinds) {
  EXPECT_EQ(first_partitions_read({{"fetch.max.bytes", "140"}}, 9),
            (std::vector<int32_t>{0, 0, 1, 1, 2, 2, 0, 0, 1}));
}

// max.partition.fetch.bytes (fetch.message.max.bytes) binds: one batch from
// each partition an answer, the next fetch starting one partition further on.
TEST(ConsumerFetch, EachPartitionGetsItsOwnLimit) {
  EXPECT_EQ(first_partitions_read({{"max.partition.fetch.bytes", "70"}}, 9),
            (std::vector<int32_t>{0, 1, 2, 1, 2, 0, 2, 0, 1}));
  EXPECT_EQ(first_partitions_read({{"fetch.message.max.bytes", "100"}}, 9),
            (std::vector<int32_t>{0, 1, 2, 1, 2, 0, 2, 0, 1}));
}

}  // namespace
}  // namespace kafka::testing
