// The `steady` workload (model/client/steady.h) on a healthy three-broker
// cluster: producers at their configured rate, every acknowledged value
// consumed exactly once per group, values unique across producers and
// restarts, the history in the checkers' shapes, and the same bytes for the
// same seed.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "kafka/cluster.h"
#include "model/check/checkers.h"
#include "model/check/final_state.h"
#include "model/client/steady.h"

namespace kafka::testing {
namespace {

using client::SteadyOptions;
using sim::Duration;

TEST(SteadyValues, ProducerGenerationAndSequenceRoundTrip) {
  const uint64_t v = client::steady_value(3, 2, 41);
  EXPECT_EQ(v, (uint64_t{3} << 48) | (uint64_t{2} << 32) | 41u);
  EXPECT_EQ(client::steady_producer_of(v), 3u);
  EXPECT_EQ(client::steady_generation_of(v), 2u);
  EXPECT_EQ(client::steady_sequence_of(v), 41u);
  EXPECT_NE(client::steady_value(0, 0, 1), client::steady_value(0, 1, 1));
  EXPECT_NE(client::steady_value(0, 0, 1), client::steady_value(1, 0, 1));
}

TEST(SteadyValues, BadOptionsAreRefusedByName) {
  auto message = [](SteadyOptions o) {
    try {
      client::validate(o);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  SteadyOptions o;
  EXPECT_EQ(message(o), "accepted");
  o.rate_per_s = 0;
  EXPECT_NE(message(o).find("rate_per_s must be in [1, 1000000], got 0"), std::string::npos) << message(o);
  o = SteadyOptions{};
  o.topic = "";
  EXPECT_NE(message(o).find("topic is empty"), std::string::npos);
  o = SteadyOptions{};
  o.producers = -1;
  EXPECT_NE(message(o).find("producers must be in [0, 65536], got -1"), std::string::npos);
  o = SteadyOptions{};
  o.consumer_prefix = o.producer_prefix;
  EXPECT_NE(message(o).find("must be non-empty and differ"), std::string::npos);
}

// A three-broker cluster with a six-partition topic and the workload's
// processes on one application host.
struct SteadyRun {
  explicit SteadyRun(uint64_t seed, SteadyOptions o) : options(std::move(o)), cluster({.zookeepers = 1, .brokers = 3, .seed = seed}) {
    cluster.start();
    EXPECT_TRUE(cluster.await_ready());
    EXPECT_EQ(cluster.create_topic(options.topic, 6, 3), ErrorCode::none);
    for (int b = 1; b <= 3; ++b) {
      options.producer.bootstrap.push_back({fmt::format("10.0.1.{}", b), 9092});
      options.consumer.bootstrap.push_back({fmt::format("10.0.1.{}", b), 9092});
    }
    const sim::HostId apps = cluster.world().add_host("apps", "10.0.9.5");
    procs = client::add_steady(cluster.world(), apps, options, &history);
  }
  sim::World& world() { return cluster.world(); }
  client::SteadyProducer* producer(int i) {
    return world().process_as<client::SteadyProducer>(procs.producers.at(static_cast<size_t>(i)));
  }
  client::SteadyConsumer* consumer(int j) {
    return world().process_as<client::SteadyConsumer>(procs.consumers.at(static_cast<size_t>(j)));
  }
  // Consumers first (and their groups settled), then a minute of producing,
  // then time for the consumers to read everything.
  void run(Duration producing = Duration::seconds(60)) {
    for (sim::ProcessId c : procs.consumers) world().start(c);
    cluster.run_for(Duration::seconds(10));
    for (sim::ProcessId p : procs.producers) world().start(p);
    cluster.run_for(producing);
    stop_producers();
    cluster.run_for(Duration::seconds(15));
  }
  void stop_producers() {
    for (int i = 0; i < options.producers; ++i) {
      if (auto* p = producer(i)) p->stop();
    }
  }
  check::FinalState final_state() { return check::read_final_state(world(), cluster.broker_processes()); }
  std::string jsonl() const {
    std::ostringstream out;
    history.write_jsonl(out);
    return out.str();
  }

  SteadyOptions options;
  check::History history;
  Cluster cluster;
  client::SteadyProcesses procs;
};

SteadyOptions two_groups() {
  SteadyOptions o;
  o.producers = 3;
  o.rate_per_s = 100;
  o.keys = 16;
  o.consumers = 4;
  o.groups = {"g1", "g2"};
  return o;
}

// Every op of the history paired as checkers.h requires.
void expect_paired(const check::History& h) {
  const std::vector<int64_t> partner = check::pair_index(h);
  for (size_t i = 0; i < h.ops().size(); ++i) {
    const check::Op& op = h.ops()[i];
    ASSERT_NE(op.process, 0u) << i;
    const bool completion = op.type != check::OpType::invoke;
    if (completion && (op.f == check::OpFunction::send || op.f == check::OpFunction::poll)) {
      ASSERT_GE(partner[i], 0) << "op " << i << " " << check::to_string(op.f) << " has no invoke";
      EXPECT_EQ(h.ops()[static_cast<size_t>(partner[i])].process, op.process);
    }
  }
}

TEST(Steady, ProducersHitTheirRateAndEveryAckedValueIsConsumedOncePerGroup) {
  SteadyRun run(11, two_groups());
  run.run();
  const check::History& h = run.history;

  // Rate: 100/s for a minute each, a Poisson stream: 6000 give or take
  // ~80 (one standard deviation); 5% is four of them.
  std::map<std::string, uint64_t> invokes, acks;
  for (const check::Op& op : h.ops()) {
    if (op.f != check::OpFunction::send) continue;
    if (op.type == check::OpType::invoke) ++invokes[h.process_name(op.process)];
    if (op.type == check::OpType::ok) ++acks[h.process_name(op.process)];
  }
  ASSERT_EQ(invokes.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    const std::string name = client::steady_producer_name(run.options, i);
    EXPECT_NEAR(static_cast<double>(invokes[name]), 6000.0, 300.0) << name;
    EXPECT_EQ(acks[name], invokes[name]) << name << ": a healthy cluster acknowledges every send";
    EXPECT_EQ(run.producer(i)->acknowledged(), acks[name]);
  }

  // Exactly once per group, against the history ...
  std::map<uint64_t, int> acked;  // value -> times acknowledged
  for (const check::Op& op : h.ops()) {
    if (op.f == check::OpFunction::send && op.type == check::OpType::ok) ++acked[op.value];
  }
  std::map<std::string, std::map<uint64_t, int>> read_by_group;
  for (const check::Op& op : h.ops()) {
    if (op.f != check::OpFunction::poll || op.type != check::OpType::ok || op.partition < 0) continue;
    const std::string consumer = h.process_name(op.process);
    int j = -1;
    for (int k = 0; k < run.options.consumers; ++k) {
      if (client::steady_consumer_name(run.options, k) == consumer) j = k;
    }
    ASSERT_GE(j, 0) << consumer;
    ++read_by_group[client::steady_group_of(run.options, j)][op.value];
    // The consumer names the producer from the value's high bits.
    EXPECT_EQ(h.process_name(op.producer),
              client::steady_producer_name(run.options, static_cast<int32_t>(client::steady_producer_of(op.value))));
  }
  ASSERT_EQ(read_by_group.size(), 2u);
  for (const auto& [group, reads] : read_by_group) {
    EXPECT_EQ(reads.size(), acked.size()) << group;
    for (const auto& [value, times] : acked) {
      EXPECT_EQ(times, 1) << value;
      auto it = reads.find(value);
      ASSERT_NE(it, reads.end()) << group << " never read " << value;
      EXPECT_EQ(it->second, 1) << group << " read " << value << " " << it->second << " times";
    }
  }

  // ... and by the checkers against the brokers' final logs.
  const check::Verdict v = check::check_all(
      h, run.final_state(), {.order_promised = check::OrderPromised::no, .faults = {},
                             .end_time_us = run.world().now().us(), .stall_threshold_us = 1'000'000,
                             .max_items = check::kMaxItems,
                             .skip_checked_groups = {run.options.groups.begin(), run.options.groups.end()}});
  EXPECT_EQ(v.lost.lost, 0u) << v.summary();
  EXPECT_EQ(v.lost.acknowledged, acked.size()) << v.summary();
  EXPECT_EQ(v.duplicates.duplicated, 0u) << v.summary();
  EXPECT_EQ(v.dirty_reads.dirty, 0u) << v.summary();
  EXPECT_EQ(v.divergence.divergent_pairs, 0u) << v.summary();
  EXPECT_EQ(v.skips.skipped, 0u) << v.summary();
  EXPECT_GT(v.skips.commits_checked, 0u) << v.to_json()["skips"].dump();
  // Both groups formed: one rebalance outcome per group at least, two members each.
  ASSERT_EQ(v.groups.groups.size(), 2u) << v.to_json().dump();
  for (const check::GroupResult::Group& g : v.groups.groups) {
    EXPECT_GE(g.rebalances, 1u) << g.group;
    EXPECT_EQ(g.assignment.size(), 2u) << g.group;
  }
  expect_paired(h);
}

TEST(Steady, ARestartedProducerNeverReusesAValue) {
  SteadyOptions o;
  o.producers = 2;
  o.rate_per_s = 200;
  o.arrivals = SteadyOptions::Arrivals::fixed;
  o.consumers = 1;
  o.groups = {};  // a consumer without a group, on every partition
  SteadyRun run(5, o);
  for (sim::ProcessId c : run.procs.consumers) run.world().start(c);
  run.cluster.run_for(Duration::seconds(5));
  for (sim::ProcessId p : run.procs.producers) run.world().start(p);
  run.cluster.run_for(Duration::seconds(20));
  // kill -9 producer 0; whoever kills records the exit.
  run.world().kill(run.procs.producers[0]);
  client::record_exit(run.history, client::steady_producer_name(o, 0), run.world().now().us(), "killed");
  run.cluster.run_for(Duration::seconds(5));
  run.world().start(run.procs.producers[0]);
  EXPECT_EQ(run.producer(0)->generation(), 1u);
  run.cluster.run_for(Duration::seconds(20));
  // A second kill the harness does not record: the restart records it.
  run.world().kill(run.procs.producers[0]);
  run.world().start(run.procs.producers[0]);
  run.cluster.run_for(Duration::seconds(10));
  run.stop_producers();
  run.cluster.run_for(Duration::seconds(15));

  const check::History& h = run.history;
  std::map<uint64_t, uint32_t> sender;                  // value -> process
  std::map<uint64_t, std::set<uint64_t>> generations;  // producer -> generations seen
  size_t exits = 0;
  for (const check::Op& op : h.ops()) {
    if (op.f == check::OpFunction::exit) {
      ++exits;
      EXPECT_EQ(h.process_name(op.process), client::steady_producer_name(o, 0));
    }
    if (op.f != check::OpFunction::send || op.type != check::OpType::invoke) continue;
    const auto [it, fresh] = sender.try_emplace(op.value, op.process);
    EXPECT_TRUE(fresh) << "value " << op.value << " invoked twice";
    EXPECT_EQ(h.process_name(op.process),
              client::steady_producer_name(o, static_cast<int32_t>(client::steady_producer_of(op.value))));
    generations[client::steady_producer_of(op.value)].insert(client::steady_generation_of(op.value));
  }
  EXPECT_EQ(exits, 2u);
  EXPECT_EQ(generations[0], (std::set<uint64_t>{0, 1, 2}));
  EXPECT_EQ(generations[1], (std::set<uint64_t>{0}));
  // With fixed arrivals at 200/s, producer 1 sent one value every 5 ms for 55 s.
  EXPECT_NEAR(static_cast<double>(run.producer(1)->sent()), 11000.0, 2.0);

  const check::Verdict v = check::check_all(
      h, run.final_state(), {.order_promised = check::OrderPromised::no, .faults = {},
                             .end_time_us = run.world().now().us(), .stall_threshold_us = 1'000'000,
                             .max_items = check::kMaxItems,
                             .skip_checked_groups = {run.options.groups.begin(), run.options.groups.end()}});
  EXPECT_EQ(v.lost.lost, 0u) << v.summary();
  EXPECT_GT(v.lost.acknowledged, 10000u) << v.summary();
  EXPECT_EQ(v.duplicates.duplicated, 0u) << v.summary();
  expect_paired(h);
}

TEST(Steady, ATerminatedGroupMemberRecordsItsExitAndItsPartitionsMove) {
  SteadyRun run(3, two_groups());
  for (sim::ProcessId c : run.procs.consumers) run.world().start(c);
  run.cluster.run_for(Duration::seconds(10));
  for (sim::ProcessId p : run.procs.producers) run.world().start(p);
  run.cluster.run_for(Duration::seconds(10));
  // SIGTERM consumer 0 (group g1): it records its exit, commits and leaves.
  run.world().terminate(run.procs.consumers[0], Duration::seconds(10));
  run.cluster.run_for(Duration::seconds(20));
  run.stop_producers();
  run.cluster.run_for(Duration::seconds(10));
  EXPECT_FALSE(run.world().is_running(run.procs.consumers[0]));
  const check::History& h = run.history;
  const std::string gone = client::steady_consumer_name(run.options, 0);
  size_t exits = 0;
  for (const check::Op& op : h.ops()) {
    if (op.f != check::OpFunction::exit) continue;
    ++exits;
    EXPECT_EQ(h.process_name(op.process), gone);
    EXPECT_EQ(h.string(op.error), "terminated");
  }
  EXPECT_EQ(exits, 1u);
  const check::GroupResult groups = check::check_groups(h);
  ASSERT_EQ(groups.groups.size(), 2u);
  const check::GroupResult::Group& g1 = groups.groups[0];
  ASSERT_EQ(g1.group, "g1");
  // The other member of g1 holds all six partitions; the one that left is
  // no longer a member.
  ASSERT_EQ(g1.assignment.size(), 1u);
  EXPECT_EQ(g1.assignment.begin()->first, client::steady_consumer_name(run.options, 2));
  EXPECT_EQ(g1.assignment.begin()->second.size(), 6u);
  EXPECT_GE(g1.rebalances, 2u);
  const check::Verdict v = check::check_all(
      h, run.final_state(), {.order_promised = check::OrderPromised::no, .faults = {},
                             .end_time_us = run.world().now().us(), .stall_threshold_us = 1'000'000,
                             .max_items = check::kMaxItems,
                             .skip_checked_groups = {run.options.groups.begin(), run.options.groups.end()}});
  EXPECT_EQ(v.lost.lost, 0u) << v.summary();
  // The member that stayed took the leaver's partitions from its commits.
  EXPECT_EQ(v.skips.skipped, 0u) << v.to_json()["skips"].dump();
  EXPECT_GT(v.skips.commits_checked, 0u);
  expect_paired(h);
}

TEST(Steady, SameSeedSameHistoryBytes) {
  auto once = [](uint64_t seed) {
    SteadyOptions o = two_groups();
    o.rate_per_s = 50;
    SteadyRun run(seed, o);
    run.run(Duration::seconds(20));
    EXPECT_GT(run.history.size(), 1000u);
    return run.jsonl();
  };
  const std::string a = once(21);
  const std::string b = once(21);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, once(22));
}

}  // namespace
}  // namespace kafka::testing
