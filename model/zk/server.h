// A ZooKeeper server (QuorumPeer): fast leader election, Zab recovery and
// broadcast, sessions, watches and the client port — one sim::Process.
//
// The server's life is a loop over three roles, as QuorumPeer.run() is:
//   LOOKING    fast leader election (FastLeaderElection.java): notifications
//              carrying (leader, zxid, epoch) votes ordered by `beats`; a vote
//              wins when a quorum's latest notifications agree and nothing
//              better arrives within finalizeWait (200 ms); unanswered rounds
//              are re-sent with backoff from 200 ms to 60 s.
//   LEADING    Leader.lead(): collect FOLLOWERINFO from a quorum and pick
//              epoch = max(acceptedEpoch) + 1; collect ACKEPOCH from a quorum;
//              bring each follower in line (DIFF, TRUNC or SNAP) and send
//              NEWLEADER; once a quorum acks it the leader is established,
//              commits its whole history and serves. Each stage must complete
//              within initLimit ticks. Then PROPOSAL/ACK/COMMIT broadcast,
//              pings every half tick, and back to LOOKING when fewer than a
//              quorum have been heard from within syncLimit ticks.
//   FOLLOWING  Learner: connect to the leader, FOLLOWERINFO, accept the epoch,
//              take the sync, ack NEWLEADER, serve after UPTODATE; log each
//              proposal durably (fsync unless forceSync=no) before acking;
//              back to LOOKING when the leader is silent for syncLimit ticks.
// Only an established leader and its up-to-date followers serve clients;
// any other server closes the client connections it has and turns new ones
// away, so a client moves on to another server.
//
// Durable state (dataDir on the host's disk): the transaction log, the
// acceptedEpoch and currentEpoch files, and a snapshot written when a SNAP
// replaced the state. On start the server replays everything it logged, as
// ZKDatabase.loadDataBase does, and drops a torn last record.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "model/zk/config.h"
#include "model/zk/data_tree.h"
#include "model/zk/wire.h"
#include "sim/world.h"

namespace zk {

class Server final : public sim::Process {
 public:
  explicit Server(ServerConfig config);

  void on_start() override;
  void on_accept(sim::SocketId socket, uint16_t port) override;
  void on_connected(sim::SocketId socket) override;
  void on_connect_failed(sim::SocketId socket, sim::ConnectError error) override;
  void on_message(sim::SocketId socket, sim::Payload& payload) override;
  void on_closed(sim::SocketId socket, sim::CloseReason reason) override;

  // --- inspection (tests, invariants, the `zk` command) ---
  PeerState state() const { return state_; }
  // Leading and established, or following and up to date.
  bool serving() const { return serving_; }
  ServerId id() const { return config_.myid; }
  uint32_t current_epoch() const { return current_epoch_; }
  uint32_t accepted_epoch() const { return accepted_epoch_; }
  Zxid last_logged() const { return log_.empty() ? base_zxid_ : log_.back().zxid; }
  Zxid last_committed() const { return tree_.last_zxid(); }
  const DataTree& tree() const { return tree_; }
  const std::vector<Txn>& log() const { return log_; }
  std::optional<ServerId> leader() const;
  size_t client_connections() const { return clients_.size(); }
  // The election connection with `peer`: whether it is up, and whether this
  // server dialled it (ZooKeeper keeps the one the larger id dialled).
  struct ElectionConnection {
    bool up = false;
    bool dialled = false;
    friend bool operator==(const ElectionConnection&, const ElectionConnection&) = default;
  };
  ElectionConnection election_connection(ServerId peer) const;

 private:
  // A sync request waiting for the proposals before it to commit.
  struct SyncWaiter {
    SessionId session;
    int64_t cxid = 0;
    std::optional<uint64_t> learner;  // the follower that forwarded it; none: our own client
  };

  // --- durable state ---
  std::string path(const char* name) const;
  void recover();
  void persist_epoch(const char* name, uint32_t value);
  void append_to_log(const Txn& txn);
  void truncate_log(Zxid to);
  void install_snapshot(const DataTree& snapshot);
  void rebuild_tree();

  // --- roles ---
  void become_looking(const char* why);
  void stop_role();
  void update_election_vote(uint32_t epoch);

  // --- election ---
  // One peer's election connection, as QuorumCnxManager keeps it: a pair of
  // servers keeps one connection, the one the larger id dialled; a dial from
  // the smaller id only asks the larger to dial back.
  struct PeerLink {
    sim::SocketId conn;  // the pair's connection (its SendWorker / RecvWorker)
    bool has_conn = false;
    bool conn_dialled = false;  // we dialled it (we have the larger id)
    sim::SocketId dial;  // our connect in progress
    bool dialing = false;
    std::optional<Notification> queued;     // the send queue (SEND_CAPACITY 1)
    std::optional<Notification> last_sent;  // lastMessageSent: sent again on a new connection
  };
  void start_election();
  void send_notifications();
  void send_election(ServerId to, const Notification& n);
  void dial_peer(ServerId peer, const std::string& host, uint16_t port);
  void adopt_election_connection(PeerLink& link, sim::SocketId socket, bool dialled);
  void on_election_hello(sim::SocketId from, const ElectionHello& h);
  void on_notification(const Notification& n);
  void check_election_outcome();
  void conclude_election();
  Vote my_initial_vote() const;
  Notification my_notification() const;
  bool quorum_agrees(const std::map<ServerId, Vote>& votes, const Vote& v) const;

  // --- leader ---
  struct LearnerHandle {
    ServerId sid = 0;
    uint32_t accepted_epoch = 0;
    Zxid last_zxid;
    bool epoch_acked = false;
    bool synced = false;   // sent the sync; receives proposals from then on
    bool newleader_acked = false;
    // The last zxid the sync carried: a learner that joins an established
    // leader logs the proposals still outstanding with it, and its ack of
    // NEWLEADER acks those too.
    Zxid synced_to;
    sim::Time last_heard;
  };
  void lead();
  void on_leader_message(sim::SocketId from, const QuorumMessage& m);
  void leader_check_epoch_quorum();
  void leader_sync_learner(sim::SocketId socket, LearnerHandle& l);
  void leader_establish();
  void leader_tick();
  void propose(SessionId session, int64_t cxid, TxnBody body);
  void leader_on_ack(ServerId sid, Zxid zxid);
  void leader_try_commit();
  void leader_handle_request(const ForwardedRequest& r, std::optional<uint64_t> learner);
  void answer_sync(const SyncWaiter& w);
  void arm_stage_deadline(const char* stage);
  void leader_expire_sessions();
  void touch(SessionId session, int32_t timeout_ms);

  // --- follower ---
  void follow();
  void on_follower_message(const QuorumMessage& m);
  void follower_reset_silence_timer();
  void forward(const ForwardedRequest& r);

  // --- shared by both ---
  void commit_up_to(Zxid zxid);
  void apply_committed(const Txn& txn);
  void start_serving();
  void stop_serving();
  void send_quorum(sim::SocketId socket, QuorumMessage m);

  // --- clients ---
  struct ClientConn {
    SessionId session;
    bool handshake_done = false;
    int32_t timeout_ms = 0;
    // Requests answered in order: a write holds back every later request of
    // the same connection until it commits (ZooKeeper's FIFO client order).
    std::deque<ClientRequest> queue;
    bool head_in_flight = false;
  };
  void on_client_message(sim::SocketId socket, const ClientMessage& m);
  void on_connect_request(sim::SocketId socket, const ConnectRequest& r);
  void finish_connect(sim::SocketId socket, SessionId session, int32_t timeout_ms, bool valid);
  void pump(sim::SocketId socket);
  void answer(sim::SocketId socket, ClientReply reply);
  void close_client(sim::SocketId socket);
  void fire_watches(const std::vector<WatchTrigger>& triggers);
  void set_watches(sim::SocketId socket, const SetWatchesRequest& r);
  ClientReply read(const ClientOp& op, sim::SocketId socket);
  SessionId new_session_id();

  ServerConfig config_;
  PeerState state_ = PeerState::looking;
  bool serving_ = false;
  uint64_t role_generation_ = 0;  // bumped on every role change: stale timers check it

  // durable
  uint32_t accepted_epoch_ = 0;
  uint32_t current_epoch_ = 0;
  Zxid base_zxid_;              // the snapshot's zxid (log_ continues after it)
  std::shared_ptr<const DataTree> snapshot_;  // the state at base_zxid_
  std::vector<Txn> log_;        // every txn logged after the snapshot
  size_t logged_durable_ = 0;   // how many of log_ are known fsynced
  DataTree tree_;               // committed state

  // election
  uint64_t logical_clock_ = 0;
  Vote vote_;
  std::map<ServerId, Vote> recv_votes_;      // LOOKING peers' votes, this round
  std::map<ServerId, Vote> out_of_election_; // FOLLOWING/LEADING peers' votes
  std::map<ServerId, PeerState> out_of_election_state_;  // and which of the two
  sim::Duration notification_interval_;
  sim::TimerId election_timer_;
  sim::TimerId finalize_timer_;
  std::map<ServerId, PeerLink> election_links_;
  std::set<uint64_t> election_inbound_;  // accepted, not yet identified by a hello

  // leader
  std::map<uint64_t, LearnerHandle> learners_;  // by socket
  uint32_t new_epoch_ = 0;
  bool epoch_chosen_ = false;
  bool established_ = false;
  uint32_t next_counter_ = 0;
  std::set<ServerId> newleader_acks_;
  std::map<uint64_t, std::set<ServerId>> acks_;  // zxid -> who logged it
  std::deque<Txn> outstanding_;                  // proposed, not committed
  DataTree future_;                              // tree once all proposals commit
  std::map<SessionId, sim::Time> session_expiry_;
  std::set<SessionId> closing_;
  std::map<SessionId, int32_t> pending_touches_;  // follower: to report in the next ping
  std::map<uint64_t, std::vector<SyncWaiter>> sync_waiters_;  // leader: zxid -> syncs to answer
  sim::TimerId stage_timer_;

  // follower
  std::optional<ServerId> leader_id_;
  sim::SocketId leader_socket_;
  bool leader_connected_ = false;
  bool up_to_date_ = false;
  Zxid newleader_zxid_;
  sim::TimerId silence_timer_;
  sim::Time last_heard_from_leader_;

  // clients
  std::map<uint64_t, ClientConn> clients_;  // by socket
  std::map<std::pair<uint64_t, int64_t>, uint64_t> pending_;  // (session, cxid) -> socket
  std::map<uint64_t, std::pair<uint64_t, int32_t>> pending_revalidations_;  // session -> (socket, timeout)
  std::map<std::string, std::set<uint64_t>> data_watches_;   // path -> sockets
  std::map<std::string, std::set<uint64_t>> child_watches_;
  uint64_t session_counter_ = 0;
};

// A factory for World::add_process.
sim::ProcessFactory server_factory(ServerConfig config);

}  // namespace zk
