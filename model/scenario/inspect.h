// Views of a cluster's state for the `describe` and `zk` commands: what
// `kafka-topics.sh --describe` and ZooKeeper's zkCli print, read straight
// from a ZooKeeper server's committed data tree.
//
//   const zk::Server* zk = freshest_server(run.world(), run.zookeepers());
//   std::cout << describe_topics(zk->tree());
//   std::cout << zk_tree(zk->tree(), "/brokers");
//   std::optional<std::string> controller = zk_get(zk->tree(), "/controller");
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "model/zk/data_tree.h"
#include "model/zk/server.h"
#include "sim/world.h"

namespace scenario {

// `kafka-topics.sh --zookeeper ... --describe` (kafka.admin.TopicCommand,
// ZookeeperTopicService.describeTopic, Kafka 2.4–2.8) over every topic under
// <chroot>/brokers/topics, sorted by name, internal topics
// (__consumer_offsets) included as kafka-topics includes them:
//   Topic: t<TAB>PartitionCount: 2<TAB>ReplicationFactor: 3<TAB>Configs: retention.ms=60000
//   <TAB>Topic: t<TAB>Partition: 0<TAB>Leader: 1<TAB>Replicas: 1,2,3<TAB>Isr: 1,2
// ZooKeeper mode has no topic ids before 2.8 and the ZooKeeper path of the
// tool never prints them, so there is no "TopicId:" field (the 2.x layout;
// 3.x with --bootstrap-server adds "TopicId: ..." after the name). Kafka 2.1
// and earlier printed the header without a space after its colons
// ("Topic:t<TAB>PartitionCount:2"); we print the later, spaced layout for
// every version profile.
// Configs are the overrides in <chroot>/config/topics/<t>, sorted by key
// (the tool prints a Properties' hash order; sorting keeps ours stable).
// ReplicationFactor is the first partition's replica count. Leader is
// "none" for -1 or a missing state znode (then Isr is empty). A topic in
// /admin/delete_topics gets "<TAB>MarkedForDeletion: true" on every line.
// A topic whose assignment does not decode prints "Topic t doesn't exist!".
// Every line ends with '\n'; no topics: "".
std::string describe_topics(const zk::DataTree& tree, const std::string& chroot = "");

// Every path under `path`, `path` itself first, depth-first in sorted child
// order, one full path per line (zkCli's `ls -R`). "" for a missing path.
std::string zk_tree(const zk::DataTree& tree, const std::string& path);

// zkCli's `get -s`: the data on the first line, then the stat:
//   cZxid = 0x100000002, ctime = 1234, mZxid, mtime, pZxid, cversion,
//   dataVersion, aclVersion, ephemeralOwner = 0x..., dataLength, numChildren.
// zkCli prints ctime/mtime as dates; ours are virtual, printed as
// milliseconds since the start of the run. nullopt for a missing path.
std::optional<std::string> zk_get(const zk::DataTree& tree, const std::string& path);

// Among the running servers of `zookeepers` (myid → process), the one with
// the highest last committed zxid; ties go to the lowest myid. nullptr when
// none runs.
const zk::Server* freshest_server(const sim::World& world, const std::map<int32_t, sim::ProcessId>& zookeepers);

}  // namespace scenario
