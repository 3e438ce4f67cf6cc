// Scenario tests of single mechanisms: controlled shutdown, a zombie
// controller, restarts racing the session timeout, auto-creation, the
// offsets topic, idempotent producers, consumer fetches, epoch fencing,
// and the determinism of the whole.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "kafka/cluster.h"

namespace kafka::testing {
namespace {

using sim::Duration;

TEST(KafkaBroker, ControlledShutdownMovesLeadershipBeforeTheBrokerLeaves) {
  Cluster c({.brokers = 3});
  c.world().trace().keep_lines(true);
  InvariantChecker check(c);
  c.start();
  ASSERT_TRUE(c.await_ready());
  ASSERT_EQ(c.create_topic("t", 3, 3), ErrorCode::none);
  const BrokerId ctl = *c.controller();
  const ControllerEpoch epoch = *c.controller_epoch();
  BrokerId victim = kNoBroker;
  for (BrokerId b : c.broker_ids()) {
    if (b != ctl) victim = b;
  }
  c.stop_broker(victim);
  // While the broker is still registered, leadership has already moved.
  ASSERT_TRUE(c.run_until([&] {
    for (int p = 0; p < 3; ++p) {
      if (c.state({"t", p})->leader == victim) return false;
    }
    return true;
  }, Duration::seconds(30)));
  EXPECT_EQ(c.zk_children("/brokers/ids").size(), 3u) << "moved before the znode went";
  ASSERT_TRUE(c.run_until([&] { return c.broker(victim) == nullptr; }, Duration::seconds(30)));
  EXPECT_EQ(count_kind(c, "controlled_shutdown_succeeded"), 1u);
  EXPECT_EQ(c.controller_epoch(), epoch) << "the controller did not change";
  for (int p = 0; p < 3; ++p) {
    auto s = c.state({"t", p});
    EXPECT_EQ(std::count(s->isr.begin(), s->isr.end(), victim), 0);
    EXPECT_EQ(s->isr.size(), 2u);
  }
  // Writes never stopped being accepted.
  for (int p = 0; p < 3; ++p) EXPECT_EQ(c.produce({"t", p}, {9}, -1)->error, ErrorCode::none);
}

TEST(KafkaBroker, ControlledShutdownOfTheLastReplicaGivesUpAfterTheRetries) {
  Cluster c({.brokers = 3, .broker_properties = {{"controlled.shutdown.retry.backoff.ms", "1000"}}});
  c.world().trace().keep_lines(true);
  c.start();
  ASSERT_TRUE(c.await_ready());
  const BrokerId ctl = *c.controller();
  std::vector<BrokerId> others;
  for (BrokerId b : c.broker_ids()) {
    if (b != ctl) others.push_back(b);
  }
  const BrokerId other = others[0];
  const BrokerId follower = others[1];
  // RF 2 but the follower is out of the ISR: the other broker leads alone
  // and nobody can take over. (The leader still reaches the controller,
  // which takes the change: AlterIsr on 2.8.)
  ASSERT_EQ(c.create_topic("t", 1, 2, {}, {{0, {other, follower}}}), ErrorCode::none);
  c.world().network().block(c.broker_host(other), c.broker_host(follower));
  c.world().network().block(c.broker_host(follower), c.broker_host(other));
  ASSERT_TRUE(c.run_until([&] { return c.state({"t", 0})->isr.size() == 1; }, Duration::seconds(60)));
  c.world().network().heal();
  c.stop_broker(other, Duration::seconds(60));
  ASSERT_TRUE(c.run_until([&] { return c.broker(other) == nullptr; }, Duration::seconds(60)));
  EXPECT_EQ(count_kind(c, "controlled_shutdown_retry"), 3u) << "controlled.shutdown.max.retries";
  EXPECT_EQ(count_kind(c, "controlled_shutdown_failed"), 1u);
}

// The partitions a broker in a controlled shutdown led are elected away
// with LeaderAndIsr sent to it too (leaderForControlledShutdown names the
// live or shutting-down replicas): it becomes their follower at once, and
// does not go on acting as their leader while a partition that cannot move
// makes it retry for controlled.shutdown.retry.backoff.ms.
TEST(KafkaBroker, ABrokerInAControlledShutdownFollowsWhatItLedAtOnce) {
  Cluster c({.brokers = 3});
  c.start();
  ASSERT_TRUE(c.await_ready());
  const BrokerId ctl = *c.controller();
  std::vector<BrokerId> others;
  for (BrokerId b : c.broker_ids()) {
    if (b != ctl) others.push_back(b);
  }
  const BrokerId victim = others[0];
  const BrokerId third = others[1];
  // t moves to the controller's broker; s cannot move: its other replica
  // cannot fetch from the victim and is out of its ISR.
  ASSERT_EQ(c.create_topic("t", 1, 3, {}, {{0, {victim, ctl, third}}}), ErrorCode::none);
  ASSERT_EQ(c.create_topic("s", 1, 2, {}, {{0, {victim, third}}}), ErrorCode::none);
  c.world().network().block(c.broker_host(third), c.broker_host(victim));
  ASSERT_TRUE(c.run_until([&] { return c.state({"s", 0})->isr.size() == 1; }, Duration::seconds(60)));
  ASSERT_EQ(c.state({"t", 0})->leader, victim);
  c.stop_broker(victim, Duration::seconds(60));
  ASSERT_TRUE(c.run_until([&] { return c.state({"t", 0})->leader == ctl; }, Duration::seconds(10)));
  c.run_for(Duration::millis(200));
  ASSERT_NE(c.broker(victim), nullptr) << "still retrying its controlled shutdown";
  const Partition* t = c.broker(victim)->partition({"t", 0});
  ASSERT_NE(t, nullptr);
  EXPECT_FALSE(t->is_leader()) << "the victim still acts as t-0's leader";
  const Partition* s = c.broker(victim)->partition({"s", 0});
  ASSERT_NE(s, nullptr);
  EXPECT_TRUE(s->is_leader());
}

// A broker in a controlled shutdown is not online for an offline election
// (ControllerContext.isReplicaOnline without includeShuttingDownBrokers), and
// a partition it still leads counts as leaderless when another broker dies
// (KafkaController.onReplicasBecomeOffline): with unclean election allowed,
// its out-of-sync replica takes over.
TEST(KafkaBroker, ABrokerFailureElectsAwayFromABrokerInAControlledShutdown) {
  Cluster c({.brokers = 4,
             .version = VersionProfile::v2_2,
             .broker_properties = {{"controlled.shutdown.retry.backoff.ms", "5000"}}});
  c.world().trace().keep_lines(true);
  c.start();
  ASSERT_TRUE(c.await_ready());
  const std::vector<BrokerId> others = c.broker_ids_except(*c.controller());
  ASSERT_EQ(others.size(), 3u);
  const BrokerId leaving = others[0], cut = others[1], dying = others[2];
  // "s" is led by `leaving` alone once `cut` is out of its ISR, so the
  // controlled shutdown cannot finish and `leaving` stays shutting down.
  ASSERT_EQ(c.create_topic("s", 1, 2, {{"unclean.leader.election.enable", "true"}}, {{0, {leaving, cut}}}),
            ErrorCode::none);
  c.world().network().block(c.broker_host(leaving), c.broker_host(cut));
  c.world().network().block(c.broker_host(cut), c.broker_host(leaving));
  // A record `cut` cannot fetch: it lags, and leaves the ISR.
  ASSERT_EQ(c.produce({"s", 0}, {4}, 1)->error, ErrorCode::none);
  ASSERT_TRUE(c.run_until([&] { return c.state({"s", 0})->isr.size() == 1; }, Duration::seconds(60)));

  c.stop_broker(leaving, Duration::seconds(60));
  ASSERT_TRUE(c.run_until([&] { return count_kind(c, "controlled_shutdown_retry") >= 1; }, Duration::seconds(30)));
  EXPECT_EQ(c.state({"s", 0})->leader, leaving) << "nobody else is in the ISR";
  c.power_off_broker(dying);
  ASSERT_TRUE(c.run_until([&] { return c.state({"s", 0})->leader != leaving; }, Duration::seconds(30)));
  EXPECT_NE(c.broker(leaving), nullptr) << "still shutting down";
  EXPECT_EQ(c.state({"s", 0})->leader, cut);
  EXPECT_EQ(c.state({"s", 0})->isr, (std::vector<BrokerId>{cut}));
  EXPECT_EQ(count_kind(c, "unclean_leader_election"), 1u);
}

// Log.analyzeAndValidateRecords: a batch over its topic's max.message.bytes
// is refused whole (MESSAGE_TOO_LARGE) and nothing of it is appended; a
// batch of exactly the limit is taken. The brokers' message.max.bytes is the
// default a topic's max.message.bytes overrides. A batch over segment.bytes
// is refused after that check.
TEST(KafkaBroker, ABatchOverMaxMessageBytesIsRefusedWhole) {
  Cluster c({.zookeepers = 1, .brokers = 3, .seed = 5, .broker_properties = {{"message.max.bytes", "300"}}});
  c.start();
  ASSERT_TRUE(c.await_ready());
  ASSERT_EQ(c.create_topic("t", 1, 3), ErrorCode::none);
  ASSERT_EQ(c.create_topic("big", 1, 3, {{"max.message.bytes", "1000"}}), ErrorCode::none);
  const TopicPartition t{"t", 0};
  // Cluster::produce sends one batch, each record `size` bytes.
  EXPECT_EQ(c.produce(t, {1, 2, 3}, 1, 30000, 100)->error, ErrorCode::none);  // 300: the limit
  const auto refused = c.produce(t, {4, 5, 6}, 1, 30000, 101);
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->error, ErrorCode::message_too_large);
  EXPECT_EQ(c.produce(t, {7}, -1, 30000, 301)->error, ErrorCode::message_too_large);
  EXPECT_EQ(c.produce(t, {8}, 1)->error, ErrorCode::none);
  c.run_for(Duration::seconds(1));
  EXPECT_EQ(c.committed_values(t), (std::vector<uint64_t>{1, 2, 3, 8}));
  // The topic's own limit.
  EXPECT_EQ(c.produce({"big", 0}, {9}, 1, 30000, 1000)->error, ErrorCode::none);
  EXPECT_EQ(c.produce({"big", 0}, {10}, 1, 30000, 1001)->error, ErrorCode::message_too_large);
  // Log.append: records that would not fit one segment are refused too
  // (RECORD_LIST_TOO_LARGE), once they passed max.message.bytes.
  ASSERT_EQ(c.create_topic("seg", 1, 3, {{"segment.bytes", "200"}}), ErrorCode::none);
  EXPECT_EQ(c.produce({"seg", 0}, {11, 12}, 1, 30000, 100)->error, ErrorCode::none);
  EXPECT_EQ(c.produce({"seg", 0}, {13, 14}, 1, 30000, 101)->error, ErrorCode::record_list_too_large);
  EXPECT_EQ(c.produce({"seg", 0}, {15}, 1, 30000, 301)->error, ErrorCode::message_too_large);
}

// KafkaApis.handleProduceRequest: an acks=0 produce gets no answer, so one
// that fails makes the broker close the connection, for the client to
// notice and look at its metadata again; one that succeeds leaves it open.
TEST(KafkaBroker, AFailedAcksZeroProduceClosesTheConnection) {
  Cluster c({.zookeepers = 1, .brokers = 3, .seed = 5});
  c.start();
  ASSERT_TRUE(c.await_ready());
  ASSERT_EQ(c.create_topic("t", 1, 1), ErrorCode::none);
  const BrokerId leader = c.state({"t", 0})->leader;
  const BrokerId other = c.broker_ids_except(leader).front();
  const auto acks_zero = [](uint64_t value) {
    ProduceBatch b;
    b.tp = {"t", 0};
    Record r;
    r.value = value;
    r.size = 70;
    b.records.push_back(r);
    return ProduceRequest{0, 30000, {b}};
  };
  int written = 0;
  const auto done = [&written](SendError e, const Response*) { written += e == SendError::none ? 1 : 0; };
  c.send(leader, acks_zero(1), done, /*expect_response=*/false);
  c.send(other, acks_zero(2), done, /*expect_response=*/false);
  c.run_for(Duration::seconds(1));
  EXPECT_EQ(written, 2);
  EXPECT_TRUE(c.client_connected(leader));
  EXPECT_FALSE(c.client_connected(other));  // NOT_LEADER_FOR_PARTITION
  EXPECT_EQ(c.committed_values({"t", 0}), std::vector<uint64_t>{1});
}

// The profile's rules reach the broker's partitions: from 3.7 (KAFKA-15583)
// min.insync.replicas counts at most the replication factor, so an acks=all
// write to an RF-2 topic with min.insync.replicas=3 succeeds in the 3.9
// profile and is refused before it.
TEST(KafkaBroker, MinInsyncAboveTheReplicationFactorIsCappedFrom37) {
  for (VersionProfile v : {VersionProfile::v2_2, VersionProfile::v3_9}) {
    SCOPED_TRACE(to_string(v));
    Cluster c({.brokers = 2, .version = v});
    c.start();
    ASSERT_TRUE(c.await_ready());
    ASSERT_EQ(c.create_topic("t", 1, 2, {{"min.insync.replicas", "3"}}), ErrorCode::none);
    const auto r = c.produce({"t", 0}, {1}, -1);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->error, v == VersionProfile::v3_9 ? ErrorCode::none : ErrorCode::not_enough_replicas);
  }
}

// --- a ZooKeeper answer lost with the connection ---------------------------------------
// Kafka sends such a request again once connected (KafkaZkClient
// retryRequestUntilConnected) and finds out whether its first try was
// applied. These tests drop the answer on purpose: they run until ZooKeeper
// holds the write and power off the server the broker is connected to
// before its answer arrives (a powered-off host's kernel sends nothing more),
// whatever the timing of the run.

// The host of the ZooKeeper server broker `b` is connected to, if it is.
std::optional<sim::HostId> zk_host_of(Cluster& c, BrokerId b) {
  const std::optional<std::string> server = c.broker(b)->zk_server();
  if (!server) return std::nullopt;
  for (int i = 1; i <= c.options().zookeepers; ++i) {
    const sim::HostId h = c.world().host_of(c.zk_process(i));
    if (c.world().network().address(h) == *server) return h;
  }
  return std::nullopt;
}

// Powers off the ZooKeeper server broker `b` is connected to.
void power_off_zk_server_of(Cluster& c, BrokerId b) {
  const std::optional<sim::HostId> h = zk_host_of(c, b);
  ASSERT_TRUE(h.has_value()) << "broker " << b << " is not connected to ZooKeeper";
  c.world().power_off(*h);
}

// Loses the answer to what broker `b` has just sent to its ZooKeeper
// server, without powering it off: the server stays in the ensemble (a
// quorum of five keeps three), but nothing passes between it and `b`'s host.
void cut_broker_from_its_zk_server(Cluster& c, BrokerId b) {
  const std::optional<sim::HostId> h = zk_host_of(c, b);
  ASSERT_TRUE(h.has_value()) << "broker " << b << " is not connected to ZooKeeper";
  c.world().network().block(c.broker_host(b), *h);
  c.world().network().block(*h, c.broker_host(b));
}

// Runs until broker `b`'s ZooKeeper session has sent requests and not had
// their answers as `wanted` says (it is asked after every event).
bool run_until_awaiting(Cluster& c, BrokerId b, const std::function<bool(const zk::Client&)>& wanted) {
  return c.run_until([&] {
    const Broker* broker = c.broker(b);
    const zk::Client* zk = broker == nullptr ? nullptr : broker->zk_client();
    return zk != nullptr && wanted(*zk);
  }, Duration::seconds(60));
}

// Runs until broker `b` has sent `Write` again and been answered, and has
// sent the read of `path` that checks the answer: the moment that read's
// answer can be lost. (A read of the same path sent for another reason,
// while the write was still out, is not it.)
template <typename Write>
void run_until_checking_read(Cluster& c, BrokerId b, std::optional<std::string_view> write_path,
                             std::string_view path) {
  ASSERT_TRUE(run_until_awaiting(c, b, [&](const zk::Client& zk) { return zk.awaiting<Write>(write_path); }))
      << "the write was not sent again";
  ASSERT_TRUE(run_until_awaiting(c, b, [&](const zk::Client& zk) {
    return !zk.awaiting<Write>(write_path) && zk.awaiting<zk::GetDataRequest>(path);
  })) << "no read of " << path << " checked the write";
}

// Starts `c` (one broker) and runs it until ZooKeeper has applied the
// broker's controller election while its answer is still on the way.
void run_until_election_applied(Cluster& c) {
  c.world().trace().keep_lines(true);
  c.start();
  ASSERT_TRUE(c.run_until([&] { return c.zk_get("/controller").has_value(); }, Duration::seconds(30)));
  ASSERT_FALSE(c.controller().has_value()) << "the multi's answer is still on its way";
}

// Runs until broker 1 is controller, whose multi ZooKeeper applied: one
// election, epoch 1.
void expect_elected_once(Cluster& c, Duration limit) {
  ASSERT_TRUE(c.run_until([&] { return c.controller().has_value(); }, limit))
      << "the broker whose multi was applied never became controller";
  EXPECT_EQ(*c.controller(), 1);
  EXPECT_EQ(c.controller_epoch()->value, 1) << "one election, not two";
  EXPECT_EQ(count_kind(c, "controller_elected"), 1u);
}

TEST(KafkaBroker, AControllerElectionWhoseAnswerIsLostStillElectsThatBroker) {
  Cluster c({.zookeepers = 3, .brokers = 1, .version = VersionProfile::v2_2});
  ASSERT_NO_FATAL_FAILURE(run_until_election_applied(c));
  ASSERT_NO_FATAL_FAILURE(power_off_zk_server_of(c, 1));
  ASSERT_NO_FATAL_FAILURE(expect_elected_once(c, Duration::seconds(60)));
}

// The reads that find out whether the lost multi was applied are sent again
// too when their own answers are lost (checkControllerAndEpoch's reads go
// through retryRequestUntilConnected): the first read's server is powered
// off, the second's cut off from the broker, each right after the broker
// sent its read. Five servers, so that a quorum stays up.
TEST(KafkaBroker, TheReadsCheckingALostElectionAnswerAreSentAgainWhenTheirAnswersAreLost) {
  Cluster c({.zookeepers = 5, .brokers = 1, .version = VersionProfile::v2_2});
  ASSERT_NO_FATAL_FAILURE(run_until_election_applied(c));
  ASSERT_NO_FATAL_FAILURE(power_off_zk_server_of(c, 1));
  // Sent again, the multi finds /controller there (NODEEXISTS): the broker
  // reads it back.
  ASSERT_NO_FATAL_FAILURE(run_until_checking_read<zk::MultiOp>(c, 1, std::nullopt, "/controller"));
  ASSERT_NO_FATAL_FAILURE(power_off_zk_server_of(c, 1));
  ASSERT_TRUE(run_until_awaiting(c, 1, [](const zk::Client& zk) {
    return zk.awaiting<zk::GetDataRequest>("/controller_epoch");
  }));
  ASSERT_NO_FATAL_FAILURE(cut_broker_from_its_zk_server(c, 1));
  ASSERT_NO_FATAL_FAILURE(expect_elected_once(c, Duration::seconds(120)));
}

// An election answered after the broker began to shut down starts no
// controller (it resigned already; /controller goes with its session).
TEST(KafkaBroker, AnElectionAnsweredAfterTheShutdownBeganStartsNoController) {
  Cluster c({.zookeepers = 3, .brokers = 1, .version = VersionProfile::v2_2});
  ASSERT_NO_FATAL_FAILURE(run_until_election_applied(c));
  c.stop_broker(1);
  ASSERT_TRUE(c.run_until([&] { return c.broker(1) == nullptr; }, Duration::seconds(60)));
  EXPECT_EQ(count_kind(c, "controller_elected"), 0u);
  EXPECT_EQ(count_kind(c, "broker_stopped"), 1u);
}

// The follower goes silent: cut off from the leader, which then takes one
// acks=1 record that the follower cannot fetch. False if the record failed.
bool silence_follower(Cluster& c, BrokerId leader, BrokerId follower, const TopicPartition& tp) {
  cut(c, leader, follower);
  const auto r = c.produce(tp, {1}, 1);
  return r.has_value() && r->error == ErrorCode::none;
}

// Starts `c`, creates topic "t" with one partition on its first two brokers
// (the first leads) and cuts them apart after one record: runs until the
// leader's ISR shrink is in ZooKeeper while its answer is still on the way.
void run_until_isr_shrink_applied(Cluster& c, const TopicPartition& tp) {
  c.world().trace().keep_lines(true);
  c.start();
  ASSERT_TRUE(c.await_ready());
  const std::vector<BrokerId> ids = c.broker_ids();
  const BrokerId leader = ids[0], follower = ids[1];
  ASSERT_EQ(c.create_topic(tp.topic, 1, 2, {}, {{tp.partition, {leader, follower}}}), ErrorCode::none);
  ASSERT_TRUE(silence_follower(c, leader, follower, tp));  // the follower falls behind
  ASSERT_TRUE(c.run_until([&] { return c.state(tp)->isr.size() == 1; }, Duration::seconds(60)));
  ASSERT_EQ(c.broker(leader)->partition(tp)->isr().size(), 2u) << "the answer is still on its way";
}

TEST(KafkaBroker, AnIsrWriteWhoseAnswerIsLostIsTakenAsWritten) {
  Cluster c({.zookeepers = 3, .brokers = 2, .version = VersionProfile::v2_2});
  const TopicPartition tp{"t", 0};
  ASSERT_NO_FATAL_FAILURE(run_until_isr_shrink_applied(c, tp));
  const BrokerId leader = c.broker_ids()[0];
  ASSERT_NO_FATAL_FAILURE(power_off_zk_server_of(c, leader));
  ASSERT_TRUE(c.run_until([&] { return c.broker(leader)->partition(tp)->isr().size() == 1; },
                          Duration::seconds(30)))
      << "the leader never took its own write as done";
  // With the znode's version learnt, the next ISR change goes through too.
  c.world().network().heal();
  ASSERT_TRUE(c.run_until([&] {
    return c.state(tp)->isr.size() == 2 && c.broker(leader)->partition(tp)->isr().size() == 2;
  }, Duration::seconds(60)));
  EXPECT_EQ(count_kind(c, "isr_update_failed"), 0u);
}

// The ISR write's answer is lost, the write sent again fails BADVERSION (the
// first one was applied), and the read that checks the znode loses its
// answer too: it is sent again (checkLeaderAndIsrZkData reads through
// retryRequestUntilConnected), and the leader takes its write as done.
TEST(KafkaBroker, TheReadCheckingALostIsrWriteIsSentAgainWhenItsAnswerIsLost) {
  Cluster c({.zookeepers = 5, .brokers = 2, .version = VersionProfile::v2_2});
  const TopicPartition tp{"t", 0};
  const std::string state_path = "/brokers/topics/t/partitions/0/state";
  ASSERT_NO_FATAL_FAILURE(run_until_isr_shrink_applied(c, tp));
  const BrokerId leader = c.broker_ids()[0];
  ASSERT_NO_FATAL_FAILURE(power_off_zk_server_of(c, leader));
  // Sent again, the write fails BADVERSION: the leader reads the znode.
  ASSERT_NO_FATAL_FAILURE(run_until_checking_read<zk::SetDataOp>(c, leader, state_path, state_path));
  ASSERT_NO_FATAL_FAILURE(power_off_zk_server_of(c, leader));
  ASSERT_TRUE(c.run_until([&] { return c.broker(leader)->partition(tp)->isr().size() == 1; },
                          Duration::seconds(60)))
      << "the leader never took its own write as done";
  EXPECT_EQ(count_kind(c, "isr_update_failed"), 0u);
}

// An ISR change notification lost on its way to ZooKeeper (its server
// powered off right after the leader sent it) is sent again
// (propagateIsrChanges goes through retryRequestUntilConnected): the
// controller learns the new ISR and tells the other brokers.
TEST(KafkaBroker, AnIsrChangeNotificationLostOnItsWayIsSentAgain) {
  Cluster c({.zookeepers = 5, .brokers = 3, .version = VersionProfile::v2_2});
  c.world().trace().keep_lines(true);
  c.start();
  ASSERT_TRUE(c.await_ready());
  const std::vector<BrokerId> ids = c.broker_ids();
  const BrokerId leader = ids[0], follower = ids[1], other = ids[2];
  const TopicPartition tp{"t", 0};
  ASSERT_EQ(c.create_topic("t", 1, 2, {}, {{0, {leader, follower}}}), ErrorCode::none);
  // The third broker learns a partition's ISR only from the controller.
  const auto isr_at_other = [&]() -> std::vector<BrokerId> {
    const auto& known = c.broker(other)->metadata().partitions;
    auto it = known.find(tp);
    return it == known.end() ? std::vector<BrokerId>{} : it->second.isr;
  };
  ASSERT_TRUE(c.run_until([&] { return isr_at_other().size() == 2; }, Duration::seconds(30)));
  ASSERT_TRUE(silence_follower(c, leader, follower, tp));  // the follower falls behind
  ASSERT_TRUE(run_until_awaiting(c, leader, [](const zk::Client& zk) {
    return zk.awaiting<zk::CreateOp>("/isr_change_notification/isr_change_");
  }));
  ASSERT_NO_FATAL_FAILURE(power_off_zk_server_of(c, leader));
  ASSERT_TRUE(c.run_until([&] { return isr_at_other() == std::vector<BrokerId>{leader}; },
                          Duration::seconds(60)))
      << "the controller never heard of the leader's ISR change";
}

// Cuts broker `b` off from the (only) ZooKeeper server and from every other
// broker, not from the clients.
// A started three-broker cluster with topic t, one partition, replicas
// [leader, follower, controller] all in the ISR, led by a broker that is not
// the controller; nullopt (and a failure) if it did not come up.
struct ThreeReplicas {
  BrokerId ctl = kNoBroker;
  BrokerId leader = kNoBroker;
  BrokerId follower = kNoBroker;
  TopicPartition tp{"t", 0};
};
std::optional<ThreeReplicas> start_three_replicas(Cluster& c) {
  c.start();
  if (!c.await_ready()) {
    ADD_FAILURE() << "the cluster did not come up";
    return std::nullopt;
  }
  ThreeReplicas r;
  r.ctl = *c.controller();
  const std::vector<BrokerId> others = c.broker_ids_except(r.ctl);
  r.leader = others[0];
  r.follower = others[1];
  if (c.create_topic("t", 1, 3, {}, {{0, {r.leader, r.follower, r.ctl}}}) != ErrorCode::none ||
      !c.run_until([&] { return c.state(r.tp)->isr.size() == 3; }, Duration::seconds(30))) {
    ADD_FAILURE() << "t-0 never had three in-sync replicas";
    return std::nullopt;
  }
  return r;
}

void cut_from_zookeeper_and_brokers(Cluster& c, BrokerId b) {
  std::vector<sim::HostId> hosts = {c.world().host_of(c.zk_process(1))};
  for (BrokerId other : c.broker_ids_except(b)) hosts.push_back(c.broker_host(other));
  for (sim::HostId h : hosts) {
    c.world().network().block(c.broker_host(b), h);
    c.world().network().block(h, c.broker_host(b));
  }
}

// A controller whose session expires answers the ControlledShutdown it was
// working on — without an error, listing the partition the broker still
// leads, since Kafka's state changes swallow their failed writes — and the
// broker going down tries the new controller after
// controlled.shutdown.retry.backoff.ms, not after its request timed out.
// Here the controller is cut off from ZooKeeper while it handles the
// request, and learns that its session expired at the heal.
TEST(KafkaBroker, AControllerThatResignsAnswersTheControlledShutdownItWasHandling) {
  Cluster c({.brokers = 3, .broker_properties = {{"controlled.shutdown.retry.backoff.ms", "1000"}}});
  c.world().trace().keep_lines(true);
  InvariantChecker check(c);
  const auto started = start_three_replicas(c);
  ASSERT_TRUE(started);
  const auto [ctl, leader, follower, tp] = *started;
  cut_from_zookeeper(c, ctl);
  const sim::Time stop = c.world().now();
  c.stop_broker(leader, Duration::seconds(120));
  // Past the session timeout (18 s on 2.8), short of the 30 s request timeout.
  c.run_for(Duration::seconds(22));
  EXPECT_EQ(count_kind(c, "controlled_shutdown_succeeded"), 0u);
  c.world().network().heal();
  ASSERT_TRUE(c.run_until([&] { return c.broker(leader) == nullptr; }, Duration::seconds(60)));
  // Answered without an error but with the partition still led (its
  // writes failed with the session), then tried again.
  size_t still_led = 0;
  for (const std::string& line : c.world().trace().lines()) {
    still_led += line.find("\"controlled_shutdown_retry\"") != std::string::npos &&
                 line.find("\"error\":\"NONE\",\"remaining\":1") != std::string::npos;
  }
  EXPECT_EQ(still_led, 1u);
  EXPECT_EQ(count_kind(c, "controlled_shutdown_retry"), 1u);
  EXPECT_EQ(count_kind(c, "controlled_shutdown_succeeded"), 1u);
  EXPECT_LT(c.world().now() - stop, Duration::seconds(30)) << "it waited for its request to time out";
  EXPECT_NE(*c.controller(), ctl);
}

// 2.2 and 2.8 find the controller for a controlled shutdown in ZooKeeper
// (/controller, then its registration), waiting for a lost connection to
// come back; from 3.0 (KAFKA-9189) a broker asks the controller its metadata
// cache names. A broker cut off from ZooKeeper alone, told to stop, gets
// nowhere on 2.8 until the heal, and is done at once on 3.1 and 3.9.
TEST(KafkaBroker, ControlledShutdownLooksUpTheControllerInZooKeeperBefore3x) {
  for (VersionProfile v : {VersionProfile::v2_8, VersionProfile::v3_1, VersionProfile::v3_9}) {
    SCOPED_TRACE(to_string(v));
    const bool reads_zookeeper = v < VersionProfile::v3_1;
    Cluster c({.brokers = 3, .version = v});
    c.world().trace().keep_lines(true);
    const auto started = start_three_replicas(c);
    ASSERT_TRUE(started);
    const BrokerId leader = started->leader;
    cut_from_zookeeper(c, leader);
    c.stop_broker(leader, Duration::seconds(120));
    c.run_for(Duration::seconds(10));  // short of the session timeout (18 s)
    EXPECT_EQ(count_kind(c, "controlled_shutdown_succeeded"), reads_zookeeper ? 0u : 1u);
    EXPECT_EQ(c.broker(leader) != nullptr, reads_zookeeper);
    c.world().network().heal();
    ASSERT_TRUE(c.run_until([&] { return c.broker(leader) == nullptr; }, Duration::seconds(60)));
    EXPECT_EQ(count_kind(c, "controlled_shutdown_succeeded"), 1u);
    EXPECT_NE(c.state(started->tp)->leader, leader);
  }
}

// An AlterIsr whose write dies with the controller's session is answered
// (KafkaZkClient.updateLeaderAndIsr fails each partition's write with the
// session, processAlterIsr answers UNKNOWN_SERVER_ERROR for each) rather
// than left to the leader's request timeout. The leader then tries the same
// change again from inside the answer's callback (ReplicationRules::
// alter_isr_retry): 2.8.2's manager refuses it and the change stays pending
// until the new controller's LeaderAndIsr; 3.1.0's refuses it too, but the
// refusal puts the partition back on its committed ISR, free to propose
// again; 3.9's sends it again. The controller is cut off from ZooKeeper
// just before the leader proposes to drop a silent follower, and learns
// that its session expired at the heal.
TEST(KafkaBroker, AnAlterIsrTheControllerWasWritingWhenItsSessionExpiredIsAnswered) {
  for (VersionProfile v : {VersionProfile::v2_8, VersionProfile::v3_1, VersionProfile::v3_9}) {
    SCOPED_TRACE(to_string(v));
    Cluster c({.brokers = 3, .version = v});
    c.world().trace().keep_lines(true);
    const auto started = start_three_replicas(c);
    ASSERT_TRUE(started);
    const auto [ctl, leader, follower, tp] = *started;
    ASSERT_TRUE(silence_follower(c, leader, follower, tp));
    const Partition* p = c.broker(leader)->partition(tp);
    // The follower lags from now; the shrink comes after replica.lag.time.max.ms (30 s).
    c.run_for(Duration::seconds(25));
    cut_from_zookeeper(c, ctl);
    ASSERT_TRUE(c.run_until([&] { return p->isr_write_in_flight; }, Duration::seconds(30)));
    const sim::Time proposed = c.world().now();
    // Past the session timeout (18 s), short of the request's 30 s.
    c.run_for(Duration::seconds(22));
    // Heal the controller's cut only: the follower stays silent.
    c.world().network().heal();
    cut(c, leader, follower);
    ASSERT_TRUE(c.run_until([&] { return count_kind(c, "isr_update_failed") > 0; }, Duration::seconds(30)));
    EXPECT_LT(c.world().now() - proposed, Duration::seconds(30)) << "answered before the request timed out";
    const auto failed_with = [&](const char* error) {
      size_t n = 0;
      for (const std::string& line : c.world().trace().lines()) {
        n += line.find("\"isr_update_failed\"") != std::string::npos && line.find(error) != std::string::npos;
      }
      return n;
    };
    EXPECT_EQ(failed_with("UNKNOWN_SERVER_ERROR"), 1u);
    EXPECT_EQ(count_kind(c, "alter_isr_failed"), 0u) << "answered partition by partition";
    const AlterIsrRetry retry = v == VersionProfile::v2_8   ? AlterIsrRetry::stays_pending
                                : v == VersionProfile::v3_1 ? AlterIsrRetry::falls_back
                                                            : AlterIsrRetry::sent_again;
    switch (retry) {
      case AlterIsrRetry::stays_pending:
        EXPECT_TRUE(p->isr_write_in_flight) << "2.8.2 keeps the change pending";
        EXPECT_EQ(c.broker(leader)->alter_isr_changes_unsent(), 0u) << "and does not send it again";
        break;
      case AlterIsrRetry::falls_back:
        EXPECT_EQ(failed_with("OPERATION_NOT_ATTEMPTED"), 1u);
        EXPECT_FALSE(p->isr_write_in_flight) << "3.1.0 falls back to the committed ISR";
        EXPECT_EQ(p->isr().size(), 3u);
        EXPECT_EQ(c.broker(leader)->alter_isr_changes_unsent(), 0u);
        break;
      case AlterIsrRetry::sent_again:
        EXPECT_TRUE(p->isr_write_in_flight) << "3.9 keeps the change";
        EXPECT_EQ(c.broker(leader)->alter_isr_changes_unsent(), 1u) << "and sends it again";
        break;
    }
    // Healed for good, everything settles: the follower is back in the ISR
    // and nothing is left pending (whichever broker the controller is now: it
    // may be the follower, which the leader cannot reach while it is cut).
    c.world().network().heal();
    ASSERT_TRUE(c.run_until([&] { return !p->isr_write_in_flight && c.state(tp)->isr.size() == 3; },
                            Duration::seconds(60)));
    EXPECT_EQ(p->isr().size(), 3u);
    EXPECT_NE(*c.controller(), ctl);
  }
}

// A follower goes silent with a record it has not fetched, and the leader's
// high watermark stops below that record until the follower is taken out of
// the ISR. From 3.1 (KAFKA-13091: Partition.handleAlterIsrUpdate calls
// maybeIncrementLeaderHW) the leader moves its high watermark as the shrink
// is committed; in 2.8 it moves at the next fetch or append, here the
// controller replica's next fetch, up to replica.fetch.wait.max.ms later.
TEST(KafkaBroker, ACommittedIsrShrinkMovesTheHighWatermarkAtOnceFrom31) {
  for (VersionProfile v : {VersionProfile::v2_8, VersionProfile::v3_1, VersionProfile::v3_9}) {
    SCOPED_TRACE(to_string(v));
    Cluster c({.brokers = 3, .version = v});
    c.world().trace().keep_lines(true);
    const auto started = start_three_replicas(c);
    ASSERT_TRUE(started);
    const auto [ctl, leader, follower, tp] = *started;
    ASSERT_TRUE(silence_follower(c, leader, follower, tp));
    const Partition* p = c.broker(leader)->partition(tp);
    const Offset end = p->log().log_end();
    c.run_for(Duration::seconds(5));
    EXPECT_LT(p->high_watermark(), end) << "the silent follower holds it";
    // Checked after every event: the high watermark as the shrink is applied.
    ASSERT_TRUE(c.run_until([&] { return count_kind(c, "isr_shrink") == 1; }, Duration::seconds(60)));
    ASSERT_EQ(p->isr(), (std::vector<BrokerId>{leader, ctl}));
    const bool at_once = v >= VersionProfile::v3_1;
    EXPECT_EQ(p->high_watermark() == end, at_once) << p->high_watermark().value << " of " << end.value;
    const sim::Time committed = c.world().now();
    ASSERT_TRUE(c.run_until([&] { return p->high_watermark() == end; }, Duration::seconds(2)));
    EXPECT_LE(c.world().now() - committed, Duration::millis(500)) << "replica.fetch.wait.max.ms";
  }
}

// An acks=all write waits for the high watermark, then is checked against
// min.insync.replicas once more (Partition.checkEnoughReplicasReachOffset).
// From 2.7 that check counts the maximal ISR: a member whose addition is
// still on its way to the controller counts. Here the follower goes silent
// once the write is appended and is dropped from the ISR (ISR [leader],
// min.insync.replicas 2), then is healed:
//   2.8: the high watermark stays (nothing is fetched or appended); the
//     follower fetches the write while its return to the ISR is pending,
//     and the write is acknowledged — the maximal ISR has two members;
//   3.1: the shrink's commit moves the high watermark past the write at once
//     (KAFKA-13091), with one member: NOT_ENOUGH_REPLICAS_AFTER_APPEND;
//   3.9: the high watermark stays while the ISR is below min.insync.replicas
//     (KAFKA-15583), so the write is acknowledged once the return commits.
TEST(KafkaBroker, AnAcksAllWriteOutlivingAnIsrShrinkAsEachReleaseAnswersIt) {
  for (VersionProfile v : {VersionProfile::v2_8, VersionProfile::v3_1, VersionProfile::v3_9}) {
    SCOPED_TRACE(to_string(v));
    // The shrink within the write's 30 s.
    Cluster c({.brokers = 3, .version = v, .broker_properties = {{"replica.lag.time.max.ms", "5000"}}});
    c.world().trace().keep_lines(true);
    c.start();
    ASSERT_TRUE(c.await_ready());
    const BrokerId ctl = *c.controller();
    const std::vector<BrokerId> others = c.broker_ids_except(ctl);
    const BrokerId leader = others[0], follower = others[1];
    const TopicPartition tp{"t", 0};
    ASSERT_EQ(c.create_topic("t", 1, 2, {{"min.insync.replicas", "2"}}, {{0, {leader, follower}}}), ErrorCode::none);
    ASSERT_TRUE(c.run_until([&] { return c.state(tp)->isr.size() == 2; }, Duration::seconds(30)));
    cut(c, leader, follower);
    auto out = std::make_shared<std::optional<ProducePartitionResponse>>();
    c.produce_async(tp, {1}, -1, out);
    ASSERT_TRUE(c.run_until([&] { return c.state(tp)->isr.size() == 1; }, Duration::seconds(60)));
    c.run_for(Duration::seconds(1));
    if (v == VersionProfile::v3_1) {
      ASSERT_TRUE(out->has_value());
      EXPECT_EQ((*out)->error, ErrorCode::not_enough_replicas_after_append) << to_string((*out)->error);
      continue;
    }
    ASSERT_FALSE(out->has_value()) << "the write waits for the high watermark";
    c.world().network().heal();
    ASSERT_TRUE(c.run_until([&] { return out->has_value(); }, Duration::seconds(30)));
    EXPECT_EQ((*out)->error, ErrorCode::none) << to_string((*out)->error);
    EXPECT_EQ(c.state(tp)->isr.size(), v == VersionProfile::v2_8 ? 1u : 2u)
        << "the follower's return is committed " << (v == VersionProfile::v2_8 ? "after" : "before");
    ASSERT_TRUE(c.run_until([&] { return c.state(tp)->isr.size() == 2; }, Duration::seconds(30)));
  }
}

// The controller's own controlled shutdown: the answer makes it resign as
// it goes down, and that resignation does not answer the request a second
// time (as a NOT_CONTROLLER that would start another attempt).
TEST(KafkaBroker, TheControllersOwnControlledShutdownIsAnsweredOnce) {
  Cluster c({.brokers = 3});
  c.world().trace().keep_lines(true);
  const auto started = start_three_replicas(c);
  ASSERT_TRUE(started);
  const BrokerId ctl = started->ctl;
  c.stop_broker(ctl);
  ASSERT_TRUE(c.run_until([&] { return c.broker(ctl) == nullptr; }, Duration::seconds(60)));
  EXPECT_EQ(count_kind(c, "controlled_shutdown_succeeded"), 1u);
  EXPECT_EQ(count_kind(c, "controlled_shutdown_retry"), 0u);
  EXPECT_NE(c.state(started->tp)->leader, ctl);
}

// The controller broker's own controlled shutdown, handled by its own
// controller when that controller's session expires: the answer (nothing
// left to move) finishes the broker's shutdown, which stops the controller
// again — while it is still stopping. Found by the fuzz gate as a crash.
// On 3.9, where the broker finds its controller (itself) in the metadata
// cache: 2.2 and 2.8 look it up in ZooKeeper, which it cannot reach.
TEST(KafkaBroker, AControllerWhoseSessionExpiresDuringItsOwnControlledShutdownShutsDown) {
  Cluster c({.brokers = 3, .version = VersionProfile::v3_9});
  c.world().trace().keep_lines(true);
  const auto started = start_three_replicas(c);
  ASSERT_TRUE(started);
  const BrokerId ctl = started->ctl;
  cut_from_zookeeper(c, ctl);
  c.stop_broker(ctl, Duration::seconds(120));
  c.run_for(Duration::seconds(22));  // past the session timeout (18 s)
  EXPECT_NE(c.broker(ctl), nullptr);
  EXPECT_EQ(count_kind(c, "controlled_shutdown_succeeded"), 0u);
  c.world().network().heal();
  ASSERT_TRUE(c.run_until([&] { return c.broker(ctl) == nullptr; }, Duration::seconds(60)));
  EXPECT_EQ(count_kind(c, "controlled_shutdown_succeeded"), 1u);
  EXPECT_EQ(count_kind(c, "controller_resigned"), 1u);
}

// Sends one acks=1 record (value `value`) to `tp` straight to broker `to`, on
// connection `connection`; the partition's error lands in `*out`.
void produce_to(Cluster& c, BrokerId to, const TopicPartition& tp, uint64_t value, int connection,
                std::optional<ErrorCode>* out) {
  ProduceBatch b;
  b.tp = tp;
  Record r;
  r.value = value;
  r.size = 70;
  b.records.push_back(r);
  c.send(to, ProduceRequest{1, 30000, {b}},
         [out](SendError e, const Response* resp) {
           if (e == SendError::none && resp != nullptr) *out = std::get<ProduceResponse>(*resp).partitions.at(0).error;
         },
         true, connection);
}

// Kafka 2.2 writes an ISR change to ZooKeeper holding the partition's lock
// and waits for a lost ZooKeeper connection to come back: a leader cut off
// from ZooKeeper and its followers (not from its clients) shrinks its ISR
// after replica.lag.time.max.ms, and from then on every produce to the
// partition waits on a request handler thread; with all eight of them
// waiting, even a Metadata request goes unanswered. Back in touch, the
// leader learns that its session expired, the write fails and the waiting
// requests go on. In 2.8 (AlterIsr) nothing waits. On an inter-broker
// protocol below 2.7-IV2 (no AlterIsr) 2.8.2 still writes under the lock;
// 3.1 on write after releasing it.
TEST(KafkaBroker, In22AnIsrWriteWaitingForZooKeeperHoldsUpThePartitionsRequests) {
  struct Case {
    VersionProfile v;
    const char* protocol;  // inter.broker.protocol.version, if given
    bool locks;
  };
  for (const Case& k : {Case{VersionProfile::v2_2, nullptr, true}, Case{VersionProfile::v2_8, nullptr, false},
                        Case{VersionProfile::v2_8, "2.7-IV1", true}, Case{VersionProfile::v3_9, "2.7-IV1", false}}) {
    const VersionProfile v = k.v;
    SCOPED_TRACE(fmt::format("{} {}", to_string(v), k.protocol ? k.protocol : ""));
    const bool locks = k.locks;
    Cluster c(on_protocol(v, k.protocol));
    c.world().trace().keep_lines(true);
    c.start();
    ASSERT_TRUE(c.await_ready());
    const BrokerId ctl = *c.controller();
    const std::vector<BrokerId> others = c.broker_ids_except(ctl);
    const BrokerId leader = others[0];
    const TopicPartition tp{"t", 0};
    ASSERT_EQ(c.create_topic("t", 1, 3, {}, {{0, {leader, others[1], ctl}}}), ErrorCode::none);
    ASSERT_EQ(c.produce(tp, {1}, -1)->error, ErrorCode::none);
    cut_from_zookeeper_and_brokers(c, leader);
    std::vector<std::optional<ErrorCode>> produced(10);
    // acks=1 straight to the leader, each on a connection of its own.
    const auto produce = [&](size_t i) { produce_to(c, leader, tp, 100 + i, static_cast<int>(i) + 1, &produced[i]); };
    produce(0);  // the followers fall behind: after replica.lag.time.max.ms, a shrink
    ASSERT_TRUE(c.run_until([&] { return c.broker(leader)->partition(tp)->isr_write_in_flight; },
                            Duration::seconds(60)));
    ASSERT_EQ(produced[0], ErrorCode::none);
    // Nine more, then a Metadata request on a connection of its own.
    for (size_t i = 1; i < produced.size(); ++i) produce(i);
    c.run_for(Duration::seconds(1));
    bool metadata = false;
    c.send(leader, MetadataRequest{},
           [&metadata](SendError e, const Response* r) { metadata = e == SendError::none && r != nullptr; }, true, 20);
    c.run_for(Duration::seconds(5));
    const size_t answered = static_cast<size_t>(std::count_if(produced.begin(), produced.end(),
                                                              [](const auto& e) { return e.has_value(); }));
    if (locks) {
      EXPECT_EQ(answered, 1u);
      EXPECT_FALSE(metadata) << "every request handler thread waits for the partition";
      EXPECT_EQ(count_kind(c, "request_waits_for_partition_lock"), 8u) << "num.io.threads";
    } else {
      EXPECT_EQ(answered, produced.size());
      EXPECT_TRUE(metadata);
      EXPECT_EQ(count_kind(c, "request_waits_for_partition_lock"), 0u);
    }
    c.world().network().heal();
    ASSERT_TRUE(c.run_until([&] {
      return metadata && std::all_of(produced.begin(), produced.end(), [](const auto& e) { return e.has_value(); });
    }, Duration::seconds(60))) << "the requests never went on";
    // The controller's LeaderAndIsr, which waited too, makes it a follower.
    ASSERT_TRUE(c.run_until([&] {
      const Broker* b = c.broker(leader);
      return b != nullptr && b->partition(tp) != nullptr && !b->partition(tp)->is_leader();
    }, Duration::seconds(60))) << "the old leader never heard it lost the partition";
  }
}

// From 2.7 a leader changes its ISR through the controller (AlterIsr,
// KIP-497). Cut off from the other brokers, the controller among them, but
// not from ZooKeeper or its clients, it cannot take its silent followers
// out of the ISR: the change stays pending, the high watermark stays put and
// acks=all writes time out until the heal. On 2.2 it writes the smaller ISR
// to ZooKeeper itself after replica.lag.time.max.ms and acknowledges again.
TEST(KafkaBroker, ALeaderCutOffFromTheControllerKeepsItsIsrUntilTheHeal) {
  for (VersionProfile v : {VersionProfile::v2_2, VersionProfile::v2_8, VersionProfile::v3_9}) {
    SCOPED_TRACE(to_string(v));
    const bool through_controller = v != VersionProfile::v2_2;
    Cluster c({.brokers = 3, .version = v});
    c.world().trace().keep_lines(true);
    InvariantChecker check(c);
    const auto started = start_three_replicas(c);
    ASSERT_TRUE(started);
    const auto [ctl, leader, follower, tp] = *started;
    ASSERT_EQ(c.produce(tp, {1}, -1)->error, ErrorCode::none);
    for (BrokerId b : c.broker_ids_except(leader)) {
      c.world().network().block(c.broker_host(leader), c.broker_host(b));
      c.world().network().block(c.broker_host(b), c.broker_host(leader));
    }
    // Past replica.lag.time.max.ms (10 s on 2.2, 30 s from 2.5) with a
    // record the followers cannot fetch, and past the AlterIsr request's
    // timeout (controller.socket.timeout.ms, 30 s): the shrink is sent again.
    const auto lagging = c.produce(tp, {2}, 1);
    ASSERT_TRUE(lagging.has_value());
    ASSERT_EQ(lagging->error, ErrorCode::none);
    c.run_for(Duration::seconds(100));
    const auto cut = c.produce(tp, {3}, -1, 5000);
    ASSERT_TRUE(cut.has_value());
    const Partition* p = c.broker(leader)->partition(tp);
    ASSERT_NE(p, nullptr);
    if (through_controller) {
      EXPECT_EQ(cut->error, ErrorCode::request_timed_out);
      EXPECT_EQ(c.state(tp)->isr.size(), 3u);
      EXPECT_EQ(p->isr().size(), 3u);
      EXPECT_TRUE(p->isr_write_in_flight) << "the shrink waits for the controller";
      EXPECT_EQ(count_kind(c, "isr_shrink"), 0u);
    } else {
      EXPECT_EQ(cut->error, ErrorCode::none);
      EXPECT_EQ(c.state(tp)->isr, std::vector<BrokerId>{leader});
      EXPECT_EQ(count_kind(c, "isr_shrink"), 1u);
    }
    // Healed, the pending shrink reaches the controller and is committed,
    // then the followers catch up and are proposed back one at a time.
    c.world().network().heal();
    ASSERT_TRUE(c.run_until([&] {
      return count_kind(c, "isr_expand") == 2 && !p->isr_write_in_flight && c.state(tp)->isr.size() == 3;
    }, Duration::seconds(60))) << "the leader never learnt how its changes ended";
    EXPECT_EQ(count_kind(c, "isr_shrink"), 1u);
    EXPECT_EQ(p->isr().size(), 3u);
    EXPECT_EQ(c.state(tp)->leader, leader);
    const auto healed = c.produce(tp, {4}, -1, 5000);
    ASSERT_TRUE(healed.has_value());
    EXPECT_EQ(healed->error, ErrorCode::none);
  }
}

// A proposal the controller refuses for its version stays pending until a
// LeaderAndIsr replaces it (Partition.handleAlterIsrResponse gives up on
// INVALID_UPDATE_VERSION; makeLeader sets CommittedIsr and clearPending):
// only then can the leader propose again. The state's version is moved
// behind the leader's back here by a change sent as if from it (as a lost
// answer to an earlier proposal would leave it).
// Moves the version of t-0's state behind its leader's back: an ISR change
// to [leader, follower] sent to the controller as if from the leader (as a
// lost answer to an earlier proposal would leave it). The leader's next
// change carries the old version.
void move_state_version_behind_the_leader(Cluster& c, const ThreeReplicas& r) {
  const Partition* p = c.broker(r.leader)->partition(r.tp);
  const int64_t broker_epoch = c.broker(r.ctl)->controller()->live_brokers().at(r.leader).second;
  const auto moved = c.request(
      r.ctl, AlterIsrRequest{r.leader, broker_epoch, {{r.tp, p->leader_epoch(), {r.leader, r.follower}, p->zk_version()}}});
  ASSERT_TRUE(moved.has_value());
  ASSERT_EQ(std::get<AlterIsrResponse>(*moved).partitions.at(0).error, ErrorCode::none);
  EXPECT_EQ(p->isr().size(), 3u) << "the leader does not know";
}

TEST(KafkaBroker, ARefusedIsrChangeWaitsForTheNextLeaderAndIsr) {
  Cluster c({.brokers = 3});
  c.world().trace().keep_lines(true);
  const auto started = start_three_replicas(c);
  ASSERT_TRUE(started);
  const auto [ctl, leader, follower, tp] = *started;
  c.run_for(Duration::seconds(1));
  const Partition* p = c.broker(leader)->partition(tp);
  ASSERT_NO_FATAL_FAILURE(move_state_version_behind_the_leader(c, *started));
  // The follower goes silent; the leader's shrink carries the old version.
  ASSERT_TRUE(silence_follower(c, leader, follower, tp));
  ASSERT_TRUE(c.run_until([&] { return count_kind(c, "isr_update_failed") == 1; }, Duration::seconds(60)));
  c.run_for(Duration::seconds(20));
  EXPECT_TRUE(p->isr_write_in_flight) << "given up, still pending";
  EXPECT_EQ(count_kind(c, "isr_update_failed"), 1u) << "not sent again";
  EXPECT_EQ(c.state(tp)->isr, (std::vector<BrokerId>{leader, follower}));
  // The follower's controlled shutdown takes it out of the ISR: a
  // LeaderAndIsr with a new leader epoch, ISR [leader]. The controller's
  // replica, in sync all along, is then proposed back in.
  c.world().network().heal();
  const LeaderEpoch before = p->leader_epoch();
  c.stop_broker(follower);
  ASSERT_TRUE(c.run_until([&] { return p->leader_epoch() != before; }, Duration::seconds(30)));
  ASSERT_TRUE(c.run_until([&] { return c.state(tp)->isr == std::vector<BrokerId>{leader, ctl}; },
                          Duration::seconds(30)))
      << "the leader never proposed again";
  c.run_for(Duration::seconds(1));  // the answer travels back
  EXPECT_FALSE(p->isr_write_in_flight);
  EXPECT_EQ(p->isr(), (std::vector<BrokerId>{leader, ctl}));
}

// A leader on an inter-broker protocol below 2.7-IV2 writes its ISR to
// ZooKeeper itself, whatever its release (KafkaServer picks ZkIsrManager).
// When the conditional write fails (the state's version moved behind its
// back), 2.2 drops the change and tries again at each ISR check
// (Partition.updateIsr), while from 2.8 the leader gives up and keeps it
// pending until the next LeaderAndIsr (handleAlterIsrResponse:
// INVALID_UPDATE_VERSION, what ZkIsrManager reports for a failed write).
TEST(KafkaBroker, AZooKeeperIsrWriteThatFailsIsTriedAgainIn22AndGivenUpFrom28) {
  for (VersionProfile v : {VersionProfile::v2_2, VersionProfile::v2_8, VersionProfile::v3_9}) {
    SCOPED_TRACE(to_string(v));
    const bool from_28 = v != VersionProfile::v2_2;
    Cluster c(on_protocol(v, from_28 ? "2.7-IV1" : nullptr));
    c.world().trace().keep_lines(true);
    const auto started = start_three_replicas(c);
    ASSERT_TRUE(started);
    const auto [ctl, leader, follower, tp] = *started;
    c.run_for(Duration::seconds(1));
    const Partition* p = c.broker(leader)->partition(tp);
    ASSERT_NO_FATAL_FAILURE(move_state_version_behind_the_leader(c, *started));
    const auto failed = [&] {
      size_t n = 0;
      for (const std::string& line : c.world().trace().lines()) {
        n += line.find("\"isr_update_failed\"") != std::string::npos && line.find("BADVERSION") != std::string::npos;
      }
      return n;
    };
    ASSERT_TRUE(silence_follower(c, leader, follower, tp));
    ASSERT_TRUE(c.run_until([&] { return failed() == 1; }, Duration::seconds(60)));
    EXPECT_EQ(count_kind(c, "isr_update_failed"), 1u) << "written to ZooKeeper, not sent to the controller";
    // Three more ISR checks (every replica.lag.time.max.ms / 2).
    c.run_for(Duration::millis(default_broker_config(v).replica_lag_time_max_ms * 3 / 2 + 100));
    if (!from_28) {
      EXPECT_GE(failed(), 3u) << "tried again at each check";
      continue;
    }
    EXPECT_EQ(failed(), 1u) << "given up";
    EXPECT_TRUE(p->isr_change_given_up);
    EXPECT_FALSE(p->isr_write_in_flight);
    EXPECT_EQ(c.state(tp)->isr, (std::vector<BrokerId>{leader, follower}));
    // The follower's controlled shutdown: a LeaderAndIsr with ISR [leader]
    // frees the partition, and the leader writes the controller's replica
    // back in, itself.
    c.world().network().heal();
    const LeaderEpoch before = p->leader_epoch();
    c.stop_broker(follower);
    ASSERT_TRUE(c.run_until([&] { return p->leader_epoch() != before; }, Duration::seconds(30)));
    EXPECT_FALSE(p->isr_change_given_up);
    ASSERT_TRUE(c.run_until([&] { return c.state(tp)->isr == std::vector<BrokerId>{leader, ctl}; },
                            Duration::seconds(30)))
        << "the leader never wrote again";
    c.run_for(Duration::seconds(1));
    EXPECT_EQ(p->isr(), (std::vector<BrokerId>{leader, ctl}));
    // The controller hears of it through /isr_change_notification.
    const Controller& controller = *c.broker(ctl)->controller();
    EXPECT_TRUE(c.run_until([&] {
      return controller.partitions().at(tp).state->isr == std::vector<BrokerId>{leader, ctl};
    }, Duration::seconds(30)));
  }
}

// A leader asked by a follower with its last fetched epoch (KAFKA-10554,
// Partition.readRecords): the largest epoch the leader knows not above it
// and where it ends; when that is an older epoch or ends before the fetch
// offset, the answer has no records and names it — even for an offset past
// the log end, which is otherwise out of range. An epoch the leader cannot
// place, or an offset below its log start, is out of range.
TEST(KafkaBroker, ALeaderNamesWhereAFollowersLogPartsFromItsFetch) {
  Cluster c({.brokers = 3, .version = VersionProfile::v3_9});
  const auto started = start_three_replicas(c);
  ASSERT_TRUE(started);
  const auto [ctl, leader, follower, tp] = *started;
  ASSERT_EQ(c.produce(tp, {1, 2, 3}, -1)->error, ErrorCode::none);
  c.run_for(Duration::seconds(1));
  const Partition* p = c.broker(leader)->partition(tp);
  const LeaderEpoch epoch = p->leader_epoch();
  const Offset end = p->log().log_end();
  ASSERT_EQ(end, Offset{3});
  const auto fetch = [&](Offset offset, LeaderEpoch last_fetched) {
    FetchRequest r{follower, 0, 1, 1048576, {}};
    r.partitions.push_back({tp, offset, epoch, Offset{0}, 1048576, last_fetched});
    const auto answer = c.request(leader, r);
    return answer ? std::get<FetchResponse>(*answer).partitions.at(0) : FetchPartitionResponse{};
  };
  const FetchPartitionResponse caught_up = fetch(end, epoch);
  EXPECT_EQ(caught_up.error, ErrorCode::none);
  EXPECT_EQ(caught_up.diverging_epoch, LeaderEpoch{-1});
  const FetchPartitionResponse behind = fetch(Offset{1}, epoch);
  EXPECT_EQ(behind.diverging_epoch, LeaderEpoch{-1});
  EXPECT_EQ(behind.records.size(), 2u);
  const FetchPartitionResponse ahead = fetch(Offset{end.value + 2}, epoch);
  EXPECT_EQ(ahead.error, ErrorCode::none);
  EXPECT_EQ(ahead.diverging_epoch, epoch);
  EXPECT_EQ(ahead.diverging_end_offset, end);
  EXPECT_TRUE(ahead.records.empty());
  EXPECT_EQ(ahead.high_watermark, end);
  // A read that found the logs parting is not the follower's fetch: the
  // leader does not take end + 2 as where the follower's log ends.
  EXPECT_LE(p->followers().at(follower).log_end, end);
  EXPECT_EQ(fetch(Offset{end.value + 2}, LeaderEpoch{-1}).error, ErrorCode::offset_out_of_range)
      << "without an epoch, past the end is out of range";
  EXPECT_EQ(fetch(end, LeaderEpoch{epoch.value + 3}).error, ErrorCode::offset_out_of_range)
      << "an epoch above every one the leader knows";
}

// An epoch the leader never wrote in (two leader epochs began at the same
// offset, the first holding nothing) parts where the epoch before it ends,
// even at an offset the leader has: the epoch the leader names is older than
// the one the follower asked with (Partition.readRecords). Below the
// leader's log start the fetch is out of range all the same.
TEST(KafkaBroker, AFetchFromAnEpochTheLeaderWroteNothingInPartsWhereItsPredecessorEnds) {
  Cluster c({.brokers = 3,
             .version = VersionProfile::v3_9,
             .broker_properties = {{"log.retention.check.interval.ms", "1000"}}});
  c.start();
  ASSERT_TRUE(c.await_ready());
  const BrokerId ctl = *c.controller();
  const BrokerId leader = c.broker_ids_except(ctl)[0];
  const BrokerId follower = c.broker_ids_except(ctl)[1];
  const TopicPartition tp{"t", 0};
  // Two 70-byte records a segment; retention keeps what the last 70 bytes need.
  ASSERT_EQ(c.create_topic("t", 1, 3, {{"segment.bytes", "140"}, {"retention.bytes", "70"}},
                           {{0, {leader, follower, ctl}}}),
            ErrorCode::none);
  ASSERT_TRUE(c.run_until([&] { return c.state(tp)->isr.size() == 3; }, Duration::seconds(30)));
  for (uint64_t value : {1, 2, 3}) ASSERT_EQ(c.produce(tp, {value}, -1)->error, ErrorCode::none);
  const Partition* p = c.broker(leader)->partition(tp);
  const LeaderEpoch first = p->leader_epoch();
  // The first retention check comes 30 s after the start (LogManager's InitialTaskDelayMs).
  ASSERT_TRUE(c.run_until([&] { return p->log().log_start() == Offset{2}; }, Duration::seconds(40)));
  // The controller takes a dead follower out of the ISR with a new leader
  // epoch; the follower comes back, catches up, and dies again.
  c.kill_broker(follower);
  ASSERT_TRUE(c.run_until([&] { return p->leader_epoch().value == first.value + 1; }, Duration::seconds(60)));
  c.start_broker(follower);
  ASSERT_TRUE(c.run_until([&] { return c.state(tp)->isr.size() == 3; }, Duration::seconds(60)));
  c.kill_broker(follower);
  ASSERT_TRUE(c.run_until([&] { return p->leader_epoch().value == first.value + 2; }, Duration::seconds(60)));
  const LeaderEpoch empty{first.value + 1};
  const LeaderEpoch latest = p->leader_epoch();
  // The first epoch's entry moved up with the log start (truncateFromStart).
  ASSERT_EQ(p->log().epochs(), (std::vector<EpochEntry>{{first, Offset{2}}, {latest, Offset{3}}}));
  const auto fetch = [&](Offset offset, LeaderEpoch last_fetched) {
    FetchRequest r{follower, 0, 1, 1048576, {}};
    r.partitions.push_back({tp, offset, latest, Offset{0}, 1048576, last_fetched});
    const auto answer = c.request(leader, r);
    return answer ? std::get<FetchResponse>(*answer).partitions.at(0) : FetchPartitionResponse{};
  };
  const FetchPartitionResponse parted = fetch(Offset{3}, empty);
  EXPECT_EQ(parted.error, ErrorCode::none);
  EXPECT_EQ(parted.diverging_epoch, first);
  EXPECT_EQ(parted.diverging_end_offset, Offset{3});
  EXPECT_TRUE(parted.records.empty());
  const FetchPartitionResponse from_first = fetch(Offset{3}, first);
  EXPECT_EQ(from_first.error, ErrorCode::none);
  EXPECT_EQ(from_first.diverging_epoch, LeaderEpoch{-1}) << "epoch " << first.value << " ends at 3";
  const FetchPartitionResponse past_first = fetch(Offset{2}, first);
  EXPECT_EQ(past_first.diverging_epoch, LeaderEpoch{-1});
  EXPECT_EQ(past_first.records.size(), 1u);
  EXPECT_EQ(fetch(Offset{1}, empty).error, ErrorCode::offset_out_of_range)
      << "below the log start, though the logs part";
  EXPECT_EQ(fetch(Offset{1}, first).error, ErrorCode::offset_out_of_range);
}

// What the controller makes of a proposed ISR change (KafkaController.
// processAlterIsr in 2.8 and 3.1, tryProcessAlterPartition in 3.9), asked
// directly.
TEST(KafkaController, AlterIsrChecksTheBrokerTheLeaderEpochTheVersionAndTheMembers) {
  for (VersionProfile v : {VersionProfile::v2_8, VersionProfile::v3_1, VersionProfile::v3_9}) {
    SCOPED_TRACE(to_string(v));
    Cluster c({.brokers = 3, .version = v});
    const auto started = start_three_replicas(c);
    ASSERT_TRUE(started);
    const auto [ctl, leader, follower, tp] = *started;
    c.run_for(Duration::seconds(1));
    const Controller& controller = *c.broker(ctl)->controller();
    const int64_t epoch = controller.live_brokers().at(leader).second;
    const znodes::LeaderAndIsr s = *c.state(tp);
    const int32_t version = controller.partitions().at(tp).zk_version;
    const auto alter = [&](BrokerId to, int64_t broker_epoch, LeaderEpoch leader_epoch,
                           std::vector<BrokerId> isr, int32_t zk_version) {
      const auto r = c.request(to, AlterIsrRequest{leader, broker_epoch, {{tp, leader_epoch, isr, zk_version}}});
      return r ? std::get<AlterIsrResponse>(*r) : AlterIsrResponse{ErrorCode::unknown_server_error, {}};
    };
    const auto one = [](const AlterIsrResponse& r) {
      EXPECT_EQ(r.error, ErrorCode::none);
      EXPECT_EQ(r.partitions.size(), 1u);
      return r.partitions.empty() ? AlterIsrPartitionResponse{} : r.partitions[0];
    };
    const std::vector<BrokerId> smaller{leader, follower};
    EXPECT_EQ(alter(follower, epoch, s.leader_epoch, smaller, version).error, ErrorCode::not_controller);
    EXPECT_EQ(alter(ctl, epoch + 1, s.leader_epoch, smaller, version).error, ErrorCode::stale_broker_epoch)
        << "the epoch of another registration";
    EXPECT_EQ(one(alter(ctl, epoch, LeaderEpoch{s.leader_epoch.value - 1}, smaller, version)).error,
              ErrorCode::fenced_leader_epoch);
    if (v == VersionProfile::v3_9) {
      // KIP-841: every member must be a live broker not shutting down.
      EXPECT_EQ(one(alter(ctl, epoch, s.leader_epoch, {leader, follower, ctl, 9}, version)).error,
                ErrorCode::ineligible_replica);
      // From a leader on a protocol below 2.8-IV0 (AlterPartition v1, no
      // topic ids) the refusal has the older name.
      const auto v1 = c.request(ctl, AlterIsrRequest{leader, epoch, {{tp, s.leader_epoch, {leader, 9}, version}}, false});
      ASSERT_TRUE(v1.has_value());
      EXPECT_EQ(one(std::get<AlterIsrResponse>(*v1)).error, ErrorCode::operation_not_attempted);
      // A version newer than the controller's own: it is likely no longer
      // the controller.
      EXPECT_EQ(one(alter(ctl, epoch, s.leader_epoch, smaller, version + 1)).error, ErrorCode::not_controller);
    }
    EXPECT_EQ(c.state(tp)->isr.size(), 3u) << "nothing refused was written";
    // Accepted: written conditional on the version, answered with the new one.
    const AlterIsrPartitionResponse done = one(alter(ctl, epoch, s.leader_epoch, smaller, version));
    EXPECT_EQ(done.error, ErrorCode::none);
    EXPECT_EQ(done.zk_version, version + 1);
    EXPECT_EQ(done.isr, smaller);
    EXPECT_EQ(done.leader, leader);
    EXPECT_EQ(c.state(tp)->isr, smaller);
    EXPECT_EQ(controller.partitions().at(tp).zk_version, version + 1);
    // The same change again (its answer lost): answered with the state as
    // it is, nothing written.
    const AlterIsrPartitionResponse same = one(alter(ctl, epoch, s.leader_epoch, smaller, version + 1));
    EXPECT_EQ(same.error, ErrorCode::none);
    EXPECT_EQ(same.zk_version, version + 1);
    EXPECT_EQ(same.isr, smaller);
    // A change made from the old version: ZooKeeper's BADVERSION on 2.8,
    // the controller's own copy on 3.9.
    EXPECT_EQ(one(alter(ctl, epoch, s.leader_epoch, {leader}, version)).error, ErrorCode::invalid_update_version);
    EXPECT_EQ(c.state(tp)->isr, smaller);
  }
}

// 2.2's ISR-expiration pass goes through the partitions on one thread, each
// write synchronous: the first shrink that waits for ZooKeeper holds up the
// rest, so the leader's other partition keeps its ISR — and its lock, so it
// goes on serving — while the first waits. A 3.9 broker on a protocol below
// 2.7-IV2 (writing ZooKeeper itself) holds up its pass the same way, but
// writes outside the partition's lock: nothing waits for t-0 either.
TEST(KafkaBroker, In22AStuckIsrWriteHoldsUpTheRestOfTheShrinkPass) {
  for (const bool locks : {true, false}) {
    SCOPED_TRACE(locks ? "2.2" : "3.9 on 2.7-IV1");
    Cluster c(locks ? on_protocol(VersionProfile::v2_2, nullptr) : on_protocol(VersionProfile::v3_9, "2.7-IV1"));
    c.world().trace().keep_lines(true);
    c.start();
    ASSERT_TRUE(c.await_ready());
    const BrokerId ctl = *c.controller();
    const std::vector<BrokerId> others = c.broker_ids_except(ctl);
    const BrokerId leader = others[0];
    ASSERT_EQ(c.create_topic("t", 2, 3, {}, {{0, {leader, others[1], ctl}}, {1, {leader, others[1], ctl}}}),
              ErrorCode::none);
    cut_from_zookeeper_and_brokers(c, leader);
    // One record to each partition, straight to the leader: its followers fall behind on both.
    std::map<int, std::optional<ErrorCode>> produced;
    const auto produce = [&](int32_t partition, int connection) {
      produce_to(c, leader, {"t", partition}, static_cast<uint64_t>(connection), connection, &produced[connection]);
    };
    produce(0, 1);
    produce(1, 2);
    const Partition* p0 = c.broker(leader)->partition({"t", 0});
    const Partition* p1 = c.broker(leader)->partition({"t", 1});
    ASSERT_TRUE(c.run_until([&] { return p0->isr_write_in_flight; }, Duration::seconds(60)));
    c.run_for(Duration::seconds(30));  // more passes are due meanwhile
    EXPECT_TRUE(p0->isr_write_in_flight);
    EXPECT_FALSE(p1->isr_write_in_flight) << "the pass never got past t-0";
    EXPECT_EQ(p1->isr().size(), 3u);
    produce(0, 3);
    produce(1, 4);
    c.run_for(Duration::seconds(2));
    EXPECT_EQ(produced[4], ErrorCode::none) << "t-1 is served";
    if (!locks) {
      EXPECT_EQ(produced[3], ErrorCode::none) << "no lock held";
      EXPECT_EQ(count_kind(c, "request_waits_for_partition_lock"), 0u);
      continue;
    }
    EXPECT_FALSE(produced[3].has_value()) << "t-0 waits for its ISR write";
    // A LeaderAndIsr naming t-0 waits for its lock, and one naming only t-1
    // waits behind it (replicaStateChangeLock); both go on once the write
    // ends. (Their contents are the states ZooKeeper holds: answered,
    // whatever the broker makes of them.)
    std::vector<int> answered;
    for (int32_t partition : {0, 1}) {
      const TopicPartition tp{"t", partition};
      const auto s = c.state(tp);
      ASSERT_TRUE(s.has_value());
      PartitionState ps{tp, s->controller_epoch, s->leader, s->leader_epoch, s->isr, 0, {leader, others[1], ctl}};
      c.send(leader, LeaderAndIsrRequest{ctl, *c.controller_epoch(), {ps}, {}},
             [&answered, partition](SendError e, const Response* r) {
               if (e == SendError::none && r != nullptr) answered.push_back(partition);
             },
             true, 10 + partition);
      c.run_for(Duration::millis(100));
    }
    c.run_for(Duration::seconds(2));
    EXPECT_TRUE(answered.empty());
    size_t parked = 0;
    for (const std::string& line : c.world().trace().lines()) {
      parked += line.find("\"request_waits_for_partition_lock\",\"api\":\"LeaderAndIsr\"") != std::string::npos;
    }
    EXPECT_EQ(parked, 2u) << "the second waits behind the first";
    c.world().network().heal();
    ASSERT_TRUE(c.run_until([&] { return answered.size() == 2; }, Duration::seconds(60)))
        << "a LeaderAndIsr that waited was never served";
    std::sort(answered.begin(), answered.end());
    EXPECT_EQ(answered, (std::vector<int>{0, 1}));
  }
}

// The ISR-expiration pass meets a partition whose expand is being written
// to ZooKeeper (and waits for it, ZooKeeper being out of reach): 2.2 takes
// the partition's lock and waits, so the pass never reaches the next
// partition; from 2.7 it sees the change in flight first
// (isrState.isInflight) and passes the partition by — 2.8 and 3.9 on a
// protocol below 2.7-IV2, which write ZooKeeper themselves.
TEST(KafkaBroker, TheShrinkPassWaitsForAnExpandOnItsWayIn22AndPassesItByFrom27) {
  for (const auto& [v, protocol] : {std::pair{VersionProfile::v2_2, ""}, std::pair{VersionProfile::v2_8, "2.7-IV1"},
                                    std::pair{VersionProfile::v3_9, "2.7-IV1"}}) {
    SCOPED_TRACE(to_string(v));
    const bool waits = v == VersionProfile::v2_2;
    Cluster c(on_protocol(v, protocol));
    c.start();
    ASSERT_TRUE(c.await_ready());
    const BrokerId ctl = *c.controller();
    const std::vector<BrokerId> others = c.broker_ids_except(ctl);
    const BrokerId leader = others[0], follower = others[1];
    const TopicPartition t0{"t", 0}, t1{"t", 1};
    ASSERT_EQ(c.create_topic("t", 2, 2, {}, {{0, {leader, follower}}, {1, {leader, ctl}}}), ErrorCode::none);
    ASSERT_TRUE(c.run_until([&] { return c.state(t0)->isr.size() == 2 && c.state(t1)->isr.size() == 2; },
                            Duration::seconds(30)));
    // t-0's follower falls out of the ISR while ZooKeeper is still reachable.
    cut(c, leader, follower);
    ASSERT_EQ(c.produce(t0, {1}, 1)->error, ErrorCode::none);
    const Partition* p0 = c.broker(leader)->partition(t0);
    const Partition* p1 = c.broker(leader)->partition(t1);
    ASSERT_TRUE(c.run_until([&] { return p0->isr().size() == 1 && !p0->isr_write_in_flight; }, Duration::seconds(60)));
    // Now the leader loses ZooKeeper and t-1's follower, and gets t-0's back:
    // t-0's expand is written, and waits.
    c.world().network().heal();
    cut_from_zookeeper(c, leader);
    cut(c, leader, ctl);
    ASSERT_TRUE(c.run_until([&] { return p0->isr_write_in_flight; }, Duration::seconds(30)));
    // t-1's follower falls behind; the next passes come to t-0 first.
    ASSERT_EQ(c.produce(t1, {2}, 1)->error, ErrorCode::none);
    c.run_for(Duration::millis(default_broker_config(v).replica_lag_time_max_ms * 2));
    EXPECT_TRUE(p0->isr_write_in_flight) << "the expand still waits for ZooKeeper";
    EXPECT_EQ(p1->isr_write_in_flight, !waits) << (waits ? "the pass is stuck at t-0" : "t-0 passed by, t-1's shrink written");
  }
}

// KIP-207: a new leader whose high watermark is still below the start of
// its leader epoch answers a consumer's ListOffsets(latest) with
// OFFSET_NOT_AVAILABLE, until its high watermark gets there; a follower's
// ListOffsets, and earliest, are answered.
TEST(KafkaBroker, ANewLeaderBelowItsEpochStartHasNoLatestOffsetForAConsumer) {
  Cluster c({.brokers = 3, .version = VersionProfile::v2_2});
  c.start();
  ASSERT_TRUE(c.await_ready());
  // The controller becomes the next leader; the third broker will stop.
  const BrokerId next = *c.controller();
  const std::vector<BrokerId> others = c.broker_ids_except(next);
  const BrokerId first = others[0], stopped = others[1];
  const TopicPartition tp{"t", 0};
  ASSERT_EQ(c.create_topic("t", 1, 3, {}, {{0, {first, next, stopped}}}), ErrorCode::none);
  ASSERT_EQ(c.produce(tp, {1, 2, 3, 4, 5}, -1)->error, ErrorCode::none);
  // Before the next leader hears the high watermark of 5 from the first,
  // it is cut off from it; the third stops fetching; the first dies.
  c.world().network().block(c.broker_host(first), c.broker_host(next));
  c.world().network().block(c.broker_host(next), c.broker_host(first));
  c.pause_broker(stopped);
  c.kill_broker(first);
  ASSERT_TRUE(c.run_until([&] {
    const Partition* p = c.broker(next)->partition(tp);
    return p != nullptr && p->is_leader();
  }, Duration::seconds(60)));
  const Partition* p = c.broker(next)->partition(tp);
  ASSERT_EQ(p->leader_epoch_start().value, 5);
  ASSERT_LT(p->high_watermark().value, 5);
  const auto list = [&](BrokerId replica, int64_t timestamp) {
    const auto r = c.request(next, ListOffsetsRequest{replica, {{tp, timestamp}}});
    EXPECT_TRUE(r.has_value());
    return std::get<ListOffsetsResponse>(*r).partitions.at(0);
  };
  EXPECT_EQ(list(kConsumerReplicaId, kLatestTimestamp).error, ErrorCode::offset_not_available);
  EXPECT_EQ(list(kConsumerReplicaId, kEarliestTimestamp).error, ErrorCode::none);
  EXPECT_EQ(list(stopped, kLatestTimestamp).offset.value, 5) << "a replica gets the log end";
  // The third broker leaves the ISR after replica.lag.time.max.ms: the high
  // watermark reaches 5 and "latest" is 5.
  ASSERT_TRUE(c.run_until([&] { return c.broker(next)->partition(tp)->high_watermark().value == 5; },
                          Duration::seconds(60)));
  const ListOffsetsPartitionResponse latest = list(kConsumerReplicaId, kLatestTimestamp);
  EXPECT_EQ(latest.error, ErrorCode::none);
  EXPECT_EQ(latest.offset.value, 5);
}

// A partition whose fetch fails waits replica.fetch.backoff.ms on its own
// (AbstractFetcherThread.delayPartitions); the fetcher goes on with the
// other partitions it fetches from that leader.
TEST(KafkaBroker, APartitionInErrorWaitsAloneWhileTheFetcherGoesOn) {
  Cluster c({.brokers = 2});
  c.world().trace().keep_lines(true);
  c.start();
  ASSERT_TRUE(c.await_ready());
  ASSERT_EQ(c.create_topic("t", 2, 2, {}, {{0, {1, 2}}, {1, {1, 2}}}), ErrorCode::none);
  ASSERT_TRUE(c.run_until([&] { return c.state({"t", 0})->isr.size() == 2 && c.state({"t", 1})->isr.size() == 2; },
                          Duration::seconds(30)));
  // Broker 1 drops t-0 behind the controller's back: broker 2's fetches of
  // t-0 fail from now on, every time it asks.
  StopReplicaRequest stop{*c.controller(), *c.controller_epoch(), true, {{"t", 0}}};
  ASSERT_EQ(std::get<StopReplicaResponse>(*c.request(1, stop)).error, ErrorCode::none);
  const size_t errors_before = count_kind(c, "replica_fetch_error");
  c.run_for(Duration::seconds(3));
  // acks=all on t-1 needs broker 2's next fetch: it is not held back by t-0.
  for (uint64_t v = 1; v <= 5; ++v) {
    const sim::Time start = c.world().now();
    const auto r = c.produce({"t", 1}, {v}, -1);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->error, ErrorCode::none);
    EXPECT_LT((c.world().now() - start).us(), 100'000) << "record " << v << ", in microseconds";
    c.run_for(Duration::millis(300));
  }
  // t-0 is asked for about once a second meanwhile.
  const size_t errors = count_kind(c, "replica_fetch_error") - errors_before;
  EXPECT_GE(errors, 3u);
  EXPECT_LE(errors, 6u);
}

// Two brokers with `properties`; topic "t" with three partitions led by
// broker 1. Broker 2 is cut off from broker 1 while `records` one-record
// batches (70 bytes) go to each partition, then the cut heals: broker 2 has
// to catch up on all three.
bool follower_behind_on_three_partitions(Cluster& c, uint64_t records) {
  c.start();
  if (!c.await_ready()) return false;
  if (c.create_topic("t", 3, 2, {}, {{0, {1, 2}}, {1, {1, 2}}, {2, {1, 2}}}) != ErrorCode::none) return false;
  // Broker 2 follows all three (its LeaderAndIsr has come) before the cut.
  const bool following = c.run_until(
      [&] {
        for (int32_t p = 0; p < 3; ++p) {
          if (c.broker(2)->partition({"t", p}) == nullptr) return false;
        }
        return true;
      },
      Duration::seconds(30));
  if (!following) return false;
  cut(c, 1, 2);
  for (int32_t p = 0; p < 3; ++p) {
    for (uint64_t v = 0; v < records; ++v) {
      const auto r = c.produce({"t", p}, {v}, 1);
      if (!r || r->error != ErrorCode::none) return false;
    }
  }
  c.world().network().heal();
  return true;
}

// A follower catching up asks for replica.fetch.max.bytes a partition and
// replica.fetch.response.max.bytes in all. A partition that got data goes to
// the back of its fetcher's order (PartitionStates.updateAndMoveToEnd), so
// when the answer's limit binds, the partitions take turns instead of the
// first catching up alone.
TEST(KafkaBroker, AFollowerCatchingUpServesItsPartitionsInTurn) {
  // Two batches of 70 bytes to an answer.
  Cluster c({.brokers = 2, .broker_properties = {{"replica.fetch.response.max.bytes", "140"}}});
  ASSERT_TRUE(follower_behind_on_three_partitions(c, 6));
  const Broker& follower = *c.broker(2);
  const auto log_end = [&](int32_t p) { return follower.partition({"t", p})->log().log_end().value; };
  // Each answer carries two batches: when the first partition has all six,
  // the others have had their turns.
  ASSERT_TRUE(c.run_until([&] { return log_end(0) == 6 || log_end(1) == 6 || log_end(2) == 6; },
                          Duration::seconds(60)));
  for (int32_t p = 0; p < 3; ++p) EXPECT_GE(log_end(p), 4) << "t-" << p;
  ASSERT_TRUE(c.run_until([&] { return log_end(0) == 6 && log_end(1) == 6 && log_end(2) == 6; },
                          Duration::seconds(10)));
}

// replica.fetch.max.bytes is each partition's limit in a follower's fetch:
// with 70, a follower catching up gets one batch of a partition an answer,
// so its log grows one record at a time.
TEST(KafkaBroker, AFollowerAsksReplicaFetchMaxBytesOfEachPartition) {
  Cluster c({.brokers = 2, .broker_properties = {{"replica.fetch.max.bytes", "70"}}});
  ASSERT_TRUE(follower_behind_on_three_partitions(c, 3));
  const Broker& follower = *c.broker(2);
  const auto log_end = [&](int32_t p) { return follower.partition({"t", p})->log().log_end().value; };
  std::array<int64_t, 3> seen{0, 0, 0};
  int64_t largest_step = 0;
  ASSERT_TRUE(c.run_until(
      [&] {
        for (int32_t p = 0; p < 3; ++p) {
          const int64_t now = log_end(p);
          largest_step = std::max(largest_step, now - seen[static_cast<size_t>(p)]);
          seen[static_cast<size_t>(p)] = now;
        }
        return seen[0] + seen[1] + seen[2] == 9;
      },
      Duration::seconds(60)));
  EXPECT_EQ(largest_step, 1);
}

// A follower out of the ISR catching up while records keep coming faster
// than its fetches go round: each fetch reaches the log end the previous one
// saw, so it counts as caught up and holds the high watermark at its log end
// (Partition.maybeIncrementLeaderHW); it is then at the watermark and
// rejoins. Were the watermark to run ahead with the leader alone in the ISR,
// the follower would stay behind it as long as the load lasts.
TEST(KafkaBroker, AFollowerCatchingUpUnderLoadRejoinsTheIsr) {
  ClusterOptions o{.brokers = 2};
  o.network.latency = sim::LatencyModel::constant(Duration::millis(5));
  Cluster c(o);
  c.start();
  ASSERT_TRUE(c.await_ready());
  const TopicPartition tp{"t", 0};
  ASSERT_EQ(c.create_topic("t", 1, 2, {}, {{0, {1, 2}}}), ErrorCode::none);
  ASSERT_TRUE(c.run_until([&] { return c.broker(2)->partition(tp) != nullptr; }, Duration::seconds(30)));
  cut(c, 1, 2);
  ASSERT_TRUE(c.run_until([&] { return c.state(tp)->isr == std::vector<BrokerId>{1}; }, Duration::seconds(120)));
  for (uint64_t v = 0; v < 100; ++v) ASSERT_EQ(c.produce(tp, {v}, 1)->error, ErrorCode::none);
  c.world().network().heal();
  // A record every 2 ms, for 20 s; the follower's fetches take 10 ms or more.
  auto out = std::make_shared<std::optional<ProducePartitionResponse>>();
  bool rejoined = false;
  for (uint64_t v = 0; v < 10000 && !rejoined; ++v) {
    c.produce_async(tp, {1000 + v}, 1, out);
    c.run_for(Duration::millis(2));
    rejoined = c.broker(1)->partition(tp)->isr().size() == 2;
  }
  EXPECT_TRUE(rejoined);
}

// Two brokers; t-0 led by broker 1, broker 2 its follower in the ISR.
// `in_epoch(e)` is the LeaderAndIsr a controller would send for epoch e with
// the same leader and ISR (the ZooKeeper controller bumps the epoch when it
// changes the ISR).
struct FollowerOfBroker1 {
  Cluster c{{.brokers = 2}};
  FollowerOfBroker1() {
    c.world().trace().keep_lines(true);
    c.start();
    if (!c.await_ready()) throw std::runtime_error("not ready");
    if (c.create_topic("t", 1, 2, {}, {{0, {1, 2}}}) != ErrorCode::none) throw std::runtime_error("create_topic");
    if (!c.run_until([&] { return c.state({"t", 0})->isr.size() == 2; }, Duration::seconds(30))) {
      throw std::runtime_error("isr");
    }
  }
  LeaderAndIsrRequest in_epoch(int64_t epoch) {
    const Partition& at_leader = *c.broker(1)->partition({"t", 0});
    const Endpoint leader{"PLAINTEXT", c.world().network().address(c.broker_host(1)),
                          c.broker_config(1).listeners.front().port};
    PartitionState s{{"t", 0}, *c.controller_epoch(), 1, LeaderEpoch{epoch}, at_leader.isr(),
                     at_leader.zk_version(), {1, 2}, false};
    return LeaderAndIsrRequest{*c.controller(), *c.controller_epoch(), {s}, {{1, leader}}};
  }
};

// A follower fenced by its leader (FENCED_LEADER_EPOCH: the leader is in a
// newer epoch) stops fetching that partition until a LeaderAndIsr brings the
// new epoch (AbstractFetcherThread.onPartitionFenced), then goes on at once.
TEST(KafkaBroker, AFencedFollowerWaitsForTheNextLeaderAndIsr) {
  FollowerOfBroker1 f;
  Cluster& c = f.c;
  // Broker 1 alone is told of epoch 5 (a controller's LeaderAndIsr to broker
  // 2 delayed, in effect): broker 2's fetches now carry an older epoch.
  const size_t errors_before = count_kind(c, "replica_fetch_error");
  ASSERT_EQ(std::get<LeaderAndIsrResponse>(*c.request(1, f.in_epoch(5))).error, ErrorCode::none);
  c.run_for(Duration::seconds(5));
  EXPECT_EQ(count_kind(c, "replica_fetch_error") - errors_before, 1u) << "fenced once, then not asked again";
  const auto acked = std::make_shared<std::optional<ProducePartitionResponse>>();
  c.produce_async({"t", 0}, {42}, -1, acked);
  c.run_for(Duration::seconds(2));
  EXPECT_FALSE(acked->has_value()) << "acks=all waits: broker 2 does not fetch";
  // The LeaderAndIsr reaches broker 2: it fetches again at once.
  ASSERT_EQ(std::get<LeaderAndIsrResponse>(*c.request(2, f.in_epoch(5))).error, ErrorCode::none);
  ASSERT_TRUE(c.run_until([&] { return acked->has_value(); }, Duration::millis(200)));
  EXPECT_EQ((*acked)->error, ErrorCode::none);
  EXPECT_EQ(c.log_values(2, {"t", 0}), (std::vector<uint64_t>{42}));
}

// ReplicaManager.makeFollowers changes a partition only when its new leader
// is alive in the broker's metadata cache; otherwise (a dead leader, or -1)
// the partition keeps its epoch and its fetcher. So the controller telling
// the leader's return in that same epoch is heard, not ignored as stale.
TEST(KafkaBroker, AFollowerToldOfALeaderNotAliveKeepsItsState) {
  FollowerOfBroker1 f;
  Cluster& c = f.c;
  LeaderAndIsrRequest dead_leader = f.in_epoch(3);
  dead_leader.live_leaders.clear();
  ASSERT_EQ(std::get<LeaderAndIsrResponse>(*c.request(2, dead_leader)).error, ErrorCode::none);
  LeaderAndIsrRequest no_leader = f.in_epoch(3);
  no_leader.partitions[0].leader = kNoBroker;
  no_leader.live_leaders.clear();
  ASSERT_EQ(std::get<LeaderAndIsrResponse>(*c.request(2, no_leader)).error, ErrorCode::none);
  EXPECT_EQ(count_kind(c, "follower_leader_unavailable"), 2u);
  EXPECT_EQ(c.broker(2)->partition({"t", 0})->leader_epoch(), LeaderEpoch{0});
  EXPECT_EQ(c.broker(2)->partition({"t", 0})->leader(), 1);
  // Still fetching from broker 1 in epoch 0: acks=all completes.
  ASSERT_EQ(c.produce({"t", 0}, {1}, -1)->error, ErrorCode::none);
  // Epoch 3 with its leader alive is taken.
  ASSERT_EQ(std::get<LeaderAndIsrResponse>(*c.request(1, f.in_epoch(3))).error, ErrorCode::none);
  const auto r = std::get<LeaderAndIsrResponse>(*c.request(2, f.in_epoch(3)));
  ASSERT_EQ(r.partitions.size(), 1u);
  EXPECT_EQ(r.partitions[0].second, ErrorCode::none);
  EXPECT_EQ(c.broker(2)->partition({"t", 0})->leader_epoch(), LeaderEpoch{3});
  ASSERT_EQ(c.produce({"t", 0}, {2}, -1)->error, ErrorCode::none);
  EXPECT_EQ(c.log_values(2, {"t", 0}), (std::vector<uint64_t>{1, 2}));
}

// An answer to a request asked in an epoch the partition has left since is
// dropped (truncateToEpochEndOffsets and processFetchRequest check the fetch
// state): a FENCED answer to the follower's old epoch must not take the
// partition out of the fetcher after the new epoch's LeaderAndIsr restarted it.
TEST(KafkaBroker, AnAnswerToAnEpochTheFollowerHasLeftIsDropped) {
  FollowerOfBroker1 f;
  Cluster& c = f.c;
  ASSERT_EQ(c.produce({"t", 0}, {1, 2}, -1)->error, ErrorCode::none);  // an epoch history to ask about
  ASSERT_EQ(std::get<LeaderAndIsrResponse>(*c.request(1, f.in_epoch(7))).error, ErrorCode::none);
  // The follower, still in epoch 0, is fenced by the leader, now in 7, and
  // awaits a LeaderAndIsr (AFencedFollowerWaitsForTheNextLeaderAndIsr): that
  // error is not the one this test looks for, whenever it lands.
  ASSERT_TRUE(c.run_until([&] { return count_kind(c, "replica_fetch_error") == 1; }, Duration::seconds(2)));
  // The follower hears of epoch 6, asks OffsetsForLeaderEpoch in it (which
  // the leader, in 7, fences), and hears of epoch 7 before that answer: the
  // leader is paused meanwhile, so the answer comes only after.
  const size_t errors_before = count_kind(c, "replica_fetch_error");
  c.send(2, f.in_epoch(6), [](SendError, const Response*) {});
  ASSERT_TRUE(c.run_until([&] { return c.broker(2)->fetch_in_flight_epoch({"t", 0}) == LeaderEpoch{6}; },
                          Duration::seconds(2)));
  c.pause_broker(1);
  c.send(2, f.in_epoch(7), [](SendError, const Response*) {});
  ASSERT_TRUE(c.run_until([&] { return c.broker(2)->partition({"t", 0})->leader_epoch() == LeaderEpoch{7}; },
                          Duration::seconds(1)));
  ASSERT_EQ(c.broker(2)->fetch_in_flight_epoch({"t", 0}), LeaderEpoch{6}) << "the old request is still out";
  c.resume_broker(1);
  c.run_for(Duration::seconds(1));
  EXPECT_EQ(count_kind(c, "replica_fetch_error"), errors_before) << "the stale answer was used";
  // Still fetching: acks=all completes.
  const auto r = c.produce({"t", 0}, {3}, -1, 5000);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->error, ErrorCode::none);
  EXPECT_EQ(c.log_values(2, {"t", 0}), (std::vector<uint64_t>{1, 2, 3}));
}

// A request to a dead leader fails at once (connection refused). Until
// Kafka 3.1 the fetcher then sleeps replica.fetch.backoff.ms and delays
// every partition by as much again; from 3.1 (KAFKA-8529) only the delay.
TEST(KafkaBroker, AFailedFetchRequestBacksOffTwiceBefore31) {
  for (VersionProfile version : {VersionProfile::v2_8, VersionProfile::v3_1, VersionProfile::v3_9}) {
    SCOPED_TRACE(to_string(version));
    Cluster c({.brokers = 2, .version = version});
    c.world().trace().keep_lines(true);
    c.start();
    ASSERT_TRUE(c.await_ready());
    const BrokerId dead = *c.controller();  // the survivor has no controller traffic to it
    const BrokerId follower = dead == 1 ? 2 : 1;
    ASSERT_EQ(c.create_topic("t", 1, 2, {}, {{0, {dead, follower}}}), ErrorCode::none);
    ASSERT_TRUE(c.run_until([&] { return c.state({"t", 0})->isr.size() == 2; }, Duration::seconds(30)));
    c.kill_broker(dead);
    c.run_for(Duration::seconds(1));
    const size_t before = count_kind(c, "connection_refused");
    c.run_for(Duration::seconds(10));  // within the 18 s session timeout
    const size_t refused = count_kind(c, "connection_refused") - before;
    if (version >= VersionProfile::v3_1) {
      EXPECT_GE(refused, 9u);
      EXPECT_LE(refused, 11u);
    } else {
      EXPECT_GE(refused, 4u);
      EXPECT_LE(refused, 6u);
    }
  }
}

// A controller paused past its session timeout is replaced (epoch + 1).
// When it resumes it still believes it is the controller until ZooKeeper
// tells it otherwise; its requests carry the old epoch and are ignored.
TEST(KafkaBroker, ZombieControllerIsFencedByTheEpoch) {
  Cluster c({.brokers = 3, .version = VersionProfile::v2_2});
  c.world().trace().keep_lines(true);
  InvariantChecker check(c);
  c.start();
  ASSERT_TRUE(c.await_ready());
  ASSERT_EQ(c.create_topic("t", 3, 3), ErrorCode::none);
  const BrokerId zombie = *c.controller();
  const ControllerEpoch epoch = *c.controller_epoch();
  c.pause_broker(zombie);
  ASSERT_TRUE(c.run_until([&] { return c.controller_epoch()->value == epoch.value + 1; },
                          Duration::seconds(60)));
  c.run_for(Duration::seconds(5));
  for (int p = 0; p < 3; ++p) EXPECT_NE(c.state({"t", p})->leader, zombie);
  c.resume_broker(zombie);
  ASSERT_TRUE(c.run_until([&] { return c.controller().has_value() && *c.controller() != zombie; },
                          Duration::seconds(60)));
  c.run_for(Duration::seconds(30));
  EXPECT_EQ(c.controller_epoch()->value, epoch.value + 1);
  EXPECT_GE(count_kind(c, "controller_resigned"), 1u);
  EXPECT_EQ(check.controller_epochs_seen(), 2u);
  // The zombie registers again under a new session and rejoins every ISR.
  ASSERT_TRUE(c.run_until([&] {
    for (int p = 0; p < 3; ++p) {
      if (c.state({"t", p})->isr.size() != 3) return false;
    }
    return true;
  }, Duration::seconds(120)));
}

TEST(KafkaBroker, StaleControllerRequestsAreRejected) {
  Cluster c({.brokers = 2});
  c.start();
  ASSERT_TRUE(c.await_ready());
  ASSERT_EQ(c.create_topic("t", 1, 2), ErrorCode::none);
  const BrokerId b = c.state({"t", 0})->leader;
  LeaderAndIsrRequest stale;
  stale.controller_id = 99;
  stale.controller_epoch = ControllerEpoch{0};
  stale.partitions.push_back({{"t", 0}, ControllerEpoch{0}, kNoBroker, LeaderEpoch{7}, {}, 0, {1, 2}, false});
  auto r = c.request(b, stale);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(std::get<LeaderAndIsrResponse>(*r).error, ErrorCode::stale_controller_epoch);
  EXPECT_TRUE(c.broker(b)->partition({"t", 0})->is_leader());
}

// KafkaZkClient.CheckedEphemeral: a broker restarted before ZooKeeper has
// expired its previous session finds /brokers/ids/<id> owned by that
// session and stops ("Fatal error during KafkaServer startup").
TEST(KafkaBroker, RestartWithinTheSessionTimeoutFailsAndLaterSucceeds) {
  Cluster c({.brokers = 2});
  c.world().trace().keep_lines(true);
  c.start();
  ASSERT_TRUE(c.await_ready());
  const BrokerId victim = c.broker_ids().back();
  c.kill_broker(victim);
  c.run_for(Duration::seconds(2));
  c.start_broker(victim);
  ASSERT_TRUE(c.run_until([&] { return !c.world().is_running(c.broker_process(victim)); },
                          Duration::seconds(10)));
  EXPECT_EQ(count_kind(c, "registration_failed"), 1u);
  c.run_for(Duration::seconds(20));  // the old session expires (18 s)
  c.start_broker(victim);
  ASSERT_TRUE(c.run_until([&] { return c.broker(victim) && c.broker(victim)->registered(); },
                          Duration::seconds(10)));
}

// KafkaServer.createBrokerInfo runs once, just before the first
// registration, after the ZooKeeper client has connected: a listener without
// a host advertises the machine's address as it is then, not as it was when
// the process started. (Found by `kafkasim fuzz --property liveness --seed
// 306`: a broker started while its host was at a temporary address,
// registered once the host was back, and named the temporary one for good.)
TEST(KafkaBroker, TheAdvertisedAddressIsTheHostsWhenTheBrokerFirstRegisters) {
  // The ZooKeeper client's first connection was made from the old address
  // and hears nothing once the host moves: it gives up after connectTimeout
  // (18 s over one server, from the TCP connection's completion) and
  // connects again from the new address. Kafka's own wait for that first
  // connection is made longer than that, or the broker would exit first.
  Cluster c({.brokers = 2, .broker_properties = {{"zookeeper.connection.timeout.ms", "60000"}}});
  c.world().trace().keep_lines(true);
  c.start();
  ASSERT_TRUE(c.await_ready());
  const BrokerId victim = c.broker_ids().back();
  const sim::HostId host = c.broker_host(victim);
  const std::string first = c.world().network().address(host);
  c.kill_broker(victim);
  c.run_for(Duration::seconds(20));  // its session expires (18 s)
  // The broker starts while ZooKeeper does not answer, and its host moves
  // before it can register.
  c.world().pause(c.zk_process(1));
  c.start_broker(victim);
  c.run_for(Duration::seconds(1));
  c.world().replace_address(host, "10.0.9.9");
  c.world().resume(c.zk_process(1));
  ASSERT_TRUE(c.run_until([&] { return c.broker(victim) && c.broker(victim)->registered(); },
                          Duration::seconds(30)));
  EXPECT_EQ(count_kind(c, "zk_connect_timeout"), 0u);
  const auto data = c.zk_get(fmt::format("/brokers/ids/{}", victim));
  ASSERT_TRUE(data.has_value());
  const auto reg = znodes::decode_broker(victim, *data);
  ASSERT_TRUE(reg.has_value());
  ASSERT_FALSE(reg->endpoints.empty());
  EXPECT_NE(first, "10.0.9.9");
  EXPECT_EQ(reg->endpoints.front().host, "10.0.9.9");
}

// A broker reads no request before its startup is done, once it has
// registered (KafkaServer.startup ends with startProcessingRequests /
// enableRequestProcessing). Up to 3.4 the port is bound early in the
// startup, so a connection is made and its request waits (3.1 too); from
// 3.5 (KAFKA-14658) the port opens only then, so a connection is refused.
TEST(KafkaBroker, NoRequestIsReadBeforeTheBrokerHasRegistered) {
  for (VersionProfile v : kVersionProfiles) {
    SCOPED_TRACE(to_string(v));
    Cluster c({.brokers = 2, .version = v});
    c.world().trace().keep_lines(true);
    c.start();
    ASSERT_TRUE(c.await_ready());
    const BrokerId victim = c.broker_ids().back();
    c.kill_broker(victim);
    c.run_for(Duration::seconds(20));  // its session expires
    // Started again, the broker connects to ZooKeeper; ZooKeeper then stops
    // answering, before the broker can register.
    const std::string connected =
        fmt::format("\"proc\":\"kafka-{}\",\"kind\":\"zk_connected\"", victim);
    const auto connects = [&] {
      size_t n = 0;
      for (const std::string& line : c.world().trace().lines()) n += line.find(connected) != std::string::npos;
      return n;
    };
    const size_t before = connects();
    c.start_broker(victim);
    ASSERT_TRUE(c.run_until([&] { return connects() > before; }, Duration::seconds(10)));
    c.world().pause(c.zk_process(1));
    ASSERT_FALSE(c.broker(victim)->registered());
    std::optional<SendError> outcome;
    c.send(victim, MetadataRequest{}, [&](SendError e, const Response*) { outcome = e; });
    c.run_for(Duration::seconds(5));
    if (v == VersionProfile::v3_9) {
      ASSERT_TRUE(outcome.has_value()) << "the connection is refused";
      EXPECT_NE(*outcome, SendError::none);
    } else {
      EXPECT_FALSE(outcome.has_value()) << "the request waits unread";
      EXPECT_TRUE(c.client_connected(victim));
    }
    // ZooKeeper answers again: the broker registers and reads what waited.
    c.world().resume(c.zk_process(1));
    ASSERT_TRUE(c.run_until([&] { return c.broker(victim)->registered(); }, Duration::seconds(30)));
    if (v != VersionProfile::v3_9) {
      ASSERT_TRUE(c.run_until([&] { return outcome.has_value(); }, Duration::seconds(5)));
      EXPECT_EQ(*outcome, SendError::none);
    }
    auto r = c.request(victim, MetadataRequest{});
    EXPECT_TRUE(r.has_value());
  }
}

// Up to 2.8 a broker claims a block of producer ids from ZooKeeper as it
// starts, after it registers and before it reads a request (the
// TransactionCoordinator's ProducerIdManager, built in KafkaServer.startup,
// claims one in its constructor); from 3.0 a broker asks for a block when an
// InitProducerId needs one (KIP-730). Once three 2.x brokers are up the znode
// names the third block; a 3.1 or 3.9 cluster's is still empty — unless
// its brokers speak an inter-broker protocol below 3.0-IV0, which has no
// AllocateProducerIds: then they claim as 2.x does (KafkaServer.startup
// picks the ZooKeeper manager). Each broker then answers its first
// InitProducerId from its own block (a 3.9 broker asking the controller
// answers COORDINATOR_LOAD_IN_PROGRESS until the block has come).
TEST(KafkaBroker, Brokers2xClaimAProducerIdBlockAsTheyStart) {
  std::vector<std::pair<VersionProfile, const char*>> cases;
  for (VersionProfile v : kVersionProfiles) cases.emplace_back(v, nullptr);
  cases.emplace_back(VersionProfile::v3_1, "2.8");
  cases.emplace_back(VersionProfile::v3_9, "2.8-IV1");
  cases.emplace_back(VersionProfile::v3_9, "3.0-IV0");
  for (const auto& [v, protocol] : cases) {
    SCOPED_TRACE(fmt::format("{} {}", to_string(v), protocol ? protocol : ""));
    Cluster c(on_protocol(v, protocol));
    c.start();
    ASSERT_TRUE(c.await_ready());
    c.run_for(Duration::seconds(1));
    const auto data = c.zk_get(znodes::kLatestProducerIdBlock);
    ASSERT_TRUE(data.has_value());
    if (v >= VersionProfile::v3_1 && (protocol == nullptr || std::string(protocol) == "3.0-IV0")) {
      EXPECT_EQ(*data, "");
    } else {
      const auto block = znodes::decode_producer_id_block(*data);
      ASSERT_TRUE(block.has_value()) << *data;
      EXPECT_EQ(block->block_start, 2000);
      EXPECT_EQ(block->block_end, 2999);
    }
    std::set<int64_t> firsts;
    for (BrokerId b : c.broker_ids()) {
      for (int attempt = 0; attempt < 10; ++attempt) {
        const auto r = c.request(b, InitProducerIdRequest{});
        ASSERT_TRUE(r.has_value());
        const auto& answer = std::get<InitProducerIdResponse>(*r);
        if (answer.error == ErrorCode::none) {
          firsts.insert(answer.producer_id);
          break;
        }
        EXPECT_EQ(answer.error, ErrorCode::coordinator_load_in_progress);
        c.run_for(Duration::millis(100));
      }
    }
    EXPECT_EQ(firsts, (std::set<int64_t>{0, 1000, 2000}));
  }
}

// From 3.0 on protocol 3.0-IV0 (KIP-730) a broker asks the controller for a
// block of producer ids when its first InitProducerId comes, and for the
// next block once 90 % of it is handed out; the controller claims each from
// ZooKeeper in the asker's name. Up to 3.5 the InitProducerId waits for the
// block on its handler thread; from 3.6 (KAFKA-14694) it is answered
// COORDINATOR_LOAD_IN_PROGRESS meanwhile (RPCProducerIdManager, 3.1.0, 3.9).
TEST(KafkaBroker, From30ABrokerAsksTheControllerForItsProducerIds) {
  for (VersionProfile v : {VersionProfile::v3_1, VersionProfile::v3_9}) {
    SCOPED_TRACE(to_string(v));
    Cluster c({.brokers = 3, .version = v});
    c.start();
    ASSERT_TRUE(c.await_ready());
    c.run_for(Duration::seconds(1));
    const BrokerId ctl = *c.controller();
    const BrokerId b = c.broker_ids_except(ctl)[0];
    const auto init = [&] {
      const auto r = c.request(b, InitProducerIdRequest{});
      return r ? std::get<InitProducerIdResponse>(*r) : InitProducerIdResponse{ErrorCode::unknown_server_error};
    };
    const auto block_in_zookeeper = [&] {
      const auto data = c.zk_get(znodes::kLatestProducerIdBlock);
      return data ? znodes::decode_producer_id_block(*data) : std::nullopt;
    };
    InitProducerIdResponse first = init();
    if (v == VersionProfile::v3_9) {
      EXPECT_EQ(first.error, ErrorCode::coordinator_load_in_progress);
      c.run_for(Duration::millis(100));
      first = init();
    }
    EXPECT_EQ(first.error, ErrorCode::none);
    EXPECT_EQ(first.producer_id, 0);
    auto claimed = block_in_zookeeper();
    ASSERT_TRUE(claimed.has_value());
    EXPECT_EQ(claimed->broker, b) << "claimed by the controller in the asker's name";
    EXPECT_EQ(claimed->block_end, 999);
    // Ids 1 to 899 from the block; 900 asks for the next one.
    for (int64_t id = 1; id < 900; ++id) ASSERT_EQ(init().producer_id, id);
    EXPECT_EQ(block_in_zookeeper()->block_end, 999);
    EXPECT_EQ(init().producer_id, 900);
    c.run_for(Duration::millis(100));
    EXPECT_EQ(block_in_zookeeper()->block_end, 1999);
    // 901 to 999, then the next block without a wait.
    for (int64_t id = 901; id < 1000; ++id) ASSERT_EQ(init().producer_id, id);
    const InitProducerIdResponse next = init();
    EXPECT_EQ(next.error, ErrorCode::none);
    EXPECT_EQ(next.producer_id, 1000);
  }
}

// With the controller out of reach the block never comes: a 3.1 broker's
// InitProducerId waits request.timeout.ms (20 s here, inside the test
// client's own 30 s) on its handler thread and fails REQUEST_TIMED_OUT; a
// 3.9 broker answers COORDINATOR_LOAD_IN_PROGRESS at once, every time, and
// an id once the controller can be reached again. The broker's own request
// for the block is given up when its one try times out (3.1: controller.
// socket.timeout.ms, 30 s) or, from 3.3.2, at request.timeout.ms.
TEST(KafkaBroker, WithoutTheControllerNoProducerIdComes) {
  for (VersionProfile v : {VersionProfile::v3_1, VersionProfile::v3_9}) {
    SCOPED_TRACE(to_string(v));
    Cluster c({.brokers = 3, .version = v, .broker_properties = {{"request.timeout.ms", "20000"}}});
    c.world().trace().keep_lines(true);
    c.start();
    ASSERT_TRUE(c.await_ready());
    c.run_for(Duration::seconds(1));
    const BrokerId ctl = *c.controller();
    const BrokerId b = c.broker_ids_except(ctl)[0];
    c.world().network().block(c.broker_host(b), c.broker_host(ctl));
    c.world().network().block(c.broker_host(ctl), c.broker_host(b));
    const sim::Time asked = c.world().now();
    const auto r = c.request(b, InitProducerIdRequest{});
    ASSERT_TRUE(r.has_value());
    const auto& answer = std::get<InitProducerIdResponse>(*r);
    const Duration waited = c.world().now() - asked;
    if (v == VersionProfile::v3_1) {
      EXPECT_EQ(answer.error, ErrorCode::request_timed_out);
      EXPECT_GE(waited, Duration::seconds(20));
      EXPECT_LT(waited, Duration::seconds(21));
    } else {
      EXPECT_EQ(answer.error, ErrorCode::coordinator_load_in_progress);
      EXPECT_LT(waited, Duration::seconds(1));
      c.run_for(Duration::seconds(10));
      const auto again = c.request(b, InitProducerIdRequest{});
      EXPECT_EQ(std::get<InitProducerIdResponse>(*again).error, ErrorCode::coordinator_load_in_progress);
    }
    EXPECT_EQ(*c.zk_get(znodes::kLatestProducerIdBlock), "") << "nobody claimed a block";
    c.run_for(Duration::seconds(20));
    std::optional<int64_t> given_up_us;
    for (const std::string& line : c.world().trace().lines()) {
      if (line.find("\"producer_id_block\"") == std::string::npos || line.find("timed out") == std::string::npos) continue;
      given_up_us = std::stoll(line.substr(line.find("\"t_us\":") + 7));
      break;
    }
    ASSERT_TRUE(given_up_us.has_value());
    const Duration given_up = sim::Time::from_us(*given_up_us) - asked;
    const Duration expected = Duration::seconds(v == VersionProfile::v3_1 ? 30 : 20);
    EXPECT_GE(given_up, expected);
    EXPECT_LT(given_up, expected + Duration::seconds(1));
    c.world().network().heal();
    InitProducerIdResponse later{ErrorCode::unknown_server_error};
    ASSERT_TRUE(c.run_until([&] {
      const auto x = c.request(b, InitProducerIdRequest{});
      later = std::get<InitProducerIdResponse>(*x);
      return later.error == ErrorCode::none;
    }, Duration::seconds(120)));
    EXPECT_GE(later.producer_id, 0);
  }
}

// Before 3.0 a broker claims each next block of producer ids from ZooKeeper
// itself, the InitProducerId that needs it waiting on its handler thread:
// through a lost connection too, which KafkaZkClient waits out
// (retryRequestsUntilConnected) — the request is answered once the
// connection is back, within the session.
TEST(KafkaBroker, A2xClaimOfTheNextProducerIdBlockWaitsOutALostZooKeeperConnection) {
  Cluster c({.brokers = 3, .version = VersionProfile::v2_8});
  c.start();
  ASSERT_TRUE(c.await_ready());
  c.run_for(Duration::seconds(1));
  const BrokerId b = c.broker_ids()[0];
  const auto init = [&] {
    const auto r = c.request(b, InitProducerIdRequest{});
    return r ? std::get<InitProducerIdResponse>(*r) : InitProducerIdResponse{ErrorCode::unknown_server_error};
  };
  const int64_t first = init().producer_id;
  ASSERT_GE(first, 0);
  for (int64_t i = 1; i < kProducerIdBlockSize; ++i) ASSERT_EQ(init().producer_id, first + i);
  cut_from_zookeeper(c, b);
  std::optional<InitProducerIdResponse> answer;
  c.send(b, InitProducerIdRequest{}, [&](SendError e, const Response* r) {
    answer = e == SendError::none ? std::get<InitProducerIdResponse>(*r) : InitProducerIdResponse{ErrorCode::unknown_server_error};
  });
  // Past the ZooKeeper client's read timeout (12 s of 18), short of the session's end.
  c.run_for(Duration::seconds(14));
  EXPECT_FALSE(answer.has_value()) << "the request waits for the claim";
  c.world().network().heal();
  ASSERT_TRUE(c.run_until([&] { return answer.has_value(); }, Duration::seconds(10)));
  EXPECT_EQ(answer->error, ErrorCode::none);
  EXPECT_EQ(answer->producer_id, 3 * kProducerIdBlockSize) << "the block after the three claimed at startup";
}

TEST(KafkaBroker, MetadataForAnUnknownTopicCreatesIt) {
  Cluster c({.brokers = 3, .broker_properties = {{"num.partitions", "4"}, {"default.replication.factor", "2"}}});
  c.start();
  ASSERT_TRUE(c.await_ready());
  auto r = c.request(1, MetadataRequest{std::vector<std::string>{"auto"}, true});
  ASSERT_TRUE(r.has_value());
  const auto& m = std::get<MetadataResponse>(*r);
  ASSERT_EQ(m.topics.size(), 1u);
  EXPECT_EQ(m.topics[0].error, ErrorCode::leader_not_available);
  ASSERT_TRUE(c.run_until([&] {
    for (int p = 0; p < 4; ++p) {
      if (!c.state({"auto", p})) return false;
    }
    return true;
  }, Duration::seconds(10)));
  EXPECT_EQ(c.zk_children("/brokers/topics/auto/partitions").size(), 4u);
  for (int p = 0; p < 4; ++p) EXPECT_EQ(c.state({"auto", p})->isr.size(), 2u);
  c.run_for(Duration::seconds(1));
  auto again = std::get<MetadataResponse>(*c.request(2, MetadataRequest{std::vector<std::string>{"auto"}, true}));
  ASSERT_EQ(again.topics[0].partitions.size(), 4u);
  EXPECT_EQ(again.topics[0].error, ErrorCode::none);
  // Disabled: UNKNOWN_TOPIC_OR_PARTITION and nothing is created.
  auto no = std::get<MetadataResponse>(*c.request(1, MetadataRequest{std::vector<std::string>{"other"}, false}));
  EXPECT_EQ(no.topics[0].error, ErrorCode::unknown_topic_or_partition);
  c.run_for(Duration::seconds(2));
  EXPECT_FALSE(c.zk_get("/brokers/topics/other").has_value());
}

TEST(KafkaBroker, FindCoordinatorCreatesTheOffsetsTopicOnFirstUse) {
  Cluster c({.brokers = 3});
  c.start();
  ASSERT_TRUE(c.await_ready());
  auto first = std::get<FindCoordinatorResponse>(*c.request(1, FindCoordinatorRequest{"foo"}));
  EXPECT_EQ(first.error, ErrorCode::coordinator_not_available);
  ASSERT_TRUE(c.run_until([&] { return c.zk_children("/brokers/topics/__consumer_offsets/partitions").size() == 50; },
                          Duration::seconds(10)));
  c.run_for(Duration::seconds(2));
  auto found = std::get<FindCoordinatorResponse>(*c.request(1, FindCoordinatorRequest{"foo"}));
  ASSERT_EQ(found.error, ErrorCode::none);
  // "foo".hashCode() = 101574; 101574 % 50 = 24.
  EXPECT_EQ(found.node, c.state({"__consumer_offsets", 24})->leader);
}

TEST(KafkaBroker, OffsetsTopicNeedsEnoughBrokers) {
  Cluster c({.brokers = 2});  // offsets.topic.replication.factor defaults to 3
  c.start();
  ASSERT_TRUE(c.await_ready());
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(std::get<FindCoordinatorResponse>(*c.request(1, FindCoordinatorRequest{"g"})).error,
              ErrorCode::coordinator_not_available);
    c.run_for(Duration::seconds(1));
  }
  EXPECT_FALSE(c.zk_get("/brokers/topics/__consumer_offsets").has_value());
}

TEST(KafkaBroker, IdempotentProducerRetriesAreDeduplicatedAndGapsRejected) {
  Cluster c({.brokers = 3});
  c.start();
  ASSERT_EQ(c.create_topic("t", 1, 3), ErrorCode::none);
  const BrokerId leader = c.state({"t", 0})->leader;
  auto init = std::get<InitProducerIdResponse>(*c.request(leader, InitProducerIdRequest{}));
  ASSERT_EQ(init.error, ErrorCode::none);
  EXPECT_EQ(init.producer_id, 0);
  auto batch = [&](int32_t seq, std::vector<uint64_t> values) {
    ProduceBatch b;
    b.tp = {"t", 0};
    b.producer_id = init.producer_id;
    b.producer_epoch = init.producer_epoch;
    b.base_sequence = seq;
    for (uint64_t v : values) b.records.push_back(Record{Offset{0}, LeaderEpoch{0}, 0, -1, -1, -1, v, 70, true, {}});
    auto r = c.request(leader, ProduceRequest{-1, 30000, {b}});
    return std::get<ProduceResponse>(*r).partitions.at(0);
  };
  auto a = batch(0, {10, 11});
  ASSERT_EQ(a.error, ErrorCode::none);
  auto retry = batch(0, {10, 11});
  EXPECT_EQ(retry.error, ErrorCode::none);
  EXPECT_EQ(retry.base_offset, a.base_offset);
  EXPECT_EQ(batch(5, {15}).error, ErrorCode::out_of_order_sequence_number);
  EXPECT_EQ(batch(2, {12}).error, ErrorCode::none);
  EXPECT_EQ(c.committed_values({"t", 0}), (std::vector<uint64_t>{10, 11, 12}));
  // A second producer id from the same block.
  EXPECT_EQ(std::get<InitProducerIdResponse>(*c.request(leader, InitProducerIdRequest{})).producer_id, 1);
  // Another broker claims the next block from ZooKeeper.
  const BrokerId other = leader == 1 ? 2 : 1;
  EXPECT_EQ(std::get<InitProducerIdResponse>(*c.request(other, InitProducerIdRequest{})).producer_id, 1000);
}

TEST(KafkaBroker, ConsumersReadUpToTheHighWatermarkOnly) {
  Cluster c({.brokers = 2});
  c.start();
  ASSERT_EQ(c.create_topic("t", 1, 2), ErrorCode::none);
  const TopicPartition tp{"t", 0};
  ASSERT_EQ(c.produce(tp, {1, 2, 3}, -1)->error, ErrorCode::none);
  const BrokerId leader = c.state(tp)->leader;
  const BrokerId follower = leader == 1 ? 2 : 1;
  c.world().network().block(c.broker_host(follower), c.broker_host(leader));
  ASSERT_EQ(c.produce(tp, {4}, 1)->error, ErrorCode::none);
  FetchRequest f;
  f.max_wait_ms = 0;
  f.partitions.push_back({tp, Offset{0}, LeaderEpoch{-1}, Offset{-1}});
  auto r = std::get<FetchResponse>(*c.request(leader, f)).partitions.at(0);
  EXPECT_EQ(r.error, ErrorCode::none);
  EXPECT_EQ(r.high_watermark, Offset{3});
  ASSERT_EQ(r.records.size(), 3u) << "the unreplicated 4th is not visible";
  f.partitions[0].fetch_offset = Offset{9};
  EXPECT_EQ(std::get<FetchResponse>(*c.request(leader, f)).partitions.at(0).error, ErrorCode::offset_out_of_range);
  // A long poll returns when data arrives, not at max wait.
  c.world().network().heal();
  f.partitions[0].fetch_offset = Offset{4};
  f.max_wait_ms = 10000;
  auto out = std::make_shared<std::optional<ProducePartitionResponse>>();
  c.produce_async(tp, {5}, -1, out);
  const sim::Time before = c.world().now();
  auto polled = std::get<FetchResponse>(*c.request(leader, f)).partitions.at(0);
  EXPECT_LT(c.world().now() - before, Duration::seconds(9));
  ASSERT_EQ(polled.records.size(), 1u);
  EXPECT_EQ(polled.records[0].value, 5u);
  // Not the leader: NOT_LEADER_FOR_PARTITION.
  f.partitions[0].fetch_offset = Offset{0};
  f.max_wait_ms = 0;
  EXPECT_EQ(std::get<FetchResponse>(*c.request(follower, f)).partitions.at(0).error,
            ErrorCode::not_leader_for_partition);
}

// --- fetch limits (KIP-74) ------------------------------------------------------------

// A started one-broker cluster whose topic "t" has three partitions, each
// holding four one-record batches of 70 bytes.
bool start_with_three_partitions_of_four_batches(Cluster& c) {
  c.start();
  if (c.create_topic("t", 3, 1) != ErrorCode::none) return false;
  for (int32_t p = 0; p < 3; ++p) {
    for (uint64_t v = 0; v < 4; ++v) {
      const auto r = c.produce({"t", p}, {static_cast<uint64_t>(p) * 10 + v}, 1);
      if (!r || r->error != ErrorCode::none) return false;
    }
  }
  return true;
}

// A consumer fetch of t-0, t-1 and t-2 from the given offsets, each with
// `partition_max` bytes, the answer with `answer_max`.
FetchRequest fetch_three(std::array<int64_t, 3> from, int32_t partition_max, int32_t answer_max,
                         int32_t max_wait_ms = 0, int32_t min_bytes = 1) {
  FetchRequest f;
  f.max_wait_ms = max_wait_ms;
  f.min_bytes = min_bytes;
  f.max_bytes = answer_max;
  for (int32_t p = 0; p < 3; ++p) {
    f.partitions.push_back({{"t", p}, Offset{from[static_cast<size_t>(p)]}, LeaderEpoch{-1}, Offset{-1},
                            partition_max});
  }
  return f;
}

// How many records the answer gave each partition, in the request's order.
std::vector<size_t> record_counts(const std::optional<Response>& r) {
  std::vector<size_t> counts;
  if (!r) return counts;
  for (const FetchPartitionResponse& p : std::get<FetchResponse>(*r).partitions) {
    counts.push_back(p.records.size());
  }
  return counts;
}

// A fetch sent to broker 1 on a connection of its own: when it was
// answered, and how many records each partition got.
struct FetchWatch {
  std::optional<sim::Time> answered;
  std::vector<size_t> counts;
  void send(Cluster& c, FetchRequest f) {
    answered.reset();
    counts.clear();
    c.send(1, std::move(f),
           [this, &c](SendError e, const Response* r) {
             if (e != SendError::none || r == nullptr) return;
             answered = c.world().now();
             counts = record_counts(*r);
           },
           true, /*connection=*/1);
  }
};

// ReplicaManager.readFromLocalLog: each partition reads at most its own
// limit and what the partitions before it left of the answer's; the first
// partition with data gets its first batch whole whatever the limits
// (minOneMessage), the others only what fits. The answer's limit goes down
// by the byte slice each partition sends, the part of a batch it ends with
// included (records.sizeInBytes).
TEST(KafkaBroker, AFetchReadsEachPartitionWithinItsOwnLimitAndTheAnswers) {
  Cluster c({.brokers = 1});
  ASSERT_TRUE(start_with_three_partitions_of_four_batches(c));
  using Counts = std::vector<size_t>;
  // Slices of 150 bytes (two batches and 10 bytes of a third): 50 bytes
  // are left for t-2, less than a batch.
  EXPECT_EQ(record_counts(c.request(1, fetch_three({0, 0, 0}, 150, 350))), (Counts{2, 2, 0}));
  // Slices of 100 (one batch and 30 bytes): 50 left for t-2.
  EXPECT_EQ(record_counts(c.request(1, fetch_three({0, 0, 0}, 100, 250))), (Counts{1, 1, 0}));
  // The same with room for all: two each.
  EXPECT_EQ(record_counts(c.request(1, fetch_three({0, 0, 0}, 150, 52428800))), (Counts{2, 2, 2}));
  // A partition limit below one batch: the first partition gets its first
  // batch, the others nothing.
  EXPECT_EQ(record_counts(c.request(1, fetch_three({0, 0, 0}, 50, 52428800))), (Counts{1, 0, 0}));
  // The first partition has nothing new: the first batch goes to the next.
  EXPECT_EQ(record_counts(c.request(1, fetch_three({4, 0, 0}, 50, 52428800))), (Counts{0, 1, 0}));
  // An answer limit of 0: still the first batch of the first with data.
  EXPECT_EQ(record_counts(c.request(1, fetch_three({0, 0, 0}, 1048576, 0))), (Counts{1, 0, 0}));
  // The answer's limit used up by the first partition: the next read nothing.
  EXPECT_EQ(record_counts(c.request(1, fetch_three({0, 0, 0}, 1048576, 280))), (Counts{4, 0, 0}));
}

// A fetch is answered at once when what it reads reaches min_bytes
// (ReplicaManager.fetchMessages), or else when the bytes there are to read,
// each partition's capped at its own limit but not at the answer's, do
// (DelayedFetch.tryComplete, which tryCompleteElseWatch runs at once and
// the purgatory again on every append to one of its partitions).
TEST(KafkaBroker, AFetchCountsTheBytesThereAreNotOnlyTheBytesItWouldRead) {
  Cluster c({.brokers = 1});
  ASSERT_TRUE(start_with_three_partitions_of_four_batches(c));
  FetchWatch w;
  std::optional<sim::Time>& answered = w.answered;
  std::vector<size_t>& counts = w.counts;
  const auto fetch = [&](FetchRequest f) { w.send(c, std::move(f)); };
  // The answer's 100 bytes read one batch of t-0's 280: short of min_bytes
  // (200), but 280 are there, so it is answered at once, with that batch.
  sim::Time sent = c.world().now();
  fetch(fetch_three({0, 4, 4}, 1048576, 100, /*max_wait_ms=*/20000, /*min_bytes=*/200));
  c.run_for(Duration::millis(50));
  ASSERT_TRUE(answered);
  EXPECT_LT(*answered - sent, Duration::millis(50));
  EXPECT_EQ(counts, (std::vector<size_t>{1, 0, 0}));
  // Nothing there: it waits, and each append is counted, across partitions.
  sent = c.world().now();
  fetch(fetch_three({4, 4, 4}, 1048576, 1048576, /*max_wait_ms=*/20000, /*min_bytes=*/100));
  c.run_for(Duration::seconds(1));
  ASSERT_EQ(c.produce({"t", 0}, {97}, 1)->error, ErrorCode::none);
  c.run_for(Duration::seconds(1));
  EXPECT_FALSE(answered) << "answered with 70 of the 100 bytes it waits for";
  ASSERT_EQ(c.produce({"t", 1}, {96}, 1)->error, ErrorCode::none);
  c.run_for(Duration::millis(50));
  ASSERT_TRUE(answered);
  EXPECT_LT(*answered - sent, Duration::seconds(3));
  EXPECT_EQ(counts, (std::vector<size_t>{1, 1, 0}));
  // Each partition's share is capped at its own limit: with 50 a partition,
  // t-0 and t-1 count 100 of the 200 it waits for, and an append to t-2
  // adds 50 more: it waits its whole max wait.
  sent = c.world().now();
  fetch(fetch_three({0, 0, 4}, 50, 52428800, /*max_wait_ms=*/5000, /*min_bytes=*/200));
  c.run_for(Duration::seconds(1));
  ASSERT_EQ(c.produce({"t", 2}, {98}, 1)->error, ErrorCode::none);
  c.run_for(Duration::seconds(3));
  EXPECT_FALSE(answered);
  c.run_for(Duration::seconds(2));
  ASSERT_TRUE(answered);
  EXPECT_GE(*answered - sent, Duration::seconds(5));
}

// Sends broker 1 a consumer fetch of `tp` from `from` that waits for 10000
// bytes (20 s at most), on a connection of its own; `answered` and `values`
// are set when the answer comes.
void fetch_waiting_for_10000_bytes(Cluster& c, const TopicPartition& tp, int64_t from,
                                   std::optional<sim::Time>& answered, std::vector<uint64_t>& values) {
  FetchRequest f;
  f.max_wait_ms = 20000;
  f.min_bytes = 10000;
  f.partitions.push_back({tp, Offset{from}, LeaderEpoch{-1}, Offset{-1}, 1048576});
  c.send(1, f,
         [&c, &answered, &values](SendError e, const Response* r) {
           if (e != SendError::none || r == nullptr) return;
           answered = c.world().now();
           for (const Record& rec : std::get<FetchResponse>(*r).partitions.at(0).records) values.push_back(rec.value);
         },
         true, /*connection=*/1);
}

// A read stays in one segment (Log.read). A waiting fetch whose offset was,
// when it came, in an older segment than the partition's end is answered at
// once (DelayedFetch, case C: the partition has just rolled a segment), with
// what its segment holds: one inside the first segment reads the rest of it,
// and one parked at the first segment's end stays on that segment when the
// next append rolls the log, and reads the new segment.
TEST(KafkaBroker, AWaitingFetchIsAnsweredWhenItsPartitionRollsASegment) {
  for (const auto& [from, expected] :
       {std::pair<int64_t, std::vector<uint64_t>>{0, {1, 2}}, std::pair<int64_t, std::vector<uint64_t>>{2, {3}}}) {
    SCOPED_TRACE(from);
    Cluster c({.brokers = 1});
    c.start();
    ASSERT_EQ(c.create_topic("t", 1, 1, {{"segment.bytes", "200"}}), ErrorCode::none);
    const TopicPartition tp{"t", 0};
    ASSERT_EQ(c.produce(tp, {1}, 1)->error, ErrorCode::none);
    ASSERT_EQ(c.produce(tp, {2}, 1)->error, ErrorCode::none);
    std::optional<sim::Time> answered;
    std::vector<uint64_t> values;
    fetch_waiting_for_10000_bytes(c, tp, from, answered, values);
    c.run_for(Duration::seconds(1));
    EXPECT_FALSE(answered) << "at most 140 of the 10000 bytes it waits for";
    // The third batch does not fit the 200-byte segment: a roll.
    const sim::Time rolled = c.world().now();
    ASSERT_EQ(c.produce(tp, {3}, 1)->error, ErrorCode::none);
    ASSERT_EQ(c.broker(1)->partition(tp)->log().segments().size(), 2u);
    c.run_for(Duration::millis(50));
    ASSERT_TRUE(answered);
    EXPECT_LT(*answered - rolled, Duration::millis(100));
    EXPECT_EQ(values, expected);
  }
}

// min_bytes against what a fetch that has just come reads: a first batch
// larger than its partition's limit is read whole (minOneMessage) and
// counts whole; after it, a partition whose first batch does not fit reads
// and counts nothing.
TEST(KafkaBroker, TheBytesAFetchReadsCountTowardsItsMinBytes) {
  Cluster c({.brokers = 1});
  c.start();
  ASSERT_EQ(c.create_topic("u", 2, 1), ErrorCode::none);
  ASSERT_EQ(c.produce({"u", 0}, {1}, 1)->error, ErrorCode::none);        // 70 bytes
  ASSERT_EQ(c.produce({"u", 1}, {2, 3, 4}, 1)->error, ErrorCode::none);  // one batch of 210
  FetchWatch w;
  std::optional<sim::Time>& answered = w.answered;
  std::vector<size_t>& counts = w.counts;
  const auto fetch = [&](std::vector<int32_t> partitions, int32_t min_bytes) {
    FetchRequest f;
    f.max_wait_ms = 2000;
    f.min_bytes = min_bytes;
    for (int32_t p : partitions) f.partitions.push_back({{"u", p}, Offset{0}, LeaderEpoch{-1}, Offset{-1}, 100});
    w.send(c, std::move(f));
  };
  // u-1 alone: its 210-byte batch is read whole, 210 >= 150, at once
  // (counting only the 100 of its limit, the purgatory would wait).
  sim::Time sent = c.world().now();
  fetch({1}, 150);
  c.run_for(Duration::millis(50));
  ASSERT_TRUE(answered);
  EXPECT_LT(*answered - sent, Duration::millis(50));
  EXPECT_EQ(counts, (std::vector<size_t>{3}));
  // u-0 first: it takes minOneMessage, and u-1's batch no longer fits its
  // 100: 70 bytes read, 170 counted, short of 200 — the whole max wait.
  sent = c.world().now();
  fetch({0, 1}, 200);
  c.run_for(Duration::seconds(1));
  EXPECT_FALSE(answered);
  c.run_for(Duration::seconds(2));
  ASSERT_TRUE(answered);
  EXPECT_GE(*answered - sent, Duration::seconds(2));
  EXPECT_EQ(counts, (std::vector<size_t>{1, 0}));
}

// A consumer fetching above the high watermark (records the leader has
// that its ISR has not): from 3.8 (KAFKA-16452) answered at once; before,
// on the same segment, it waits.
TEST(KafkaBroker, AConsumerFetchAboveTheHighWatermarkIsAnsweredAtOnceFrom38) {
  for (VersionProfile version : {VersionProfile::v2_8, VersionProfile::v3_9}) {
    SCOPED_TRACE(to_string(version));
    ClusterOptions o{.brokers = 2};
    o.version = version;
    Cluster c(o);
    c.start();
    ASSERT_TRUE(c.await_ready());
    const TopicPartition tp{"t", 0};
    ASSERT_EQ(c.create_topic("t", 1, 2, {}, {{0, {1, 2}}}), ErrorCode::none);
    ASSERT_EQ(c.produce(tp, {1, 2}, -1)->error, ErrorCode::none);
    c.pause_broker(2);
    ASSERT_EQ(c.produce(tp, {3, 4}, 1)->error, ErrorCode::none);
    const Partition& leader = *c.broker(1)->partition(tp);
    ASSERT_EQ(leader.high_watermark(), Offset{2});
    ASSERT_EQ(leader.log().log_end(), Offset{4});
    std::optional<sim::Time> answered;
    FetchRequest f;
    f.max_wait_ms = 3000;
    f.partitions.push_back({tp, Offset{3}, LeaderEpoch{-1}, Offset{-1}, 1048576});
    const sim::Time sent = c.world().now();
    c.send(1, f, [&](SendError e, const Response* r) {
      if (e == SendError::none && r != nullptr) answered = c.world().now();
    });
    c.run_for(Duration::seconds(5));
    ASSERT_TRUE(answered);
    if (version == VersionProfile::v3_9) {
      EXPECT_LT(*answered - sent, Duration::millis(50));
    } else {
      EXPECT_GE(*answered - sent, Duration::seconds(3));
    }
  }
}

// acks=0: the broker appends and answers nothing, and the connection goes on
// to the next request queued behind the produce (the channel is unmuted
// without a response).
TEST(KafkaBroker, AnAcksZeroProduceIsNotAnsweredAndTheNextRequestIsServed) {
  Cluster c({.brokers = 1});
  c.start();
  const TopicPartition tp{"t", 0};
  ASSERT_EQ(c.create_topic(tp.topic, 1, 1), ErrorCode::none);
  ProduceBatch b;
  b.tp = tp;
  b.records.push_back(Record{Offset{0}, LeaderEpoch{0}, 0, -1, -1, -1, 42, 70, true, {}});
  std::vector<std::string> outcomes;
  auto note = [&outcomes](std::string what) {
    return [&outcomes, what](SendError e, const Response* r) {
      outcomes.push_back(what + ":" + to_string(e) + (r != nullptr ? ":answered" : ":silent"));
    };
  };
  c.send(1, ProduceRequest{0, 30000, {b}}, note("produce"), false);
  c.send(1, MetadataRequest{std::vector<std::string>{tp.topic}}, note("metadata"));
  c.run_for(Duration::seconds(5));
  EXPECT_EQ(outcomes, (std::vector<std::string>{"produce:none:silent", "metadata:none:answered"}));
  EXPECT_EQ(c.committed_values(tp), (std::vector<uint64_t>{42}));
}

// For the purgatory tests: a started one-broker cluster whose topic `tp`
// (one partition, one replica) holds two records.
bool start_with_two_records(Cluster& c, const TopicPartition& tp) {
  c.start();
  if (c.create_topic(tp.topic, 1, 1) != ErrorCode::none) return false;
  const auto produced = c.produce(tp, {1, 2}, 1);
  return produced && produced->error == ErrorCode::none;
}

// A consumer fetch of `tp` at offset 2, where there is nothing new: it waits.
FetchRequest fetch_past_the_end(const TopicPartition& tp, int32_t max_wait_ms) {
  FetchRequest f;
  f.max_wait_ms = max_wait_ms;
  f.partitions.push_back({tp, Offset{2}, LeaderEpoch{-1}, Offset{-1}});
  return f;
}

// Waiting fetches share one timer: each is answered at its own max wait,
// whichever came first and whichever expires first.
TEST(KafkaBroker, EachWaitingFetchIsAnsweredAtItsOwnMaxWait) {
  Cluster c({.brokers = 1});
  const TopicPartition tp{"t", 0};
  ASSERT_TRUE(start_with_two_records(c, tp));
  std::map<std::string, sim::Time> answered;
  auto note = [&](std::string name) {
    return [&answered, &c, name](SendError e, const Response* r) {
      if (e == SendError::none && r != nullptr && std::get<FetchResponse>(*r).partitions.at(0).records.empty()) {
        answered[name] = c.world().now();
      }
    };
  };
  // Both connections open first, so that the fetches arrive 1 ms apart.
  c.send(1, MetadataRequest{}, [](SendError, const Response*) {}, true, 1);
  c.send(1, MetadataRequest{}, [](SendError, const Response*) {}, true, 2);
  c.run_for(Duration::seconds(1));
  const sim::Time start = c.world().now();
  c.send(1, fetch_past_the_end(tp, 900), note("long"), true, 1);
  c.run_for(Duration::millis(1));
  c.send(1, fetch_past_the_end(tp, 300), note("short"), true, 2);
  c.run_for(Duration::seconds(3));
  ASSERT_EQ(answered.size(), 2u);
  // Sent at start and start + 1 ms; answered after the wait and the trip
  // there and back on an open connection (well under 20 ms).
  auto waited = [&](const std::string& name, int64_t sent_ms) {
    return (answered.at(name) - start - Duration::millis(sent_ms)).us();
  };
  EXPECT_GE(waited("short", 1), 300'000);
  EXPECT_LT(waited("short", 1), 320'000);
  EXPECT_GE(waited("long", 0), 900'000);
  EXPECT_LT(waited("long", 0), 920'000);
}

// A partition deleted while a fetch waits on it (a StopReplica with delete,
// as for a deleted topic): the fetch is answered with an error, not read
// from the log that is gone.
TEST(KafkaBroker, AFetchWaitingOnADeletedPartitionIsAnsweredWithAnError) {
  Cluster c({.brokers = 1});
  const TopicPartition tp{"t", 0};
  ASSERT_TRUE(start_with_two_records(c, tp));
  const auto epoch = c.controller_epoch();
  ASSERT_TRUE(epoch.has_value());
  std::optional<FetchPartitionResponse> answer;
  c.send(1, fetch_past_the_end(tp, 1000), [&answer](SendError e, const Response* r) {
    if (e == SendError::none && r != nullptr) answer = std::get<FetchResponse>(*r).partitions.at(0);
  }, true, 1);
  c.run_for(Duration::millis(100));
  EXPECT_FALSE(answer.has_value()) << "nothing to read yet: the fetch waits";
  std::optional<ErrorCode> stopped;
  c.send(1, StopReplicaRequest{1, *epoch, true, {tp}}, [&stopped](SendError e, const Response* r) {
    if (e == SendError::none && r != nullptr) stopped = std::get<StopReplicaResponse>(*r).error;
  }, true, 2);
  c.run_for(Duration::seconds(2));
  ASSERT_EQ(stopped, ErrorCode::none);
  EXPECT_EQ(c.broker(1)->partition(tp), nullptr);
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->error, ErrorCode::not_leader_for_partition);
  EXPECT_TRUE(answer->records.empty());
}

// A broker cut off from ZooKeeper loses its session; the controller moves
// its leadership. Back in contact, it registers under a new session.
TEST(KafkaBroker, BrokerCutOffFromZooKeeperIsReplacedAndRejoins) {
  Cluster c({.brokers = 3});
  InvariantChecker check(c);
  c.start();
  ASSERT_TRUE(c.await_ready());
  ASSERT_EQ(c.create_topic("t", 3, 3), ErrorCode::none);
  const BrokerId ctl = *c.controller();
  BrokerId victim = kNoBroker;
  for (int p = 0; p < 3 && victim == kNoBroker; ++p) {
    if (c.state({"t", p})->leader != ctl) victim = c.state({"t", p})->leader;
  }
  ASSERT_NE(victim, kNoBroker);
  const int64_t old_epoch = c.broker(victim)->broker_epoch();
  const sim::HostId zk_host = c.world().host_of(c.zk_process(1));
  c.world().network().block(c.broker_host(victim), zk_host);
  c.world().network().block(zk_host, c.broker_host(victim));
  ASSERT_TRUE(c.run_until([&] {
    for (int p = 0; p < 3; ++p) {
      if (c.state({"t", p})->leader == victim) return false;
    }
    return true;
  }, Duration::seconds(60)));
  c.world().network().heal();
  ASSERT_TRUE(c.run_until([&] { return c.broker(victim)->registered() && c.broker(victim)->broker_epoch() != old_epoch; },
                          Duration::seconds(60)));
  ASSERT_TRUE(c.run_until([&] {
    for (int p = 0; p < 3; ++p) {
      if (c.state({"t", p})->isr.size() != 3) return false;
    }
    return true;
  }, Duration::seconds(120)));
}

// --- determinism -----------------------------------------------------------------

uint64_t run_seed002(uint64_t seed, std::vector<std::string>* lines = nullptr) {
  Cluster c({.zookeepers = 3, .brokers = 2, .seed = seed, .version = VersionProfile::v2_2,
             .chroot = "/kafka"});
  c.world().trace().keep_lines(lines != nullptr);
  InvariantChecker check(c);
  c.start();
  c.await_ready();
  c.create_topic("playground", 4, 2);
  for (int i = 0; i < 20; ++i) c.produce({"playground", i % 4}, {static_cast<uint64_t>(i)}, -1);
  c.kill_broker(*c.controller());
  c.run_for(Duration::seconds(30));
  for (BrokerId b : c.broker_ids()) {
    if (!c.world().is_running(c.broker_process(b))) c.start_broker(b);
  }
  c.run_for(Duration::seconds(60));
  if (lines != nullptr) *lines = c.world().trace().lines();
  return c.world().trace().hash();
}

TEST(KafkaDeterminism, SameSeedSameTrace) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    std::vector<std::string> a, b;
    const uint64_t ha = run_seed002(seed, &a);
    const uint64_t hb = run_seed002(seed, &b);
    ASSERT_EQ(ha, hb) << "seed " << seed << " first difference at line "
                      << std::distance(a.begin(), std::mismatch(a.begin(), a.end(), b.begin(), b.end()).first);
  }
  EXPECT_NE(run_seed002(1), run_seed002(2));
}

// The text trace of seed 002's controller failover, pinned: any change in
// how brokers register, elect, replicate or fail over shows up as a diff.
// ZooKeeper's commit lines are left out to keep it readable. Regenerate with
// KAFKASIM_UPDATE_GOLDEN=1.
TEST(KafkaDeterminism, GoldenControllerFailoverTrace) {
  std::vector<std::string> json;
  Cluster c({.zookeepers = 3, .brokers = 2, .seed = 7, .version = VersionProfile::v2_3,
             .chroot = "/kafka"});
  std::ostringstream text;
  c.world().trace().set_text_sink(&text);
  c.start();
  ASSERT_TRUE(c.await_ready());
  ASSERT_EQ(c.create_topic("playground", 4, 2), ErrorCode::none);
  ASSERT_EQ(c.produce({"playground", 0}, {1, 2, 3}, -1)->error, ErrorCode::none);
  c.kill_broker(*c.controller());
  c.run_for(Duration::seconds(30));
  std::string filtered;
  std::istringstream in_text(text.str());
  for (std::string line; std::getline(in_text, line);) {
    if (line.find("  commit  ") != std::string::npos) continue;
    filtered += line + "\n";
  }
  const std::string path =
      std::string(KAFKASIM_SOURCE_DIR) + "/tests/model/kafka/golden/controller_failover_seed7.txt";
  if (std::getenv("KAFKASIM_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(path) << filtered;
    GTEST_SKIP() << "rewrote " << path;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in) << "missing " << path;
  std::stringstream golden;
  golden << in.rdbuf();
  EXPECT_EQ(filtered, golden.str());
}

}  // namespace
}  // namespace kafka::testing
