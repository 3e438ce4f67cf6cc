// The final state read from a real small cluster (model/check/final_state.h):
// records, high watermarks, log starts and the leader flag, exactly; which
// brokers count as live; and the truncations recorded during a run, across
// broker restarts, with the right from / to.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "client/harness.h"
#include "kafka/cluster.h"
#include "model/check/final_state.h"

namespace kafka::testing {
namespace {

using sim::Duration;
using Records = std::vector<std::pair<int64_t, uint64_t>>;

std::vector<BrokerId> brokers_of(const std::vector<check::FinalState::Replica>& replicas) {
  std::vector<BrokerId> ids;
  for (const auto& r : replicas) ids.push_back(r.broker);
  return ids;
}

std::vector<check::FinalState::Truncation> of(const std::vector<check::FinalState::Truncation>& all,
                                              const TopicPartition& tp) {
  std::vector<check::FinalState::Truncation> out;
  for (const auto& t : all) {
    if (t.tp == tp) out.push_back(t);
  }
  return out;
}

TEST(FinalState, ReadsEveryLiveReplicaExactly) {
  Cluster c({.brokers = 3});
  InvariantChecker check(c);
  c.start();
  ASSERT_TRUE(c.await_ready());
  const TopicPartition tp{"t", 0};
  ASSERT_EQ(c.create_topic("t", 2, 3, {}, {{0, {2, 1, 3}}, {1, {3, 1, 2}}}), ErrorCode::none);
  ASSERT_EQ(c.produce(tp, {10, 11, 12}, -1)->error, ErrorCode::none);
  ASSERT_EQ(c.produce(tp, {13}, -1)->error, ErrorCode::none);
  ASSERT_EQ(c.produce({"t", 1}, {20}, -1)->error, ErrorCode::none);
  c.run_for(Duration::seconds(2));  // the followers learn the high watermark

  const check::FinalState fs = check::read_final_state(c.world(), c.broker_processes());
  ASSERT_EQ(fs.partitions.size(), 2u);
  const auto& replicas = fs.partitions.at(tp);
  ASSERT_EQ(brokers_of(replicas), (std::vector<BrokerId>{1, 2, 3})) << "by broker id";
  for (const auto& r : replicas) {
    EXPECT_EQ(r.leader, r.broker == 2) << "broker " << r.broker;
    EXPECT_EQ(r.high_watermark, 4) << "broker " << r.broker;
    EXPECT_EQ(r.log_start, 0);
    EXPECT_EQ(r.records, (Records{{0, 10}, {1, 11}, {2, 12}, {3, 13}})) << "broker " << r.broker;
  }
  EXPECT_EQ(fs.reference(tp)->broker, 2);
  for (const auto& r : fs.partitions.at({"t", 1})) {
    EXPECT_EQ(r.leader, r.broker == 3);
    EXPECT_EQ(r.records, (Records{{0, 20}}));
    EXPECT_EQ(r.high_watermark, 1);
  }
  EXPECT_TRUE(fs.truncations.empty());

  // A paused broker still counts (its log is there and it goes on with it);
  // a killed one does not.
  c.pause_broker(1);
  c.kill_broker(3);
  const check::FinalState after = check::read_final_state(c.world(), c.broker_processes());
  EXPECT_EQ(brokers_of(after.partitions.at(tp)), (std::vector<BrokerId>{1, 2}));
  EXPECT_EQ(brokers_of(after.partitions.at({"t", 1})), (std::vector<BrokerId>{1, 2}));
  for (const auto& r : after.partitions.at({"t", 1})) {
    EXPECT_FALSE(r.leader) << "the leader of t-1 was killed";
  }
}

// A paused leader that the controller replaced still believes it leads; the
// replica with the newer leader epoch is the one marked.
TEST(FinalState, MarksOnlyTheLeaderOfTheNewestEpoch) {
  Cluster c({.brokers = 3});
  InvariantChecker check(c);
  c.start();
  ASSERT_TRUE(c.await_ready());
  const BrokerId old_leader = non_controller(c);
  const TopicPartition tp{"t", 0};
  ASSERT_EQ(c.create_topic("t", 1, 3, {}, {{0, leader_first(c, old_leader)}}), ErrorCode::none);
  ASSERT_EQ(c.produce(tp, {1}, -1)->error, ErrorCode::none);
  c.pause_broker(old_leader);
  // Its ZooKeeper session expires; the controller elects another replica.
  ASSERT_TRUE(c.run_until([&] { auto s = c.state(tp); return s && s->leader != old_leader && s->leader != kNoBroker; },
                          Duration::seconds(60)));
  c.run_for(Duration::seconds(1));
  const BrokerId new_leader = c.state(tp)->leader;
  ASSERT_TRUE(c.broker(old_leader)->partition(tp)->is_leader()) << "paused: it was never told";
  const check::FinalState fs = check::read_final_state(c.world(), c.broker_processes());
  const auto& replicas = fs.partitions.at(tp);
  ASSERT_EQ(replicas.size(), 3u);
  for (const auto& r : replicas) EXPECT_EQ(r.leader, r.broker == new_leader) << "broker " << r.broker;
  EXPECT_EQ(fs.reference(tp)->broker, new_leader);
}

TEST(FinalState, LeavesInternalTopicsOutUnlessAsked) {
  Cluster c({.brokers = 1});
  c.start();
  ASSERT_TRUE(c.await_ready());
  ASSERT_EQ(c.create_topic("__consumer_offsets", 1, 1), ErrorCode::none);
  ASSERT_EQ(c.create_topic("t", 1, 1), ErrorCode::none);
  c.run_for(Duration::seconds(1));
  const check::FinalState fs = check::read_final_state(c.world(), c.broker_processes());
  EXPECT_EQ(fs.partitions.size(), 1u);
  EXPECT_EQ(fs.partitions.count({"t", 0}), 1u);
  const check::FinalState all =
      check::read_final_state(c.world(), c.broker_processes(), {}, {.include_internal_topics = true});
  EXPECT_EQ(all.partitions.size(), 2u);
  EXPECT_EQ(all.partitions.count({"__consumer_offsets", 0}), 1u);
}

// test_data_loss.cc's acks=1 schedule: the leader, cut off from its
// followers, appends value 2 at offset 1 and acknowledges it; it is killed,
// a follower is elected, and when the old leader starts again it truncates
// offset 1 away by leader epoch. The recorder outlives the broker object
// (re-created by its factory on restart) and sees the truncation.
TEST(FinalState, RecordsTheTruncationOfARejoiningLeader) {
  Cluster c({.brokers = 3});
  InvariantChecker check(c);
  check::TruncationRecorder recorder(c.world(), c.broker_processes());
  c.start();
  ASSERT_TRUE(c.await_ready());
  const BrokerId leader = non_controller(c);
  const TopicPartition tp{"t", 0};
  ASSERT_EQ(c.create_topic("t", 1, 3, {}, {{0, leader_first(c, leader)}}), ErrorCode::none);
  ASSERT_EQ(c.produce(tp, {1}, 1)->error, ErrorCode::none);
  c.run_for(Duration::seconds(1));
  for (BrokerId b : c.broker_ids()) {
    if (b != leader) cut(c, leader, b);
  }
  auto acked = c.produce(tp, {2}, 1);
  ASSERT_TRUE(acked.has_value());
  ASSERT_EQ(acked->error, ErrorCode::none);
  ASSERT_EQ(acked->base_offset, Offset{1});
  c.kill_broker(leader);
  ASSERT_TRUE(c.run_until([&] { auto s = c.state(tp); return s && s->leader != leader && s->leader != kNoBroker; },
                          Duration::seconds(60)));
  c.world().network().heal();
  c.run_for(Duration::seconds(5));
  EXPECT_TRUE(of(recorder.truncations(), tp).empty()) << "nothing truncated yet";
  const sim::Time restart = c.world().now();
  c.start_broker(leader);
  ASSERT_TRUE(c.run_until([&] { return c.state(tp)->isr.size() == 3; }, Duration::seconds(120)));
  c.run_for(Duration::seconds(5));
  ASSERT_EQ(c.log_values(leader, tp), std::vector<uint64_t>{1});

  const auto truncations = of(recorder.truncations(), tp);
  ASSERT_EQ(truncations.size(), 1u);
  EXPECT_EQ(truncations[0].broker, leader);
  EXPECT_EQ(truncations[0].from, 2);
  EXPECT_EQ(truncations[0].to, 1);
  EXPECT_GE(truncations[0].time_us, restart.us());
  EXPECT_LE(truncations[0].time_us, c.world().now().us());

  // Through the final state into the dirty-read checker: a consumer that
  // read value 2 at offset 1 read something truncated, and it is attributed
  // to this truncation.
  const check::FinalState fs =
      check::read_final_state(c.world(), c.broker_processes(), recorder.truncations());
  ASSERT_EQ(fs.truncations.size(), recorder.truncations().size());
  check::History h;
  check::Op read;
  read.time_us = restart.us() - 1;
  read.process = h.process("consumer");
  read.type = check::OpType::ok;
  read.f = check::OpFunction::poll;
  read.topic = h.intern("t");
  read.partition = 0;
  read.offset = 1;
  read.value = 2;
  h.add(read);
  const check::DirtyReadsResult dirty = check::check_dirty_reads(h, fs);
  ASSERT_EQ(dirty.dirty, 1u);
  ASSERT_TRUE(dirty.items[0].truncation.has_value());
  EXPECT_EQ(dirty.items[0].truncation->broker, leader);
}

// A power-off takes what only the page cache held (the default flush policy
// never fsyncs): the recorder compares the log end each broker had when the
// power went with the one it loads back.
TEST(FinalState, RecordsWhatAPowerLossTookFromALog) {
  int seeds_that_lost = 0;
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    Cluster c({.brokers = 3, .seed = seed});
    check::TruncationRecorder recorder(c.world(), c.broker_processes());
    // What each broker loaded back, from the trace.
    std::map<std::string, int64_t> loaded;
    const uint64_t handle = c.world().trace().add_observer([&](const sim::TraceRecord& r) {
      if (r.kind != "log_loaded") return;
      loaded[std::string(r.process)] = std::get<int64_t>(*r.field("log_end"));
    });
    c.start();
    ASSERT_TRUE(c.await_ready());
    const BrokerId follower = non_controller(c);
    const TopicPartition tp{"t", 0};
    std::vector<BrokerId> replicas{*c.controller()};
    replicas.push_back(follower);
    ASSERT_EQ(c.create_topic("t", 1, 2, {}, {{0, replicas}}), ErrorCode::none);
    ASSERT_EQ(c.produce(tp, {1, 2, 3}, -1)->error, ErrorCode::none);
    ASSERT_EQ(c.produce(tp, {4}, -1)->error, ErrorCode::none);
    ASSERT_EQ(c.broker(follower)->partition(tp)->log().log_end(), Offset{4});
    c.power_off_broker(follower);
    c.run_for(Duration::seconds(5));
    loaded.clear();
    c.power_on_broker(follower);
    ASSERT_TRUE(c.run_until([&] { return loaded.count(fmt::format("kafka-{}", follower)) != 0; },
                            Duration::seconds(30)));
    const int64_t back = loaded.at(fmt::format("kafka-{}", follower));
    const auto truncations = of(recorder.truncations(), tp);
    if (back == 4) {
      EXPECT_TRUE(truncations.empty()) << "seed " << seed << ": everything had been written back";
    } else {
      ++seeds_that_lost;
      ASSERT_EQ(truncations.size(), 1u) << "seed " << seed;
      EXPECT_EQ(truncations[0].broker, follower);
      EXPECT_EQ(truncations[0].from, 4);
      EXPECT_EQ(truncations[0].to, back);
    }
    c.world().trace().remove_observer(handle);
  }
  // Otherwise the truncation branch above, the one this test is for, never ran.
  EXPECT_GT(seeds_that_lost, 0);
}

// The sim::Trace hook the recorder rests on: observers see every record with
// its fields, in order, until removed.
TEST(FinalState, TraceObserversSeeRecordsUntilRemoved) {
  sim::World w(1);
  const sim::HostId h = w.add_host("h", "10.0.0.1");
  std::vector<std::string> seen;
  const uint64_t a = w.trace().add_observer([&](const sim::TraceRecord& r) {
    const auto* n = r.field("n");
    seen.push_back(fmt::format("a:{}:{}:{}", r.host, r.kind, n == nullptr ? -1 : std::get<int64_t>(*n)));
  });
  w.trace().add_observer([&](const sim::TraceRecord& r) { seen.push_back(fmt::format("b:{}", r.kind)); });
  w.trace().emit("h", "p", "one", {{"n", 1}});
  w.power_off(h);
  w.trace().remove_observer(a);
  w.trace().emit("h", "p", "two", {{"n", 2}});
  EXPECT_EQ(seen, (std::vector<std::string>{"a:h:one:1", "b:one", "a:h:power_off:-1", "b:power_off", "b:two"}));
}

}  // namespace
}  // namespace kafka::testing
