// The group coordinator (model/kafka/group_coordinator.h) driven by raw
// requests: JoinGroup / SyncGroup / Heartbeat / LeaveGroup, the initial
// rebalance delay (KIP-134), session expiry, offset commits replicated in
// __consumer_offsets and loaded again by the next coordinator, and the
// errors a member sees.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

#include "kafka/cluster.h"
#include "model/kafka/group_coordinator.h"

namespace kafka::testing {
namespace {

using sim::Duration;

// A client process whose requests may wait longer than the rebalance
// timeouts used here (a JoinGroup's request timeout is max.poll.interval.ms
// plus 5 s in the Java client).
class MemberProcess final : public sim::Process {
 public:
  void on_start() override {
    client_ = std::make_unique<NetworkClient>(ctx(), NetworkClient::Options{120000, 5});
  }
  void on_connected(sim::SocketId s) override { client_->on_connected(s); }
  void on_connect_failed(sim::SocketId s, sim::ConnectError e) override { client_->on_connect_failed(s, e); }
  void on_message(sim::SocketId s, sim::Payload& p) override { client_->on_message(s, p); }
  void on_closed(sim::SocketId s, sim::CloseReason r) override { client_->on_closed(s, r); }
  NetworkClient& client() { return *client_; }

 private:
  std::unique_ptr<NetworkClient> client_;
};

// A group member: a client process of its own on its own host, so that a
// JoinGroup parked at the coordinator does not hold up anybody else's
// requests (a broker answers one request per connection at a time).
class Member {
 public:
  Member(Cluster& c, const std::string& name) : c_(c) {
    const sim::HostId host = c.world().add_host(name, fmt::format("10.0.8.{}", ++count()));
    proc_ = c.world().add_process(host, name, [] { return std::make_unique<MemberProcess>(); });
    c.world().start(proc_);
  }
  // Sends and returns at once; the answer lands in the result later. A
  // JoinGroup answered MEMBER_ID_REQUIRED is sent again at once with the
  // member id it was given, as the clients do (KIP-394), and the result is
  // the answer to that one; send_once() shows the first answer instead.
  std::shared_ptr<std::optional<Response>> send(BrokerId to, Request r) {
    auto out = std::make_shared<std::optional<Response>>();
    send_into(to, std::move(r), out, true);
    return out;
  }
  std::shared_ptr<std::optional<Response>> send_once(BrokerId to, Request r) {
    auto out = std::make_shared<std::optional<Response>>();
    send_into(to, std::move(r), out, false);
    return out;
  }
  template <typename T>
  T call(BrokerId to, Request r, Duration limit = Duration::seconds(60)) {
    return wait<T>(send(to, std::move(r)), limit);
  }
  template <typename T>
  T call_once(BrokerId to, Request r, Duration limit = Duration::seconds(60)) {
    return wait<T>(send_once(to, std::move(r)), limit);
  }

 private:
  template <typename T>
  T wait(const std::shared_ptr<std::optional<Response>>& out, Duration limit) {
    EXPECT_TRUE(c_.run_until([&] { return out->has_value(); }, limit)) << "no answer";
    if (!out->has_value()) return T{};
    return std::get<T>(**out);
  }
  void send_into(BrokerId to, Request r, std::shared_ptr<std::optional<Response>> out, bool follow) {
    std::optional<JoinGroupRequest> join;
    if (follow && std::holds_alternative<JoinGroupRequest>(r)) join = std::get<JoinGroupRequest>(r);
    const std::string host = c_.world().network().address(c_.broker_host(to));
    auto* p = c_.world().process_as<MemberProcess>(proc_);
    p->client().send(to, NodeAddress{host, c_.broker_config(to).listeners.front().port},
                     std::move(r), [this, to, out, join](SendError e, const Response* resp) {
                       if (e != SendError::none || resp == nullptr) return;
                       const auto* j = std::get_if<JoinGroupResponse>(resp);
                       if (join && j != nullptr && j->error == ErrorCode::member_id_required) {
                         JoinGroupRequest again = *join;
                         again.member_id = j->member_id;
                         send_into(to, std::move(again), out, false);
                         return;
                       }
                       *out = *resp;
                     });
  }
  static int& count() {
    static int n = 0;
    return n;
  }
  Cluster& c_;
  sim::ProcessId proc_;
};

template <typename T>
const T& as(const std::shared_ptr<std::optional<Response>>& r) {
  return std::get<T>(**r);
}

ClusterOptions options(std::map<std::string, std::string> extra = {}) {
  std::map<std::string, std::string> props = {{"offsets.topic.num.partitions", "3"},
                                              {"offsets.topic.replication.factor", "3"},
                                              {"group.initial.rebalance.delay.ms", "0"}};
  for (auto& [k, v] : extra) props[k] = v;
  return ClusterOptions{.brokers = 3, .broker_properties = props};
}

// FindCoordinator, retried (the first one creates __consumer_offsets) until
// a broker names a coordinator that has loaded the group's partition.
BrokerId find_coordinator(Cluster& c, const std::string& group) {
  for (int i = 0; i < 600; ++i) {
    for (BrokerId b : c.broker_ids()) {
      if (c.broker(b) == nullptr) continue;
      auto r = c.request(b, FindCoordinatorRequest{group}, Duration::seconds(5));
      if (!r) continue;
      const auto& f = std::get<FindCoordinatorResponse>(*r);
      if (f.error != ErrorCode::none) continue;
      const Broker* coordinator = c.broker(f.node);
      if (coordinator == nullptr) continue;
      const GroupCoordinator* gc = coordinator->group_coordinator();
      if (gc->owns(gc->partition_for(group))) return f.node;
    }
    c.run_for(Duration::millis(100));
  }
  ADD_FAILURE() << "no coordinator for " << group;
  return kNoBroker;
}

JoinGroupRequest join(const std::string& group, const std::string& member, const std::string& client,
                      std::vector<JoinGroupProtocol> protocols = {{"range", "sub:t"}},
                      int32_t session_ms = 10000, int32_t rebalance_ms = 30000) {
  return JoinGroupRequest{group, session_ms, rebalance_ms, member, client, "consumer", protocols};
}

// Starts the cluster, creates topic t (`partitions`, RF 3) and returns the
// coordinator of group g once it has loaded the group's partition
// (kNoBroker, with a failure recorded, if any step fails).
BrokerId start_for_group(Cluster& c, int32_t partitions) {
  c.start();
  if (!c.await_ready()) {
    ADD_FAILURE() << "the cluster did not come up";
    return kNoBroker;
  }
  const ErrorCode created = c.create_topic("t", partitions, 3);
  if (created != ErrorCode::none) {
    ADD_FAILURE() << "create_topic: " << to_string(created);
    return kNoBroker;
  }
  return find_coordinator(c, "g");
}

const GroupCoordinator& coordinator(Cluster& c, BrokerId b) { return *c.broker(b)->group_coordinator(); }

size_t count_trace(Cluster& c, const std::string& needle) {
  size_t n = 0;
  for (const std::string& line : c.world().trace().lines()) n += line.find(needle) != std::string::npos;
  return n;
}

TEST(KafkaGroups, RecordKeysRoundTripAndStayUnambiguous) {
  const OffsetCommitKey k{"g:1", {"a:b", 7}};
  EXPECT_EQ(decode_offset_commit_key(encode_offset_commit_key(k)), k);
  EXPECT_EQ(encode_offset_commit_key({"a", {"bc", 1}}).size(), encode_offset_commit_key({"ab", {"c", 1}}).size());
  EXPECT_NE(encode_offset_commit_key({"a", {"bc", 1}}), encode_offset_commit_key({"ab", {"c", 1}}));
  StoredGroup g{"consumer", 4, "range", "m-1",
                {{"m-1", "c1", 10000, 30000, "sub", {{"t", 0}, {"t", 1}}}, {"m-2", "c2", 6000, 1000, "", {}}}};
  const std::string rec = encode_group_metadata("grp", g);
  auto back = decode_group_metadata(rec);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->first.group, "grp");
  EXPECT_EQ(back->second, g);
  // The identity is the key part only: two generations of one group share it.
  StoredGroup other = g;
  other.generation = 5;
  EXPECT_EQ(offsets_record_identity(rec), offsets_record_identity(encode_group_metadata("grp", other)));
  EXPECT_NE(offsets_record_identity(rec), offsets_record_identity(encode_group_metadata("grp2", g)));
  EXPECT_FALSE(decode_offset_commit_key(rec).has_value());
  EXPECT_FALSE(decode_group_metadata("").has_value());
  EXPECT_FALSE(decode_group_metadata(rec.substr(0, rec.size() - 1)).has_value());
  EXPECT_FALSE(offsets_record_identity("plain").has_value());
}

TEST(KafkaGroups, OneMemberJoinsSyncsAndHeartbeats) {
  Cluster c(options());
  c.world().trace().keep_lines(true);
  InvariantChecker check(c);
  const BrokerId coord = start_for_group(c, 2);
  ASSERT_NE(coord, kNoBroker);
  Member m(c, "m1");
  const auto j = m.call<JoinGroupResponse>(coord, join("g", "", "c1"));
  ASSERT_EQ(j.error, ErrorCode::none);
  EXPECT_EQ(j.generation_id, 1);
  EXPECT_EQ(j.protocol_name, "range");
  EXPECT_EQ(j.leader, j.member_id);
  EXPECT_EQ(j.member_id.rfind("c1-", 0), 0u) << j.member_id;
  ASSERT_EQ(j.members.size(), 1u);
  EXPECT_EQ(j.members[0].member_id, j.member_id);
  EXPECT_EQ(j.members[0].metadata, "sub:t");
  EXPECT_EQ(coordinator(c, coord).group_state("g"), GroupState::completing_rebalance);

  const std::vector<TopicPartition> mine = {{"t", 0}, {"t", 1}};
  const auto s = m.call<SyncGroupResponse>(coord, SyncGroupRequest{"g", 1, j.member_id, {{j.member_id, mine}}});
  EXPECT_EQ(s.error, ErrorCode::none);
  EXPECT_EQ(s.assignment, mine);
  EXPECT_EQ(coordinator(c, coord).group_state("g"), GroupState::stable);
  EXPECT_EQ(m.call<HeartbeatResponse>(coord, HeartbeatRequest{"g", 1, j.member_id}).error, ErrorCode::none);
  // The assignment is in __consumer_offsets, replicated.
  EXPECT_EQ(count_trace(c, "\"kind\":\"group_metadata_stored\""), 1u);
  const TopicPartition otp{kOffsetsTopicName, coordinator(c, coord).partition_for("g")};
  for (BrokerId b : c.broker_ids()) {
    const Partition* p = c.broker(b)->partition(otp);
    ASSERT_NE(p, nullptr);
    bool found = false;
    for (const Record& r : p->log().read(p->log().log_start(), p->log().log_end(), INT64_MAX)) {
      auto md = decode_group_metadata(r.key);
      if (md && md->first.group == "g" && md->second.generation == 1) {
        found = true;
        ASSERT_EQ(md->second.members.size(), 1u);
        EXPECT_EQ(md->second.members[0].assignment, mine);
      }
    }
    EXPECT_TRUE(found) << "broker " << b;
  }
}

// Two members, stable at generation 2 with m1 the leader; returns their ids.
std::pair<std::string, std::string> two_members(Cluster& c, BrokerId coord, Member& m1, Member& m2) {
  const auto j1 = m1.call<JoinGroupResponse>(coord, join("g", "", "c1"));
  EXPECT_EQ(j1.generation_id, 1);
  const std::string a = j1.member_id;
  EXPECT_EQ(m1.call<SyncGroupResponse>(coord, SyncGroupRequest{"g", 1, a, {{a, {{"t", 0}, {"t", 1}}}}}).error,
            ErrorCode::none);
  // m2 joins: its JoinGroup waits for m1 to rejoin.
  auto j2 = m2.send(coord, join("g", "", "c2"));
  c.run_for(Duration::millis(100));
  EXPECT_FALSE(j2->has_value());
  EXPECT_EQ(coordinator(c, coord).group_state("g"), GroupState::preparing_rebalance);
  EXPECT_EQ(m1.call<HeartbeatResponse>(coord, HeartbeatRequest{"g", 1, a}).error,
            ErrorCode::rebalance_in_progress);
  // A commit of the old generation is still accepted while preparing.
  const auto commit = m1.call<OffsetCommitResponse>(coord, OffsetCommitRequest{"g", 1, a, {{{"t", 0}, 5}}});
  EXPECT_EQ(commit.partitions.at(0).second, ErrorCode::none);
  auto j1b = m1.send(coord, join("g", a, "c1"));
  EXPECT_TRUE(c.run_until([&] { return j1b->has_value() && j2->has_value(); }, Duration::seconds(5)));
  const auto& r1 = as<JoinGroupResponse>(j1b);
  const auto& r2 = as<JoinGroupResponse>(j2);
  EXPECT_EQ(r1.error, ErrorCode::none);
  EXPECT_EQ(r2.error, ErrorCode::none);
  EXPECT_EQ(r1.generation_id, 2);
  EXPECT_EQ(r2.generation_id, 2);
  EXPECT_EQ(r1.leader, a) << "the old leader stays leader";
  EXPECT_EQ(r2.leader, a);
  EXPECT_EQ(r1.members.size(), 2u) << "the leader gets everyone's metadata";
  EXPECT_TRUE(r2.members.empty());
  const std::string b = r2.member_id;
  EXPECT_NE(a, b);
  // Before the leader's SyncGroup: CompletingRebalance, where a heartbeat
  // is answered NONE from Kafka 2.7 (2.8 and 3.9 profiles).
  EXPECT_EQ(m2.call<HeartbeatResponse>(coord, HeartbeatRequest{"g", 2, b}).error,
            c.broker(coord)->config().group_rules.heartbeat_while_completing ? ErrorCode::none
                                                                            : ErrorCode::rebalance_in_progress);
  auto s2 = m2.send(coord, SyncGroupRequest{"g", 2, b, {}});
  c.run_for(Duration::millis(50));
  EXPECT_FALSE(s2->has_value()) << "a follower's SyncGroup waits for the leader's";
  const auto s1 = m1.call<SyncGroupResponse>(
      coord, SyncGroupRequest{"g", 2, a, {{a, {{"t", 0}}}, {b, {{"t", 1}}}}});
  EXPECT_TRUE(c.run_until([&] { return s2->has_value(); }, Duration::seconds(5)));
  EXPECT_EQ(s1.error, ErrorCode::none);
  EXPECT_EQ(s1.assignment, (std::vector<TopicPartition>{{"t", 0}}));
  EXPECT_EQ(as<SyncGroupResponse>(s2).error, ErrorCode::none);
  EXPECT_EQ(as<SyncGroupResponse>(s2).assignment, (std::vector<TopicPartition>{{"t", 1}}));
  EXPECT_EQ(coordinator(c, coord).group_state("g"), GroupState::stable);
  return {a, b};
}

// GroupCoordinator.handleHeartbeat in CompletingRebalance: REBALANCE_IN_PROGRESS
// up to 2.6; from 2.7 NONE, restarting the member's session timer. Before
// 2.3 (Heartbeat: the 2.2 profile) and 2.4 (OffsetCommit: the 2.2 and 2.3
// profiles) one is then answered REBALANCE_IN_PROGRESS before its member
// and generation are checked; from those releases they come first.
TEST(KafkaGroups, RequestsWhileTheRebalanceCompletesAreAnsweredAsTheVersionDoes) {
  for (VersionProfile v : kVersionProfiles) {
    SCOPED_TRACE(to_string(v));
    ClusterOptions o = options();
    o.version = v;
    Cluster c(o);
    const BrokerId coord = start_for_group(c, 2);
    ASSERT_NE(coord, kNoBroker);
    Member m(c, "m1");
    const auto j = m.call<JoinGroupResponse>(coord, join("g", "", "c1"));
    ASSERT_EQ(j.error, ErrorCode::none);
    ASSERT_EQ(coordinator(c, coord).group_state("g"), GroupState::completing_rebalance);
    const bool old = v < VersionProfile::v2_8;                 // before 2.7 / 2.4
    const bool old_heartbeat = v == VersionProfile::v2_2;     // before 2.3
    EXPECT_EQ(m.call<HeartbeatResponse>(coord, HeartbeatRequest{"g", 1, j.member_id}).error,
              old ? ErrorCode::rebalance_in_progress : ErrorCode::none);
    EXPECT_EQ(m.call<HeartbeatResponse>(coord, HeartbeatRequest{"g", 7, j.member_id}).error,
              old_heartbeat ? ErrorCode::rebalance_in_progress : ErrorCode::illegal_generation);
    EXPECT_EQ(m.call<HeartbeatResponse>(coord, HeartbeatRequest{"g", 1, "c1-made-up"}).error,
              ErrorCode::unknown_member_id);
    auto commit = [&](int32_t generation, const std::string& member) {
      return m.call<OffsetCommitResponse>(coord, OffsetCommitRequest{"g", generation, member, {{{"t", 0}, 1}}})
          .partitions.at(0)
          .second;
    };
    EXPECT_EQ(commit(1, j.member_id), ErrorCode::rebalance_in_progress);
    EXPECT_EQ(commit(7, j.member_id), old ? ErrorCode::rebalance_in_progress : ErrorCode::illegal_generation);
    EXPECT_EQ(commit(1, "c1-made-up"), old ? ErrorCode::rebalance_in_progress : ErrorCode::unknown_member_id);
  }
}

TEST(KafkaGroups, ASecondMemberTriggersARebalanceToGenerationTwo) {
  Cluster c(options());
  InvariantChecker check(c);
  const BrokerId coord = start_for_group(c, 2);
  ASSERT_NE(coord, kNoBroker);
  Member m1(c, "m1"), m2(c, "m2");
  const auto [a, b] = two_members(c, coord, m1, m2);
  EXPECT_EQ(coordinator(c, coord).generation("g"), 2);
  EXPECT_EQ(coordinator(c, coord).members("g"), (std::vector<std::string>{a, b}));
  // Stale generation.
  EXPECT_EQ(m1.call<HeartbeatResponse>(coord, HeartbeatRequest{"g", 1, a}).error,
            ErrorCode::illegal_generation);
  EXPECT_EQ(m1.call<OffsetCommitResponse>(coord, OffsetCommitRequest{"g", 1, a, {{{"t", 0}, 9}}})
                .partitions.at(0)
                .second,
            ErrorCode::illegal_generation);
  EXPECT_EQ(m1.call<SyncGroupResponse>(coord, SyncGroupRequest{"g", 1, a, {}}).error,
            ErrorCode::illegal_generation);
  // The current generation commits; the fetch sees it.
  EXPECT_EQ(m2.call<OffsetCommitResponse>(coord, OffsetCommitRequest{"g", 2, b, {{{"t", 1}, 11}}})
                .partitions.at(0)
                .second,
            ErrorCode::none);
  const auto f = m1.call<OffsetFetchResponse>(coord, OffsetFetchRequest{"g", {{"t", 0}, {"t", 1}, {"t", 2}}});
  EXPECT_EQ(f.error, ErrorCode::none);
  ASSERT_EQ(f.partitions.size(), 3u);
  EXPECT_EQ(f.partitions[0].offset, 5);  // committed by generation 1 during the rebalance
  EXPECT_EQ(f.partitions[1].offset, 11);
  EXPECT_EQ(f.partitions[2].offset, -1);
}

// A member that rejoins with longer session and rebalance timeouts: from
// Kafka 3.4 (KAFKA-14009, GroupMetadata.updateMember) the coordinator takes
// the new ones; up to 3.3.1 the member keeps those of its first join, so on
// 2.x and 3.1 a silent member is gone after 10 s, on 3.9 after 30 s.
TEST(KafkaGroups, ARejoiningMemberKeepsItsFirstSessionTimeoutBefore34) {
  for (VersionProfile v : kVersionProfiles) {
    SCOPED_TRACE(to_string(v));
    ClusterOptions o = options();
    o.version = v;
    Cluster c(o);
    c.world().trace().keep_lines(true);
    const BrokerId coord = start_for_group(c, 2);
    ASSERT_NE(coord, kNoBroker);
    Member m(c, "m1");
    const auto j1 = m.call<JoinGroupResponse>(coord, join("g", "", "c1"));
    ASSERT_EQ(j1.error, ErrorCode::none);
    const std::string id = j1.member_id;
    ASSERT_EQ(m.call<SyncGroupResponse>(coord, SyncGroupRequest{"g", 1, id, {{id, {{"t", 0}, {"t", 1}}}}}).error,
              ErrorCode::none);
    const auto j2 = m.call<JoinGroupResponse>(coord, join("g", id, "c1", {{"range", "sub:t"}}, 30000, 45000));
    ASSERT_EQ(j2.error, ErrorCode::none);
    ASSERT_EQ(j2.generation_id, 2);
    ASSERT_EQ(m.call<SyncGroupResponse>(coord, SyncGroupRequest{"g", 2, id, {{id, {{"t", 0}, {"t", 1}}}}}).error,
              ErrorCode::none);
    const bool updates = v >= VersionProfile::v3_9;
    EXPECT_EQ(coordinator(c, coord).member_timeouts("g", id),
              (updates ? std::pair<int32_t, int32_t>{30000, 45000} : std::pair<int32_t, int32_t>{10000, 30000}));
    const sim::Time last = c.world().now();
    ASSERT_TRUE(c.run_until([&] { return coordinator(c, coord).members("g").empty(); }, Duration::seconds(40)));
    const Duration after = c.world().now() - last;
    const Duration session = v >= VersionProfile::v3_9 ? Duration::seconds(30) : Duration::seconds(10);
    EXPECT_GE(after, session - Duration::millis(10));
    EXPECT_LE(after, session + Duration::millis(10));
  }
}

TEST(KafkaGroups, ASilentMemberExpiresAfterItsSessionTimeoutAndLeaveIsImmediate) {
  Cluster c(options());
  c.world().trace().keep_lines(true);
  InvariantChecker check(c);
  const BrokerId coord = start_for_group(c, 2);
  ASSERT_NE(coord, kNoBroker);
  Member m1(c, "m1"), m2(c, "m2");
  const auto [a, b] = two_members(c, coord, m1, m2);
  // m2's last contact was its SyncGroup, answered when m1's arrived: the
  // session timer restarted then (propagateAssignment).
  const sim::Time last = c.world().now();
  // m1 keeps heartbeating every 3 s; m2 is silent.
  bool gone = false;
  while (!gone && c.world().now() < last + Duration::seconds(20)) {
    gone = c.run_until([&] { return coordinator(c, coord).members("g").size() == 1; }, Duration::seconds(3));
    if (!gone) {
      EXPECT_EQ(m1.call<HeartbeatResponse>(coord, HeartbeatRequest{"g", 2, a}).error, ErrorCode::none);
    }
  }
  ASSERT_TRUE(gone);
  const Duration after = c.world().now() - last;
  // (the timer started when the coordinator answered m2's SyncGroup, a
  // network hop before the test saw m1's answer)
  EXPECT_GE(after, Duration::millis(9990)) << "session.timeout.ms 10000";
  EXPECT_LE(after, Duration::millis(10010));
  EXPECT_EQ(count_trace(c, "\"why\":\"session_timeout\""), 1u);
  EXPECT_EQ(coordinator(c, coord).group_state("g"), GroupState::preparing_rebalance);
  EXPECT_EQ(m2.call<HeartbeatResponse>(coord, HeartbeatRequest{"g", 2, b}).error, ErrorCode::unknown_member_id);
  EXPECT_EQ(m1.call<HeartbeatResponse>(coord, HeartbeatRequest{"g", 2, a}).error,
            ErrorCode::rebalance_in_progress);
  const auto j = m1.call<JoinGroupResponse>(coord, join("g", a, "c1"));
  EXPECT_EQ(j.error, ErrorCode::none);
  EXPECT_EQ(j.generation_id, 3);
  EXPECT_EQ(j.members.size(), 1u);
  // LeaveGroup: gone at once, and with nobody left the group is Empty.
  EXPECT_EQ(m1.call<LeaveGroupResponse>(coord, LeaveGroupRequest{"g", a}).error, ErrorCode::none);
  EXPECT_TRUE(coordinator(c, coord).members("g").empty());
  EXPECT_EQ(coordinator(c, coord).group_state("g"), GroupState::empty);
  EXPECT_EQ(coordinator(c, coord).generation("g"), 4);
  EXPECT_EQ(count_trace(c, "\"why\":\"left\""), 1u);
  EXPECT_EQ(m1.call<LeaveGroupResponse>(coord, LeaveGroupRequest{"g", a}).error, ErrorCode::unknown_member_id);
}

TEST(KafkaGroups, AMemberThatDoesNotRejoinIsDroppedAfterTheRebalanceTimeout) {
  Cluster c(options());
  c.world().trace().keep_lines(true);
  InvariantChecker check(c);
  const BrokerId coord = start_for_group(c, 2);
  ASSERT_NE(coord, kNoBroker);
  Member m1(c, "m1"), m2(c, "m2"), m3(c, "m3");
  const auto [a, b] = two_members(c, coord, m1, m2);
  // m3 joins with a 20 s rebalance timeout; m2 keeps heartbeating but never
  // rejoins; m1 rejoins. The group waits for the largest rebalance timeout
  // of its members (30 s, m1's and m2's), then drops m2.
  const sim::Time start = c.world().now();
  auto j3 = m3.send(coord, join("g", "", "c3", {{"range", "sub:t"}}, 10000, 20000));
  auto j1 = m1.send(coord, join("g", a, "c1"));
  while (!j1->has_value() && c.world().now() < start + Duration::seconds(40)) {
    c.run_until([&] { return j1->has_value(); }, Duration::seconds(3));
    if (!j1->has_value()) {
      EXPECT_EQ(m2.call<HeartbeatResponse>(coord, HeartbeatRequest{"g", 2, b}).error,
                ErrorCode::rebalance_in_progress);
    }
  }
  ASSERT_TRUE(j1->has_value());
  ASSERT_TRUE(c.run_until([&] { return j3->has_value(); }, Duration::seconds(1)));
  const Duration took = c.world().now() - start;
  EXPECT_GE(took, Duration::millis(30000));
  EXPECT_LE(took, Duration::millis(30010));
  EXPECT_EQ(as<JoinGroupResponse>(j1).generation_id, 3);
  EXPECT_EQ(as<JoinGroupResponse>(j1).members.size(), 2u);
  EXPECT_EQ(count_trace(c, "\"why\":\"rebalance_timeout\""), 1u);
  EXPECT_EQ(m2.call<HeartbeatResponse>(coord, HeartbeatRequest{"g", 2, b}).error, ErrorCode::unknown_member_id);
}

TEST(KafkaGroups, TheFirstJoinWaitsForTheInitialRebalanceDelay) {
  // group.initial.rebalance.delay.ms keeps its default (3000 ms on every profile).
  Cluster c({.brokers = 3,
             .broker_properties = {{"offsets.topic.num.partitions", "3"},
                                   {"offsets.topic.replication.factor", "3"}}});
  InvariantChecker check(c);
  c.start();
  ASSERT_TRUE(c.await_ready());
  EXPECT_EQ(c.broker_config(1).group_initial_rebalance_delay_ms, 3000);
  ASSERT_EQ(c.create_topic("t", 2, 3), ErrorCode::none);
  const BrokerId coord = find_coordinator(c, "g");
  Member m1(c, "m1"), m2(c, "m2"), m3(c, "m3");
  // Alone: answered after 3 s, not at once.
  sim::Time start = c.world().now();
  auto j = m1.send(coord, join("g", "", "c1"));
  ASSERT_TRUE(c.run_until([&] { return j->has_value(); }, Duration::seconds(10)));
  Duration took = c.world().now() - start;
  EXPECT_GE(took, Duration::millis(3000));
  EXPECT_LE(took, Duration::millis(3005));
  EXPECT_EQ(as<JoinGroupResponse>(j).generation_id, 1);

  // Another group: a second member 1 s in extends the wait by another delay
  // (3 s + 3 s), capped by the rebalance timeout (here 4 s: 3 s + 1 s).
  const std::string group2 = "h";
  const BrokerId coord2 = find_coordinator(c, group2);
  start = c.world().now();
  auto ja = m2.send(coord2, join(group2, "", "c2", {{"range", "x"}}, 10000, 4000));
  c.run_for(Duration::seconds(1));
  auto jb = m3.send(coord2, join(group2, "", "c3", {{"range", "x"}}, 10000, 4000));
  ASSERT_TRUE(c.run_until([&] { return ja->has_value() && jb->has_value(); }, Duration::seconds(10)));
  took = c.world().now() - start;
  EXPECT_GE(took, Duration::millis(4000));
  EXPECT_LE(took, Duration::millis(4005));
  EXPECT_EQ(as<JoinGroupResponse>(ja).generation_id, 1);
  EXPECT_EQ(as<JoinGroupResponse>(ja).members.size(), 2u);
  EXPECT_EQ(as<JoinGroupResponse>(jb).leader, as<JoinGroupResponse>(ja).member_id);

  // Without the cap: 3 s + 3 s.
  const std::string group3 = "k";
  const BrokerId coord3 = find_coordinator(c, group3);
  Member m4(c, "m4"), m5(c, "m5");
  start = c.world().now();
  auto jc = m4.send(coord3, join(group3, "", "c4"));
  c.run_for(Duration::seconds(1));
  auto jd = m5.send(coord3, join(group3, "", "c5"));
  ASSERT_TRUE(c.run_until([&] { return jc->has_value() && jd->has_value(); }, Duration::seconds(10)));
  took = c.world().now() - start;
  EXPECT_GE(took, Duration::millis(6000));
  EXPECT_LE(took, Duration::millis(6005));
}

TEST(KafkaGroups, ACommittedOffsetSurvivesTheCoordinatorAndIsLoadedByTheNextOne) {
  Cluster c(options());
  c.world().trace().keep_lines(true);
  InvariantChecker check(c);
  const BrokerId coord = start_for_group(c, 2);
  ASSERT_NE(coord, kNoBroker);
  Member m(c, "m1");
  // A client without group management commits (generation -1, member "").
  const auto r = m.call<OffsetCommitResponse>(coord, OffsetCommitRequest{"g", -1, "", {{{"t", 0}, 42}, {{"t", 1}, 7}}});
  ASSERT_EQ(r.partitions.size(), 2u);
  EXPECT_EQ(r.partitions[0].second, ErrorCode::none);
  EXPECT_EQ(r.partitions[1].second, ErrorCode::none);
  // Answered only once the ISR has it: every replica's log holds it.
  const TopicPartition otp{kOffsetsTopicName, coordinator(c, coord).partition_for("g")};
  for (BrokerId b : c.broker_ids()) {
    const Partition* p = c.broker(b)->partition(otp);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->log().log_end().value, 2) << "broker " << b;
  }
  c.kill_broker(coord);
  // The next leader of the offsets partition loads it: for kLoadDelayMs the
  // group's requests get COORDINATOR_LOAD_IN_PROGRESS.
  BrokerId next = kNoBroker;
  ASSERT_TRUE(c.run_until([&] {
    for (BrokerId b : c.broker_ids()) {
      if (b != coord && c.broker(b) != nullptr && coordinator(c, b).loading(otp.partition)) next = b;
    }
    return next != kNoBroker;
  }, Duration::seconds(60)));
  EXPECT_EQ(m.call<OffsetFetchResponse>(next, OffsetFetchRequest{"g", {{"t", 0}}}).error,
            ErrorCode::coordinator_load_in_progress);
  EXPECT_EQ(find_coordinator(c, "g"), next);
  const auto f = m.call<OffsetFetchResponse>(next, OffsetFetchRequest{"g", {{"t", 0}, {"t", 1}}});
  EXPECT_EQ(f.error, ErrorCode::none);
  ASSERT_EQ(f.partitions.size(), 2u);
  EXPECT_EQ(f.partitions[0].offset, 42);
  EXPECT_EQ(f.partitions[1].offset, 7);
  EXPECT_EQ(count_trace(c, "\"kind\":\"group_partition_loaded\""), 4u)
      << "3 partitions at first, then the one that moved";
  // The old coordinator comes back as a follower of that partition: a
  // request there is NOT_COORDINATOR.
  c.start_broker(coord);
  ASSERT_TRUE(c.await_ready());
  c.run_for(Duration::seconds(2));
  if (c.state(otp)->leader != coord) {
    EXPECT_EQ(m.call<OffsetFetchResponse>(coord, OffsetFetchRequest{"g", {{"t", 0}}}).error,
              ErrorCode::not_coordinator);
  }
}

// __consumer_offsets is created compacted (GroupCoordinator.offsetsTopicConfigs),
// so the broker-wide time retention that empties a user topic's old
// segments never takes a commit: the next coordinator still loads it.
TEST(KafkaGroups, TheOffsetsTopicIsCompactedSoRetentionNeverTakesACommit) {
  Cluster c(options({{"log.roll.ms", "1000"},
                     {"log.retention.ms", "2000"},
                     {"log.retention.check.interval.ms", "1000"},
                     {"offsets.topic.segment.bytes", "1048576"}}));
  c.world().trace().keep_lines(true);
  const BrokerId coord = start_for_group(c, 1);
  ASSERT_NE(coord, kNoBroker);
  const std::optional<std::string> config = c.zk_get(std::string("/config/topics/") + kOffsetsTopicName);
  ASSERT_TRUE(config.has_value());
  EXPECT_NE(config->find("\"cleanup.policy\":\"compact\""), std::string::npos) << *config;
  EXPECT_NE(config->find("\"segment.bytes\":\"1048576\""), std::string::npos) << *config;
  Member m(c, "m1");
  const auto r = m.call<OffsetCommitResponse>(coord, OffsetCommitRequest{"g", -1, "", {{{"t", 0}, 42}}});
  ASSERT_EQ(r.partitions.size(), 1u);
  ASSERT_EQ(r.partitions[0].second, ErrorCode::none);
  ASSERT_EQ(c.produce({"t", 0}, {1, 2, 3}, -1)->error, ErrorCode::none);
  c.run_for(Duration::seconds(30));
  // The user topic's records are past retention and gone; the commit stays.
  const TopicPartition otp{kOffsetsTopicName, coordinator(c, coord).partition_for("g")};
  for (BrokerId b : c.broker_ids()) {
    EXPECT_EQ(c.broker(b)->partition({"t", 0})->log().log_start().value, 3) << "broker " << b;
    EXPECT_EQ(c.broker(b)->partition(otp)->log().log_start().value, 0) << "broker " << b;
  }
  size_t user_deleted = 0;
  for (const std::string& line : c.world().trace().lines()) {
    if (line.find("\"kind\":\"segment_deleted\"") == std::string::npos) continue;
    EXPECT_EQ(line.find(kOffsetsTopicName), std::string::npos) << line;
    user_deleted += line.find("/t-0\"") != std::string::npos;
  }
  EXPECT_GE(user_deleted, 3u) << "retention ran on every replica of t-0";
  c.kill_broker(coord);
  ASSERT_TRUE(c.run_until([&] { return find_coordinator(c, "g") != coord; }, Duration::seconds(60)));
  const BrokerId next = find_coordinator(c, "g");
  const auto f = m.call<OffsetFetchResponse>(next, OffsetFetchRequest{"g", {{"t", 0}}});
  EXPECT_EQ(f.error, ErrorCode::none);
  ASSERT_EQ(f.partitions.size(), 1u);
  EXPECT_EQ(f.partitions[0].offset, 42);
}

// On 2.2, where the leader takes the silent followers out of the ISR with
// its own ZooKeeper write. From 2.7 it asks the controller (AlterIsr), which
// is among the brokers cut off here unless it is the coordinator: then the
// ISR cannot shrink and every commit times out until the heal
// (KafkaBroker.ALeaderCutOffFromTheControllerKeepsItsIsrUntilTheHeal).
TEST(KafkaGroups, ACommitWaitsForTheIsrAndTimesOutWhileTheFollowersAreCutOff) {
  ClusterOptions o = options();
  o.version = VersionProfile::v2_2;
  Cluster c(o);
  c.world().trace().keep_lines(true);
  InvariantChecker check(c);
  const BrokerId coord = start_for_group(c, 1);
  ASSERT_NE(coord, kNoBroker);
  Member m(c, "m1");
  const TopicPartition otp{kOffsetsTopicName, coordinator(c, coord).partition_for("g")};
  ASSERT_EQ(c.state(otp)->isr.size(), 3u);
  // Cut the coordinator off from the other brokers (not from ZooKeeper or
  // the client).
  for (BrokerId b : c.broker_ids()) {
    if (b == coord) continue;
    c.world().network().block(c.broker_host(coord), c.broker_host(b));
    c.world().network().block(c.broker_host(b), c.broker_host(coord));
  }
  // offsets.commit.required.acks = -1: the commit waits for the followers,
  // which are still in the ISR (replica.lag.time.max.ms 10 s on 2.2), and
  // fails after offsets.commit.timeout.ms (5 s) with REQUEST_TIMED_OUT.
  const sim::Time start = c.world().now();
  const auto r = m.call<OffsetCommitResponse>(coord, OffsetCommitRequest{"g", -1, "", {{{"t", 0}, 42}}});
  EXPECT_EQ(r.partitions.at(0).second, ErrorCode::request_timed_out);
  EXPECT_GE(c.world().now() - start, Duration::millis(5000));
  EXPECT_LE(c.world().now() - start, Duration::millis(5005));
  EXPECT_EQ(m.call<OffsetFetchResponse>(coord, OffsetFetchRequest{"g", {{"t", 0}}}).partitions.at(0).offset, -1)
      << "the cache changes only on success";
  // Once the leader drops the silent followers from the ISR, acks=-1 is met
  // by the leader alone (min.insync.replicas of __consumer_offsets is the
  // broker default, 1): the next commit succeeds. That is Kafka's behaviour
  // too: an ISR that shrinks to the leader completes the commit.
  ASSERT_TRUE(c.run_until([&] { return c.state(otp)->isr.size() == 1; }, Duration::seconds(60)));
  EXPECT_EQ(c.state(otp)->leader, coord);
  const auto ok = m.call<OffsetCommitResponse>(coord, OffsetCommitRequest{"g", -1, "", {{{"t", 0}, 43}}});
  EXPECT_EQ(ok.partitions.at(0).second, ErrorCode::none);
  EXPECT_EQ(m.call<OffsetFetchResponse>(coord, OffsetFetchRequest{"g", {{"t", 0}}}).partitions.at(0).offset, 43);
  EXPECT_EQ(count_trace(c, "\"kind\":\"offset_commit_failed\""), 1u);
  c.world().network().heal();
}

TEST(KafkaGroups, ErrorsForBadSessionsUnknownMembersOtherProtocolsAndTheWrongBroker) {
  Cluster c(options({{"group.max.size", "2"}}));
  InvariantChecker check(c);
  const BrokerId coord = start_for_group(c, 2);
  ASSERT_NE(coord, kNoBroker);
  Member m1(c, "m1"), m2(c, "m2"), m3(c, "m3");
  // group.min.session.timeout.ms = 6000, max 1800000 (2.8).
  EXPECT_EQ(m1.call<JoinGroupResponse>(coord, join("g", "", "c1", {{"range", ""}}, 5999)).error,
            ErrorCode::invalid_session_timeout);
  EXPECT_EQ(m1.call<JoinGroupResponse>(coord, join("g", "", "c1", {{"range", ""}}, 1800001)).error,
            ErrorCode::invalid_session_timeout);
  // A member id the coordinator never gave out.
  EXPECT_EQ(m1.call<JoinGroupResponse>(coord, join("g", "c1-made-up", "c1")).error, ErrorCode::unknown_member_id);
  EXPECT_EQ(m1.call<HeartbeatResponse>(coord, HeartbeatRequest{"g", 1, "c1-made-up"}).error,
            ErrorCode::unknown_member_id);
  EXPECT_EQ(m1.call<SyncGroupResponse>(coord, SyncGroupRequest{"g", 1, "c1-made-up", {}}).error,
            ErrorCode::unknown_member_id);
  // A broker that does not lead the group's partition.
  const BrokerId other = coord == 1 ? 2 : 1;
  EXPECT_EQ(m1.call<JoinGroupResponse>(other, join("g", "", "c1")).error, ErrorCode::not_coordinator);
  EXPECT_EQ(m1.call<OffsetFetchResponse>(other, OffsetFetchRequest{"g", {{"t", 0}}}).error,
            ErrorCode::not_coordinator);
  EXPECT_EQ(m1.call<OffsetCommitResponse>(other, OffsetCommitRequest{"g", -1, "", {{{"t", 0}, 1}}})
                .partitions.at(0)
                .second,
            ErrorCode::not_coordinator);
  // The group's protocols: the second member must share one with the first.
  const auto j1 = m1.call<JoinGroupResponse>(coord, join("g", "", "c1", {{"range", "a"}, {"roundrobin", "a"}}));
  ASSERT_EQ(j1.error, ErrorCode::none);
  EXPECT_EQ(m2.call<JoinGroupResponse>(coord, join("g", "", "c2", {{"sticky", "b"}})).error,
            ErrorCode::inconsistent_group_protocol);
  JoinGroupRequest other_type = join("g", "", "c2", {{"range", "b"}});
  other_type.protocol_type = "connect";
  EXPECT_EQ(m2.call<JoinGroupResponse>(coord, other_type).error, ErrorCode::inconsistent_group_protocol);
  // A commit from outside the group while it has members.
  EXPECT_EQ(m3.call<OffsetCommitResponse>(coord, OffsetCommitRequest{"g", -1, "", {{{"t", 0}, 1}}})
                .partitions.at(0)
                .second,
            ErrorCode::unknown_member_id);
  // m2 prefers roundrobin, m1 range: one vote each, both support both; the
  // tie goes to the smaller name. A third member is one too many (KIP-389).
  // (m2 gets its member id first, so that both JoinGroups make one rebalance.)
  const auto pending2 = m2.call_once<JoinGroupResponse>(coord, join("g", "", "c2"));
  ASSERT_EQ(pending2.error, ErrorCode::member_id_required);
  auto j2 = m2.send(coord, join("g", pending2.member_id, "c2", {{"roundrobin", "b"}, {"range", "b"}}));
  auto j1b = m1.send(coord, join("g", j1.member_id, "c1", {{"range", "a"}, {"roundrobin", "a"}}));
  ASSERT_TRUE(c.run_until([&] { return j2->has_value() && j1b->has_value(); }, Duration::seconds(5)));
  EXPECT_EQ(as<JoinGroupResponse>(j2).protocol_name, "range");
  EXPECT_EQ(m3.call<JoinGroupResponse>(coord, join("g", "", "c3")).error, ErrorCode::group_max_size_reached);
}

// KIP-394 (Kafka 2.2+, JoinGroup v4+): a JoinGroup without a member id gets
// an id and MEMBER_ID_REQUIRED, and the group holds the id as pending; the
// member joins when it comes back with it. A pending id keeps a rebalance
// from completing early until it joins, leaves or its session times out,
// and an id that expired is unknown.
TEST(KafkaGroups, ANewMemberGetsItsIdFirstAndJoinsWithIt) {
  Cluster c(options());
  c.world().trace().keep_lines(true);
  InvariantChecker check(c);
  const BrokerId coord = start_for_group(c, 2);
  ASSERT_NE(coord, kNoBroker);
  const GroupCoordinator& gc = coordinator(c, coord);
  Member m1(c, "m1"), m2(c, "m2"), m3(c, "m3");

  // The round trip: an id, no member, no rebalance yet.
  const auto first = m1.call_once<JoinGroupResponse>(coord, join("g", "", "c1"));
  ASSERT_EQ(first.error, ErrorCode::member_id_required);
  const std::string id1 = first.member_id;
  EXPECT_EQ(id1.rfind("c1-", 0), 0u) << id1;
  EXPECT_EQ(gc.pending_members("g"), std::vector<std::string>{id1});
  EXPECT_TRUE(gc.members("g").empty());
  EXPECT_EQ(gc.group_state("g"), GroupState::empty);
  // A pending id is not a member's.
  EXPECT_EQ(m1.call<HeartbeatResponse>(coord, HeartbeatRequest{"g", 0, id1}).error,
            ErrorCode::unknown_member_id);
  const auto j1 = m1.call<JoinGroupResponse>(coord, join("g", id1, "c1"));
  ASSERT_EQ(j1.error, ErrorCode::none);
  EXPECT_EQ(j1.member_id, id1);
  EXPECT_EQ(j1.generation_id, 1);
  EXPECT_TRUE(gc.pending_members("g").empty());
  ASSERT_EQ(m1.call<SyncGroupResponse>(coord, SyncGroupRequest{"g", 1, id1, {{id1, {{"t", 0}, {"t", 1}}}}}).error,
            ErrorCode::none);

  // m2 takes an id and never comes back; m1 rejoins. The rebalance waits
  // for the pending id until its session timeout (10 s) drops it, and then
  // completes without it.
  const sim::Time pending_at = c.world().now();
  const auto p2 = m2.call_once<JoinGroupResponse>(coord, join("g", "", "c2", {{"range", "sub:t"}}, 10000));
  ASSERT_EQ(p2.error, ErrorCode::member_id_required);
  auto j1b = m1.send(coord, join("g", id1, "c1", {{"range", "sub:t,u"}}));
  c.run_for(Duration::seconds(5));
  EXPECT_FALSE(j1b->has_value());
  EXPECT_EQ(gc.group_state("g"), GroupState::preparing_rebalance);
  ASSERT_TRUE(c.run_until([&] { return j1b->has_value(); }, Duration::seconds(10)));
  const Duration waited = c.world().now() - pending_at;
  EXPECT_GE(waited, Duration::seconds(10));
  EXPECT_LT(waited, Duration::millis(10100));
  EXPECT_EQ(as<JoinGroupResponse>(j1b).generation_id, 2);
  EXPECT_EQ(as<JoinGroupResponse>(j1b).members.size(), 1u);
  EXPECT_TRUE(gc.pending_members("g").empty());
  EXPECT_EQ(count_trace(c, "group_pending_member_removed"), 1u);
  // The expired id is unknown: m2 must start again.
  EXPECT_EQ(m2.call_once<JoinGroupResponse>(coord, join("g", p2.member_id, "c2")).error,
            ErrorCode::unknown_member_id);

  // A pending member that leaves gives its id back at once.
  const auto p3 = m3.call_once<JoinGroupResponse>(coord, join("g", "", "c3"));
  ASSERT_EQ(p3.error, ErrorCode::member_id_required);
  EXPECT_EQ(gc.pending_members("g"), std::vector<std::string>{p3.member_id});
  EXPECT_EQ(m3.call<LeaveGroupResponse>(coord, LeaveGroupRequest{"g", p3.member_id}).error, ErrorCode::none);
  EXPECT_TRUE(gc.pending_members("g").empty());
  EXPECT_EQ(gc.members("g"), std::vector<std::string>{id1});
}

// A pending member id whose member comes back when the group is full
// (group.max.size 2, both places taken by members that rejoined). From
// Kafka 3.0 turning it away drops the pending id too, so the rebalance that
// waited for it completes at once (GroupMetadata.remove, 3.0.0 on); in 2.8
// the id stays pending until its session timeout (10 s); in 2.2 a returning
// pending id is not turned away.
TEST(KafkaGroups, APendingMemberTurnedAwayByGroupMaxSizeAsTheVersionDoes) {
  for (VersionProfile v : {VersionProfile::v2_2, VersionProfile::v2_8, VersionProfile::v3_1,
                           VersionProfile::v3_9}) {
    SCOPED_TRACE(to_string(v));
    ClusterOptions o = options({{"group.max.size", "2"}});
    o.version = v;
    Cluster c(o);
    const BrokerId coord = start_for_group(c, 2);
    ASSERT_NE(coord, kNoBroker);
    Member m1(c, "m1"), m2(c, "m2"), m3(c, "m3");
    const auto j1 = m1.call<JoinGroupResponse>(coord, join("g", "", "c1"));
    ASSERT_EQ(j1.error, ErrorCode::none);
    ASSERT_EQ(m1.call<SyncGroupResponse>(coord, SyncGroupRequest{"g", 1, j1.member_id, {}}).error, ErrorCode::none);
    const sim::Time pending_at = c.world().now();
    const auto p2 = m2.call_once<JoinGroupResponse>(coord, join("g", "", "c2"));
    const auto p3 = m3.call_once<JoinGroupResponse>(coord, join("g", "", "c3"));
    ASSERT_EQ(p2.error, ErrorCode::member_id_required);
    ASSERT_EQ(p3.error, ErrorCode::member_id_required);
    auto j3 = m3.send(coord, join("g", p3.member_id, "c3"));
    auto j1b = m1.send(coord, join("g", j1.member_id, "c1"));
    c.run_for(Duration::seconds(1));
    EXPECT_FALSE(j3->has_value() || j1b->has_value()) << "m2's pending id holds the rebalance";
    const auto r2 = m2.call_once<JoinGroupResponse>(coord, join("g", p2.member_id, "c2"));
    const GroupCoordinator& gc = coordinator(c, coord);
    if (v == VersionProfile::v2_2) {
      EXPECT_EQ(r2.error, ErrorCode::none);
      EXPECT_EQ(gc.members("g").size(), 3u);
      continue;
    }
    EXPECT_EQ(r2.error, ErrorCode::group_max_size_reached);
    if (v >= VersionProfile::v3_1) {
      EXPECT_TRUE(gc.pending_members("g").empty());
      EXPECT_TRUE(c.run_until([&] { return j3->has_value() && j1b->has_value(); }, Duration::millis(100)));
    } else {
      EXPECT_EQ(gc.pending_members("g"), std::vector<std::string>{p2.member_id});
      ASSERT_TRUE(c.run_until([&] { return j3->has_value() && j1b->has_value(); }, Duration::seconds(10)));
      EXPECT_GE(c.world().now() - pending_at, Duration::seconds(10));
    }
    EXPECT_EQ(as<JoinGroupResponse>(j3).generation_id, 2);
    EXPECT_EQ(gc.members("g").size(), 2u);
  }
}

// group.max.size while a rebalance is being prepared. From 2.6 (KAFKA-9885)
// places go to the first members to (re)join: a new member takes a place
// that a member not yet rejoined would have had, and that member is turned
// away and removed. In 2.2 a new member is turned away once the group has
// group.max.size members, whoever has rejoined.
TEST(KafkaGroups, GroupMaxSizeWhileARebalanceIsPrepared) {
  for (VersionProfile version : {VersionProfile::v2_2, VersionProfile::v2_8, VersionProfile::v3_9}) {
    SCOPED_TRACE(to_string(version));
    ClusterOptions o = options({{"group.max.size", "2"}});
    o.version = version;
    Cluster c(o);
    c.start();
    ASSERT_TRUE(c.await_ready());
    ASSERT_EQ(c.create_topic("t", 2, 3), ErrorCode::none);
    const BrokerId coord = find_coordinator(c, "g");
    Member m1(c, "m1"), m2(c, "m2"), m3(c, "m3");
    const auto [id1, id2] = two_members(c, coord, m1, m2);

    // m1 changes its subscription: a rebalance, m1 the only one rejoined.
    auto j1c = m1.send(coord, join("g", id1, "c1", {{"range", "sub:t,u"}}));
    ASSERT_TRUE(c.run_until(
        [&] { return coordinator(c, coord).group_state("g") == GroupState::preparing_rebalance; },
        Duration::seconds(5)));
    auto j3 = m3.send(coord, join("g", "", "c3"));
    c.run_for(Duration::millis(500));
    const auto j2b = m2.call<JoinGroupResponse>(coord, join("g", id2, "c2"));
    ASSERT_TRUE(c.run_until([&] { return j1c->has_value() && j3->has_value(); }, Duration::seconds(5)));
    const GroupCoordinator& gc = coordinator(c, coord);
    EXPECT_EQ(as<JoinGroupResponse>(j1c).error, ErrorCode::none);
    if (version == VersionProfile::v2_2) {
      EXPECT_EQ(as<JoinGroupResponse>(j3).error, ErrorCode::group_max_size_reached);
      EXPECT_EQ(j2b.error, ErrorCode::none);
      EXPECT_EQ(gc.members("g"), (std::vector<std::string>{id1, id2}));
    } else {
      EXPECT_EQ(as<JoinGroupResponse>(j3).error, ErrorCode::none);
      EXPECT_EQ(j2b.error, ErrorCode::group_max_size_reached);
      EXPECT_EQ(j2b.member_id, "");
      EXPECT_EQ(gc.members("g"),
                (std::vector<std::string>{id1, as<JoinGroupResponse>(j3).member_id}));
    }
    EXPECT_EQ(gc.generation("g"), 3);
  }
}

// Sessions that outlast a coordinator's controlled shutdown and the next
// one's load, without heartbeats.
const std::vector<JoinGroupProtocol> kRange = {{"range", "sub:t"}};

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}
constexpr int32_t kLongSession = 120000;

// A coordinator that loads a group with more members than its
// group.max.size (the operator lowered it and restarted the brokers, then
// the coordinator moved) prepares a rebalance. 2.2 (KIP-389) sheds members
// while the group is over the limit: a member that rejoins before the group
// is back to group.max.size is turned away and removed. From 2.6
// (KAFKA-9885) the first members to rejoin keep their places and the last
// is turned away.
TEST(KafkaGroups, ALoadedGroupOverGroupMaxSizeShedsMembers) {
  for (VersionProfile version : {VersionProfile::v2_2, VersionProfile::v2_8, VersionProfile::v3_9}) {
    SCOPED_TRACE(to_string(version));
    ClusterOptions o = options({{"group.max.size", "3"}});
    o.version = version;
    Cluster c(o);
    c.start();
    ASSERT_TRUE(c.await_ready());
    ASSERT_EQ(c.create_topic("t", 3, 3), ErrorCode::none);
    const BrokerId first = find_coordinator(c, "g");
    const TopicPartition otp{kOffsetsTopicName, coordinator(c, first).partition_for("g")};
    // The other brokers are restarted with group.max.size=2.
    for (BrokerId b : c.broker_ids_except(first)) {
      c.reconfigure_broker(b, {{"group.max.size", "2"}});
      c.stop_broker(b);
      ASSERT_TRUE(c.run_until([&] { return c.broker(b) == nullptr; }, Duration::seconds(60)));
      c.start_broker(b);
      ASSERT_TRUE(c.await_ready());
      ASSERT_TRUE(c.run_until([&] { return c.state(otp)->isr.size() == 3; }, Duration::seconds(60)));
    }
    ASSERT_EQ(c.state(otp)->leader, first);
    ASSERT_EQ(coordinator(c, first).group_state("g"), std::nullopt);
    // Three members, stable at generation 2 on the first coordinator.
    Member m1(c, "m1"), m2(c, "m2"), m3(c, "m3");
    const auto j1 = m1.call<JoinGroupResponse>(first, join("g", "", "c1", kRange, kLongSession));
    ASSERT_EQ(j1.error, ErrorCode::none);
    const std::string id1 = j1.member_id;
    ASSERT_EQ(m1.call<SyncGroupResponse>(first, SyncGroupRequest{"g", 1, id1, {{id1, {{"t", 0}}}}}).error,
              ErrorCode::none);
    auto j2 = m2.send(first, join("g", "", "c2", kRange, kLongSession));
    auto j3 = m3.send(first, join("g", "", "c3", kRange, kLongSession));
    c.run_for(Duration::millis(100));
    auto j1b = m1.send(first, join("g", id1, "c1", kRange, kLongSession));
    ASSERT_TRUE(c.run_until([&] { return j1b->has_value() && j2->has_value() && j3->has_value(); },
                            Duration::seconds(5)));
    const std::string id2 = as<JoinGroupResponse>(j2).member_id;
    const std::string id3 = as<JoinGroupResponse>(j3).member_id;
    ASSERT_EQ(as<JoinGroupResponse>(j1b).generation_id, 2);
    auto s2 = m2.send(first, SyncGroupRequest{"g", 2, id2, {}});
    auto s3 = m3.send(first, SyncGroupRequest{"g", 2, id3, {}});
    ASSERT_EQ(m1.call<SyncGroupResponse>(
                    first, SyncGroupRequest{"g", 2, id1, {{id1, {{"t", 0}}}, {id2, {{"t", 1}}}, {id3, {{"t", 2}}}}})
                  .error,
              ErrorCode::none);
    ASSERT_TRUE(c.run_until([&] { return s2->has_value() && s3->has_value(); }, Duration::seconds(5)));
    ASSERT_EQ(coordinator(c, first).members("g").size(), 3u);

    // The first coordinator stops: the next loads three members over its two.
    c.stop_broker(first);
    ASSERT_TRUE(c.run_until([&] { return c.broker(first) == nullptr; }, Duration::seconds(60)));
    const BrokerId next = find_coordinator(c, "g");
    ASSERT_NE(next, first);
    ASSERT_EQ(coordinator(c, next).members("g").size(), 3u);
    ASSERT_EQ(coordinator(c, next).group_state("g"), GroupState::preparing_rebalance);
    // They rejoin in order m1, m2, m3.
    const auto r1 = m1.send(next, join("g", id1, "c1", kRange, kLongSession));
    c.run_for(Duration::millis(100));
    const auto r2 = m2.send(next, join("g", id2, "c2", kRange, kLongSession));
    c.run_for(Duration::millis(100));
    const auto r3 = m3.send(next, join("g", id3, "c3", kRange, kLongSession));
    ASSERT_TRUE(c.run_until([&] { return r1->has_value() && r2->has_value() && r3->has_value(); },
                            Duration::seconds(5)));
    const GroupCoordinator& gc = coordinator(c, next);
    if (version == VersionProfile::v2_2) {
      // m1 came while the group still had three: shed. m2 and m3 stay.
      EXPECT_EQ(as<JoinGroupResponse>(r1).error, ErrorCode::group_max_size_reached);
      EXPECT_EQ(as<JoinGroupResponse>(r2).error, ErrorCode::none);
      EXPECT_EQ(as<JoinGroupResponse>(r3).error, ErrorCode::none);
      EXPECT_EQ(sorted(gc.members("g")), sorted({id2, id3}));
    } else {
      // The first two to rejoin keep their places; m3 is turned away.
      EXPECT_EQ(as<JoinGroupResponse>(r1).error, ErrorCode::none);
      EXPECT_EQ(as<JoinGroupResponse>(r2).error, ErrorCode::none);
      EXPECT_EQ(as<JoinGroupResponse>(r3).error, ErrorCode::group_max_size_reached);
      EXPECT_EQ(sorted(gc.members("g")), sorted({id1, id2}));
    }
    EXPECT_EQ(gc.generation("g"), 3);
  }
}

}  // namespace
}  // namespace kafka::testing
