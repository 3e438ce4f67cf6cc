#include "model/zk/data_tree.h"

#include <fmt/format.h>

#include "model/overloaded.h"

#include "sim/assert.h"

namespace zk {
namespace {

using model::Overloaded;

std::string name_of(const std::string& path) { return path.substr(path.rfind('/') + 1); }

}  // namespace

std::string to_string(Zxid z) { return fmt::format("0x{:x}", z.value); }

const char* to_string(Error e) {
  switch (e) {
    case Error::ok: return "OK";
    case Error::no_node: return "NONODE";
    case Error::node_exists: return "NODEEXISTS";
    case Error::bad_version: return "BADVERSION";
    case Error::not_empty: return "NOTEMPTY";
    case Error::no_children_for_ephemerals: return "NOCHILDRENFOREPHEMERALS";
    case Error::bad_arguments: return "BADARGUMENTS";
    case Error::runtime_inconsistency: return "RUNTIMEINCONSISTENCY";
    case Error::connection_loss: return "CONNECTIONLOSS";
    case Error::session_expired: return "SESSIONEXPIRED";
    case Error::session_moved: return "SESSIONMOVED";
    case Error::operation_timeout: return "OPERATIONTIMEOUT";
  }
  return "?";
}

const char* to_string(EventType t) {
  switch (t) {
    case EventType::node_created: return "NodeCreated";
    case EventType::node_deleted: return "NodeDeleted";
    case EventType::node_data_changed: return "NodeDataChanged";
    case EventType::node_children_changed: return "NodeChildrenChanged";
  }
  return "?";
}

DataTree::DataTree() {
  nodes_["/"] = Node{};
  // ZooKeeper's tree always holds /zookeeper (quota and config live there).
  Node zookeeper;
  nodes_["/zookeeper"] = zookeeper;
  nodes_["/"].children.insert("zookeeper");
  nodes_["/"].stat.num_children = 1;
}

bool DataTree::valid_path(const std::string& path) {
  if (path.empty() || path[0] != '/') return false;
  if (path == "/") return true;
  if (path.back() == '/') return false;
  size_t start = 1;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    const std::string part = path.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    for (const char c : part) {
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return false;
    }
    start = end + 1;
  }
  return true;
}

std::string DataTree::parent_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == 0 ? "/" : path.substr(0, slash);
}

const DataTree::Node* DataTree::find(const std::string& path) const {
  auto it = nodes_.find(path);
  return it == nodes_.end() ? nullptr : &it->second;
}

std::optional<std::vector<std::string>> DataTree::children(const std::string& path) const {
  const Node* n = find(path);
  if (n == nullptr) return std::nullopt;
  return std::vector<std::string>(n->children.begin(), n->children.end());
}

std::vector<std::string> DataTree::ephemerals(SessionId session) const {
  auto it = ephemerals_.find(session);
  if (it == ephemerals_.end()) return {};
  return std::vector<std::string>(it->second.begin(), it->second.end());
}

std::vector<std::string> DataTree::paths() const {
  std::vector<std::string> out;
  out.reserve(nodes_.size());
  for (const auto& [path, node] : nodes_) out.push_back(path);
  return out;
}

// --- prepare -------------------------------------------------------------------

TxnBody DataTree::prepare(const CreateOp& op, SessionId session) const {
  if (!valid_path(op.path) || op.path == "/") return ErrorTxn{Error::bad_arguments};
  if (is_ephemeral(op.mode) && !session) return ErrorTxn{Error::bad_arguments};
  const Node* parent = find(parent_of(op.path));
  if (parent == nullptr) return ErrorTxn{Error::no_node};
  if (parent->stat.ephemeral_owner != 0) return ErrorTxn{Error::no_children_for_ephemerals};
  std::string path = op.path;
  // ZooKeeper names a sequential node after its parent's stored cversion, ten
  // digits. It stores the number of child creations and shows clients
  // creations + deletions (DataNode.copyStat: 2 x stored - children), which
  // is what stat.cversion holds here; the stored count is recovered as
  // (cversion + children) / 2. (The root, holding /zookeeper without having
  // created it, shows one more than ZooKeeper's -1-based value; the division
  // rounds that away.)
  if (is_sequential(op.mode)) {
    const int32_t creations = (parent->stat.cversion + parent->stat.num_children) / 2;
    path += fmt::format("{:010d}", creations);
  }
  if (find(path) != nullptr) return ErrorTxn{Error::node_exists};
  return CreateTxn{path, op.data, is_ephemeral(op.mode) ? session.value : 0};
}

TxnBody DataTree::prepare(const DeleteOp& op) const {
  if (!valid_path(op.path) || op.path == "/" || op.path == "/zookeeper") {
    return ErrorTxn{Error::bad_arguments};
  }
  const Node* n = find(op.path);
  if (n == nullptr) return ErrorTxn{Error::no_node};
  if (op.version != -1 && op.version != n->stat.version) return ErrorTxn{Error::bad_version};
  if (!n->children.empty()) return ErrorTxn{Error::not_empty};
  return DeleteTxn{op.path};
}

TxnBody DataTree::prepare(const SetDataOp& op) const {
  if (!valid_path(op.path)) return ErrorTxn{Error::bad_arguments};
  const Node* n = find(op.path);
  if (n == nullptr) return ErrorTxn{Error::no_node};
  if (op.version != -1 && op.version != n->stat.version) return ErrorTxn{Error::bad_version};
  return SetDataTxn{op.path, op.data, n->stat.version + 1};
}

TxnBody DataTree::prepare(const CheckOp& op) const {
  if (!valid_path(op.path)) return ErrorTxn{Error::bad_arguments};
  const Node* n = find(op.path);
  if (n == nullptr) return ErrorTxn{Error::no_node};
  if (op.version != -1 && op.version != n->stat.version) return ErrorTxn{Error::bad_version};
  return CheckTxn{op.path};
}

TxnBody DataTree::prepare(const MultiOp& op, SessionId session) const {
  // Each op is checked against the tree as the earlier ops leave it, so work
  // on a scratch copy (Kafka's trees are small; multis are short).
  DataTree scratch = *this;
  MultiTxn multi;
  Txn probe;
  probe.session = session;
  probe.zxid = Zxid{last_zxid_.value};
  for (size_t i = 0; i < op.ops.size(); ++i) {
    const TxnBody body = std::visit(
        Overloaded{[&](const CreateOp& o) { return scratch.prepare(o, session); },
                   [&](const DeleteOp& o) { return scratch.prepare(o); },
                   [&](const SetDataOp& o) { return scratch.prepare(o); },
                   [&](const CheckOp& o) { return scratch.prepare(o); }},
        op.ops[i]);
    if (const auto* error = std::get_if<ErrorTxn>(&body)) {
      // As ZooKeeper reports a failed multi: OK for the ops before the one
      // that failed, its own error for it, RUNTIMEINCONSISTENCY after it.
      MultiTxn failed;
      for (size_t j = 0; j < op.ops.size(); ++j) {
        const Error e = j < i ? Error::ok : j == i ? error->error : Error::runtime_inconsistency;
        failed.txns.emplace_back(std::in_place_type<ErrorTxn>, e);
      }
      return failed;
    }
    SubTxn sub;
    if (const auto* c = std::get_if<CreateTxn>(&body)) {
      sub = *c;
    } else if (const auto* d = std::get_if<DeleteTxn>(&body)) {
      sub = *d;
    } else if (const auto* sd = std::get_if<SetDataTxn>(&body)) {
      sub = *sd;
    } else if (const auto* ck = std::get_if<CheckTxn>(&body)) {
      sub = *ck;
    }
    ++probe.zxid.value;
    scratch.apply_sub(sub, probe);
    multi.txns.push_back(std::move(sub));
  }
  return multi;
}

// --- apply -----------------------------------------------------------------------

ApplyResult DataTree::apply_sub(const SubTxn& sub, const Txn& outer) {
  ApplyResult r;
  const Zxid zxid = outer.zxid;
  std::visit(
      Overloaded{
          [&](const CreateTxn& t) {
            auto parent_it = nodes_.find(parent_of(t.path));
            if (parent_it == nodes_.end()) {
              r.error = Error::no_node;
              return;
            }
            if (nodes_.count(t.path) != 0) {
              r.error = Error::node_exists;
              return;
            }
            Node n;
            n.data = t.data;
            n.stat.czxid = n.stat.mzxid = n.stat.pzxid = zxid;
            n.stat.ctime_ms = n.stat.mtime_ms = outer.time_ms;
            n.stat.ephemeral_owner = t.ephemeral_owner;
            n.stat.data_length = static_cast<int32_t>(t.data.size());
            nodes_.emplace(t.path, std::move(n));
            Node& parent = nodes_.at(parent_of(t.path));
            parent.children.insert(name_of(t.path));
            parent.stat.cversion += 1;
            parent.stat.pzxid = zxid;
            parent.stat.num_children = static_cast<int32_t>(parent.children.size());
            if (t.ephemeral_owner != 0) ephemerals_[SessionId{t.ephemeral_owner}].insert(t.path);
            r.path = t.path;
            r.triggers.push_back({EventType::node_created, t.path});
            r.triggers.push_back({EventType::node_children_changed, parent_of(t.path)});
          },
          [&](const DeleteTxn& t) {
            auto it = nodes_.find(t.path);
            if (it == nodes_.end()) {
              r.error = Error::no_node;
              return;
            }
            if (it->second.stat.ephemeral_owner != 0) {
              const SessionId owner{it->second.stat.ephemeral_owner};
              auto eph = ephemerals_.find(owner);
              if (eph != ephemerals_.end()) {
                eph->second.erase(t.path);
                if (eph->second.empty()) ephemerals_.erase(eph);
              }
            }
            nodes_.erase(it);
            Node& parent = nodes_.at(parent_of(t.path));
            parent.children.erase(name_of(t.path));
            parent.stat.cversion += 1;
            parent.stat.pzxid = zxid;
            parent.stat.num_children = static_cast<int32_t>(parent.children.size());
            r.triggers.push_back({EventType::node_deleted, t.path});
            r.triggers.push_back({EventType::node_children_changed, parent_of(t.path)});
          },
          [&](const SetDataTxn& t) {
            auto it = nodes_.find(t.path);
            if (it == nodes_.end()) {
              r.error = Error::no_node;
              return;
            }
            Stat& s = it->second.stat;
            it->second.data = t.data;
            s.version = t.version;
            s.mzxid = zxid;
            s.mtime_ms = outer.time_ms;
            s.data_length = static_cast<int32_t>(t.data.size());
            r.stat = s;
            r.triggers.push_back({EventType::node_data_changed, t.path});
          },
          [&](const CheckTxn&) {},
          [&](const ErrorTxn& t) { r.error = t.error; },
      },
      sub);
  return r;
}

ApplyResult DataTree::apply(const Txn& txn) {
  SIM_ASSERT(txn.zxid > last_zxid_, "zxid {} applied after {}", to_string(txn.zxid),
             to_string(last_zxid_));
  last_zxid_ = txn.zxid;
  ApplyResult result;
  std::visit(
      Overloaded{
          [&](const MultiTxn& m) {
            bool failed = false;
            for (const SubTxn& s : m.txns) failed |= std::holds_alternative<ErrorTxn>(s);
            if (failed) {
              for (const SubTxn& s : m.txns) {
                const Error e = std::get<ErrorTxn>(s).error;
                result.multi_errors.push_back(e);
                result.multi_paths.emplace_back();
                if (result.error == Error::ok && e != Error::runtime_inconsistency) result.error = e;
              }
              return;
            }
            for (const SubTxn& s : m.txns) {
              ApplyResult r = apply_sub(s, txn);
              result.multi_errors.push_back(r.error);
              result.multi_paths.push_back(r.path);
              for (WatchTrigger& w : r.triggers) result.triggers.push_back(std::move(w));
            }
          },
          [&](const CreateSessionTxn& t) { sessions_[txn.session] = t.timeout_ms; },
          [&](const CloseSessionTxn&) {
            // The session's ephemerals go, in path order, then the session.
            for (const std::string& path : ephemerals(txn.session)) {
              ApplyResult r = apply_sub(DeleteTxn{path}, txn);
              for (WatchTrigger& w : r.triggers) result.triggers.push_back(std::move(w));
            }
            sessions_.erase(txn.session);
          },
          [&](const CreateTxn& t) { result = apply_sub(t, txn); },
          [&](const DeleteTxn& t) { result = apply_sub(t, txn); },
          [&](const SetDataTxn& t) { result = apply_sub(t, txn); },
          [&](const CheckTxn& t) { result = apply_sub(t, txn); },
          [&](const ErrorTxn& t) { result = apply_sub(t, txn); },
      },
      txn.body);
  return result;
}

uint64_t DataTree::digest() const {
  uint64_t h = 0xcbf29ce484222325ULL;
  auto mix = [&h](std::string_view bytes) {
    for (const char c : bytes) {
      h ^= static_cast<unsigned char>(c);
      h *= 0x100000001b3ULL;
    }
    h ^= 0xff;
    h *= 0x100000001b3ULL;
  };
  for (const auto& [path, node] : nodes_) {
    const Stat& s = node.stat;
    mix(path);
    mix(node.data);
    mix(fmt::format("{} {} {} {} {} {} {} {} {}", s.czxid.value, s.mzxid.value, s.pzxid.value,
                    s.ctime_ms, s.mtime_ms, s.version, s.cversion, s.ephemeral_owner,
                    s.num_children));
  }
  for (const auto& [session, timeout] : sessions_) {
    mix(fmt::format("session {} {}", session.value, timeout));
  }
  return h;
}

}  // namespace zk
