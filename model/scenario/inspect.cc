// kafka-topics --describe and zkCli views of a ZooKeeper data tree (inspect.h).
#include "model/scenario/inspect.h"

#include <fmt/format.h>

#include "model/kafka/znodes.h"

namespace scenario {

namespace {

std::string join_ids(const std::vector<kafka::BrokerId>& ids) {
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) out += ',';
    out += std::to_string(ids[i]);
  }
  return out;
}

std::string child_path(const std::string& parent, const std::string& name) {
  return parent == "/" ? "/" + name : parent + "/" + name;
}

void walk(const zk::DataTree& tree, const std::string& path, std::string& out) {
  const zk::DataTree::Node* node = tree.find(path);
  if (node == nullptr) return;
  out += path;
  out += '\n';
  for (const std::string& child : node->children) walk(tree, child_path(path, child), out);  // std::set: sorted
}

}  // namespace

std::string describe_topics(const zk::DataTree& tree, const std::string& chroot) {
  std::string out;
  const zk::DataTree::Node* topics = tree.find(chroot + kafka::znodes::kBrokerTopics);
  if (topics == nullptr) return out;
  for (const std::string& topic : topics->children) {  // sorted, internal topics included
    const zk::DataTree::Node* t = tree.find(chroot + kafka::znodes::topic_path(topic));
    const std::optional<kafka::znodes::Assignment> assignment =
        t == nullptr ? std::nullopt : kafka::znodes::decode_assignment(t->data);
    if (!assignment || assignment->empty()) {
      out += fmt::format("Topic {} doesn't exist!\n", topic);
      continue;
    }
    const bool deleting = tree.find(chroot + kafka::znodes::kAdminDeleteTopics + "/" + topic) != nullptr;
    const char* const deletion = deleting ? "\tMarkedForDeletion: true" : "";

    std::string configs;
    if (const zk::DataTree::Node* c = tree.find(chroot + kafka::znodes::topic_config_path(topic))) {
      if (auto decoded = kafka::znodes::decode_topic_config(c->data)) {
        for (const auto& [k, v] : *decoded) {  // std::map: sorted by key
          if (!configs.empty()) configs += ',';
          configs += k + "=" + v;
        }
      }
    }
    out += fmt::format("Topic: {}\tPartitionCount: {}\tReplicationFactor: {}\tConfigs: {}{}\n", topic,
                       assignment->size(), assignment->begin()->second.size(), configs, deletion);

    for (const auto& [partition, replicas] : *assignment) {  // sorted by partition
      std::optional<kafka::znodes::LeaderAndIsr> state;
      const kafka::TopicPartition tp{topic, partition};
      if (const zk::DataTree::Node* s = tree.find(chroot + kafka::znodes::partition_state_path(tp))) {
        state = kafka::znodes::decode_partition_state(s->data);
      }
      const std::string leader =
          state && state->leader != kafka::kNoBroker ? std::to_string(state->leader) : std::string("none");
      out += fmt::format("\tTopic: {}\tPartition: {}\tLeader: {}\tReplicas: {}\tIsr: {}{}\n", topic, partition,
                         leader, join_ids(replicas), state ? join_ids(state->isr) : std::string(), deletion);
    }
  }
  return out;
}

std::string zk_tree(const zk::DataTree& tree, const std::string& path) {
  std::string out;
  walk(tree, path, out);
  return out;
}

std::optional<std::string> zk_get(const zk::DataTree& tree, const std::string& path) {
  const zk::DataTree::Node* node = tree.find(path);
  if (node == nullptr) return std::nullopt;
  const zk::Stat& s = node->stat;
  // ctime and mtime: virtual milliseconds since the start of the run (zkCli
  // prints wall-clock dates).
  return fmt::format(
      "{}\n"
      "cZxid = {}\n"
      "ctime = {}\n"
      "mZxid = {}\n"
      "mtime = {}\n"
      "pZxid = {}\n"
      "cversion = {}\n"
      "dataVersion = {}\n"
      "aclVersion = {}\n"
      "ephemeralOwner = 0x{:x}\n"
      "dataLength = {}\n"
      "numChildren = {}\n",
      node->data, zk::to_string(s.czxid), s.ctime_ms, zk::to_string(s.mzxid), s.mtime_ms, zk::to_string(s.pzxid),
      s.cversion, s.version, s.aversion, s.ephemeral_owner, s.data_length, s.num_children);
}

const zk::Server* freshest_server(const sim::World& world, const std::map<int32_t, sim::ProcessId>& zookeepers) {
  const zk::Server* best = nullptr;
  for (const auto& [id, process] : zookeepers) {  // by myid: a tie keeps the lowest
    const zk::Server* s = world.process_as<zk::Server>(process);  // null unless running
    if (s == nullptr) continue;
    if (best == nullptr || s->last_committed() > best->last_committed()) best = s;
  }
  return best;
}

}  // namespace scenario
