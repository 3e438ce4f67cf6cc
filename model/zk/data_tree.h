// ZooKeeper's data tree: znodes with data, stat and children, ephemerals per
// session, and the sessions themselves (ZooKeeper keeps them next to the tree
// and replicates them through createSession / closeSession transactions).
//
// Two steps, as in ZooKeeper's PrepRequestProcessor and FinalRequestProcessor:
//   prepare  — the leader checks a request against the tree as it will be once
//              every proposal so far commits (its "future" tree) and turns it
//              into a transaction; a request that fails a check becomes an
//              ErrorTxn, which is still ordered, logged and committed;
//   apply    — every server applies committed transactions in zxid order and
//              gets the result for the client and the watches to fire.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "model/zk/types.h"

namespace zk {

struct ApplyResult {
  Error error = Error::ok;
  std::string path;                 // create: the path created
  Stat stat;                        // setData: the new stat
  std::vector<Error> multi_errors;  // multi: one per op
  std::vector<std::string> multi_paths;  // multi: the created path per op ("" otherwise)
  std::vector<WatchTrigger> triggers;
};

class DataTree {
 public:
  DataTree();

  // A client request as a transaction, checked against this tree.
  TxnBody prepare(const CreateOp& op, SessionId session) const;
  TxnBody prepare(const DeleteOp& op) const;
  TxnBody prepare(const SetDataOp& op) const;
  TxnBody prepare(const CheckOp& op) const;
  TxnBody prepare(const MultiOp& op, SessionId session) const;

  // Applies a committed transaction. zxids must increase.
  ApplyResult apply(const Txn& txn);

  struct Node {
    std::string data;
    Stat stat;
    std::set<std::string> children;  // names, sorted
  };
  const Node* find(const std::string& path) const;
  std::optional<std::vector<std::string>> children(const std::string& path) const;
  // The ephemeral znodes a session owns, sorted.
  std::vector<std::string> ephemerals(SessionId session) const;
  // Live sessions and their negotiated timeouts.
  const std::map<SessionId, int32_t>& sessions() const { return sessions_; }
  Zxid last_zxid() const { return last_zxid_; }
  size_t node_count() const { return nodes_.size(); }
  // Every path, sorted (for a `tree` view and for tests).
  std::vector<std::string> paths() const;

  // A stable 64-bit digest of the whole state (nodes, data, stats, sessions),
  // so that replicas can be compared cheaply.
  uint64_t digest() const;

  // Validity of a path as ZooKeeper's PathUtils checks it.
  static bool valid_path(const std::string& path);
  static std::string parent_of(const std::string& path);

 private:
  friend std::string encode(const DataTree& tree);
  friend std::optional<DataTree> decode_tree(std::string_view bytes);
  // Applies one op of a transaction (or a whole single-op transaction).
  ApplyResult apply_sub(const SubTxn& txn, const Txn& outer);

  std::map<std::string, Node> nodes_;
  std::map<SessionId, int32_t> sessions_;
  std::map<SessionId, std::set<std::string>> ephemerals_;
  Zxid last_zxid_;
};

}  // namespace zk
