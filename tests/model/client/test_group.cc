// Consumer groups from the client side: the range and round-robin assignors
// on exact expected assignments, and group members (client::GroupConsumer)
// against a simulated cluster's group coordinator — seeds/002's two and three
// console consumers on a two-partition topic, a restarted member resuming at
// its committed offset, coordinator failover, session timeout and
// max.poll.interval.ms.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "kafka/cluster.h"
#include "model/check/checkers.h"
#include "model/client/assignor.h"
#include "model/client/group.h"

namespace kafka::testing {
namespace {

using client::GroupAssignment;
using client::GroupConsumer;
using client::Subscriptions;
using sim::Duration;

std::vector<TopicPartition> tps(std::initializer_list<std::pair<const char*, int32_t>> l) {
  std::vector<TopicPartition> out;
  for (const auto& [t, p] : l) out.push_back({t, p});
  return out;
}

// --- assignors ---------------------------------------------------------------------------

TEST(RangeAssignor, OneTwoThreeMembersOnTwoPartitions) {
  const std::map<std::string, int32_t> counts{{"t", 2}};
  EXPECT_EQ(client::range_assign(counts, {{"a", {"t"}}}), (GroupAssignment{{"a", tps({{"t", 0}, {"t", 1}})}}));
  EXPECT_EQ(client::range_assign(counts, {{"a", {"t"}}, {"b", {"t"}}}),
            (GroupAssignment{{"a", tps({{"t", 0}})}, {"b", tps({{"t", 1}})}}));
  // seeds/002: "because we have three consumers and only two partitions,
  // one of the consumers will stay idle" — the last by member id.
  EXPECT_EQ(client::range_assign(counts, {{"c", {"t"}}, {"a", {"t"}}, {"b", {"t"}}}),
            (GroupAssignment{{"a", tps({{"t", 0}})}, {"b", tps({{"t", 1}})}, {"c", {}}}));
}

TEST(RangeAssignor, UnevenCountsGiveTheFirstMembersOneMore) {
  const GroupAssignment a = client::range_assign({{"t", 7}}, {{"m1", {"t"}}, {"m2", {"t"}}, {"m3", {"t"}}});
  EXPECT_EQ(a, (GroupAssignment{{"m1", tps({{"t", 0}, {"t", 1}, {"t", 2}})},
                                {"m2", tps({{"t", 3}, {"t", 4}})},
                                {"m3", tps({{"t", 5}, {"t", 6}})}}));
  EXPECT_EQ(client::range_assign({{"t", 5}}, {{"a", {"t"}}, {"b", {"t"}}}),
            (GroupAssignment{{"a", tps({{"t", 0}, {"t", 1}, {"t", 2}})}, {"b", tps({{"t", 3}, {"t", 4}})}}));
}

TEST(RangeAssignor, TwoTopicsAreRangedEachOnTheirOwn) {
  // RangeAssignor's own example: C0 and C1 on t0 and t1 of 3 partitions each.
  EXPECT_EQ(client::range_assign({{"t0", 3}, {"t1", 3}}, {{"C0", {"t0", "t1"}}, {"C1", {"t1", "t0"}}}),
            (GroupAssignment{{"C0", tps({{"t0", 0}, {"t0", 1}, {"t1", 0}, {"t1", 1}})},
                             {"C1", tps({{"t0", 2}, {"t1", 2}})}}));
}

TEST(RangeAssignor, MembersWithDifferentSubscriptions) {
  EXPECT_EQ(client::range_assign({{"t1", 2}, {"t2", 2}}, {{"a", {"t1"}}, {"b", {"t1", "t2"}}}),
            (GroupAssignment{{"a", tps({{"t1", 0}})}, {"b", tps({{"t1", 1}, {"t2", 0}, {"t2", 1}})}}));
  // A topic the metadata does not know has nothing to hand out.
  EXPECT_EQ(client::range_assign({{"t1", 1}}, {{"a", {"t1", "gone"}}, {"b", {"gone"}}}),
            (GroupAssignment{{"a", tps({{"t1", 0}})}, {"b", {}}}));
}

TEST(RoundRobinAssignor, OneTwoThreeMembersOnTwoPartitions) {
  const std::map<std::string, int32_t> counts{{"t", 2}};
  EXPECT_EQ(client::round_robin_assign(counts, {{"a", {"t"}}}),
            (GroupAssignment{{"a", tps({{"t", 0}, {"t", 1}})}}));
  EXPECT_EQ(client::round_robin_assign(counts, {{"a", {"t"}}, {"b", {"t"}}}),
            (GroupAssignment{{"a", tps({{"t", 0}})}, {"b", tps({{"t", 1}})}}));
  EXPECT_EQ(client::round_robin_assign(counts, {{"a", {"t"}}, {"b", {"t"}}, {"c", {"t"}}}),
            (GroupAssignment{{"a", tps({{"t", 0}})}, {"b", tps({{"t", 1}})}, {"c", {}}}));
}

TEST(RoundRobinAssignor, DealsAcrossTopics) {
  // RoundRobinAssignor's example: C0 and C1 on t0 and t1 of 3 partitions each.
  EXPECT_EQ(client::round_robin_assign({{"t0", 3}, {"t1", 3}}, {{"C0", {"t0", "t1"}}, {"C1", {"t0", "t1"}}}),
            (GroupAssignment{{"C0", tps({{"t0", 0}, {"t0", 2}, {"t1", 1}})},
                             {"C1", tps({{"t0", 1}, {"t1", 0}, {"t1", 2}})}}));
  // Uneven: 5 partitions, 2 members.
  EXPECT_EQ(client::round_robin_assign({{"t", 5}}, {{"a", {"t"}}, {"b", {"t"}}}),
            (GroupAssignment{{"a", tps({{"t", 0}, {"t", 2}, {"t", 4}})}, {"b", tps({{"t", 1}, {"t", 3}})}}));
}

TEST(RoundRobinAssignor, SkipsMembersNotSubscribedToTheTopic) {
  // The example with different subscriptions: C0 on t0; C1 on t0, t1; C2 on
  // t0, t1, t2; t0, t1, t2 with 1, 2, 3 partitions.
  EXPECT_EQ(client::round_robin_assign({{"t0", 1}, {"t1", 2}, {"t2", 3}},
                                       {{"C0", {"t0"}}, {"C1", {"t0", "t1"}}, {"C2", {"t0", "t1", "t2"}}}),
            (GroupAssignment{{"C0", tps({{"t0", 0}})},
                             {"C1", tps({{"t1", 0}})},
                             {"C2", tps({{"t1", 1}, {"t2", 0}, {"t2", 1}, {"t2", 2}})}}));
}

TEST(Assignors, ByNameAndSubscriptionEncoding) {
  const Subscriptions subs{{"a", {"t"}}, {"b", {"t"}}};
  EXPECT_EQ(client::assign_partitions("range", {{"t", 4}}, subs), client::range_assign({{"t", 4}}, subs));
  EXPECT_EQ(client::assign_partitions("roundrobin", {{"t", 4}}, subs),
            client::round_robin_assign({{"t", 4}}, subs));
  EXPECT_THROW(client::assign_partitions("cooperative-sticky", {{"t", 4}}, subs), std::invalid_argument);
  EXPECT_EQ(client::encode_subscription({"a", "b"}), "topics=a,b");
  EXPECT_EQ(client::decode_subscription("topics=a,b"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(client::decode_subscription("topics="), std::vector<std::string>{});
  EXPECT_FALSE(client::decode_subscription("a,b").has_value());
  EXPECT_FALSE(client::decode_subscription("topics=a,,b").has_value());
}

// --- group members against a cluster ---------------------------------------------------------

// One record a member handed to its application.
struct Seen {
  std::string member;
  uint64_t incarnation = 0;
  TopicPartition tp;
  int64_t offset = 0;
  uint64_t value = 0;
};

// A consumer application: a GroupConsumer, a poll loop every 100 ms (which
// can be stopped to model a stuck application), records into the history.
class Member final : public sim::Process, public client::ConsumerListener {
 public:
  Member(client::ConsumerConfig config, std::vector<std::string> topics, check::History* history,
         std::vector<Seen>* seen)
      : config_(std::move(config)), topics_(std::move(topics)), history_(history), seen_(seen) {}
  void on_start() override {
    group_ = std::make_unique<GroupConsumer>(ctx(), config_, topics_, *this, history_);
    poll_loop();
  }
  void on_connected(sim::SocketId s) override { group_->on_connected(s); }
  void on_connect_failed(sim::SocketId s, sim::ConnectError e) override { group_->on_connect_failed(s, e); }
  void on_message(sim::SocketId s, sim::Payload& p) override { group_->on_message(s, p); }
  void on_closed(sim::SocketId s, sim::CloseReason r) override { group_->on_closed(s, r); }
  void on_client_event(const std::string&, int32_t) override {}
  void on_records(const std::vector<client::ConsumedRecord>& records) override {
    for (const client::ConsumedRecord& r : records) {
      seen_->push_back({ctx().name(), ctx().incarnation(), r.tp, r.offset, r.value});
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
  }

  GroupConsumer& group() { return *group_; }
  void set_polling(bool on) { polling_ = on; }

 private:
  void poll_loop() {
    if (polling_) group_->polled();
    ctx().after(Duration::millis(100), [this] { poll_loop(); });
  }

  client::ConsumerConfig config_;
  std::vector<std::string> topics_;
  check::History* history_;
  std::vector<Seen>* seen_;
  std::unique_ptr<GroupConsumer> group_;
  bool polling_ = true;
};

struct GroupLab {
  explicit GroupLab(uint64_t seed, int32_t partitions = 2, std::map<std::string, std::string> broker_properties = {})
      : cluster({.brokers = 3, .seed = seed, .broker_properties = std::move(broker_properties)}) {
    cluster.start();
    EXPECT_TRUE(cluster.await_ready());
    EXPECT_EQ(cluster.create_topic("t", partitions, 3), ErrorCode::none);
    host = cluster.world().add_host("consumers", "10.0.9.2");
  }

  static client::ConsumerConfig config() {
    client::ConsumerConfig c;
    for (int i = 1; i <= 3; ++i) c.bootstrap.push_back({fmt::format("10.0.1.{}", i), 9092});
    c.group_id = "foo";
    c.auto_offset_reset = client::ConsumerConfig::Reset::earliest;
    c.session_timeout_ms = 6000;  // the broker's group.min.session.timeout.ms
    c.heartbeat_interval_ms = 1000;
    c.max_poll_interval_ms = 300000;
    c.enable_auto_commit = true;
    c.auto_commit_interval_ms = 1000;
    c.request_timeout_ms = 10000;
    return c;
  }

  sim::ProcessId add(const std::string& name, client::ConsumerConfig c = config()) {
    const sim::ProcessId p = cluster.world().add_process(host, name, [this, c] {
      return std::make_unique<Member>(c, std::vector<std::string>{"t"}, &history, &seen);
    });
    cluster.world().start(p);
    members.push_back(p);
    return p;
  }
  Member* member(sim::ProcessId p) { return cluster.world().process_as<Member>(p); }
  GroupConsumer* group(sim::ProcessId p) {
    Member* m = member(p);
    return m == nullptr ? nullptr : &m->group();
  }
  // Every running member stable in one generation, owning `total` partitions together.
  bool settled(int32_t total) {
    std::optional<int32_t> generation;
    size_t owned = 0;
    for (sim::ProcessId p : members) {
      if (!cluster.world().is_running(p)) continue;
      GroupConsumer* g = group(p);
      if (g == nullptr || g->state() != GroupConsumer::State::stable) return false;
      if (generation && *generation != g->generation()) return false;
      generation = g->generation();
      owned += g->assignment().size();
    }
    return owned == static_cast<size_t>(total);
  }
  void produce(int32_t partition, uint64_t from, uint64_t to) {
    std::vector<uint64_t> values;
    for (uint64_t v = from; v < to; ++v) values.push_back(v);
    const auto r = cluster.produce({"t", partition}, values, -1);
    ASSERT_TRUE(r.has_value());
    ASSERT_EQ(r->error, ErrorCode::none);
  }
  // Offsets `member` (any incarnation, or only `incarnation`) read from `tp`, in order.
  std::vector<int64_t> offsets(const std::string& name, const TopicPartition& tp, uint64_t incarnation = 0) {
    std::vector<int64_t> out;
    for (const Seen& s : seen) {
      if (s.member == name && s.tp == tp && (incarnation == 0 || s.incarnation == incarnation)) {
        out.push_back(s.offset);
      }
    }
    return out;
  }
  std::set<uint64_t> values_seen(const TopicPartition& tp) {
    std::set<uint64_t> out;
    for (const Seen& s : seen) {
      if (s.tp == tp) out.insert(s.value);
    }
    return out;
  }
  // OffsetFetch straight to the group's coordinator (whoever leads its
  // __consumer_offsets partition now).
  std::optional<int64_t> committed(const TopicPartition& tp) {
    for (BrokerId b : cluster.broker_ids()) {
      if (!cluster.world().is_running(cluster.broker_process(b))) continue;
      auto found = cluster.request(b, FindCoordinatorRequest{"foo"}, Duration::seconds(10));
      if (!found) continue;
      const auto& f = std::get<FindCoordinatorResponse>(*found);
      if (f.error != ErrorCode::none) continue;
      auto r = cluster.request(f.node, OffsetFetchRequest{"foo", {tp}}, Duration::seconds(10));
      if (!r) return std::nullopt;
      const auto& o = std::get<OffsetFetchResponse>(*r);
      if (o.error != ErrorCode::none || o.partitions.empty()) return std::nullopt;
      return o.partitions[0].offset;
    }
    return std::nullopt;
  }

  check::History history;
  Cluster cluster;
  sim::HostId host;
  std::vector<sim::ProcessId> members;
  std::vector<Seen> seen;
};

std::string joined(const std::set<TopicPartition>& s) {
  std::string out;
  for (const TopicPartition& tp : s) out += (out.empty() ? "" : ",") + to_string(tp);
  return out;
}

// seeds/002: "If you run two consumers, they will be automatically
// rebalanced and each of them will consume only half of the topic ... Start
// the third consumer. Now, because we have three consumers and only two
// partitions, one of the consumers will stay idle."
TEST(GroupConsumerSeed002, TwoConsumersShareTwoPartitionsAndAThirdStaysIdle) {
  GroupLab lab(2);
  const sim::ProcessId c1 = lab.add("consumer-1");
  const sim::ProcessId c2 = lab.add("consumer-2");
  ASSERT_TRUE(lab.cluster.run_until([&] { return lab.settled(2); }, Duration::seconds(60)));
  EXPECT_EQ(lab.group(c1)->assignment().size(), 1u) << joined(lab.group(c1)->assignment());
  EXPECT_EQ(lab.group(c2)->assignment().size(), 1u) << joined(lab.group(c2)->assignment());
  // Both joined within group.initial.rebalance.delay.ms: one generation.
  EXPECT_EQ(lab.group(c1)->generation(), lab.group(c2)->generation());
  lab.produce(0, 0, 10);
  lab.produce(1, 100, 110);
  lab.cluster.run_for(Duration::seconds(3));
  for (int32_t p = 0; p < 2; ++p) EXPECT_EQ(lab.values_seen({"t", p}).size(), 10u) << "partition " << p;

  const int32_t before = lab.group(c1)->generation();
  const sim::ProcessId c3 = lab.add("consumer-3");
  ASSERT_TRUE(lab.cluster.run_until(
      [&] { return lab.settled(2) && lab.group(c3)->state() == GroupConsumer::State::stable; },
      Duration::seconds(60)));
  EXPECT_EQ(lab.group(c3)->generation(), before + 1);
  int idle = 0;
  std::string idle_name;
  for (sim::ProcessId p : {c1, c2, c3}) {
    const size_t n = lab.group(p)->assignment().size();
    EXPECT_LE(n, 1u);
    if (n == 0) {
      ++idle;
      idle_name = lab.cluster.world().process_name(p);
    }
  }
  EXPECT_EQ(idle, 1);
  // Nothing read twice across the rebalance (positions were committed on
  // revoke), nothing missed.
  lab.produce(0, 10, 20);
  lab.produce(1, 110, 120);
  lab.cluster.run_for(Duration::seconds(3));
  EXPECT_EQ(lab.values_seen({"t", 0}).size(), 20u);
  EXPECT_EQ(lab.values_seen({"t", 1}).size(), 20u);
  EXPECT_EQ(lab.seen.size(), 40u) << "a record was delivered twice";

  const check::GroupResult r = check::check_groups(lab.history);
  ASSERT_EQ(r.groups.size(), 1u);
  const check::GroupResult::Group& g = r.groups[0];
  EXPECT_EQ(g.group, "foo");
  EXPECT_EQ(g.rebalances, 2u);  // generation 1 (two members), generation 2 (three)
  EXPECT_EQ(g.failed, 0u);
  EXPECT_EQ(g.assignment.size(), 3u);
  EXPECT_EQ(g.idle, std::vector<std::string>{idle_name});
  std::set<std::string> assigned;
  for (const auto& [consumer, parts] : g.assignment) assigned.insert(parts.begin(), parts.end());
  EXPECT_EQ(assigned, (std::set<std::string>{"t-0", "t-1"}));
}

// A consumer killed and started again in the same group resumes at the
// offset it committed — not at its last position, which it had not
// committed — reading nothing below it and missing nothing above.
TEST(GroupConsumerRestart, ResumesFromTheCommittedOffset) {
  GroupLab lab(3);
  client::ConsumerConfig c = GroupLab::config();
  c.enable_auto_commit = false;
  const sim::ProcessId m = lab.add("consumer", c);
  ASSERT_TRUE(lab.cluster.run_until([&] { return lab.settled(2); }, Duration::seconds(60)));
  lab.produce(0, 0, 100);
  lab.produce(1, 1000, 1100);
  ASSERT_TRUE(lab.cluster.run_until([&] { return lab.seen.size() == 200; }, Duration::seconds(10)));
  bool committed = false;
  lab.group(m)->commit([&](bool ok) { committed = ok; });
  ASSERT_TRUE(lab.cluster.run_until([&] { return committed; }, Duration::seconds(10)));
  EXPECT_EQ(lab.committed({"t", 0}), 100);
  EXPECT_EQ(lab.committed({"t", 1}), 100);
  // Read on without committing, then die.
  lab.produce(0, 100, 150);
  lab.produce(1, 1100, 1150);
  ASSERT_TRUE(lab.cluster.run_until([&] { return lab.seen.size() == 300; }, Duration::seconds(10)));
  lab.cluster.world().kill(m);
  lab.produce(0, 150, 200);
  lab.produce(1, 1150, 1200);
  lab.cluster.world().start(m);
  // The old member is still in the group until its session times out.
  ASSERT_TRUE(lab.cluster.run_until([&] { return lab.settled(2); }, Duration::seconds(60)));
  ASSERT_TRUE(lab.cluster.run_until([&] { return lab.seen.size() == 300 + 200; }, Duration::seconds(20)))
      << lab.seen.size();
  for (int32_t p = 0; p < 2; ++p) {
    std::vector<int64_t> expected;
    for (int64_t o = 100; o < 200; ++o) expected.push_back(o);
    EXPECT_EQ(lab.offsets("consumer", {"t", p}, 2), expected) << "partition " << p;
  }
}

// Killing the broker that coordinates the group: the members find the new
// coordinator (the new leader of the group's __consumer_offsets partition),
// the commits made before are still there, and consumption goes on.
enum class CoordinatorFault { kill, power_off };

void coordinator_failover(uint64_t seed, CoordinatorFault fault) {
  GroupLab lab(seed);
  const sim::ProcessId c1 = lab.add("consumer-1");
  const sim::ProcessId c2 = lab.add("consumer-2");
  ASSERT_TRUE(lab.cluster.run_until([&] { return lab.settled(2); }, Duration::seconds(60)));
  lab.produce(0, 0, 50);
  lab.produce(1, 1000, 1050);
  ASSERT_TRUE(lab.cluster.run_until([&] { return lab.seen.size() == 100; }, Duration::seconds(10)));
  lab.cluster.run_for(Duration::seconds(2));  // an auto commit or two
  ASSERT_EQ(lab.committed({"t", 0}), 50);
  ASSERT_EQ(lab.committed({"t", 1}), 50);
  const auto old = lab.group(c1)->coordinator();
  ASSERT_TRUE(old.has_value());
  ASSERT_EQ(lab.group(c2)->coordinator(), old);
  // kill -9: the members' connections are reset at once. Power-off: nothing
  // answers; requests time out and a new connection never comes up.
  if (fault == CoordinatorFault::kill) {
    lab.cluster.kill_broker(*old);
  } else {
    lab.cluster.power_off_broker(*old);
  }
  ASSERT_TRUE(lab.cluster.run_until(
      [&] {
        return lab.settled(2) && lab.group(c1)->coordinator().has_value() &&
               lab.group(c1)->coordinator() != old && lab.group(c2)->coordinator() != old;
      },
      Duration::seconds(90)));
  EXPECT_EQ(lab.group(c1)->coordinator(), lab.group(c2)->coordinator());
  // The commits made with the old coordinator are what the new one serves.
  EXPECT_EQ(lab.committed({"t", 0}), 50);
  EXPECT_EQ(lab.committed({"t", 1}), 50);
  lab.produce(0, 50, 100);
  lab.produce(1, 1050, 1100);
  ASSERT_TRUE(lab.cluster.run_until([&] { return lab.values_seen({"t", 0}).size() == 100 &&
                                                 lab.values_seen({"t", 1}).size() == 100; },
                                    Duration::seconds(30)));
  // Nothing read again below what was committed before the failover.
  std::map<TopicPartition, int> reads;
  for (const Seen& s : lab.seen) {
    if (s.offset < 50) ++reads[s.tp];
  }
  EXPECT_EQ(reads[(TopicPartition{"t", 0})], 50);
  EXPECT_EQ(reads[(TopicPartition{"t", 1})], 50);
  lab.cluster.run_for(Duration::seconds(3));
  EXPECT_EQ(lab.committed({"t", 0}), 100);
  EXPECT_EQ(lab.committed({"t", 1}), 100);
}

TEST(GroupConsumerFailover, CoordinatorKilledGroupMovesOnAndCommitsSurvive) {
  coordinator_failover(4, CoordinatorFault::kill);
}

TEST(GroupConsumerFailover, CoordinatorPoweredOffGroupMovesOnAndCommitsSurvive) {
  coordinator_failover(4, CoordinatorFault::power_off);
}

// librdkafka times a Heartbeat out after session.timeout.ms, capped at
// socket.timeout.ms (the Java client uses request.timeout.ms): with the cap
// above the session timeout, a member whose coordinator loses power waits
// on its heartbeat until its own session check fires, and rejoins as a new
// member, in a new generation; with a lower cap it finds the new
// coordinator in time and keeps its membership.
struct HeartbeatOutcome {
  bool same_coordinator_at_40s = false;
  bool rejoined = false;  // in a later generation
};

// One member (no auto commit: nothing but heartbeats goes to the
// coordinator) with session.timeout.ms 45 s and `socket_timeout_ms`; its
// coordinator loses power.
HeartbeatOutcome coordinator_powered_off(int32_t socket_timeout_ms) {
  GroupLab lab(4);
  client::ConsumerConfig c = GroupLab::config();
  c.session_timeout_ms = 45000;
  c.request_timeout_ms = socket_timeout_ms;
  c.enable_auto_commit = false;
  const sim::ProcessId c1 = lab.add("consumer-1", c);
  HeartbeatOutcome out;
  EXPECT_TRUE(lab.cluster.run_until([&] { return lab.settled(2); }, Duration::seconds(60)));
  const auto old = lab.group(c1)->coordinator();
  const int32_t generation = lab.group(c1)->generation();
  EXPECT_TRUE(old.has_value());
  if (!old) return out;
  lab.cluster.power_off_broker(*old);
  lab.cluster.run_for(Duration::seconds(40));
  out.same_coordinator_at_40s = lab.group(c1)->coordinator() == old;
  EXPECT_TRUE(lab.cluster.run_until([&] { return lab.settled(2) && lab.group(c1)->coordinator() != old; },
                                    Duration::seconds(30)));
  out.rejoined = lab.group(c1)->generation() > generation;
  return out;
}

TEST(GroupConsumerFailover, AHeartbeatToAPoweredOffCoordinatorWaitsTheSessionTimeout) {
  // socket.timeout.ms at librdkafka's 60 s: the heartbeat sent after the
  // power-off is still waiting at 40 s; the session check gives up first.
  const HeartbeatOutcome slow = coordinator_powered_off(60000);
  EXPECT_TRUE(slow.same_coordinator_at_40s);
  EXPECT_TRUE(slow.rejoined);
  // At 10 s it caps the heartbeat's timeout: the member finds the next
  // coordinator in time and keeps its membership.
  const HeartbeatOutcome quick = coordinator_powered_off(10000);
  EXPECT_FALSE(quick.same_coordinator_at_40s);
  EXPECT_FALSE(quick.rejoined);
}

// A member that stops (SIGSTOP, a long GC) stops heartbeating; after
// session.timeout.ms the coordinator removes it and the other member gets
// its partition. Resumed, it finds itself out of the group and rejoins.
TEST(GroupConsumerSession, PausedMemberIsRemovedAfterTheSessionTimeout) {
  GroupLab lab(5);
  const sim::ProcessId c1 = lab.add("consumer-1");
  const sim::ProcessId c2 = lab.add("consumer-2");
  ASSERT_TRUE(lab.cluster.run_until([&] { return lab.settled(2); }, Duration::seconds(60)));
  lab.cluster.run_for(Duration::seconds(5));
  const sim::Time paused = lab.cluster.world().now();
  lab.cluster.world().pause(c1);
  ASSERT_TRUE(lab.cluster.run_until([&] { return lab.group(c2)->assignment().size() == 2; },
                                    Duration::seconds(30)));
  const Duration took = lab.cluster.world().now() - paused;
  // The session ran from c1's last heartbeat (at most one interval before
  // the pause); then c2's next heartbeat hears of the rebalance.
  EXPECT_GE(took, Duration::millis(6000 - 1000));
  EXPECT_LE(took, Duration::millis(6000 + 1000 + 1000));
  lab.produce(0, 0, 10);
  lab.produce(1, 100, 110);
  lab.cluster.run_for(Duration::seconds(2));
  EXPECT_EQ(lab.offsets("consumer-2", {"t", 0}).size(), 10u);
  EXPECT_EQ(lab.offsets("consumer-2", {"t", 1}).size(), 10u);

  lab.cluster.world().resume(c1);
  ASSERT_TRUE(lab.cluster.run_until(
      [&] { return lab.settled(2) && lab.group(c1)->assignment().size() == 1; }, Duration::seconds(60)));
  EXPECT_EQ(lab.group(c2)->assignment().size(), 1u);
  EXPECT_TRUE(lab.offsets("consumer-1", {"t", 0}).empty() || lab.offsets("consumer-1", {"t", 1}).empty());
}

// max.poll.interval.ms (KIP-62): an application that stops polling leaves
// the group (a "left" op); when it polls again it rejoins.
TEST(GroupConsumerPollInterval, StuckApplicationLeavesAndRejoins) {
  GroupLab lab(6);
  client::ConsumerConfig c = GroupLab::config();
  c.max_poll_interval_ms = 10000;
  const sim::ProcessId c1 = lab.add("consumer-1", c);
  const sim::ProcessId c2 = lab.add("consumer-2", c);
  ASSERT_TRUE(lab.cluster.run_until([&] { return lab.settled(2); }, Duration::seconds(60)));
  const sim::Time stuck = lab.cluster.world().now();
  lab.member(c1)->set_polling(false);
  ASSERT_TRUE(lab.cluster.run_until([&] { return lab.group(c1)->state() == GroupConsumer::State::left; },
                                    Duration::seconds(30)));
  const Duration took = lab.cluster.world().now() - stuck;
  EXPECT_GE(took, Duration::millis(10000 - 100));
  EXPECT_LE(took, Duration::millis(10000 + 200));
  EXPECT_TRUE(lab.group(c1)->assignment().empty());
  ASSERT_TRUE(lab.cluster.run_until([&] { return lab.group(c2)->assignment().size() == 2; },
                                    Duration::seconds(10)));
  const check::GroupResult during = check::check_groups(lab.history);
  ASSERT_EQ(during.groups.size(), 1u);
  EXPECT_EQ(during.groups[0].assignment.count("consumer-1"), 0u) << "consumer-1 left";
  lab.member(c1)->set_polling(true);
  ASSERT_TRUE(lab.cluster.run_until(
      [&] { return lab.settled(2) && lab.group(c1)->assignment().size() == 1; }, Duration::seconds(30)));
  const check::GroupResult after = check::check_groups(lab.history);
  EXPECT_EQ(after.groups[0].assignment.size(), 2u);
  EXPECT_TRUE(after.groups[0].idle.empty());
}

// close(): commits what was consumed and leaves at once — the other member
// takes over without waiting for a session timeout, from the committed
// offset.
TEST(GroupConsumerClose, CloseCommitsAndLeaves) {
  GroupLab lab(7);
  const sim::ProcessId c1 = lab.add("consumer-1");
  const sim::ProcessId c2 = lab.add("consumer-2");
  ASSERT_TRUE(lab.cluster.run_until([&] { return lab.settled(2); }, Duration::seconds(60)));
  lab.produce(0, 0, 30);
  lab.produce(1, 100, 130);
  ASSERT_TRUE(lab.cluster.run_until([&] { return lab.seen.size() == 60; }, Duration::seconds(10)));
  bool closed = false;
  lab.group(c1)->close([&] { closed = true; });
  ASSERT_TRUE(lab.cluster.run_until([&] { return closed; }, Duration::seconds(10)));
  lab.cluster.world().kill(c1);
  const sim::Time at = lab.cluster.world().now();
  ASSERT_TRUE(lab.cluster.run_until([&] { return lab.group(c2)->assignment().size() == 2; },
                                    Duration::seconds(10)));
  EXPECT_LT(lab.cluster.world().now() - at, Duration::millis(3000)) << "no session timeout waited for";
  lab.cluster.run_for(Duration::seconds(2));
  EXPECT_EQ(lab.seen.size(), 60u) << "the closed member's partition resumed at its committed offset";
  const check::GroupResult r = check::check_groups(lab.history);
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_EQ(r.groups[0].assignment.count("consumer-1"), 0u);
}

// Kills the broker coordinating `member`'s group, then closes the member and
// runs until the close is over; returns the dead coordinator.
std::optional<kafka::BrokerId> close_after_killing_the_coordinator(GroupLab& lab, sim::ProcessId member) {
  const auto old = lab.group(member)->coordinator();
  EXPECT_TRUE(old.has_value());
  if (!old) return old;
  lab.cluster.kill_broker(*old);
  bool closed = false;
  lab.group(member)->close([&] { closed = true; });
  EXPECT_TRUE(lab.cluster.run_until([&] { return closed; }, Duration::seconds(40))) << "close never ended";
  return old;
}

// close() while the coordinator is dead: the final commit is not dropped but
// tried again at the next coordinator (Java's commitOffsetsSync within the
// close timeout; librdkafka defers it until the coordinator is back), so the
// next owner starts after what was read.
TEST(GroupConsumerClose, CloseCommitsAtTheNextCoordinatorWhenItsOwnIsGone) {
  GroupLab lab(7);
  client::ConsumerConfig c = GroupLab::config();
  c.auto_commit_interval_ms = 600000;  // nothing committed but by close()
  const sim::ProcessId c1 = lab.add("consumer-1", c);
  ASSERT_TRUE(lab.cluster.run_until([&] { return lab.settled(2); }, Duration::seconds(60)));
  lab.produce(0, 0, 30);
  lab.produce(1, 100, 130);
  ASSERT_TRUE(lab.cluster.run_until([&] { return lab.seen.size() == 60; }, Duration::seconds(10)));
  const auto old = close_after_killing_the_coordinator(lab, c1);
  EXPECT_NE(lab.group(c1)->coordinator(), old);
  EXPECT_EQ(lab.committed({"t", 0}), 30);
  EXPECT_EQ(lab.committed({"t", 1}), 30);
}

// fetch.error.backoff.ms=0 (librdkafka accepts it) sets the backoff the
// group's waits share: those that poll for an answer still wait a
// millisecond, so the group forms and a close during a coordinator failover
// ends, instead of spinning at one instant.
TEST(GroupConsumerClose, AZeroBackoffNeitherSpinsNorStallsTheGroup) {
  GroupLab lab(7);
  client::ConsumerConfig c = GroupLab::config();
  c.retry_backoff_ms = 0;
  const sim::ProcessId c1 = lab.add("consumer-1", c);
  lab.add("consumer-2", c);
  ASSERT_TRUE(lab.cluster.run_until([&] { return lab.settled(2); }, Duration::seconds(60)));
  close_after_killing_the_coordinator(lab, c1);
}

// The leader assigns with the strategy the coordinator chose: on three
// partitions and two members, range gives the first member (by member id)
// t-0 and t-1, roundrobin t-0 and t-2.
// librdkafka's join interval: a member sends a JoinGroup at most once a
// second, and waits a second more after one answered with an error. Here
// the coordinator cannot store a new generation (its offsets partition is
// below min.insync.replicas once the other two brokers are gone), so every
// SyncGroup fails with COORDINATOR_NOT_AVAILABLE and the members rejoin
// over and over: once a second each, not every retry.backoff.ms.
TEST(GroupConsumerPacing, AMemberRejoinsAtMostOnceASecond) {
  GroupLab lab(5, 2, {{"min.insync.replicas", "2"}});
  lab.cluster.world().trace().keep_lines(true);
  // No commits: the members go straight back to JoinGroup (a commit on
  // revocation would fail the same way and hold the rejoin).
  client::ConsumerConfig config = GroupLab::config();
  config.enable_auto_commit = false;
  lab.add("c1", config);
  ASSERT_TRUE(lab.cluster.run_until([&] { return lab.settled(2); }, Duration::seconds(60)));
  auto found = lab.cluster.request(1, FindCoordinatorRequest{"foo"}, Duration::seconds(10));
  ASSERT_TRUE(found.has_value());
  const BrokerId coord = std::get<FindCoordinatorResponse>(*found).node;
  for (BrokerId b : lab.cluster.broker_ids()) {
    if (b != coord) lab.cluster.kill_broker(b);
  }
  // The coordinator drops the others from its ISRs (replica.lag.time.max.ms).
  lab.cluster.run_for(Duration::seconds(45));
  const sim::Time from = lab.cluster.world().now();
  lab.add("c2", config);
  lab.cluster.run_for(Duration::seconds(20));
  EXPECT_FALSE(lab.settled(2));
  // The JoinGroups each member sent, from the trace.
  std::map<std::string, std::vector<int64_t>> joins;
  size_t failed_syncs = 0;
  for (const std::string& line : lab.cluster.world().trace().lines()) {
    const nlohmann::json j = nlohmann::json::parse(line);
    if (j["t_us"].get<int64_t>() < from.us()) continue;
    if (j.value("kind", "") != "group") continue;
    if (j.value("event", "") == "join") joins[j["proc"].get<std::string>()].push_back(j["t_us"].get<int64_t>());
    if (j.value("why", "") == "COORDINATOR_NOT_AVAILABLE") ++failed_syncs;
  }
  EXPECT_GE(failed_syncs, 10u) << "the rebalance keeps failing";
  for (const auto& [member, times] : joins) {
    SCOPED_TRACE(member);
    EXPECT_GE(times.size(), 8u);
    EXPECT_LE(times.size(), 22u);
    // Apart from the one right after MEMBER_ID_REQUIRED (c2's first).
    for (size_t i = member == "c2" ? 2 : 1; i < times.size(); ++i) {
      EXPECT_GE(times[i] - times[i - 1], 1'000'000) << "join " << i;
    }
  }
}

// ... but a rejoin that revokes the assignment (here a heartbeat answered
// REBALANCE_IN_PROGRESS) skips the pacing, as librdkafka resets its join
// interval when the revocation is done: c1 rejoins well within a second of
// its first JoinGroup.
TEST(GroupConsumerPacing, ARevokingRejoinGoesAtOnce) {
  GroupLab lab(5, 2, {{"group.initial.rebalance.delay.ms", "0"}});
  lab.cluster.world().trace().keep_lines(true);
  client::ConsumerConfig config = GroupLab::config();
  config.enable_auto_commit = false;
  config.heartbeat_interval_ms = 100;
  const sim::ProcessId c1 = lab.add("c1", config);
  ASSERT_TRUE(lab.cluster.run_until(
      [&] { return lab.group(c1) != nullptr && lab.group(c1)->state() == GroupConsumer::State::stable; },
      Duration::seconds(30)));
  lab.add("c2", config);
  ASSERT_TRUE(lab.cluster.run_until([&] { return lab.settled(2); }, Duration::seconds(30)));
  std::vector<int64_t> joins;
  std::optional<int64_t> told;  // when c1 heard of the rebalance
  for (const std::string& line : lab.cluster.world().trace().lines()) {
    const nlohmann::json j = nlohmann::json::parse(line);
    if (j.value("kind", "") != "group" || j.value("proc", "") != "c1") continue;
    if (j.value("event", "") == "join") joins.push_back(j["t_us"].get<int64_t>());
    if (j.value("event", "") == "rejoin" && !told) told = j["t_us"].get<int64_t>();
  }
  // The first JoinGroup, the one with its member id, and the rejoin.
  ASSERT_EQ(joins.size(), 3u);
  ASSERT_TRUE(told.has_value());
  ASSERT_LT(*told - joins[1], 1'000'000) << "within the interval, or the test shows nothing";
  EXPECT_EQ(joins[2], *told);
}

TEST(GroupConsumerStrategy, TheLeaderUsesTheConfiguredAssignor) {
  for (const std::string strategy : {"range", "roundrobin"}) {
    GroupLab lab(9, 3);
    client::ConsumerConfig c = GroupLab::config();
    c.partition_assignment_strategy = strategy;
    const sim::ProcessId c1 = lab.add("consumer-1", c);
    const sim::ProcessId c2 = lab.add("consumer-2", c);
    ASSERT_TRUE(lab.cluster.run_until([&] { return lab.settled(3); }, Duration::seconds(60))) << strategy;
    GroupConsumer* first = lab.group(c1);
    GroupConsumer* second = lab.group(c2);
    if (second->member_id() < first->member_id()) std::swap(first, second);
    const std::set<TopicPartition> expected_first =
        strategy == "range" ? std::set<TopicPartition>{{"t", 0}, {"t", 1}} : std::set<TopicPartition>{{"t", 0}, {"t", 2}};
    const std::set<TopicPartition> expected_second =
        strategy == "range" ? std::set<TopicPartition>{{"t", 2}} : std::set<TopicPartition>{{"t", 1}};
    EXPECT_EQ(first->assignment(), expected_first) << strategy;
    EXPECT_EQ(second->assignment(), expected_second) << strategy;
    EXPECT_TRUE(first->is_leader() != second->is_leader()) << "one leader";
  }
}

// Same seed, same run: the members' history (joins, assignments, commits,
// every record read) is byte for byte the same.
TEST(GroupConsumerDeterminism, SameSeedSameHistory) {
  const auto run = [](uint64_t seed) {
    GroupLab lab(seed);
    const sim::ProcessId c1 = lab.add("consumer-1");
    lab.add("consumer-2");
    lab.cluster.run_for(Duration::seconds(10));
    lab.produce(0, 0, 20);
    lab.produce(1, 100, 120);
    lab.cluster.world().pause(c1);
    lab.cluster.run_for(Duration::seconds(10));
    lab.cluster.world().resume(c1);
    lab.cluster.run_for(Duration::seconds(10));
    std::ostringstream out;
    lab.history.write_jsonl(out);
    return out.str();
  };
  const std::string a = run(8);
  EXPECT_GT(a.size(), 1000u);
  EXPECT_EQ(a, run(8));
}

TEST(GroupConsumerApi, RejectsAnEmptyGroupOrNoTopics) {
  sim::World world(1);
  const sim::HostId h = world.add_host("h", "10.0.0.1");
  struct Probe final : sim::Process, client::ConsumerListener {
    void on_start() override {
      client::ConsumerConfig c;
      c.bootstrap = {{"10.0.0.2", 9092}};
      EXPECT_THROW(GroupConsumer(ctx(), c, {"t"}, *this), std::invalid_argument);
      c.group_id = "g";
      EXPECT_THROW(GroupConsumer(ctx(), c, {}, *this), std::invalid_argument);
      EXPECT_THROW(GroupConsumer(ctx(), c, {"a,b"}, *this), std::invalid_argument);
      ran = true;
    }
    void on_client_event(const std::string&, int32_t) override {}
    void on_records(const std::vector<client::ConsumedRecord>&) override {}
    bool ran = false;
  };
  const sim::ProcessId p = world.add_process(h, "probe", [] { return std::make_unique<Probe>(); });
  world.start(p);
  world.run_for(Duration::millis(10));
  ASSERT_NE(world.process_as<Probe>(p), nullptr);
  EXPECT_TRUE(world.process_as<Probe>(p)->ran);
}

}  // namespace
}  // namespace kafka::testing
