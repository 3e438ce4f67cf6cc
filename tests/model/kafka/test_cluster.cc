// Scenario tests of brokers and the controller: the seeds' experiments.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>

#include "kafka/cluster.h"

namespace kafka::testing {
namespace {

using sim::Duration;

TEST(KafkaCluster, BrokersRegisterAndOneBecomesController) {
  Cluster c({.brokers = 3});
  InvariantChecker check(c);
  c.start();
  ASSERT_TRUE(c.await_ready());
  EXPECT_EQ(c.zk_children("/brokers/ids"), (std::vector<std::string>{"1", "2", "3"}));
  ASSERT_TRUE(c.controller().has_value());
  EXPECT_EQ(c.controller_epoch(), ControllerEpoch{1});
  auto data = c.zk_get("/controller");
  ASSERT_TRUE(data.has_value());
  EXPECT_EQ(znodes::decode_controller(*data), c.controller());
}

TEST(KafkaCluster, CreateTopicElectsLeadersAndReplicates) {
  Cluster c({.brokers = 3});
  c.world().trace().set_text_sink(&std::cerr);
  InvariantChecker check(c);
  c.start();
  ASSERT_EQ(c.create_topic("t", 3, 3), ErrorCode::none);
  for (int p = 0; p < 3; ++p) {
    auto s = c.state({"t", p});
    ASSERT_TRUE(s.has_value());
    EXPECT_NE(s->leader, kNoBroker);
    EXPECT_EQ(s->isr.size(), 3u);
    EXPECT_EQ(s->leader_epoch, LeaderEpoch{0});
  }
  auto r = c.produce({"t", 0}, {1, 2, 3}, -1);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->error, ErrorCode::none);
  EXPECT_EQ(r->base_offset, Offset{0});
  c.run_for(Duration::seconds(2));
  EXPECT_EQ(c.committed_values({"t", 0}), (std::vector<uint64_t>{1, 2, 3}));
  for (BrokerId b : c.broker_ids()) EXPECT_EQ(c.log_values(b, {"t", 0}), (std::vector<uint64_t>{1, 2, 3}));
}

}  // namespace
}  // namespace kafka::testing

namespace kafka::testing {
namespace {

// seeds/002: 3 ZooKeeper servers, 2 brokers. Stopping the controller moves
// the controller to the other broker with controller_epoch + 1; bringing the
// old one back does not take the role back.
TEST(KafkaSeed002, ControllerFailoverBumpsEpochOnceAndIsNotTakenBack) {
  Cluster c({.zookeepers = 3, .brokers = 2, .chroot = "/kafka"});
  InvariantChecker check(c);
  c.start();
  ASSERT_TRUE(c.await_ready());
  const BrokerId first = *c.controller();
  const BrokerId other = first == 1 ? 2 : 1;
  const ControllerEpoch before = *c.controller_epoch();
  c.stop_broker(first);
  ASSERT_TRUE(c.run_until([&] { return c.controller() == other; }, Duration::seconds(60)));
  c.run_for(Duration::seconds(5));
  EXPECT_EQ(c.controller_epoch(), ControllerEpoch{before.value + 1});
  EXPECT_EQ(c.zk_children("/brokers/ids"), std::vector<std::string>{std::to_string(other)});
  EXPECT_EQ(znodes::decode_controller(*c.zk_get("/controller")), other);
  c.start_broker(first);
  c.run_for(Duration::seconds(30));
  EXPECT_EQ(c.controller(), other);
  EXPECT_EQ(c.controller_epoch(), ControllerEpoch{before.value + 1});
  EXPECT_EQ(c.zk_children("/brokers/ids").size(), 2u);
}

// seeds/002: topic `playground`, 4 partitions, RF 2, leaders 2,1,2,1. The
// controller (broker 2) goes down hard: broker 1 takes over. On 2.3 (the
// notebook's release) the failover removes 2 from every ISR (leader -1
// where 2 led, epoch + 1; KAFKA-3143) and then elects 1 (epoch + 1 again) —
// exactly the seed's
// {"controller_epoch":8,"leader":1,"leader_epoch":2,"isr":[1]} /
// {"controller_epoch":8,"leader":1,"leader_epoch":1,"isr":[1]}.
// On 2.2 the failover only elects: epoch 1 where 2 led, and where 1 leads
// the state is left alone.
TEST(KafkaSeed002, PartitionStateAfterTheControllerBrokerDies) {
  for (VersionProfile v : {VersionProfile::v2_3, VersionProfile::v2_2}) {
    SCOPED_TRACE(to_string(v));
    const bool v23 = v == VersionProfile::v2_3;
    Cluster c({.zookeepers = 3, .brokers = 2, .version = v, .chroot = "/kafka"});
    InvariantChecker check(c);
    c.start();
    ASSERT_TRUE(c.await_ready());
    // Make broker 2 the controller, as in the seed.
    if (c.controller() != 2) {
      c.stop_broker(1);
      ASSERT_TRUE(c.run_until([&] { return c.controller() == 2; }, Duration::seconds(60)));
      c.start_broker(1);
      ASSERT_TRUE(c.await_ready());
    }
    ASSERT_EQ(c.create_topic("playground", 4, 2, {}, {{0, {2, 1}}, {1, {1, 2}}, {2, {2, 1}}, {3, {1, 2}}}),
              ErrorCode::none);
    const int64_t epoch = c.controller_epoch()->value;
    for (int p = 0; p < 4; ++p) {
      auto s = c.state({"playground", p});
      ASSERT_TRUE(s);
      EXPECT_EQ(s->leader, p % 2 == 0 ? 2 : 1);
      EXPECT_EQ(s->leader_epoch, LeaderEpoch{0});
      EXPECT_EQ(s->controller_epoch.value, epoch);
    }
    c.run_for(Duration::seconds(2));  // both followers fetch every partition
    c.kill_broker(2);
    ASSERT_TRUE(c.run_until([&] { return c.controller() == 1 && c.state({"playground", 0})->leader == 1; },
                            Duration::seconds(60)));
    c.run_for(Duration::seconds(2));
    for (int p = 0; p < 4; ++p) {
      auto s = c.state({"playground", p});
      ASSERT_TRUE(s);
      EXPECT_EQ(s->leader, 1) << p;
      if (v23) {
        EXPECT_EQ(s->controller_epoch.value, epoch + 1) << p;
        EXPECT_EQ(s->leader_epoch, LeaderEpoch{p % 2 == 0 ? 2 : 1}) << p;
        EXPECT_EQ(s->isr, std::vector<BrokerId>{1}) << p;
      } else if (p % 2 == 0) {
        EXPECT_EQ(s->controller_epoch.value, epoch + 1) << p;
        EXPECT_EQ(s->leader_epoch, LeaderEpoch{1}) << p;
        EXPECT_EQ(s->isr, std::vector<BrokerId>{1}) << p;
      } else {
        EXPECT_EQ(s->controller_epoch.value, epoch) << p;
        EXPECT_EQ(s->leader_epoch, LeaderEpoch{0}) << p;
        EXPECT_EQ(s->isr, (std::vector<BrokerId>{1, 2})) << p;
      }
    }
    EXPECT_EQ(*c.zk_get("/brokers/topics/playground/partitions/0/state"),
              fmt::format(R"({{"controller_epoch":{},"leader":1,"version":1,"leader_epoch":{},"isr":[1]}})",
                          epoch + 1, v23 ? 2 : 1));
    if (!v23) {
      // Nor does broker 1 drop 2 from them later: an idle partition's
      // follower whose log end matched the leader's is never out of sync
      // (Partition.getOutOfSyncReplicas), so 2 stays in their ISRs.
      c.run_for(Duration::seconds(30));
      for (int p : {1, 3}) EXPECT_EQ(c.state({"playground", p})->isr, (std::vector<BrokerId>{1, 2})) << p;
    }
  }
}

// Kafka's partition state machine: a partition the controller found without
// a live leader is OfflinePartition until an election serves it, so when its
// stored leader comes back it is elected again, the same broker with a new
// leader epoch (triggerOnlinePartitionStateChange). On 2.2 the failover
// leaves such a partition's stored leader as it was (no OfflineReplica step,
// KAFKA-3143): the only record of it being offline is the state machine's.
// Followers told of the old epoch while the leader was gone would otherwise
// ignore the leader's return (the same epoch) and never fetch
// (scenarios/regressions/offline_partition_leader_returns_elected_again_22.json).
TEST(KafkaCluster, AnOfflinePartitionIsElectedAgainWhenItsLeaderReturns) {
  for (VersionProfile v : {VersionProfile::v2_2, VersionProfile::v2_3}) {
    SCOPED_TRACE(to_string(v));
    Cluster c({.zookeepers = 1, .brokers = 3, .version = v});
    InvariantChecker check(c);
    c.start();
    ASSERT_TRUE(c.await_ready());
    const BrokerId controller = *c.controller();
    const BrokerId leader = controller == 1 ? 2 : 1;
    const BrokerId survivor = 6 - controller - leader;
    ASSERT_EQ(c.create_topic("t", 1, 1, {}, {{0, {leader}}}), ErrorCode::none);
    ASSERT_EQ(c.produce({"t", 0}, {1, 2, 3}, -1)->error, ErrorCode::none);
    // The controller and the leader die together: the next controller finds
    // the partition with its leader gone and no one to elect.
    c.kill_broker(controller);
    c.kill_broker(leader);
    ASSERT_TRUE(c.run_until([&] { return c.controller() == survivor; }, Duration::seconds(60)));
    c.run_for(Duration::seconds(1));
    auto s = c.state({"t", 0});
    ASSERT_TRUE(s);
    EXPECT_EQ(s->isr, std::vector<BrokerId>{leader});
    const bool v22 = v == VersionProfile::v2_2;
    EXPECT_EQ(s->leader, v22 ? leader : kNoBroker);  // 2.3: the OfflineReplica step
    EXPECT_EQ(s->leader_epoch, LeaderEpoch{v22 ? 0 : 1});
    c.start_broker(leader);
    ASSERT_TRUE(c.run_until([&] { return c.state({"t", 0})->leader_epoch.value == (v22 ? 1 : 2); },
                            Duration::seconds(60)));
    s = c.state({"t", 0});
    EXPECT_EQ(s->leader, leader);
    EXPECT_EQ(s->controller_epoch, *c.controller_epoch());
    ASSERT_TRUE(c.run_until([&] { return c.broker(leader) && c.broker(leader)->partition({"t", 0}) &&
                                         c.broker(leader)->partition({"t", 0})->is_leader(); },
                            Duration::seconds(10)));
    EXPECT_EQ(c.produce({"t", 0}, {4}, -1)->error, ErrorCode::none);
  }
}

// KafkaController.processBrokerChange takes one look at /brokers/ids and
// handles what changed in this order: new brokers start, bounced brokers
// fail and start again, dead brokers fail. Here the controller, paused, looks
// once after N restarted (bounced) and then D, t-0's leader, stopped: N
// leaves the ISR first (its replica went offline), so when D fails nobody in
// the ISR is left and t-0 goes offline with ISR [D]. Failing D and N
// together, then starting N, would elect N from ISR [N] — a leader Kafka
// would not pick.
TEST(KafkaCluster, ABrokerChangeHandlesBouncedBrokersBeforeDeadOnes) {
  for (VersionProfile v : {VersionProfile::v2_2, VersionProfile::v3_9}) {
    SCOPED_TRACE(to_string(v));
    Cluster c({.zookeepers = 1, .brokers = 3, .version = v,
               .broker_properties = {{"controlled.shutdown.enable", "false"}}});
    InvariantChecker check(c);
    c.world().trace().keep_lines(true);
    c.start();
    ASSERT_TRUE(c.await_ready());
    const BrokerId controller = *c.controller();
    const std::vector<BrokerId> others = c.broker_ids_except(controller);
    const BrokerId d = others[0], n = others[1];
    ASSERT_EQ(c.create_topic("t", 1, 2, {}, {{0, {d, n}}}), ErrorCode::none);
    ASSERT_EQ(c.produce({"t", 0}, {1, 2, 3}, -1)->error, ErrorCode::none);
    ASSERT_EQ(c.state({"t", 0})->isr, (std::vector<BrokerId>{d, n}));
    const LeaderEpoch before = c.state({"t", 0})->leader_epoch;
    c.pause_broker(controller);
    c.stop_broker(n);
    c.run_for(Duration::millis(500));
    c.start_broker(n);
    ASSERT_TRUE(c.run_until([&] { return registered(c, n); }, Duration::seconds(2)));
    c.stop_broker(d);
    ASSERT_TRUE(c.run_until([&] { return !registered(c, d); }, Duration::seconds(2)));
    c.resume_broker(controller);
    c.run_for(Duration::seconds(3));
    ASSERT_EQ(*c.controller(), controller) << "the controller kept its session";
    EXPECT_EQ(count_kind(c, "controller_broker_change"), 1u) << "one look";
    const auto s = c.state({"t", 0});
    EXPECT_EQ(s->leader, kNoBroker);
    EXPECT_EQ(s->isr, std::vector<BrokerId>{d});
    EXPECT_EQ(s->leader_epoch, LeaderEpoch{before.value + 2});  // N out of the ISR, then D's leadership
  }
}

// A broker's startup begins with UpdateMetadata (KafkaController
// .onBrokerStartup): the returning broker gets every partition's state on
// the same connection ahead of its LeaderAndIsr, so when it becomes a
// follower its metadata cache already names the live brokers and the
// partition; and the brokers already up learn of it before the step's
// election (of u-0, which only the returning broker holds) is written. So
// here, with the controller's link to the leader 3 ms long and to the
// returning broker 0.3 ms, the leader has heard of the return when that
// broker becomes its follower; sent at the step's end, that news would be
// a few milliseconds late.
TEST(KafkaCluster, AReturningBrokerGetsUpdateMetadataBeforeItsLeaderAndIsr) {
  Cluster c({.brokers = 3, .version = VersionProfile::v3_9});
  c.world().trace().keep_lines(true);
  c.start();
  ASSERT_TRUE(c.await_ready());
  const BrokerId controller = *c.controller();
  const std::vector<BrokerId> others = c.broker_ids_except(controller);
  const BrokerId leader = others[0], f = others[1];
  const TopicPartition tp{"t", 0};
  ASSERT_EQ(c.create_topic("t", 1, 3, {}, {{0, {leader, f, controller}}}), ErrorCode::none);
  ASSERT_EQ(c.create_topic("u", 1, 1, {}, {{0, {f}}}), ErrorCode::none);
  ASSERT_TRUE(c.run_until([&] { return c.state(tp)->isr.size() == 3; }, Duration::seconds(30)));
  const sim::HostId ctl_host = c.broker_host(controller);
  c.world().network().set_link_latency(ctl_host, c.broker_host(leader), sim::LatencyModel::constant(Duration::micros(3000)));
  c.world().network().set_link_latency(ctl_host, c.broker_host(f), sim::LatencyModel::constant(Duration::micros(300)));
  c.kill_broker(f);
  ASSERT_TRUE(c.run_until([&] { return c.broker(leader)->metadata().brokers.count(f) == 0; }, Duration::seconds(60)));
  const std::string followed = fmt::format("\"proc\":\"kafka-{}\",\"kind\":\"become_follower\"", f);
  const auto follows = [&] {
    size_t n = 0;
    for (const std::string& line : c.world().trace().lines()) n += line.find(followed) != std::string::npos;
    return n;
  };
  const size_t before = follows();
  c.start_broker(f);
  ASSERT_TRUE(c.run_until([&] { return follows() > before; }, Duration::seconds(60)));
  const Broker::MetadataCache& cache = c.broker(f)->metadata();
  EXPECT_EQ(cache.brokers.count(leader), 1u);
  EXPECT_EQ(cache.brokers.count(f), 1u);
  EXPECT_EQ(cache.partitions.count(tp), 1u);
  EXPECT_EQ(c.broker(leader)->metadata().brokers.count(f), 1u) << "the leader has not heard of the return";
  ASSERT_TRUE(c.run_until([&] { return c.state(tp)->isr.size() == 3; }, Duration::seconds(30)));
}

// The controller's requests to a broker never overtake one another: after a
// failed send, RequestSendThread retries the request at the head of the
// broker's queue and sends nothing behind it meanwhile. Broker b is cut off
// from the controller while topic t is created, so t's UpdateMetadata to b
// fails when controller.socket.timeout.ms passes; the cut is healed and topic
// u created before the retry. b must learn of t no later than of u (sent
// at once, u's would have reached b 100 ms before t's).
TEST(KafkaCluster, ControllerRequestsToABrokerKeepTheirOrderAcrossAFailedSend) {
  Cluster c({.brokers = 3});
  c.start();
  ASSERT_TRUE(c.await_ready());
  const BrokerId controller = *c.controller();
  const std::vector<BrokerId> others = c.broker_ids_except(controller);
  const BrokerId b = others[0], x = others[1];
  cut(c, controller, b);
  ASSERT_EQ(c.create_topic("t", 1, 1, {}, {{0, {x}}}), ErrorCode::none);
  const Controller& ctl = *c.broker(controller)->controller();
  ASSERT_TRUE(c.run_until([&] { return ctl.held_requests(b) > 0; }, Duration::seconds(60)));
  c.world().network().heal();
  ASSERT_EQ(c.create_topic("u", 1, 1, {}, {{0, {x}}}), ErrorCode::none);
  const auto knows = [&](const std::string& topic) { return c.broker(b)->metadata().partitions.count({topic, 0}) != 0; };
  ASSERT_TRUE(c.run_until([&] { return knows("u"); }, Duration::seconds(5)));
  EXPECT_TRUE(knows("t")) << "u's UpdateMetadata overtook t's";
  EXPECT_EQ(ctl.held_requests(b), 0u);
}

// Each step of a look sends its requests as it ends. Broker x, leader of
// t-0, is cut off from ZooKeeper until its session expires; the controller
// moves t-0 to d, which x, still serving, never hears. Then, in one look, x
// is back (new) and d gone: the startup step tells x to follow d (epoch 1),
// and the failure step's state (no leader, epoch 2) names no live leader, so
// x keeps epoch 1 as d's follower. Sent as one batch, only the last state
// would reach x, which would skip it and go on leading in epoch 0.
TEST(KafkaCluster, EachStepOfABrokerChangeSendsItsOwnRequests) {
  for (VersionProfile v : {VersionProfile::v2_2, VersionProfile::v3_9}) {
    SCOPED_TRACE(to_string(v));
    Cluster c({.zookeepers = 1, .brokers = 3, .version = v,
               .broker_properties = {{"controlled.shutdown.enable", "false"}}});
    InvariantChecker check(c);
    c.start();
    ASSERT_TRUE(c.await_ready());
    const BrokerId controller = *c.controller();
    const std::vector<BrokerId> others = c.broker_ids_except(controller);
    const BrokerId x = others[0], d = others[1];
    const TopicPartition tp{"t", 0};
    ASSERT_EQ(c.create_topic("t", 1, 2, {}, {{0, {x, d}}}), ErrorCode::none);
    ASSERT_EQ(c.produce(tp, {1, 2, 3}, -1)->error, ErrorCode::none);
    cut_from_zookeeper(c, x);
    ASSERT_TRUE(c.run_until([&] { return c.state(tp)->leader == d; }, Duration::seconds(60)));
    ASSERT_TRUE(c.broker(x)->partition(tp)->is_leader()) << "x has not heard";
    c.pause_broker(controller);
    c.world().network().heal();
    ASSERT_TRUE(c.run_until([&] { return registered(c, x); }, Duration::seconds(30)));
    c.stop_broker(d);
    ASSERT_TRUE(c.run_until([&] { return !registered(c, d); }, Duration::seconds(2)));
    c.resume_broker(controller);
    c.run_for(Duration::seconds(3));
    ASSERT_EQ(*c.controller(), controller);
    const auto s = c.state(tp);
    EXPECT_EQ(s->leader, kNoBroker);
    EXPECT_EQ(s->isr, std::vector<BrokerId>{d});
    EXPECT_EQ(s->leader_epoch, LeaderEpoch{2});
    const Partition* at_x = c.broker(x)->partition(tp);
    EXPECT_FALSE(at_x->is_leader());
    EXPECT_EQ(at_x->leader(), d);
    EXPECT_EQ(at_x->leader_epoch(), LeaderEpoch{1});
  }
}

// seeds/002: "Restarting the server does not automatically update the
// leader immediately, but will update them after a while" — the preferred
// replica election after leader.imbalance.check.interval.seconds. On the
// 2.3 profile, the notebook's release: the leader writes the ISR change
// itself and the controller hears of it through an ISR change
// notification, seconds later.
TEST(KafkaSeed002, LeadershipReturnsToThePreferredReplicaAfterTheImbalanceCheck) {
  Cluster c({.zookeepers = 3, .brokers = 2, .version = VersionProfile::v2_3, .chroot = "/kafka"});
  InvariantChecker check(c);
  c.start();
  ASSERT_TRUE(c.await_ready());
  ASSERT_EQ(c.create_topic("playground", 4, 2, {}, {{0, {2, 1}}, {1, {1, 2}}, {2, {2, 1}}, {3, {1, 2}}}),
            ErrorCode::none);
  c.stop_broker(2);
  ASSERT_TRUE(c.run_until([&] { return c.state({"playground", 0})->leader == 1 && !c.broker(2); },
                          Duration::seconds(60)));
  c.start_broker(2);
  // Back in the ISR soon ...
  ASSERT_TRUE(c.run_until([&] { return c.state({"playground", 0})->isr.size() == 2; },
                          Duration::seconds(60)));
  EXPECT_EQ(c.state({"playground", 0})->leader, 1);
  // ... but leader again only once the controller's periodic check runs.
  const sim::Time back = c.world().now();
  ASSERT_TRUE(c.run_until([&] { return c.state({"playground", 0})->leader == 2; },
                          Duration::seconds(400)));
  EXPECT_GT(c.world().now() - back, Duration::seconds(10));
  c.run_for(Duration::seconds(1));  // the other partition's write lands
  EXPECT_EQ(c.state({"playground", 2})->leader, 2);
  EXPECT_EQ(c.state({"playground", 1})->leader, 1);
}

// seeds/001: 1 ZooKeeper, 3 brokers, light_bulb with 3 partitions and RF 3;
// stop broker 3, then 2, then 1.
TEST(KafkaSeed001, StoppingBrokersOneByOne) {
  Cluster c({.zookeepers = 1, .brokers = 3});
  InvariantChecker check(c);
  c.start();
  ASSERT_EQ(c.create_topic("light_bulb", 3, 3), ErrorCode::none);
  auto leaders_on = [&](BrokerId b) {
    int n = 0;
    for (int p = 0; p < 3; ++p) n += c.state({"light_bulb", p})->leader == b ? 1 : 0;
    return n;
  };
  EXPECT_EQ(leaders_on(1) + leaders_on(2) + leaders_on(3), 3);
  c.stop_broker(3);
  ASSERT_TRUE(c.run_until([&] { return c.broker(3) == nullptr; }, Duration::seconds(60)));
  c.run_for(Duration::seconds(5));
  EXPECT_EQ(leaders_on(3), 0);
  for (int p = 0; p < 3; ++p) {
    auto s = c.state({"light_bulb", p});
    EXPECT_EQ(s->isr.size(), 2u) << "under-replicated: RF 3, two in sync";
    EXPECT_TRUE(c.produce({"light_bulb", p}, {100u + p}, -1)->error == ErrorCode::none);
  }
  c.stop_broker(2);
  ASSERT_TRUE(c.run_until([&] { return c.broker(2) == nullptr; }, Duration::seconds(60)));
  c.run_for(Duration::seconds(5));
  EXPECT_EQ(leaders_on(1), 3);
  for (int p = 0; p < 3; ++p) EXPECT_EQ(c.state({"light_bulb", p})->isr, std::vector<BrokerId>{1});
  c.stop_broker(1);
  ASSERT_TRUE(c.run_until([&] { return c.broker(1) == nullptr; }, Duration::seconds(60)));
  c.run_for(Duration::seconds(5));
  EXPECT_TRUE(c.zk_children("/brokers/ids").empty());
  EXPECT_FALSE(c.controller().has_value());
  EXPECT_FALSE(c.zk_get("/controller").has_value());
  // The last state written: broker 1 still leads in ZooKeeper (nobody was
  // left to change it), and nothing answers.
  for (int p = 0; p < 3; ++p) EXPECT_FALSE(c.produce({"light_bulb", p}, {7}, 1, 2000).has_value());
  // Bringing broker 1 back makes every partition available again, with its data.
  c.start_broker(1);
  ASSERT_TRUE(c.run_until([&] {
    auto b = c.broker(1);
    return b != nullptr && b->partition({"light_bulb", 0}) != nullptr &&
           b->partition({"light_bulb", 0})->is_leader();
  }, Duration::seconds(60)));
  EXPECT_EQ(c.committed_values({"light_bulb", 0}), std::vector<uint64_t>{100});
}

// seeds/002: `tiny` with segment.ms=60000 and retention.ms=600000, one
// message a second: a segment a minute, the oldest deleted after ten.
TEST(KafkaSeed002, SegmentsRollEveryMinuteAndAreDeletedAfterTen) {
  Cluster c({.zookeepers = 1, .brokers = 2});
  c.start();
  ASSERT_EQ(c.create_topic("tiny", 2, 2, {{"segment.ms", "60000"}, {"retention.ms", "600000"}}),
            ErrorCode::none);
  const TopicPartition tp{"tiny", 0};
  auto leader = [&] { return c.broker(c.state(tp)->leader)->partition(tp); };
  for (int i = 0; i < 9 * 60; ++i) {
    c.produce_async(tp, {static_cast<uint64_t>(i)}, 1, std::make_shared<std::optional<ProducePartitionResponse>>());
    c.run_for(Duration::seconds(1));
  }
  // Nine minutes: nine segments, nothing deleted yet.
  EXPECT_EQ(leader()->log().segments().size(), 9u);
  EXPECT_EQ(leader()->log().log_start(), Offset{0});
  for (int i = 9 * 60; i < 16 * 60; ++i) {
    c.produce_async(tp, {static_cast<uint64_t>(i)}, 1, std::make_shared<std::optional<ProducePartitionResponse>>());
    c.run_for(Duration::seconds(1));
  }
  // Retention runs every 5 minutes (first after 30 s): at 15:30 it deleted
  // every segment whose newest record was older than 10 minutes.
  const auto& segments = leader()->log().segments();
  EXPECT_GE(segments.size(), 10u);
  EXPECT_LE(segments.size(), 12u);
  EXPECT_GT(leader()->log().log_start(), Offset{200});
  for (size_t i = 1; i < segments.size(); ++i) {
    EXPECT_NEAR(static_cast<double>(segments[i].base.value - segments[i - 1].base.value), 60.0, 2.0);
  }
  // The follower deleted its own old segments too.
  for (BrokerId b : c.broker_ids()) {
    if (b == c.state(tp)->leader) continue;
    EXPECT_GT(c.broker(b)->partition(tp)->log().log_start(), Offset{200});
  }
}

}  // namespace
}  // namespace kafka::testing

namespace kafka::testing {
namespace {

// seeds/004, first part: three brokers on one machine, each with its own
// broker.id, listener port and log.dirs, sharing one ZooKeeper.
TEST(KafkaSeed004, ThreeBrokersOnOneHost) {
  Cluster c({.zookeepers = 1, .brokers = 3, .brokers_share_host = true});
  InvariantChecker check(c);
  c.start();
  ASSERT_TRUE(c.await_ready());
  ASSERT_EQ(c.create_topic("t", 3, 3), ErrorCode::none);
  for (int p = 0; p < 3; ++p) ASSERT_EQ(c.produce({"t", p}, {static_cast<uint64_t>(p)}, -1)->error, ErrorCode::none);
  // Each broker's logs live under its own directory on the one disk.
  for (BrokerId b : c.broker_ids()) {
    const std::vector<std::string> files =
        c.world().disk(c.broker_host(b)).list(fmt::format("/tmp/kafka-logs-{}/t-0/", b));
    EXPECT_FALSE(files.empty()) << "broker " << b;
  }
  auto reg = znodes::decode_broker(2, *c.zk_get("/brokers/ids/2"));
  ASSERT_TRUE(reg.has_value());
  EXPECT_EQ(reg->endpoints.at(0).port, 9002);
  EXPECT_EQ(reg->endpoints.at(0).host, "10.0.1.1");
  c.kill_broker(2);
  c.run_for(Duration::seconds(30));
  for (int p = 0; p < 3; ++p) EXPECT_NE(c.state({"t", p})->leader, 2);
}

// seeds/004, second part: two machines, each with one ZooKeeper server and
// one broker — a two-server ensemble. The notebook expects the other machine
// to keep working when one fails; a two-server ensemble has no quorum with
// one server, so nothing in ZooKeeper can change: no leader moves, the ISR
// cannot shrink, and the partitions led on the lost machine stay offline.
TEST(KafkaSeed004, TwoMachinesEachWithZooKeeperAndBrokerDoNotSurviveEitherLoss) {
  Cluster c({.zookeepers = 2, .brokers = 2, .colocated = true});
  InvariantChecker check(c);
  c.start();
  ASSERT_TRUE(c.await_ready());
  ASSERT_EQ(c.create_topic("t", 3, 2), ErrorCode::none);
  const BrokerId lost = 2, kept = 1;
  std::vector<int> led_by_lost, led_by_kept;
  for (int p = 0; p < 3; ++p) (c.state({"t", p})->leader == lost ? led_by_lost : led_by_kept).push_back(p);
  ASSERT_FALSE(led_by_lost.empty());
  ASSERT_FALSE(led_by_kept.empty());
  c.power_off_broker(lost);  // the whole machine: ZooKeeper 2 and broker 2
  c.run_for(Duration::seconds(60));
  EXPECT_FALSE(c.world().process_as<zk::Server>(c.zk_process(1))->serving()) << "no quorum";
  for (int p : led_by_lost) {
    EXPECT_EQ(c.state({"t", p})->leader, lost) << "nobody could move it";
    EXPECT_FALSE(c.produce({"t", p}, {1}, 1, 2000).has_value());
  }
  for (int p : led_by_kept) {
    EXPECT_EQ(c.produce({"t", p}, {2}, 1, 2000)->error, ErrorCode::none) << "acks=1 still works";
    auto all = c.produce({"t", p}, {3}, -1, 5000);
    ASSERT_TRUE(all.has_value());
    EXPECT_EQ(all->error, ErrorCode::request_timed_out) << "the ISR cannot shrink without ZooKeeper";
    EXPECT_EQ(c.broker(kept)->partition({"t", p})->isr().size(), 2u);
  }
}

}  // namespace
}  // namespace kafka::testing
