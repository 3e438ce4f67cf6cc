// The producer in time. Batching: linger.ms holds a batch back until it
// has waited that long (librdkafka's queue.buffering.max.ms, the Java
// client's linger.ms), so records sent meanwhile go out with it in one
// request; with linger.ms 0 each goes out as it is sent. Expiry: a record
// that cannot be sent fails at message.timeout.ms even when nothing else
// wakes the producer.
#include <gtest/gtest.h>

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
  c.start();
  EXPECT_TRUE(c.await_ready());
  EXPECT_EQ(c.create_topic("t", 1, 3), ErrorCode::none);
  SendingProcess* p =
      start_sending_process(c, {{"bootstrap.servers", "10.0.1.1:9092"}, {"acks", "1"}, {"linger.ms", linger_ms}});
  LingerRun run;
  bool warm = false;
  p->producer().send("t", std::nullopt, 0, 100, [&](const client::DeliveryReport& r) {
    EXPECT_EQ(r.outcome, client::Outcome::ok) << r.error;
    warm = true;
  });
  c.run_for(Duration::seconds(2));
  EXPECT_TRUE(warm);
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

// A record the producer could not send: when and how it was reported.
struct Expiry {
  bool reported = false;
  Time at;
  client::DeliveryReport report;
};

void expect_timed_out_at(const Expiry& e, Time sent, int64_t timeout_ms) {
  ASSERT_TRUE(e.reported) << "no delivery report";
  EXPECT_EQ(e.report.error, "MSG_TIMED_OUT");
  // At the millisecond it timed out (the producer's clock is in whole ms).
  EXPECT_GE(e.at, sent + Duration::millis(timeout_ms - 1));
  EXPECT_LE(e.at, sent + Duration::millis(timeout_ms));
}

// No broker ever answers: the topic's partitions are never known, and the
// record fails at message.timeout.ms, not at whatever next wakes the producer.
TEST(ProducerExpiry, ARecordForATopicNeverKnownTimesOut) {
  Cluster c({.zookeepers = 1, .brokers = 3, .seed = 11});
  c.start();
  ASSERT_TRUE(c.await_ready());
  ASSERT_EQ(c.create_topic("t", 1, 3), ErrorCode::none);
  for (BrokerId b = 1; b <= 3; ++b) c.power_off_broker(b);
  SendingProcess* p = start_sending_process(
      c, {{"bootstrap.servers", "10.0.1.1:9092,10.0.1.2:9092"}, {"message.timeout.ms", "5000"}});
  const Time sent = c.world().now();
  Expiry e;
  p->producer().send("t", std::nullopt, 1, 100, [&](const client::DeliveryReport& r) {
    e = {true, c.world().now(), r};
  });
  c.run_for(Duration::seconds(20));
  expect_timed_out_at(e, sent, 5000);
  EXPECT_EQ(e.report.outcome, client::Outcome::fail);  // never sent: not written
  EXPECT_EQ(p->producer().outstanding(), 0u);
}

// The partition was known, then every broker stopped: the first try is
// refused, the leader is forgotten and no metadata answer names another, so
// the batch waits for a leader until message.timeout.ms.
TEST(ProducerExpiry, ABatchWaitingForALeaderNoOneNamesTimesOut) {
  Cluster c({.zookeepers = 1, .brokers = 3, .seed = 11});
  c.start();
  ASSERT_TRUE(c.await_ready());
  ASSERT_EQ(c.create_topic("t", 1, 3), ErrorCode::none);
  SendingProcess* p = start_sending_process(
      c, {{"bootstrap.servers", "10.0.1.1:9092"}, {"acks", "1"}, {"message.timeout.ms", "5000"}});
  bool warm = false;
  p->producer().send("t", std::nullopt, 0, 100, [&](const client::DeliveryReport& r) {
    EXPECT_EQ(r.outcome, client::Outcome::ok) << r.error;
    warm = true;
  });
  c.run_for(Duration::seconds(2));
  ASSERT_TRUE(warm);
  for (BrokerId b = 1; b <= 3; ++b) c.kill_broker(b);  // the hosts answer: refused
  const Time sent = c.world().now();
  Expiry e;
  p->producer().send("t", std::nullopt, 1, 100, [&](const client::DeliveryReport& r) {
    e = {true, c.world().now(), r};
  });
  c.run_for(Duration::seconds(20));
  expect_timed_out_at(e, sent, 5000);
  EXPECT_EQ(p->producer().outstanding(), 0u);
}

}  // namespace
}  // namespace kafka::testing
