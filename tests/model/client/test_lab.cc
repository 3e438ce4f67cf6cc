// seeds/000: a three-node lab (ZooKeeper and Kafka 2.2 on each node, RF 3,
// two partitions) with the notebook's aiokafka producer and consumer, and a
// rolling power-off of the nodes.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>

#include "kafka/cluster.h"
#include "model/client/lab.h"

namespace kafka::testing {
namespace {

using sim::Duration;

struct Lab {
  static sim::NetworkOptions lan() {
    sim::NetworkOptions n;
    // VirtualBox host-only network: one L2 segment, "No route to host" for
    // a powered-off node (the notebook's "[Errno 113] Connect call failed").
    n.host_unreachable_after = Duration::seconds(3);
    return n;
  }
  explicit Lab(uint64_t seed)
      : cluster({.zookeepers = 3, .brokers = 3, .seed = seed, .version = VersionProfile::v2_2,
                 .colocated = true, .boot_delay = Duration::seconds(20), .network = lan(),
                 // provision_kafka.sh: initLimit=5, syncLimit=2, tickTime=2000
                 .zk_init_limit = 5, .zk_sync_limit = 2}) {
    cluster.start();
    EXPECT_TRUE(cluster.await_ready());
    EXPECT_EQ(cluster.create_topic("mytopic", 2, 3), ErrorCode::none);
    const sim::HostId control = cluster.world().add_host("control", "10.0.9.2");
    client::ProducerConfig pc = client::lab_producer_defaults();
    client::ConsumerConfig cc = client::lab_consumer_defaults();
    for (int i = 1; i <= 3; ++i) {
      pc.bootstrap.push_back({fmt::format("10.0.0.{}", i), 9092});
      cc.bootstrap.push_back({fmt::format("10.0.0.{}", i), 9092});
    }
    consumer = cluster.world().add_process(control, "consumer", [this, cc] {
      return std::make_unique<client::LabConsumer>(cc, client::LabOptions{}, &history);
    });
    producer = cluster.world().add_process(control, "producer", [this, pc] {
      return std::make_unique<client::LabProducer>(pc, client::LabOptions{}, &history);
    });
    cluster.world().start(consumer);
    cluster.run_for(Duration::seconds(2));
    cluster.world().start(producer);
  }
  client::LabProducer* lab_producer() { return cluster.world().process_as<client::LabProducer>(producer); }
  client::LabConsumer* lab_consumer() { return cluster.world().process_as<client::LabConsumer>(consumer); }
  sim::HostId node(int i) { return cluster.world().host_of(cluster.zk_process(i)); }

  // The longest gap between two successive ops of `f` with type ok by
  // `process`, within [from, to].
  Duration longest_gap(const std::string& process, check::OpFunction f, sim::Time from, sim::Time to) {
    int64_t last = from.us();
    int64_t longest = 0;
    const uint32_t id = history.process(process);
    for (const check::Op& op : history.ops()) {
      if (op.process != id || op.type != check::OpType::ok || op.f != f) continue;
      if (op.time_us < from.us() || op.time_us > to.us()) continue;
      longest = std::max(longest, op.time_us - last);
      last = op.time_us;
    }
    longest = std::max(longest, to.us() - last);
    return Duration::micros(longest);
  }

  check::History history;
  Cluster cluster;
  sim::ProcessId consumer, producer;
};

TEST(LabSeed000, RollingPowerOffStallsBrieflyAndLosesNothing) {
  Lab lab(1);
  lab.cluster.run_for(Duration::seconds(30));
  ASSERT_GT(lab.lab_producer()->acknowledged(), 1000u);
  int stalled_nodes = 0;
  for (int n = 1; n <= 3; ++n) {
    const sim::Time off = lab.cluster.world().now();
    lab.cluster.world().power_off(lab.node(n));
    lab.cluster.run_for(Duration::seconds(60));
    const Duration producer_stall = lab.longest_gap("producer", check::OpFunction::send, off,
                                                    lab.cluster.world().now());
    const Duration consumer_stall = lab.longest_gap("consumer", check::OpFunction::poll, off,
                                                    lab.cluster.world().now());
    // "After a Kafka node is powered off there were small delays (5-20
    // seconds) on both consumer and producer sides": every stall there is
    // lasts 5-20 s. (A node that leads no partition at that moment stalls
    // nobody: with two partitions on three nodes one node leads none.)
    for (const Duration stall : {producer_stall, consumer_stall}) {
      if (stall < Duration::seconds(1)) continue;
      EXPECT_GE(stall, Duration::seconds(5)) << "node" << n;
      EXPECT_LE(stall, Duration::seconds(20)) << "node" << n;
    }
    stalled_nodes += producer_stall >= Duration::seconds(5) ? 1 : 0;
    lab.cluster.world().power_on(lab.node(n));
    lab.cluster.run_for(Duration::seconds(90));
    ASSERT_TRUE(lab.cluster.world().is_running(lab.producer)) << "the producer survived node" << n;
  }
  EXPECT_GE(stalled_nodes, 2) << "the producer stalls when a leader goes";
  lab.cluster.run_for(Duration::seconds(10));
  // As the author saw on this run: nothing missing, nothing twice.
  EXPECT_TRUE(lab.lab_consumer()->missing().empty()) << lab.lab_consumer()->status_line();
  EXPECT_TRUE(lab.lab_consumer()->multiple().empty()) << lab.lab_consumer()->status_line();
}

// "Now let's fuck up the cluster: kill 2 nodes out of 3": ZooKeeper loses
// its quorum, the producer gives up after its five tries and the consumer
// stalls; once the nodes are back, restarted clients work again.
TEST(LabSeed000, TwoOfThreeNodesOffStopsTheClientsUntilTheyAreRestarted) {
  Lab lab(1);
  lab.cluster.run_for(Duration::seconds(30));
  ASSERT_GT(lab.lab_producer()->acknowledged(), 1000u);
  // As in the notebook, node3 was the last one restarted: it has just come
  // back as a follower of both partitions and leads nothing yet.
  lab.cluster.world().power_off(lab.node(3));
  lab.cluster.run_for(Duration::seconds(60));
  lab.cluster.world().power_on(lab.node(3));
  lab.cluster.run_for(Duration::seconds(60));
  ASSERT_TRUE(lab.cluster.world().is_running(lab.producer));
  for (int p = 0; p < 2; ++p) ASSERT_NE(lab.cluster.state({"mytopic", p})->leader, 3);
  lab.cluster.world().power_off(lab.node(1));
  lab.cluster.world().power_off(lab.node(2));
  lab.cluster.run_for(Duration::seconds(180));
  EXPECT_FALSE(lab.cluster.world().is_running(lab.producer)) << "the producer gave up";
  const uint64_t seen = lab.lab_consumer()->received();
  lab.cluster.run_for(Duration::seconds(60));
  EXPECT_EQ(lab.lab_consumer()->received(), seen) << "the consumer stalls";
  lab.cluster.world().power_on(lab.node(1));
  lab.cluster.world().power_on(lab.node(2));
  lab.cluster.run_for(Duration::seconds(90));
  // Restart both scripts.
  lab.cluster.world().kill(lab.consumer);
  lab.cluster.world().start(lab.consumer);
  lab.cluster.run_for(Duration::seconds(2));
  lab.cluster.world().start(lab.producer);
  lab.cluster.run_for(Duration::seconds(60));
  EXPECT_GT(lab.lab_producer()->acknowledged(), 1000u) << "traffic flows again";
  EXPECT_GT(lab.lab_consumer()->received(), 1000u);
}

}  // namespace
}  // namespace kafka::testing
