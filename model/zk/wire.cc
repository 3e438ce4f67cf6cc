#include "model/zk/wire.h"

#include <nlohmann/json.hpp>

namespace zk {

using nlohmann::json;

const char* to_string(PeerState s) {
  switch (s) {
    case PeerState::looking: return "LOOKING";
    case PeerState::following: return "FOLLOWING";
    case PeerState::leading: return "LEADING";
  }
  return "?";
}

bool beats(const Vote& a, const Vote& b) {
  if (a.peer_epoch != b.peer_epoch) return a.peer_epoch > b.peer_epoch;
  if (a.zxid != b.zxid) return a.zxid > b.zxid;
  return a.leader > b.leader;
}

// --- transactions as JSON records -------------------------------------------------
//
// The simulated disk holds byte strings; JSON keeps the log readable in a
// debugger and a torn (truncated) record fails to parse, which is how
// recovery tells it from a whole one.

namespace {

json sub_to_json(const SubTxn& sub) {
  return std::visit(
      [](const auto& t) -> json {
        using T = std::decay_t<decltype(t)>;
        if constexpr (std::is_same_v<T, CreateTxn>) {
          return {{"op", "create"}, {"path", t.path}, {"data", t.data}, {"owner", t.ephemeral_owner}};
        } else if constexpr (std::is_same_v<T, DeleteTxn>) {
          return {{"op", "delete"}, {"path", t.path}};
        } else if constexpr (std::is_same_v<T, SetDataTxn>) {
          return {{"op", "setData"}, {"path", t.path}, {"data", t.data}, {"version", t.version}};
        } else if constexpr (std::is_same_v<T, CheckTxn>) {
          return {{"op", "check"}, {"path", t.path}};
        } else {
          return {{"op", "error"}, {"error", static_cast<int>(t.error)}};
        }
      },
      sub);
}

SubTxn sub_from_json(const json& j) {
  const std::string op = j.at("op").get<std::string>();
  if (op == "create") {
    return CreateTxn{j.at("path"), j.at("data"), j.at("owner").get<uint64_t>()};
  }
  if (op == "delete") return DeleteTxn{j.at("path")};
  if (op == "setData") return SetDataTxn{j.at("path"), j.at("data"), j.at("version").get<int32_t>()};
  if (op == "check") return CheckTxn{j.at("path")};
  if (op == "error") return ErrorTxn{static_cast<Error>(j.at("error").get<int>())};
  throw std::invalid_argument("unknown sub-transaction " + op);
}

}  // namespace

std::string encode(const Txn& txn) {
  json j = {{"zxid", txn.zxid.value},
            {"time", txn.time_ms},
            {"session", txn.session.value},
            {"cxid", txn.cxid}};
  std::visit(
      [&j](const auto& body) {
        using T = std::decay_t<decltype(body)>;
        if constexpr (std::is_same_v<T, MultiTxn>) {
          json subs = json::array();
          for (const SubTxn& s : body.txns) subs.push_back(sub_to_json(s));
          j["body"] = {{"op", "multi"}, {"txns", subs}};
        } else if constexpr (std::is_same_v<T, CreateSessionTxn>) {
          j["body"] = {{"op", "createSession"}, {"timeout", body.timeout_ms}};
        } else if constexpr (std::is_same_v<T, CloseSessionTxn>) {
          j["body"] = {{"op", "closeSession"}};
        } else {
          j["body"] = sub_to_json(body);
        }
      },
      txn.body);
  return j.dump();
}

std::optional<Txn> decode_txn(std::string_view bytes) {
  const json j = json::parse(bytes, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  try {
    Txn txn;
    txn.zxid = Zxid{j.at("zxid").get<uint64_t>()};
    txn.time_ms = j.at("time").get<int64_t>();
    txn.session = SessionId{j.at("session").get<uint64_t>()};
    txn.cxid = j.at("cxid").get<int64_t>();
    const json& body = j.at("body");
    const std::string op = body.at("op").get<std::string>();
    if (op == "multi") {
      MultiTxn m;
      for (const json& s : body.at("txns")) m.txns.push_back(sub_from_json(s));
      txn.body = std::move(m);
    } else if (op == "createSession") {
      txn.body = CreateSessionTxn{body.at("timeout").get<int32_t>()};
    } else if (op == "closeSession") {
      txn.body = CloseSessionTxn{};
    } else {
      std::visit([&txn](auto&& s) { txn.body = std::move(s); }, sub_from_json(body));
    }
    return txn;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::string encode(const DataTree& tree) {
  json nodes = json::array();
  for (const auto& [path, node] : tree.nodes_) {
    const Stat& s = node.stat;
    nodes.push_back({{"path", path},
                     {"data", node.data},
                     {"stat",
                      {s.czxid.value, s.mzxid.value, s.pzxid.value, s.ctime_ms, s.mtime_ms,
                       s.version, s.cversion, s.aversion, s.ephemeral_owner}}});
  }
  json sessions = json::array();
  for (const auto& [id, timeout] : tree.sessions_) sessions.push_back({id.value, timeout});
  return json{{"zxid", tree.last_zxid_.value}, {"nodes", nodes}, {"sessions", sessions}}.dump();
}

std::optional<DataTree> decode_tree(std::string_view bytes) {
  const json j = json::parse(bytes, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  try {
    DataTree tree;
    tree.nodes_.clear();
    tree.last_zxid_ = Zxid{j.at("zxid").get<uint64_t>()};
    for (const json& n : j.at("nodes")) {
      DataTree::Node node;
      node.data = n.at("data").get<std::string>();
      const json& s = n.at("stat");
      node.stat.czxid = Zxid{s.at(0).get<uint64_t>()};
      node.stat.mzxid = Zxid{s.at(1).get<uint64_t>()};
      node.stat.pzxid = Zxid{s.at(2).get<uint64_t>()};
      node.stat.ctime_ms = s.at(3).get<int64_t>();
      node.stat.mtime_ms = s.at(4).get<int64_t>();
      node.stat.version = s.at(5).get<int32_t>();
      node.stat.cversion = s.at(6).get<int32_t>();
      node.stat.aversion = s.at(7).get<int32_t>();
      node.stat.ephemeral_owner = s.at(8).get<uint64_t>();
      node.stat.data_length = static_cast<int32_t>(node.data.size());
      tree.nodes_.emplace(n.at("path").get<std::string>(), std::move(node));
    }
    // Children and the ephemeral index follow from the paths.
    for (auto& [path, node] : tree.nodes_) {
      if (path == "/") continue;
      auto parent = tree.nodes_.find(DataTree::parent_of(path));
      if (parent == tree.nodes_.end()) return std::nullopt;
      parent->second.children.insert(path.substr(path.rfind('/') + 1));
      if (node.stat.ephemeral_owner != 0) {
        tree.ephemerals_[SessionId{node.stat.ephemeral_owner}].insert(path);
      }
    }
    for (auto& [path, node] : tree.nodes_) {
      node.stat.num_children = static_cast<int32_t>(node.children.size());
    }
    for (const json& s : j.at("sessions")) {
      tree.sessions_[SessionId{s.at(0).get<uint64_t>()}] = s.at(1).get<int32_t>();
    }
    return tree;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace zk
