// The producer in time. Batching: linger.ms holds a batch back until it
// has waited that long (librdkafka's queue.buffering.max.ms, the Java
// client's linger.ms), so records sent meanwhile go out with it in one
// request; with linger.ms 0 each goes out as it is sent. Expiry: a record
// that cannot be sent fails at message.timeout.ms even when nothing else
// wakes the producer. Connections: a leader that refuses connections holds
// its partition's batches unsent (librdkafka, Java) or fails each batch sent
// to it (aiokafka, the lab producer). Retries: without idempotence a retry
// takes every ready record of its partition (librdkafka).
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "client/harness.h"
#include "kafka/cluster.h"
#include "model/client/config.h"
#include "model/client/producer.h"

namespace kafka::testing {
namespace {

using sim::Duration;
using sim::Time;

// Three brokers, one ZooKeeper, topic "t" with one partition, RF 3.
void start_one_partition_cluster(Cluster& c) {
  c.start();
  ASSERT_TRUE(c.await_ready());
  ASSERT_EQ(c.create_topic("t", 1, 3), ErrorCode::none);
}

// Sends value 0 and runs 2 s: metadata known, the leader's connection up.
void warm_up(Cluster& c, SendingProcess* p) {
  bool warm = false;
  p->producer().send("t", std::nullopt, 0, 100, [&](const client::DeliveryReport& r) {
    EXPECT_EQ(r.outcome, client::Outcome::ok) << r.error;
    warm = true;
  });
  c.run_for(Duration::seconds(2));
  ASSERT_TRUE(warm);
}

// When the producer logged each connection error `error` ("client_error"),
// from now on.
std::shared_ptr<std::vector<Time>> client_errors(Cluster& c, std::string error) {
  auto times = std::make_shared<std::vector<Time>>();
  c.world().trace().add_observer([times, error](const sim::TraceRecord& r) {
    if (r.process != "producer" || r.kind != "client_error") return;
    const auto* e = r.field("error");
    if (e != nullptr && std::get<std::string_view>(*e) == error) times->push_back(r.time);
  });
  return times;
}

struct Acked {
  uint64_t value = 0;
  Time at;
  int64_t offset = -1;
};

// One partition, RF 3; a producer with `linger_ms` that has sent one record
// already (metadata and connection are up). Then three records 10 ms apart:
// when and at which offsets they are acknowledged, and when they were sent.
struct LingerRun {
  Time first_sent;
  std::vector<Acked> acked;
};

LingerRun three_records(const std::string& linger_ms) {
  Cluster c({.zookeepers = 1, .brokers = 3, .seed = 11});
  start_one_partition_cluster(c);
  SendingProcess* p =
      start_sending_process(c, {{"bootstrap.servers", "10.0.1.1:9092"}, {"acks", "1"}, {"linger.ms", linger_ms}});
  LingerRun run;
  warm_up(c, p);
  run.first_sent = c.world().now();
  for (uint64_t v = 1; v <= 3; ++v) {
    p->producer().send("t", std::nullopt, v, 100, [&run, &c, v](const client::DeliveryReport& r) {
      EXPECT_EQ(r.outcome, client::Outcome::ok) << r.error;
      run.acked.push_back({v, c.world().now(), r.offset});
    });
    c.run_for(Duration::millis(10));
  }
  c.run_for(Duration::seconds(1));
  return run;
}

TEST(ProducerLinger, RecordsSentWithinLingerGoOutInOneBatchWhenItEnds) {
  const LingerRun run = three_records("50");
  ASSERT_EQ(run.acked.size(), 3u);
  // The producer keeps time in whole milliseconds (as the Java client does):
  // the batch dates from the millisecond the first record was sent in.
  const Time batch_ready = Time::zero() + Duration::millis(run.first_sent.us() / 1000 + 50);
  for (const Acked& a : run.acked) {
    // Nothing leaves before the first record has waited linger.ms ...
    EXPECT_GE(a.at, batch_ready) << "value " << a.value;
    // ... and the three come back together, answers to one request.
    EXPECT_EQ(a.at, run.acked.front().at) << "value " << a.value;
    EXPECT_EQ(a.offset, run.acked.front().offset + static_cast<int64_t>(a.value - 1)) << "value " << a.value;
  }
  EXPECT_LT(run.acked.front().at, run.first_sent + Duration::millis(60));
}

TEST(ProducerLinger, WithoutLingerEachRecordGoesOutAsItIsSent) {
  const LingerRun run = three_records("0");
  ASSERT_EQ(run.acked.size(), 3u);
  for (const Acked& a : run.acked) {
    // Sent at first_sent + 10 ms x (value - 1), answered before the next send.
    const Time sent = run.first_sent + Duration::millis(10 * static_cast<int64_t>(a.value - 1));
    EXPECT_GE(a.at, sent) << "value " << a.value;
    EXPECT_LT(a.at, sent + Duration::millis(10)) << "value " << a.value;
  }
}

// A producer's configuration from librdkafka property names, and whether it
// waits for a leader's connection (librdkafka, Java) or sends and fails
// (aiokafka, the lab producer).
client::ProducerConfig producer_config(const std::map<std::string, std::string>& properties,
                                       bool wait_for_connection) {
  model::Properties props;
  for (const auto& [key, value] : properties) props.values[key] = value;
  client::ProducerConfig config = client::parse_producer_config(props);
  config.wait_for_connection = wait_for_connection;
  return config;
}

// Drops every packet between the producer's host and `leader`'s, both ways.
void cut_off(Cluster& c, BrokerId leader) {
  const sim::HostId app = c.world().host_of(*c.world().find_process("producer"));
  c.world().network().block(app, c.broker_host(leader));
  c.world().network().block(c.broker_host(leader), app);
}

// A record the producer could not send: when it was sent, when and how it
// was reported.
struct Expiry {
  Time sent;
  bool reported = false;
  Time at;
  client::DeliveryReport report;
};

// Sends one record (value 1) now and runs `d`.
Expiry send_one(Cluster& c, SendingProcess* p, Duration d) {
  Expiry e;
  e.sent = c.world().now();
  p->producer().send("t", std::nullopt, 1, 100, [&e, &c](const client::DeliveryReport& r) {
    e.reported = true;
    e.at = c.world().now();
    e.report = r;
  });
  c.run_for(d);
  return e;
}

void expect_timed_out_at(const Expiry& e, int64_t timeout_ms) {
  ASSERT_TRUE(e.reported) << "no delivery report";
  EXPECT_EQ(e.report.error, "MSG_TIMED_OUT");
  // At the millisecond it timed out (the producer's clock is in whole ms).
  EXPECT_GE(e.at, e.sent + Duration::millis(timeout_ms - 1));
  EXPECT_LE(e.at, e.sent + Duration::millis(timeout_ms));
}

// No broker ever answers: the topic's partitions are never known, and the
// record fails at message.timeout.ms, not at whatever next wakes the producer.
TEST(ProducerExpiry, ARecordForATopicNeverKnownTimesOut) {
  Cluster c({.zookeepers = 1, .brokers = 3, .seed = 11});
  start_one_partition_cluster(c);
  for (BrokerId b = 1; b <= 3; ++b) c.power_off_broker(b);
  SendingProcess* p = start_sending_process(
      c, {{"bootstrap.servers", "10.0.1.1:9092,10.0.1.2:9092"}, {"message.timeout.ms", "5000"}});
  const Expiry e = send_one(c, p, Duration::seconds(20));
  expect_timed_out_at(e, 5000);
  EXPECT_EQ(e.report.outcome, client::Outcome::fail);  // never sent: not written
  EXPECT_EQ(p->producer().outstanding(), 0u);
}

// The partition was known, then every broker stopped. A producer that sends
// to a leader it cannot reach (aiokafka's way, the lab producer's) has its
// first try refused, forgets the leader, and no metadata answer names
// another: nothing but the record's own timeout wakes it, and it fails at
// message.timeout.ms. (One that waits for the connection instead keeps
// trying to connect, as its reconnect backoff allows.)
TEST(ProducerExpiry, ABatchWaitingForALeaderNoOneNamesTimesOut) {
  Cluster c({.zookeepers = 1, .brokers = 3, .seed = 11});
  start_one_partition_cluster(c);
  SendingProcess* p = start_sending_process(
      c, producer_config({{"bootstrap.servers", "10.0.1.1:9092"}, {"acks", "1"}, {"message.timeout.ms", "5000"}},
                         /*wait_for_connection=*/false));
  warm_up(c, p);
  for (BrokerId b = 1; b <= 3; ++b) c.kill_broker(b);  // the hosts answer: refused
  const Expiry e = send_one(c, p, Duration::seconds(20));
  expect_timed_out_at(e, 5000);
  EXPECT_EQ(p->producer().outstanding(), 0u);
}

// The leader's broker is killed on a host that stays up (connections are
// refused) while records are sent, one every 100 ms for 5 s; the controller
// moves leadership once the broker's ZooKeeper session expires.
struct RefusedLeaderRun {
  BrokerId leader = kNoBroker;
  Time killed;
  Time moved;                     // when the controller named a new leader
  std::vector<Acked> acked;
  int failed = 0;                 // reports other than ok
  int produce_retries = 0;        // "produce_retry" trace records
  int refused = 0;                // connections refused ("client_error")
  std::vector<Time> refused_at;   // when each was
};

RefusedLeaderRun refused_leader(bool wait_for_connection,
                                std::map<std::string, std::string> properties = {}) {
  properties.emplace("bootstrap.servers", "10.0.1.1:9092,10.0.1.2:9092,10.0.1.3:9092");
  properties.emplace("acks", "1");
  Cluster c({.zookeepers = 1, .brokers = 3, .seed = 11});
  start_one_partition_cluster(c);
  RefusedLeaderRun run;
  run.leader = c.state({"t", 0})->leader;
  SendingProcess* p = start_sending_process(
      c, producer_config(properties, wait_for_connection));
  warm_up(c, p);
  c.world().trace().add_observer([&run](const sim::TraceRecord& r) {
    if (r.process == "producer" && r.kind == "produce_retry") ++run.produce_retries;
  });
  const auto refused = client_errors(c, "connection_refused");
  c.kill_broker(run.leader);
  run.killed = c.world().now();
  for (uint64_t v = 1; v <= 50; ++v) {
    p->producer().send("t", std::nullopt, v, 100, [&run, &c, v](const client::DeliveryReport& r) {
      if (r.outcome == client::Outcome::ok) {
        run.acked.push_back({v, c.world().now(), r.offset});
      } else {
        ++run.failed;
      }
    });
    c.run_for(Duration::millis(100));
  }
  EXPECT_TRUE(c.run_until([&] { return c.state({"t", 0})->leader != run.leader; }, Duration::seconds(60)));
  run.moved = c.world().now();
  c.run_for(Duration::seconds(5));
  run.refused = static_cast<int>(refused->size());
  run.refused_at = *refused;
  return run;
}

TEST(ProducerConnection, BatchesForALeaderThatRefusesConnectionsWaitUnsent) {
  const RefusedLeaderRun run = refused_leader(/*wait_for_connection=*/true);
  // Every record is delivered, once, in order, after the leader moved, and
  // no batch was tried against the dead broker: the producer only tried to
  // connect, as the reconnect backoff allowed.
  ASSERT_EQ(run.acked.size(), 50u);
  EXPECT_EQ(run.failed, 0);
  EXPECT_EQ(run.produce_retries, 0);
  for (size_t i = 0; i < run.acked.size(); ++i) {
    EXPECT_EQ(run.acked[i].value, i + 1);
    EXPECT_GE(run.acked[i].at, run.moved - Duration::seconds(1)) << "value " << run.acked[i].value;
    if (i > 0) {
      EXPECT_EQ(run.acked[i].offset, run.acked[i - 1].offset + 1);
    }
  }
  // The attempts, while the leader is down and for up to a second after it
  // moved (until the next metadata answer says so), are ever
  // further apart (the backoff doubling from 100 or 200 ms, jittered, up to
  // 10 s): seven or so in the 16 s the broker's session takes to expire,
  // where a fixed 100 ms made 160.
  const int64_t down_ms = (run.moved - run.killed).us() / 1000;
  EXPECT_GE(run.refused, 5) << down_ms << " ms down";
  EXPECT_LE(run.refused, 10) << down_ms << " ms down";
  expect_reconnect_backoff(run.refused_at);
}

// reconnect.backoff.max.ms caps the wait between attempts (librdkafka's
// jitter may not take it past the cap either).
TEST(ProducerConnection, TheReconnectBackoffStopsGrowingAtItsMaximum) {
  const RefusedLeaderRun run = refused_leader(/*wait_for_connection=*/true, {{"reconnect.backoff.max.ms", "1000"}});
  ASSERT_EQ(run.acked.size(), 50u);
  // 100, 200, 400, 800 ms, then 750 ms to 1 s from the fifth wait on.
  std::vector<Time> down;
  for (Time t : run.refused_at) {
    if (t < run.moved) down.push_back(t);
  }
  ASSERT_GE(down.size(), 10u);
  for (size_t i = 5; i < down.size(); ++i) {
    EXPECT_GE(down[i] - down[i - 1], Duration::millis(750)) << i;
    EXPECT_LE(down[i] - down[i - 1], Duration::millis(1005)) << i;
  }
  expect_reconnect_backoff(down, 1000);
}

// While a batch waits for its leader, the producer asks for metadata on the
// ticks of a 1 s timer started with it (librdkafka's), here 400 ms past a
// whole second of virtual time, not on the virtual clock's whole seconds.
TEST(ProducerConnection, MetadataIsAskedOnTheTicksOfATimerStartedWithTheProducer) {
  Cluster c({.zookeepers = 1, .brokers = 3, .seed = 11});
  start_one_partition_cluster(c);
  const BrokerId leader = c.state({"t", 0})->leader;
  const int64_t now_ms = c.world().now().us() / 1000;
  c.run_for(Duration::millis(1000 + 400 - now_ms % 1000));
  const int64_t start_ms = c.world().now().us() / 1000;
  ASSERT_EQ(start_ms % 1000, 400);
  SendingProcess* p = start_sending_process(
      c, producer_config({{"bootstrap.servers", "10.0.1.1:9092,10.0.1.2:9092,10.0.1.3:9092"}, {"acks", "1"}},
                         /*wait_for_connection=*/true));
  warm_up(c, p);
  auto metadata = std::make_shared<std::vector<Time>>();
  c.world().trace().add_observer([metadata](const sim::TraceRecord& r) {
    if (r.process == "producer" && r.kind == "metadata_request") metadata->push_back(r.time);
  });
  c.kill_broker(leader);
  const Time killed = c.world().now();
  p->producer().send("t", std::nullopt, 1, 100, [](const client::DeliveryReport&) {});
  ASSERT_TRUE(c.run_until([&] { return c.state({"t", 0})->leader != leader; }, Duration::seconds(60)));
  const Time moved = c.world().now();
  expect_metadata_on_ticks(*metadata, killed, moved, start_ms);
}

TEST(ProducerConnection, TheLabProducerFailsEachTryAgainstARefusedLeader) {
  // aiokafka sends to a node it cannot connect to and the batch fails
  // (NodeNotReadyError): a retry per batch per retry.backoff.ms.
  const RefusedLeaderRun run = refused_leader(/*wait_for_connection=*/false);
  EXPECT_GT(run.produce_retries, 50);
  EXPECT_GT(run.refused, run.produce_retries / 2);
}

// The client is cut off from the leader (packets dropped both ways: a SYN
// is never answered). After the request in flight times out, the producer
// tries to connect again; each attempt is given up after
// socket.connection.setup.timeout.ms, the next one the reconnect backoff
// later, until the record's message.timeout.ms.
TEST(ProducerConnection, AnUnansweredConnectIsGivenUpAfterTheSetupTimeout) {
  Cluster c({.zookeepers = 1, .brokers = 3, .seed = 11});
  start_one_partition_cluster(c);
  const BrokerId leader = c.state({"t", 0})->leader;
  SendingProcess* p = start_sending_process(c, {{"bootstrap.servers", "10.0.1.1:9092,10.0.1.2:9092,10.0.1.3:9092"},
                                                {"acks", "1"},
                                                {"request.timeout.ms", "5000"},
                                                {"socket.timeout.ms", "5000"},
                                                {"socket.connection.setup.timeout.ms", "2000"},
                                                {"message.timeout.ms", "20000"}});
  warm_up(c, p);
  const auto timed_out_at = client_errors(c, "connect_timed_out");
  cut_off(c, leader);
  const Expiry e = send_one(c, p, Duration::seconds(30));
  const std::vector<Time>& timed_out = *timed_out_at;
  expect_timed_out_at(e, 20000);
  EXPECT_EQ(e.report.outcome, client::Outcome::info);  // its first try may have been written
  // The first attempt starts once the request in flight has timed out
  // (5 s); each hangs 2 s, and the next follows at once while the backoff
  // (from the start of the last) is shorter than that, until the record
  // expires at 20 s.
  ASSERT_GE(timed_out.size(), 5u);
  EXPECT_LE(timed_out.size(), 7u);
  EXPECT_GE(timed_out.front(), e.sent + Duration::millis(7000));
  expect_hung_attempts(timed_out, Duration::millis(2000));
}

// A producer that sends to a leader it cannot reach (the lab producer's
// way: wait_for_connection false), acks=1, linger.ms 0, a 2 s request
// timeout (the broker's and the client's own) and `properties` on top; warmed up, then cut off from the leader
// both ways (SYNs and requests vanish).
SendingProcess* cut_off_sender(Cluster& c, const std::map<std::string, std::string>& properties) {
  start_one_partition_cluster(c);
  const BrokerId leader = c.state({"t", 0})->leader;
  std::map<std::string, std::string> all = {{"bootstrap.servers", "10.0.1.1:9092,10.0.1.2:9092,10.0.1.3:9092"},
                                            {"acks", "1"},
                                            {"linger.ms", "0"},
                                            {"request.timeout.ms", "2000"},
                                            {"socket.timeout.ms", "2000"}};
  for (const auto& [key, value] : properties) all[key] = value;
  SendingProcess* p = start_sending_process(c, producer_config(all, /*wait_for_connection=*/false));
  warm_up(c, p);
  cut_off(c, leader);
  return p;
}

// librdkafka's producer sends request.timeout.ms (30 s) to the broker as its
// ack timeout but waits socket.timeout.ms (60 s) for the answer itself, cut
// to what is left of the first record's message.timeout.ms: a request to a
// leader it can no longer reach is given up after 60 s, or at the record's
// message timeout when that comes first.
TEST(ProducerTimeouts, ARequestWaitsSocketTimeoutCutToTheFirstRecordsMessageTimeout) {
  for (const int64_t message_timeout_ms : {300000, 45000}) {
    SCOPED_TRACE(message_timeout_ms);
    Cluster c({.zookeepers = 1, .brokers = 3, .seed = 11});
    start_one_partition_cluster(c);
    const BrokerId leader = c.state({"t", 0})->leader;
    SendingProcess* p = start_sending_process(
        c, {{"bootstrap.servers", "10.0.1.1:9092,10.0.1.2:9092,10.0.1.3:9092"},
            {"acks", "1"},
            {"message.timeout.ms", std::to_string(message_timeout_ms)}});
    warm_up(c, p);
    const auto timed_out_at = client_errors(c, "request_timed_out");
    cut_off(c, leader);
    const Time sent = c.world().now();
    p->producer().send("t", std::nullopt, 1, 100, [](const client::DeliveryReport&) {});
    c.run_for(Duration::seconds(70));
    ASSERT_FALSE(timed_out_at->empty());
    const Time expected = sent + Duration::millis(std::min<int64_t>(60000, message_timeout_ms));
    EXPECT_GE(timed_out_at->front(), expected - Duration::millis(10));
    EXPECT_LE(timed_out_at->front(), expected + Duration::millis(10));
  }
}

// Without idempotence a retry takes every ready record of its partition,
// as librdkafka re-queues a failed request's messages and batches them anew:
// twenty records sent one by one and failed together go out again as one
// request. (The client here sends to an unreachable leader, the lab
// producer's way, so that the second round of tries is on the wire too.)
struct TwentyRetried {
  size_t retries_after_first_round = 0;   // produce_retry events
  size_t retries_after_second_round = 0;
  std::vector<Acked> acked;
};

// Twenty 100-byte records sent 10 ms apart by a producer cut off from the
// leader (cut_off_sender, with `properties` too): each request fails, the
// records are tried again 2.5 s later and fail again, then the network heals.
TwentyRetried twenty_retried(Cluster& c, const std::map<std::string, std::string>& properties) {
  SendingProcess* p = cut_off_sender(c, properties);
  TwentyRetried run;
  size_t retries = 0;
  c.world().trace().add_observer([&retries](const sim::TraceRecord& r) {
    if (r.process == "producer" && r.kind == "produce_retry") ++retries;
  });
  for (uint64_t v = 1; v <= 20; ++v) {
    p->producer().send("t", std::nullopt, v, 100, [&run, &c, v](const client::DeliveryReport& r) {
      EXPECT_EQ(r.outcome, client::Outcome::ok) << r.error;
      run.acked.push_back({v, c.world().now(), r.offset});
    });
    c.run_for(Duration::millis(10));
  }
  c.run_for(Duration::millis(2500));
  run.retries_after_first_round = retries;
  c.run_for(Duration::millis(2500));
  run.retries_after_second_round = retries;
  c.world().network().heal();
  c.run_for(Duration::seconds(10));
  return run;
}

TEST(ProducerRetry, WithoutIdempotenceFailedBatchesAreRetriedAsOne) {
  Cluster c({.zookeepers = 1, .brokers = 3, .seed = 11});
  const TwentyRetried run = twenty_retried(c, {{"message.timeout.ms", "60000"}});
  // Round 1: twenty requests out, twenty failures. Round 2: one request.
  EXPECT_EQ(run.retries_after_first_round, 20u);
  EXPECT_EQ(run.retries_after_second_round, 21u);
  const std::vector<Acked>& acked = run.acked;
  ASSERT_EQ(acked.size(), 20u);
  for (size_t i = 0; i < acked.size(); ++i) {
    EXPECT_EQ(acked[i].value, i + 1);
    EXPECT_EQ(acked[i].at, acked.front().at);  // one answer
    EXPECT_EQ(acked[i].offset, acked.front().offset + static_cast<int64_t>(i));
  }
}

// A retry that merged records sent seconds apart fails only those past
// message.timeout.ms; the younger ones are tried again (librdkafka times
// messages out one by one).
TEST(ProducerRetry, WithoutIdempotenceRecordsTimeOutOneByOne) {
  Cluster c({.zookeepers = 1, .brokers = 3, .seed = 11});
  SendingProcess* p = cut_off_sender(c, {{"message.timeout.ms", "5000"}});
  std::map<uint64_t, client::DeliveryReport> reports;
  const auto send = [&](uint64_t v) {
    p->producer().send("t", std::nullopt, v, 100, [&reports, v](const client::DeliveryReport& r) { reports[v] = r; });
  };
  const Time t0 = c.world().now();
  send(1);  // tried at t0, again at ~2.1 s
  c.run_for(Duration::seconds(3));
  for (uint64_t v = 2; v <= 5; ++v) send(v);  // queued behind it; all fail at ~4.1 s
  // The retry at ~4.2 s carries 1..5; its wait is cut to what is left of
  // 1's 5 s (librdkafka times a ProduceRequest by its first message), so it
  // fails at 5 s: 1 is then past its timeout; 2..5 are 2 s old and go again
  // once the path heals.
  c.run_until([&] { return reports.count(1) != 0; }, Duration::seconds(10));
  ASSERT_EQ(reports.count(1), 1u);
  EXPECT_GE(c.world().now(), t0 + Duration::millis(4999));
  EXPECT_LE(c.world().now(), t0 + Duration::millis(5001));
  EXPECT_NE(reports[1].outcome, client::Outcome::ok);
  EXPECT_TRUE(reports.size() == 1u) << "2..5 were failed with 1";
  c.world().network().heal();
  c.run_for(Duration::seconds(5));
  for (uint64_t v = 2; v <= 5; ++v) {
    ASSERT_EQ(reports.count(v), 1u) << v;
    EXPECT_EQ(reports[v].outcome, client::Outcome::ok) << v << ": " << reports[v].error;
  }
}

// A connection that goes down with twenty requests on it is one failure to
// the application (librdkafka's error callback hears of a broker going down
// once): one client_error, though each request fails and is retried.
TEST(ProducerRetry, AConnectionLostWithManyRequestsOnItIsOneClientError) {
  Cluster c({.zookeepers = 1, .brokers = 3, .seed = 11});
  SendingProcess* p = cut_off_sender(c, {{"message.timeout.ms", "60000"}});
  auto errors = std::make_shared<std::vector<std::string>>();
  size_t retries = 0;
  c.world().trace().add_observer([&retries, errors](const sim::TraceRecord& r) {
    if (r.process != "producer") return;
    if (r.kind == "produce_retry") ++retries;
    if (r.kind != "client_error") return;
    errors->push_back(std::string(std::get<std::string_view>(*r.field("error"))));
  });
  for (uint64_t v = 1; v <= 20; ++v) {
    p->producer().send("t", std::nullopt, v, 100, [](const client::DeliveryReport&) {});
    c.run_for(Duration::millis(10));
  }
  // The first request times out at ~2 s and takes the connection down: the
  // other nineteen fail with it, at the same instant.
  c.run_for(Duration::millis(2100));
  EXPECT_EQ(retries, 20u);
  EXPECT_EQ(*errors, (std::vector<std::string>{"request_timed_out", "connection_closed"}));
}

// librdkafka counts each message's retries (rd_kafka_retry_msgq): a retry
// that merged a record on its last try with younger ones fails only that
// record, and the younger ones are tried again.
TEST(ProducerRetry, WithoutIdempotenceRetriesAreCountedPerRecord) {
  Cluster c({.zookeepers = 1, .brokers = 3, .seed = 11});
  SendingProcess* p = cut_off_sender(c, {{"message.timeout.ms", "60000"}, {"retries", "2"}});
  std::map<uint64_t, client::DeliveryReport> reports;
  const auto send = [&](uint64_t v) {
    p->producer().send("t", std::nullopt, v, 100, [&reports, v](const client::DeliveryReport& r) { reports[v] = r; });
  };
  const Time t0 = c.world().now();
  send(1);  // tried at t0 and at ~2.1 s
  c.run_for(Duration::seconds(3));
  for (uint64_t v = 2; v <= 5; ++v) send(v);  // tried at 3 s; all fail at ~4.1 s
  // The retry at ~4.2 s carries 1..5: 1 on its third try (retries 2), 2..5
  // on their second. It fails at ~6.2 s: 1 for good, 2..5 go again.
  c.run_until([&] { return reports.count(1) != 0; }, Duration::seconds(10));
  ASSERT_EQ(reports.count(1), 1u);
  EXPECT_GE(c.world().now(), t0 + Duration::seconds(6));
  EXPECT_NE(reports[1].outcome, client::Outcome::ok);
  EXPECT_EQ(reports.size(), 1u) << "2..5 were failed with 1";
  c.world().network().heal();
  c.run_for(Duration::seconds(10));
  for (uint64_t v = 2; v <= 5; ++v) {
    ASSERT_EQ(reports.count(v), 1u) << v;
    EXPECT_EQ(reports[v].outcome, client::Outcome::ok) << v << ": " << reports[v].error;
  }
}

// --- sizes -------------------------------------------------------------------------

// The leader's log of t-0.
const PartitionLog& leader_log(Cluster& c) {
  const Partition* p = c.broker(c.state({"t", 0})->leader)->partition({"t", 0});
  EXPECT_NE(p, nullptr);
  return p->log();
}

// A record is stored at the size Kafka's record format v2 gives it in its
// batch, the batch's 61-byte header counted with its first record: value 0
// alone, then three records sent within linger.ms as one batch. A 100-byte
// value without a key: 1 attributes + 1 timestamp delta + 1 offset delta
// + 1 key length + 2 value length + 100 + 1 header count = 107, and 2 for
// the record's length. With the 3-byte key "abc": 3 more (its length
// takes the byte a null key's -1 took).
TEST(ProducerSizes, RecordsAreStoredAtTheirSizeInTheirBatch) {
  Cluster c({.zookeepers = 1, .brokers = 3, .seed = 11});
  start_one_partition_cluster(c);
  SendingProcess* p =
      start_sending_process(c, {{"bootstrap.servers", "10.0.1.1:9092"}, {"acks", "1"}, {"linger.ms", "50"}});
  warm_up(c, p);
  for (uint64_t v = 1; v <= 3; ++v) {
    std::optional<std::string> key;
    if (v == 2) key = "abc";
    p->producer().send("t", key, v, 100, [](const client::DeliveryReport& r) {
      EXPECT_EQ(r.outcome, client::Outcome::ok) << r.error;
    });
    c.run_for(Duration::millis(10));
  }
  c.run_for(Duration::seconds(1));
  const PartitionLog& log = leader_log(c);
  const std::vector<Record> records = log.read(Offset{0}, log.log_end(), INT64_MAX);
  ASSERT_EQ(records.size(), 4u);
  EXPECT_EQ(records[0].size, 61 + 109);
  EXPECT_EQ(records[1].size, 61 + 109);
  EXPECT_EQ(records[2].size, 109 + 3);  // offset delta 1, 10 ms later: still a byte each
  EXPECT_EQ(records[3].size, 109);
  EXPECT_FALSE(records[1].batch_end);
  EXPECT_TRUE(records[3].batch_end);
  EXPECT_EQ(log.size_bytes(), 2 * 61 + 4 * 109 + 3);
}

// Sends `n` 100-byte records 10 ms apart with `properties` (linger.ms,
// batch.size ...) after a warm-up; returns when each was acknowledged,
// measured from the first send, with its offset.
std::vector<Acked> hundred_byte_records(int n, const std::map<std::string, std::string>& properties,
                                        Time* first_sent) {
  Cluster c({.zookeepers = 1, .brokers = 3, .seed = 11});
  start_one_partition_cluster(c);
  std::map<std::string, std::string> all = {{"bootstrap.servers", "10.0.1.1:9092"}, {"acks", "1"}};
  for (const auto& [key, value] : properties) all[key] = value;
  SendingProcess* p = start_sending_process(c, all);
  warm_up(c, p);
  *first_sent = c.world().now();
  std::vector<Acked> acked;
  for (uint64_t v = 1; v <= static_cast<uint64_t>(n); ++v) {
    p->producer().send("t", std::nullopt, v, 100, [&acked, &c, v](const client::DeliveryReport& r) {
      EXPECT_EQ(r.outcome, client::Outcome::ok) << r.error;
      acked.push_back({v, c.world().now(), r.offset});
    });
    c.run_for(Duration::millis(10));
  }
  c.run_for(Duration::seconds(3));
  return acked;
}

// A request takes the queued records while they fit batch.size as
// librdkafka's message set writer counts them: the request's headers (109
// bytes here, the record batch's 61 among them), the records written so far
// at their size (109 each) and the next at its largest (136). With 400
// bytes two fit (354), a third does not (463): it waits for its own
// linger.ms.
TEST(ProducerSizes, ARequestTakesTheRecordsThatFitBatchSize) {
  Time first_sent;
  const std::vector<Acked> acked = hundred_byte_records(3, {{"linger.ms", "50"}, {"batch.size", "400"}}, &first_sent);
  ASSERT_EQ(acked.size(), 3u);
  // The producer's clock is in whole milliseconds (see ProducerLinger).
  const Time first_ms = Time::zero() + Duration::millis(first_sent.us() / 1000);
  EXPECT_EQ(acked[1].at, acked[0].at);  // one request
  EXPECT_GE(acked[0].at, first_ms + Duration::millis(50));
  EXPECT_LT(acked[0].at, first_ms + Duration::millis(60));
  EXPECT_GE(acked[2].at, first_ms + Duration::millis(70));  // sent at +20, its own linger.ms
}

// rd_kafka_msgq_may_wakeup: a partition's queue goes before linger.ms once
// its keys and values pass batch.size. With 1000 bytes, the eleventh
// 100-byte record (at +100 ms) wakes it; the request takes seven (109 + 7 x
// 109 = 872, an eighth counted at 136 would be 1008) and the four left,
// with the one sent after, wait out linger.ms from the eighth's send.
TEST(ProducerSizes, AQueueReachingBatchSizeGoesBeforeLinger) {
  Time first_sent;
  const std::vector<Acked> acked =
      hundred_byte_records(12, {{"linger.ms", "1000"}, {"batch.size", "1000"}}, &first_sent);
  ASSERT_EQ(acked.size(), 12u);
  for (size_t i = 0; i < 7; ++i) {
    EXPECT_EQ(acked[i].at, acked[0].at) << i;
    EXPECT_EQ(acked[i].offset, acked[0].offset + static_cast<int64_t>(i)) << i;
  }
  EXPECT_GE(acked[0].at, first_sent + Duration::millis(100));
  EXPECT_LT(acked[0].at, first_sent + Duration::millis(110));
  for (size_t i = 7; i < 12; ++i) EXPECT_EQ(acked[i].at, acked[7].at) << i;
  const Time first_ms = Time::zero() + Duration::millis(first_sent.us() / 1000);
  EXPECT_GE(acked[7].at, first_ms + Duration::millis(70 + 1000));
  EXPECT_LT(acked[7].at, first_ms + Duration::millis(70 + 1000 + 10));
}

// rd_kafka_msg_new0: a record whose largest size (36 bytes of overhead, key
// and value) is over message.max.bytes fails at once and is never queued.
TEST(ProducerSizes, ARecordOverMessageMaxBytesFailsAtOnce) {
  Cluster c({.zookeepers = 1, .brokers = 3, .seed = 11});
  start_one_partition_cluster(c);
  SendingProcess* p = start_sending_process(
      c, {{"bootstrap.servers", "10.0.1.1:9092"}, {"acks", "1"}, {"message.max.bytes", "1000"}});
  warm_up(c, p);
  std::vector<std::pair<uint64_t, client::DeliveryReport>> reports;
  const Time sent = c.world().now();
  Time failed_at;
  for (const auto& [v, bytes] : {std::pair<uint64_t, int32_t>{1, 965}, {2, 964}}) {
    p->producer().send("t", std::nullopt, v, bytes, [&, v](const client::DeliveryReport& r) {
      reports.emplace_back(v, r);
      if (r.outcome == client::Outcome::fail) failed_at = c.world().now();
    });
  }
  EXPECT_EQ(p->producer().outstanding(), 1u);  // the first never entered the queue
  c.run_for(Duration::seconds(1));
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_EQ(reports[0].first, 1u);
  EXPECT_EQ(reports[0].second.outcome, client::Outcome::fail);
  EXPECT_EQ(reports[0].second.error, "MSG_SIZE_TOO_LARGE");
  EXPECT_EQ(failed_at, sent);
  EXPECT_EQ(reports[1].first, 2u);
  EXPECT_EQ(reports[1].second.outcome, client::Outcome::ok) << reports[1].second.error;
}

// A broker's MESSAGE_TOO_LARGE fails the batch for good: librdkafka does not
// retry it (the Java client would split a batch of several records, KIP-126).
TEST(ProducerSizes, MessageTooLargeFromTheBrokerIsNotRetried) {
  Cluster c({.zookeepers = 1, .brokers = 3, .seed = 11});
  c.start();
  ASSERT_TRUE(c.await_ready());
  ASSERT_EQ(c.create_topic("t", 1, 3, {{"max.message.bytes", "200"}}), ErrorCode::none);
  SendingProcess* p = start_sending_process(c, {{"bootstrap.servers", "10.0.1.1:9092"}, {"acks", "1"}});
  warm_up(c, p);  // 61 + 109 = 170 bytes
  std::vector<client::DeliveryReport> reports;
  // 61 + 2 + 1 + 1 + 1 + 1 + 2 + 150 + 1 = 220 bytes
  p->producer().send("t", std::nullopt, 1, 150, [&](const client::DeliveryReport& r) { reports.push_back(r); });
  c.run_for(Duration::seconds(5));
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].outcome, client::Outcome::fail);
  EXPECT_EQ(reports[0].error, "MESSAGE_TOO_LARGE");
  EXPECT_EQ(c.committed_values({"t", 0}), (std::vector<uint64_t>{0}));
}

// A retry without idempotence takes the queued records that fit
// min(batch.size, message.max.bytes): with message.max.bytes 1000, seven
// 100-byte records a request (as above), so the twenty failed records go
// out again in three requests, not one.
TEST(ProducerSizes, ARetriedBatchTakesWhatFitsMessageMaxBytes) {
  Cluster c({.zookeepers = 1, .brokers = 3, .seed = 11});
  const TwentyRetried run =
      twenty_retried(c, {{"message.timeout.ms", "60000"}, {"message.max.bytes", "1000"}});
  EXPECT_EQ(run.retries_after_first_round, 20u);
  EXPECT_EQ(run.retries_after_second_round, 23u);  // three requests
  ASSERT_EQ(run.acked.size(), 20u);
  const PartitionLog& log = leader_log(c);
  const std::vector<Record> records = log.read(Offset{0}, log.log_end(), INT64_MAX);
  // Value 0; the twenty first tries, held in the cut connections and
  // delivered at the heal (the lab producer's duplicates); then the retries.
  ASSERT_EQ(records.size(), 41u);
  std::vector<size_t> retried_batches;
  size_t n = 0;
  for (size_t i = 21; i < records.size(); ++i) {
    EXPECT_EQ(records[i].value, i - 20);
    ++n;
    if (records[i].batch_end) {
      retried_batches.push_back(n);
      n = 0;
    }
  }
  EXPECT_EQ(retried_batches, (std::vector<size_t>{7, 7, 6}));
}

// A broker the controller cannot reach (it advertises an address nobody
// holds) keeps an empty metadata cache and answers Metadata naming no broker.
// The client's next request goes to the next bootstrap server, which knows
// the cluster; asking the first one again would never learn it. (Found in a
// `kafkasim fuzz --property liveness --seed 306` case, where a group member
// asked such a broker every 100 ms for two minutes.)
TEST(ClientMetadata, AnAnswerNamingNoBrokerSendsTheNextRequestElsewhere) {
  Cluster c({.brokers = 2});
  c.reconfigure_broker(2, {{"advertised.listeners", "PLAINTEXT://10.9.9.9:9092"}});
  c.start();
  // (await_ready would wait for broker 2 to learn of the cluster: it never does.)
  ASSERT_TRUE(c.run_until(
      [&] {
        return c.broker(1)->registered() && c.broker(2)->registered() && c.controller().has_value() &&
               c.broker(1)->metadata().brokers.size() == 2;
      },
      Duration::seconds(60)));
  ASSERT_EQ(c.create_topic("t", 1, 1, {}, {{0, {1}}}), ErrorCode::none);
  const auto real = [&](BrokerId id) {
    return client::BootstrapServer{c.world().network().address(c.broker_host(id)), 9092};
  };
  const auto empty = c.request(2, MetadataRequest{std::vector<std::string>{"t"}, false});
  ASSERT_TRUE(empty.has_value());
  ASSERT_TRUE(std::get<MetadataResponse>(*empty).brokers.empty()) << "broker 2 was never told of the cluster";
  client::ProducerConfig pc;
  pc.bootstrap = {real(2), real(1)};
  check::History history;
  const sim::HostId host = c.world().add_host("clients", "10.0.8.1");
  const sim::ProcessId p = c.world().add_process(host, "producer", [&] {
    return std::make_unique<RecordingProducer>(pc, RecordingProducer::Options{.topic = "t"}, &history);
  });
  c.world().start(p);
  EXPECT_TRUE(c.run_until([&] { return c.world().process_as<RecordingProducer>(p)->acknowledged() > 0; },
                          Duration::seconds(10)));
}

}  // namespace
}  // namespace kafka::testing
