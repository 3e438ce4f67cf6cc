// ZooKeeper's vocabulary: zxids, session ids, error codes, create modes, stat,
// the operations a client asks for and the transactions the leader proposes.
//
// Names follow ZooKeeper's own (org.apache.zookeeper.KeeperException.Code,
// CreateMode, data.Stat, txn.*Txn) so that a trace reads like a ZooKeeper log.
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace zk {

// A transaction id: the leader's epoch in the high 32 bits, a counter in the
// low 32 (ZooKeeper's ZxidUtils).
struct Zxid {
  uint64_t value = 0;
  static constexpr Zxid make(uint32_t epoch, uint32_t counter) {
    return Zxid{(uint64_t{epoch} << 32) | counter};
  }
  constexpr uint32_t epoch() const { return static_cast<uint32_t>(value >> 32); }
  constexpr uint32_t counter() const { return static_cast<uint32_t>(value & 0xffffffffu); }
  constexpr auto operator<=>(const Zxid&) const = default;
};
std::string to_string(Zxid z);  // "0x200000003", as ZooKeeper logs it

struct SessionId {
  uint64_t value = 0;  // 0: no session yet
  constexpr auto operator<=>(const SessionId&) const = default;
  explicit operator bool() const { return value != 0; }
};

using ServerId = uint32_t;  // myid

enum class Error {
  ok,
  no_node,                       // NONODE
  node_exists,                   // NODEEXISTS
  bad_version,                   // BADVERSION
  not_empty,                     // NOTEMPTY
  no_children_for_ephemerals,    // NOCHILDRENFOREPHEMERALS
  bad_arguments,                 // BADARGUMENTS
  runtime_inconsistency,         // RUNTIMEINCONSISTENCY: another op of a multi failed
  connection_loss,               // CONNECTIONLOSS (client side)
  session_expired,               // SESSIONEXPIRED
  session_moved,                 // SESSIONMOVED
  operation_timeout,             // OPERATIONTIMEOUT (client side)
};
const char* to_string(Error e);

enum class CreateMode { persistent, ephemeral, persistent_sequential, ephemeral_sequential };
inline bool is_ephemeral(CreateMode m) {
  return m == CreateMode::ephemeral || m == CreateMode::ephemeral_sequential;
}
inline bool is_sequential(CreateMode m) {
  return m == CreateMode::persistent_sequential || m == CreateMode::ephemeral_sequential;
}

struct Stat {
  Zxid czxid;
  Zxid mzxid;
  Zxid pzxid;  // last change to the children
  int64_t ctime_ms = 0;  // virtual time
  int64_t mtime_ms = 0;
  int32_t version = 0;
  int32_t cversion = 0;
  int32_t aversion = 0;
  uint64_t ephemeral_owner = 0;
  int32_t data_length = 0;
  int32_t num_children = 0;
  friend bool operator==(const Stat&, const Stat&) = default;
};

// --- what a client asks for ---------------------------------------------------

struct CreateOp {
  std::string path;
  std::string data;
  CreateMode mode = CreateMode::persistent;
};
struct DeleteOp {
  std::string path;
  int32_t version = -1;  // -1: any version
};
struct SetDataOp {
  std::string path;
  std::string data;
  int32_t version = -1;
};
struct CheckOp {
  std::string path;
  int32_t version = -1;
};
using WriteOp = std::variant<CreateOp, DeleteOp, SetDataOp, CheckOp>;
struct MultiOp {
  std::vector<WriteOp> ops;
};

// --- what the leader proposes --------------------------------------------------

struct CreateTxn {
  std::string path;  // final path (with the sequence suffix, if any)
  std::string data;
  uint64_t ephemeral_owner = 0;
};
struct DeleteTxn {
  std::string path;
};
struct SetDataTxn {
  std::string path;
  std::string data;
  int32_t version = 0;  // the new version
};
struct CheckTxn {
  std::string path;
};
struct ErrorTxn {
  Error error = Error::ok;
};
using SubTxn = std::variant<CreateTxn, DeleteTxn, SetDataTxn, CheckTxn, ErrorTxn>;
struct MultiTxn {
  std::vector<SubTxn> txns;  // all ErrorTxn when the multi failed
};
struct CreateSessionTxn {
  int32_t timeout_ms = 0;
};
struct CloseSessionTxn {};

using TxnBody = std::variant<CreateTxn, DeleteTxn, SetDataTxn, CheckTxn, ErrorTxn, MultiTxn,
                             CreateSessionTxn, CloseSessionTxn>;

struct Txn {
  Zxid zxid;
  int64_t time_ms = 0;  // the leader's virtual clock when proposed
  SessionId session;
  int64_t cxid = 0;  // the client's request id
  TxnBody body;
};

// --- watches ------------------------------------------------------------------

enum class EventType { node_created, node_deleted, node_data_changed, node_children_changed };
const char* to_string(EventType t);

struct WatchTrigger {
  EventType type;
  std::string path;
  friend bool operator==(const WatchTrigger&, const WatchTrigger&) = default;
};

}  // namespace zk
