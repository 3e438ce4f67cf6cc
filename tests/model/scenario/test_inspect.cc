// The `describe` and `zk` views (model/scenario/inspect.h): exact lines over
// a data tree built by hand, and over a running cluster after a broker dies.
#include "model/scenario/inspect.h"

#include <gtest/gtest.h>

#include "kafka/cluster.h"
#include "model/kafka/znodes.h"

namespace scenario {
namespace {

using kafka::BrokerId;
namespace znodes = kafka::znodes;

// A data tree written transaction by transaction, as a server applies them.
class TreeBuilder {
 public:
  void create(const std::string& path, const std::string& data = "", int64_t time_ms = 0, uint64_t owner = 0) {
    zk::Txn t;
    t.zxid = zk::Zxid::make(1, ++counter_);
    t.time_ms = time_ms;
    t.body = zk::CreateTxn{path, data, owner};
    ASSERT_EQ(tree.apply(t).error, zk::Error::ok) << path;
  }
  void session(uint64_t id) {
    zk::Txn t;
    t.zxid = zk::Zxid::make(1, ++counter_);
    t.session = zk::SessionId{id};
    t.body = zk::CreateSessionTxn{6000};
    ASSERT_EQ(tree.apply(t).error, zk::Error::ok);
  }
  zk::DataTree tree;

 private:
  uint32_t counter_ = 0;
};

znodes::LeaderAndIsr state(BrokerId leader, std::vector<BrokerId> isr) {
  return {leader, kafka::LeaderEpoch{0}, std::move(isr), kafka::ControllerEpoch{1}};
}

TEST(ScenarioInspect, DescribeListsTopicsSortedWithConfigsLeadersAndIsr) {
  TreeBuilder b;
  for (const char* p : {"/kafka", "/kafka/brokers", "/kafka/brokers/topics", "/kafka/config", "/kafka/config/topics",
                        "/kafka/admin", "/kafka/admin/delete_topics"}) {
    b.create(p);
  }
  b.create("/kafka/brokers/topics/t", znodes::encode_assignment({{0, {1, 2, 3}}, {1, {2, 3, 1}}}));
  b.create("/kafka/brokers/topics/t/partitions");
  b.create("/kafka/brokers/topics/t/partitions/0");
  b.create("/kafka/brokers/topics/t/partitions/0/state", znodes::encode_partition_state(state(2, {2, 3})));
  b.create("/kafka/brokers/topics/t/partitions/1");
  b.create("/kafka/brokers/topics/t/partitions/1/state", znodes::encode_partition_state(state(-1, {3})));
  b.create("/kafka/config/topics/t", znodes::encode_topic_config({{"retention.ms", "60000"}, {"cleanup.policy", "delete"}}));
  // An internal topic: listed, and before "t" ('_' sorts before lowercase letters).
  b.create("/kafka/brokers/topics/__consumer_offsets", znodes::encode_assignment({{0, {3}}}));
  b.create("/kafka/brokers/topics/__consumer_offsets/partitions");
  b.create("/kafka/brokers/topics/__consumer_offsets/partitions/0");
  b.create("/kafka/brokers/topics/__consumer_offsets/partitions/0/state",
           znodes::encode_partition_state(state(3, {3})));
  b.create("/kafka/config/topics/__consumer_offsets", znodes::encode_topic_config({{"cleanup.policy", "compact"}}));
  // A topic whose partitions have no state yet, marked for deletion.
  b.create("/kafka/brokers/topics/u", znodes::encode_assignment({{0, {1, 2}}}));
  b.create("/kafka/admin/delete_topics/u");

  EXPECT_EQ(describe_topics(b.tree, "/kafka"),
            "Topic: __consumer_offsets\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: cleanup.policy=compact\n"
            "\tTopic: __consumer_offsets\tPartition: 0\tLeader: 3\tReplicas: 3\tIsr: 3\n"
            "Topic: t\tPartitionCount: 2\tReplicationFactor: 3\tConfigs: cleanup.policy=delete,retention.ms=60000\n"
            "\tTopic: t\tPartition: 0\tLeader: 2\tReplicas: 1,2,3\tIsr: 2,3\n"
            "\tTopic: t\tPartition: 1\tLeader: none\tReplicas: 2,3,1\tIsr: 3\n"
            "Topic: u\tPartitionCount: 1\tReplicationFactor: 2\tConfigs: \tMarkedForDeletion: true\n"
            "\tTopic: u\tPartition: 0\tLeader: none\tReplicas: 1,2\tIsr: \tMarkedForDeletion: true\n");
  // Without the chroot there are no topics; a tree without /brokers/topics describes nothing.
  EXPECT_EQ(describe_topics(b.tree), "");
  EXPECT_EQ(describe_topics(zk::DataTree()), "");
}

TEST(ScenarioInspect, ZkTreeIsDepthFirstInSortedOrder) {
  TreeBuilder b;
  b.create("/b");
  b.create("/a");
  b.create("/a/y");
  b.create("/a/x");
  b.create("/a/x/1");
  EXPECT_EQ(zk_tree(b.tree, "/"), "/\n/a\n/a/x\n/a/x/1\n/a/y\n/b\n/zookeeper\n");
  EXPECT_EQ(zk_tree(b.tree, "/a/x"), "/a/x\n/a/x/1\n");
  EXPECT_EQ(zk_tree(b.tree, "/nope"), "");
}

TEST(ScenarioInspect, ZkGetPrintsDataAndStat) {
  TreeBuilder b;
  b.create("/p", "hello", 1500);                    // zxid 0x100000001
  b.session(0x1234);                                // 0x100000002
  b.create("/p/e", "{\"x\":1}", 2500, 0x1234);      // 0x100000003
  EXPECT_EQ(zk_get(b.tree, "/p"),
            "hello\n"
            "cZxid = 0x100000001\n"
            "ctime = 1500\n"
            "mZxid = 0x100000001\n"
            "mtime = 1500\n"
            "pZxid = 0x100000003\n"
            "cversion = 1\n"
            "dataVersion = 0\n"
            "aclVersion = 0\n"
            "ephemeralOwner = 0x0\n"
            "dataLength = 5\n"
            "numChildren = 1\n");
  EXPECT_EQ(zk_get(b.tree, "/p/e"),
            "{\"x\":1}\n"
            "cZxid = 0x100000003\n"
            "ctime = 2500\n"
            "mZxid = 0x100000003\n"
            "mtime = 2500\n"
            "pZxid = 0x100000003\n"
            "cversion = 0\n"
            "dataVersion = 0\n"
            "aclVersion = 0\n"
            "ephemeralOwner = 0x1234\n"
            "dataLength = 7\n"
            "numChildren = 0\n");
  EXPECT_EQ(zk_get(b.tree, "/p/missing"), std::nullopt);
}

// Splits text into lines (without the '\n').
std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    out.push_back(text.substr(start, end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

TEST(ScenarioInspect, ARunningClusterAfterABrokerDies) {
  kafka::testing::ClusterOptions o;
  o.zookeepers = 3;
  o.brokers = 3;
  kafka::testing::Cluster c(o);
  c.start();
  ASSERT_TRUE(c.await_ready());
  const BrokerId victim = kafka::testing::non_controller(c);
  std::vector<BrokerId> rest;
  for (BrokerId id : {1, 2, 3}) {
    if (id != victim) rest.push_back(id);
  }
  const BrokerId a = rest[0], b = rest[1];
  ASSERT_EQ(c.create_topic("t", 2, 3, {{"retention.ms", "60000"}}, {{0, {victim, a, b}}, {1, {a, victim, b}}}),
            kafka::ErrorCode::none);
  c.run_for(sim::Duration::seconds(5));

  std::map<int32_t, sim::ProcessId> zks;
  for (int i = 1; i <= 3; ++i) zks[i] = c.zk_process(i);
  const zk::Server* zk = freshest_server(c.world(), zks);
  ASSERT_NE(zk, nullptr);
  EXPECT_EQ(zk_tree(zk->tree(), "/brokers/ids"), "/brokers/ids\n/brokers/ids/1\n/brokers/ids/2\n/brokers/ids/3\n");
  const std::string header = "Topic: t\tPartitionCount: 2\tReplicationFactor: 3\tConfigs: retention.ms=60000";
  const std::string replicas0 = fmt::format("{},{},{}", victim, a, b);
  const std::string replicas1 = fmt::format("{},{},{}", a, victim, b);
  EXPECT_EQ(lines(describe_topics(zk->tree())),
            (std::vector<std::string>{
                header,
                fmt::format("\tTopic: t\tPartition: 0\tLeader: {}\tReplicas: {}\tIsr: {}", victim, replicas0, replicas0),
                fmt::format("\tTopic: t\tPartition: 1\tLeader: {}\tReplicas: {}\tIsr: {}", a, replicas1, replicas1)}));

  // The broker dies; once its session expires the controller moves
  // partition 0's leadership to the next live replica in the ISR and drops it
  // from both ISRs.
  c.kill_broker(victim);
  c.run_for(sim::Duration::seconds(40));
  zk = freshest_server(c.world(), zks);
  ASSERT_NE(zk, nullptr);
  EXPECT_EQ(lines(describe_topics(zk->tree())),
            (std::vector<std::string>{
                header, fmt::format("\tTopic: t\tPartition: 0\tLeader: {}\tReplicas: {}\tIsr: {},{}", a, replicas0, a, b),
                fmt::format("\tTopic: t\tPartition: 1\tLeader: {}\tReplicas: {}\tIsr: {},{}", a, replicas1, a, b)}));
  EXPECT_EQ(zk_tree(zk->tree(), "/brokers/ids"),
            fmt::format("/brokers/ids\n/brokers/ids/{}\n/brokers/ids/{}\n", a, b));

  // /controller: the JSON a controller writes, an ephemeral without children.
  const std::optional<std::string> controller = zk_get(zk->tree(), "/controller");
  ASSERT_TRUE(controller.has_value());
  const std::vector<std::string> got = lines(*controller);
  ASSERT_EQ(got.size(), 12u);
  EXPECT_EQ(znodes::decode_controller(got[0]), c.controller());
  EXPECT_NE(got[0].find("\"brokerid\":"), std::string::npos);
  EXPECT_EQ(got[10], fmt::format("dataLength = {}", got[0].size()));
  EXPECT_EQ(got[11], "numChildren = 0");
  EXPECT_NE(got[9], "ephemeralOwner = 0x0");
  EXPECT_EQ(zk_get(zk->tree(), "/controller/nope"), std::nullopt);
  EXPECT_EQ(zk_get(zk->tree(), "/no/such/path"), std::nullopt);
}

TEST(ScenarioInspect, FreshestServerIsTheRunningOneWithTheHighestZxid) {
  kafka::testing::ClusterOptions o;
  o.zookeepers = 3;
  o.brokers = 1;
  kafka::testing::Cluster c(o);
  c.start();
  ASSERT_TRUE(c.await_ready());
  c.run_for(sim::Duration::seconds(5));
  std::map<int32_t, sim::ProcessId> zks;
  for (int i = 1; i <= 3; ++i) zks[i] = c.zk_process(i);
  auto server = [&](int i) { return c.world().process_as<zk::Server>(zks.at(i)); };
  // Quiet: every server has committed the same; the tie goes to the lowest id.
  ASSERT_EQ(server(1)->last_committed(), server(2)->last_committed());
  ASSERT_EQ(server(2)->last_committed(), server(3)->last_committed());
  EXPECT_EQ(freshest_server(c.world(), zks), server(1));

  // zk1 stops and the broker dies: its session expires and the two others
  // commit the closeSession (and the ephemerals' deletes) without zk1.
  c.world().kill(zks.at(1));
  EXPECT_EQ(freshest_server(c.world(), zks), server(2));
  c.kill_broker(1);
  c.run_for(sim::Duration::seconds(40));
  // zk1 is back with its older tree: running, but not the freshest.
  c.world().start(zks.at(1));
  ASSERT_NE(server(1), nullptr);
  ASSERT_LT(server(1)->last_committed(), server(2)->last_committed());
  EXPECT_EQ(freshest_server(c.world(), zks), server(2));
  c.world().kill(zks.at(2));
  c.world().kill(zks.at(3));
  EXPECT_EQ(freshest_server(c.world(), zks), server(1));
  c.world().kill(zks.at(1));
  EXPECT_EQ(freshest_server(c.world(), zks), nullptr);
}

}  // namespace
}  // namespace scenario
