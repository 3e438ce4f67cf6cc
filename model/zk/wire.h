// What ZooKeeper servers and clients say to each other.
//
// Three conversations, each on its own port as in ZooKeeper:
//   election  (electionPort, 3888)  fast leader election notifications;
//   quorum    (peerPort, 2888)      a follower's connection to its leader: the
//                                   Zab phases (FOLLOWERINFO, LEADERINFO,
//                                   ACKEPOCH, DIFF/TRUNC/SNAP, NEWLEADER,
//                                   UPTODATE), then PROPOSAL / ACK / COMMIT,
//                                   PING, forwarded requests, revalidation;
//   clients   (clientPort, 2181)    ConnectRequest, requests, replies, watch
//                                   events, pings.
// Messages travel as sim::Payload holding one of the three variants below.
// Transactions and snapshots also go to disk, so they have a byte encoding.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "model/zk/data_tree.h"
#include "model/zk/types.h"

namespace zk {

// --- election -------------------------------------------------------------------

enum class PeerState { looking, following, leading };
const char* to_string(PeerState s);

struct Vote {
  ServerId leader = 0;
  Zxid zxid;
  uint32_t peer_epoch = 0;  // the proposed leader's current epoch
  friend bool operator==(const Vote&, const Vote&) = default;
};
// FastLeaderElection.totalOrderPredicate: epoch, then zxid, then server id.
bool beats(const Vote& a, const Vote& b);

struct Notification {
  ServerId sender = 0;
  PeerState state = PeerState::looking;
  uint64_t election_epoch = 0;  // the sender's logical clock
  Vote vote;
};
// The first message on an election connection, from the server that dialled
// (QuorumCnxManager's initial message, protocol 3.5+): its id and the election
// address its own configuration gives it, where a peer with a larger id dials
// it back.
struct ElectionHello {
  ServerId sid = 0;
  std::string host;
  uint16_t election_port = 0;
};
using ElectionMessage = std::variant<Notification, ElectionHello>;

// --- quorum (Zab) -----------------------------------------------------------------

struct FollowerInfo {
  ServerId sid = 0;
  uint32_t accepted_epoch = 0;
  Zxid last_zxid;
};
struct LeaderInfo {
  uint32_t new_epoch = 0;
};
struct AckEpoch {
  uint32_t current_epoch = 0;
  Zxid last_zxid;
};
// DIFF: txns to append; TRUNC: cut the log back to `trunc_to` first, then
// append; SNAP: replace the whole state with `snapshot`, then append.
struct SyncData {
  enum class Kind { diff, trunc, snap };
  Kind kind = Kind::diff;
  Zxid trunc_to;
  std::shared_ptr<const DataTree> snapshot;
  std::vector<Txn> txns;
};
struct NewLeader {
  uint32_t epoch = 0;
  Zxid zxid;  // the leader's last zxid: everything up to it is the new history
};
struct UpToDate {};
struct Proposal {
  Txn txn;
};
struct Ack {
  Zxid zxid;
};
struct Commit {
  Zxid zxid;
};
struct SessionTouch {
  SessionId session;
  int32_t timeout_ms = 0;
};
struct Ping {
  std::vector<SessionTouch> touched;  // follower -> leader: sessions its clients used
};

// A client request a follower passes on to the leader.
struct CreateSessionRequest {
  int32_t timeout_ms = 0;
};
struct CloseSessionRequest {};
struct SyncRequest {
  std::string path;
};
using WriteRequest = std::variant<CreateOp, DeleteOp, SetDataOp, MultiOp, CreateSessionRequest,
                                  CloseSessionRequest, SyncRequest>;
struct ForwardedRequest {
  SessionId session;
  int64_t cxid = 0;
  WriteRequest request;
};
// The leader's answer to a forwarded sync: everything before it has been
// committed, and the follower has seen those commits already (FIFO).
struct SyncDone {
  SessionId session;
  int64_t cxid = 0;
};
struct Revalidate {
  SessionId session;
  int32_t timeout_ms = 0;
};
struct RevalidateReply {
  SessionId session;
  bool valid = false;
};

using QuorumMessage =
    std::variant<FollowerInfo, LeaderInfo, AckEpoch, SyncData, NewLeader, UpToDate, Proposal, Ack,
                 Commit, Ping, ForwardedRequest, SyncDone, Revalidate, RevalidateReply>;

// --- clients -----------------------------------------------------------------------

struct ConnectRequest {
  Zxid last_zxid_seen;
  int32_t timeout_ms = 0;
  SessionId session;  // 0: a new session
};
struct ConnectResponse {
  int32_t timeout_ms = 0;  // 0: the session has expired
  SessionId session;
};
struct GetDataRequest {
  std::string path;
  bool watch = false;
};
struct ExistsRequest {
  std::string path;
  bool watch = false;
};
struct GetChildrenRequest {
  std::string path;
  bool watch = false;
};
struct PingRequest {};
// After a reconnect the client re-registers its watches; the server fires at
// once those whose znodes changed after `relative_zxid`.
struct SetWatchesRequest {
  Zxid relative_zxid;
  std::vector<std::string> data;
  std::vector<std::string> exist;
  std::vector<std::string> child;
};
using ClientOp = std::variant<CreateOp, DeleteOp, SetDataOp, MultiOp, GetDataRequest, ExistsRequest,
                              GetChildrenRequest, SyncRequest, PingRequest, SetWatchesRequest,
                              CloseSessionRequest>;
struct ClientRequest {
  int64_t xid = 0;
  ClientOp op;
};

struct ClientReply {
  int64_t xid = 0;
  Zxid zxid;  // the server's last processed zxid when it answered
  Error error = Error::ok;
  std::string path;                  // create
  std::string data;                  // getData
  std::optional<Stat> stat;          // setData, getData, exists
  std::vector<std::string> children; // getChildren
  std::vector<Error> multi_errors;   // multi
  std::vector<std::string> multi_paths;
};
struct WatchEvent {
  EventType type = EventType::node_created;
  std::string path;
};

using ClientMessage = std::variant<ConnectRequest, ConnectResponse, ClientRequest, ClientReply,
                                   WatchEvent>;

// --- on disk --------------------------------------------------------------------------

std::string encode(const Txn& txn);
// nullopt for a record that does not decode (a torn write).
std::optional<Txn> decode_txn(std::string_view bytes);
std::string encode(const DataTree& tree);
std::optional<DataTree> decode_tree(std::string_view bytes);

}  // namespace zk
