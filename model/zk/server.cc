#include "model/zk/server.h"

#include <algorithm>

#include <fmt/format.h>

#include "model/overloaded.h"

#include "sim/assert.h"

namespace zk {
namespace {

using model::Overloaded;

// FastLeaderElection: finalizeWait and maxNotificationInterval.
constexpr sim::Duration kFinalizeWait = sim::Duration::millis(200);
constexpr sim::Duration kMaxNotificationInterval = sim::Duration::seconds(60);
// QuorumCnxManager gives an election connect zookeeper.cnxTimeout (cnxTO,
// 5 s), then gives up (initiateConnection, sock.connect(addr, cnxTO)).
constexpr sim::Duration kElectionConnectTimeout = sim::Duration::seconds(5);

int64_t to_ms(sim::Time t) { return t.us() / 1000; }

}  // namespace

Server::Server(ServerConfig config) : config_(std::move(config)) {}

sim::ProcessFactory server_factory(ServerConfig config) {
  return [config] { return std::make_unique<Server>(config); };
}

std::optional<ServerId> Server::leader() const {
  if (state_ == PeerState::leading) return config_.myid;
  if (state_ == PeerState::following) return leader_id_;
  return std::nullopt;
}

// --- durable state -------------------------------------------------------------------

std::string Server::path(const char* name) const {
  return fmt::format("{}/{}", config_.data_dir, name);
}

void Server::recover() {
  sim::Disk& disk = ctx().disk();
  auto read_epoch = [&](const char* name) -> uint32_t {
    sim::File& f = disk.open(path(name));
    for (size_t i = f.size(); i-- > 0;) {
      const sim::Record r = f.record(i);
      if (r.intact && !r.data.empty()) return static_cast<uint32_t>(std::stoul(std::string(r.data)));
    }
    return 0;
  };
  accepted_epoch_ = read_epoch("acceptedEpoch");
  current_epoch_ = read_epoch("currentEpoch");

  snapshot_.reset();
  base_zxid_ = Zxid{};
  sim::File& snap = disk.open(path("version-2/snapshot"));
  if (snap.size() > 0 && snap.records().back().intact) {
    if (auto tree = decode_tree(snap.records().back().data)) {
      snapshot_ = std::make_shared<const DataTree>(std::move(*tree));
      base_zxid_ = snapshot_->last_zxid();
    }
  }

  log_.clear();
  sim::File& file = disk.open(path("version-2/log"));
  size_t good = 0;
  for (const sim::Record& r : file.records()) {
    if (!r.intact) break;
    std::optional<Txn> txn = decode_txn(r.data);
    if (!txn) break;
    if (txn->zxid <= (log_.empty() ? base_zxid_ : log_.back().zxid)) break;
    log_.push_back(std::move(*txn));
    ++good;
  }
  if (good < file.size()) {
    ctx().trace("log_truncated", {{"kept", static_cast<uint64_t>(good)},
                                  {"dropped", static_cast<uint64_t>(file.size() - good)}});
    file.truncate(good, ctx().now());
  }
  logged_durable_ = log_.size();
  // The epochs can never be older than the transactions we logged in them
  // (ZooKeeper refuses to start in that case; a power loss in the few
  // milliseconds before the epoch file's fsync completes could cause it here).
  current_epoch_ = std::max(current_epoch_, last_logged().epoch());
  accepted_epoch_ = std::max(accepted_epoch_, current_epoch_);
  rebuild_tree();
  ctx().trace("recovered", {{"last_zxid", to_string(last_logged())},
                            {"current_epoch", current_epoch_},
                            {"accepted_epoch", accepted_epoch_}});
}

void Server::rebuild_tree() {
  // As ZKDatabase.loadDataBase: the snapshot plus every logged transaction.
  tree_ = snapshot_ ? *snapshot_ : DataTree();
  for (const Txn& t : log_) {
    if (t.zxid > tree_.last_zxid()) tree_.apply(t);
  }
}

void Server::persist_epoch(const char* name, uint32_t value) {
  // ZooKeeper writes these files atomically and fsyncs them before going on
  // (AtomicFileOutputStream); the fsync here closes the same window.
  ctx().disk().open(path(name)).rewrite({std::to_string(value)}, ctx().now());
  ctx().fsync(path(name), [] {});
}

void Server::append_to_log(const Txn& txn) {
  SIM_ASSERT(txn.zxid > last_logged(), "server {} logs {} after {}", config_.myid,
             to_string(txn.zxid), to_string(last_logged()));
  log_.push_back(txn);
  ctx().disk().open(path("version-2/log")).append(encode(txn), ctx().now());
}

void Server::truncate_log(Zxid to) {
  size_t keep = 0;
  while (keep < log_.size() && log_[keep].zxid <= to) ++keep;
  if (keep == log_.size()) return;
  ctx().trace("truncate", {{"to", to_string(to)},
                           {"dropped", static_cast<uint64_t>(log_.size() - keep)}});
  log_.resize(keep);
  ctx().disk().open(path("version-2/log")).truncate(keep, ctx().now());
  rebuild_tree();
}

void Server::install_snapshot(const DataTree& snapshot) {
  snapshot_ = std::make_shared<const DataTree>(snapshot);
  base_zxid_ = snapshot.last_zxid();
  log_.clear();
  const sim::Time now = ctx().now();
  ctx().disk().open(path("version-2/log")).truncate(0, now);
  ctx().disk().open(path("version-2/snapshot")).rewrite({encode(snapshot)}, now);
  tree_ = snapshot;
  ctx().trace("snapshot_installed", {{"zxid", to_string(base_zxid_)}});
}

// --- life cycle -----------------------------------------------------------------------

void Server::on_start() {
  SIM_ASSERT(config_.servers.count(config_.myid) == 1, "myid {} is not in the ensemble",
             config_.myid);
  session_counter_ = (static_cast<uint64_t>(to_ms(ctx().now())) << 16) & ((uint64_t{1} << 56) - 1);
  recover();
  const PeerAddress& me = config_.servers.at(config_.myid);
  ctx().listen(me.election_port);
  ctx().listen(config_.client_port);
  start_election();
}

void Server::become_looking(const char* why) {
  ctx().trace(state_ == PeerState::leading ? "leader_lost_quorum" : "leaving_role",
              {{"state", to_string(state_)}, {"reason", why}});
  stop_role();
  state_ = PeerState::looking;
  start_election();
}

void Server::stop_role() {
  ++role_generation_;
  stop_serving();
  ctx().cancel(stage_timer_);
  if (state_ == PeerState::leading) {
    ctx().unlisten(config_.servers.at(config_.myid).peer_port);
    for (const auto& [socket, learner] : learners_) ctx().close(sim::SocketId(socket));
  }
  learners_.clear();
  epoch_chosen_ = false;
  established_ = false;
  newleader_acks_.clear();
  acks_.clear();
  outstanding_.clear();
  session_expiry_.clear();
  closing_.clear();
  sync_waiters_.clear();
  if (state_ == PeerState::following && leader_connected_) ctx().close(leader_socket_);
  leader_id_.reset();
  leader_connected_ = false;
  up_to_date_ = false;
  ctx().cancel(silence_timer_);
  pending_touches_.clear();
}

// --- election ---------------------------------------------------------------------------

Vote Server::my_initial_vote() const { return Vote{config_.myid, last_logged(), current_epoch_}; }

Notification Server::my_notification() const {
  return Notification{config_.myid, state_, logical_clock_, vote_};
}

void Server::start_election() {
  ++role_generation_;
  ++logical_clock_;
  vote_ = my_initial_vote();
  recv_votes_.clear();
  out_of_election_.clear();
  out_of_election_state_.clear();
  recv_votes_[config_.myid] = vote_;
  notification_interval_ = kFinalizeWait;
  ctx().cancel(finalize_timer_);
  finalize_timer_ = {};
  ctx().trace("election_start", {{"round", logical_clock_},
                                 {"zxid", to_string(vote_.zxid)},
                                 {"epoch", vote_.peer_epoch}});
  send_notifications();
  const uint64_t generation = role_generation_;
  // Unanswered rounds are sent again, the interval doubling up to 60 s.
  std::function<void()> resend;
  election_timer_ = ctx().after(notification_interval_, [this, generation] {
    if (generation != role_generation_ || state_ != PeerState::looking) return;
    notification_interval_ = std::min(notification_interval_ * 2, kMaxNotificationInterval);
    send_notifications();
    // Re-arm by restarting the same logic: a small helper lambda would need
    // to name itself, so schedule through a member-free recursion instead.
    const uint64_t g = role_generation_;
    auto again = [this, g](auto& self_ref) -> void {
      election_timer_ = ctx().after(notification_interval_, [this, g, self_ref]() mutable {
        if (g != role_generation_ || state_ != PeerState::looking) return;
        notification_interval_ = std::min(notification_interval_ * 2, kMaxNotificationInterval);
        send_notifications();
        self_ref(self_ref);
      });
    };
    again(again);
  });
  check_election_outcome();
}

void Server::send_notifications() {
  const Notification n = my_notification();
  for (const auto& [sid, peer] : config_.servers) {
    if (sid != config_.myid) send_election(sid, n);
  }
}

// Election connections follow QuorumCnxManager (3.5+): each pair of servers
// keeps one connection, the one the larger id dialled, carrying notifications
// both ways. A server dials a peer it has no connection to when it has a
// notification for it (connectOne, at most one connect in progress) and
// first sends a hello with its id and its own election address. To a larger
// id that is all: it closes the connection ("Have smaller server identifier,
// so dropping the connection", startConnection), and the peer, on the hello
// from a smaller id, closes it too, drops the connection it had with us (the
// other may still think it up) and dials back to the address the hello gave
// (handleConnection, connectOne(sid, electionAddr)). A newer connection from a
// larger id replaces the one we had. Nothing else probes a connection: one
// whose peer vanished stays until TCP gives up on it or the peer dials anew,
// and a notification sent meanwhile is lost (its write succeeds).
void Server::send_election(ServerId to, const Notification& n) {
  PeerLink& link = election_links_[to];
  // One message per peer in the send queue (SEND_CAPACITY): a newer
  // notification replaces one not yet sent.
  link.queued = n;
  if (link.has_conn) {
    ctx().send(link.conn, sim::Payload(ElectionMessage(n)));
    link.last_sent = n;
    link.queued.reset();
  } else if (!link.dialing) {
    const PeerAddress& peer = config_.servers.at(to);
    dial_peer(to, peer.host, peer.election_port);
  }
}

void Server::dial_peer(ServerId peer, const std::string& host, uint16_t port) {
  PeerLink& link = election_links_[peer];
  link.dial = ctx().connect(host, port);
  link.dialing = true;
  // A connect not made within cnxTO is given up; the next notification or
  // hello dials again.
  const sim::SocketId socket = link.dial;
  ctx().after(kElectionConnectTimeout, [this, peer, socket] {
    PeerLink& l = election_links_[peer];
    if (!l.dialing || l.dial != socket) return;
    ctx().close(socket);
    l.dialing = false;
  });
}

void Server::adopt_election_connection(PeerLink& link, sim::SocketId socket, bool dialled) {
  // The new SendWorker finishes the old one (closing its socket) and sends
  // what is queued, or else the last notification sent, in case the old
  // connection lost it (SendWorker.run).
  if (link.has_conn && link.conn != socket) ctx().close(link.conn);
  link.conn = socket;
  link.has_conn = true;
  link.conn_dialled = dialled;
  if (link.queued) {
    link.last_sent = std::move(link.queued);
    link.queued.reset();
  }
  if (link.last_sent) ctx().send(socket, sim::Payload(ElectionMessage(*link.last_sent)));
}

void Server::on_election_hello(sim::SocketId from, const ElectionHello& h) {
  if (election_inbound_.erase(from.value) == 0) return;  // not a connection we accepted
  if (h.sid == config_.myid || config_.servers.count(h.sid) == 0) {
    ctx().close(from);
    return;
  }
  PeerLink& link = election_links_[h.sid];
  if (h.sid < config_.myid) {
    // We win the challenge: our side dials. The peer may have a connection
    // we still think up; it goes first (handleConnection's sw.finish()).
    ctx().close(from);
    if (link.has_conn) {
      ctx().close(link.conn);
      link.has_conn = false;
    }
    if (!link.dialing) dial_peer(h.sid, h.host, h.election_port);
    return;
  }
  adopt_election_connection(link, from, false);
}

Server::ElectionConnection Server::election_connection(ServerId peer) const {
  const auto it = election_links_.find(peer);
  if (it == election_links_.end() || !it->second.has_conn) return {};
  return {true, it->second.conn_dialled};
}

void Server::on_notification(const Notification& n) {
  if (config_.servers.count(n.sender) == 0) return;
  if (state_ != PeerState::looking) {
    // A looking peer asks; tell it who leads.
    if (n.state == PeerState::looking) send_election(n.sender, my_notification());
    return;
  }
  if (n.state == PeerState::looking) {
    if (n.election_epoch > logical_clock_) {
      logical_clock_ = n.election_epoch;
      recv_votes_.clear();
      const Vote mine = my_initial_vote();
      vote_ = beats(n.vote, mine) ? n.vote : mine;
      recv_votes_[config_.myid] = vote_;
      ctx().trace("vote", {{"leader", vote_.leader}, {"zxid", to_string(vote_.zxid)},
                           {"epoch", vote_.peer_epoch}, {"round", logical_clock_}});
      ctx().cancel(finalize_timer_);
      finalize_timer_ = {};
      send_notifications();
    } else if (n.election_epoch < logical_clock_) {
      send_election(n.sender, my_notification());
      return;
    } else if (beats(n.vote, vote_)) {
      vote_ = n.vote;
      ctx().trace("vote", {{"leader", vote_.leader}, {"zxid", to_string(vote_.zxid)},
                           {"epoch", vote_.peer_epoch}, {"round", logical_clock_}});
      recv_votes_[config_.myid] = vote_;
      ctx().cancel(finalize_timer_);
      finalize_timer_ = {};
      send_notifications();
    }
    recv_votes_[n.sender] = n.vote;
    check_election_outcome();
    return;
  }
  // The sender follows or leads: an ensemble may already be running.
  if (n.election_epoch == logical_clock_) {
    recv_votes_[n.sender] = n.vote;
    if (quorum_agrees(recv_votes_, n.vote) &&
        (n.vote.leader == config_.myid || out_of_election_.count(n.vote.leader) ||
         (n.state == PeerState::leading && n.sender == n.vote.leader))) {
      vote_ = n.vote;
      conclude_election();
      return;
    }
  }
  out_of_election_[n.sender] = n.vote;
  out_of_election_state_[n.sender] = n.state;
  // FastLeaderElection.receivedFollowingNotification: join when a quorum of
  // the servers out of election name the same leader and epoch, and the
  // leader among them says it leads (checkLeader). Between votes that are
  // not LOOKING, Vote.equals compares only the leader and its epoch: their
  // zxids and rounds can differ, as each server concluded its own election
  // at its own moment (ZOOKEEPER-1805; in 3.4.14 as in 3.8). Until 2026-12
  // the model compared whole votes, and a restarted server whose peers had
  // concluded with different zxids never rejoined.
  size_t agree = 0;
  for (const auto& [sid, v] : out_of_election_) {
    agree += v.leader == n.vote.leader && v.peer_epoch == n.vote.peer_epoch ? 1 : 0;
  }
  const auto leader_state = out_of_election_state_.find(n.vote.leader);
  const bool leader_confirmed = n.vote.leader != config_.myid && leader_state != out_of_election_state_.end() &&
                                leader_state->second == PeerState::leading;
  if (agree >= config_.quorum_size() && leader_confirmed) {
    logical_clock_ = n.election_epoch;
    vote_ = n.vote;
    conclude_election();
  }
}

bool Server::quorum_agrees(const std::map<ServerId, Vote>& votes, const Vote& v) const {
  size_t agree = 0;
  for (const auto& [sid, vote] : votes) agree += vote == v ? 1 : 0;
  return agree >= config_.quorum_size();
}

void Server::check_election_outcome() {
  if (state_ != PeerState::looking || !quorum_agrees(recv_votes_, vote_)) return;
  if (recv_votes_.size() == config_.servers.size()) {
    conclude_election();  // everyone has spoken: nothing better can come
    return;
  }
  if (finalize_timer_) return;
  // Wait finalizeWait for a better vote before settling.
  const uint64_t generation = role_generation_;
  const uint64_t round = logical_clock_;
  finalize_timer_ = ctx().after(kFinalizeWait, [this, generation, round] {
    finalize_timer_ = {};
    if (generation != role_generation_ || round != logical_clock_) return;
    if (state_ == PeerState::looking && quorum_agrees(recv_votes_, vote_)) conclude_election();
  });
}

void Server::conclude_election() {
  ctx().cancel(election_timer_);
  ctx().cancel(finalize_timer_);
  finalize_timer_ = {};
  ++role_generation_;
  const bool leading = vote_.leader == config_.myid;
  state_ = leading ? PeerState::leading : PeerState::following;
  ctx().trace("elected", {{"leader", vote_.leader},
                          {"zxid", to_string(vote_.zxid)},
                          {"round", logical_clock_},
                          {"role", to_string(state_)}});
  if (leading) {
    lead();
  } else {
    follow();
  }
}

// --- leader ----------------------------------------------------------------------------------

void Server::arm_stage_deadline(const char* stage) {
  ctx().cancel(stage_timer_);
  const uint64_t generation = role_generation_;
  const sim::Duration limit = sim::Duration::millis(config_.tick_time_ms * config_.init_limit);
  stage_timer_ = ctx().after(limit, [this, generation, stage] {
    if (generation != role_generation_ || established_) return;
    become_looking(stage);
  });
}

void Server::lead() {
  learners_.clear();
  epoch_chosen_ = false;
  established_ = false;
  newleader_acks_.clear();
  ctx().listen(config_.servers.at(config_.myid).peer_port);
  arm_stage_deadline("no quorum of followers within initLimit");
  leader_check_epoch_quorum();
}

void Server::leader_check_epoch_quorum() {
  if (state_ != PeerState::leading) return;
  if (!epoch_chosen_) {
    // getEpochToPropose: a quorum (with us) must have reported its accepted epoch.
    if (learners_.size() + 1 < config_.quorum_size()) return;
    uint32_t highest = accepted_epoch_;
    for (const auto& [socket, l] : learners_) highest = std::max(highest, l.accepted_epoch);
    new_epoch_ = highest + 1;
    accepted_epoch_ = new_epoch_;
    persist_epoch("acceptedEpoch", accepted_epoch_);
    epoch_chosen_ = true;
    ctx().trace("epoch_proposed", {{"epoch", new_epoch_}});
    for (const auto& [socket, l] : learners_) {
      send_quorum(sim::SocketId(socket), LeaderInfo{new_epoch_});
    }
    arm_stage_deadline("no quorum acked the new epoch within initLimit");
  }
  if (current_epoch_ == new_epoch_) return;  // already past waitForEpochAck
  size_t acked = 1;
  for (const auto& [socket, l] : learners_) acked += l.epoch_acked ? 1 : 0;
  if (acked < config_.quorum_size()) return;
  current_epoch_ = new_epoch_;
  persist_epoch("currentEpoch", current_epoch_);
  next_counter_ = 0;
  for (auto& [socket, l] : learners_) {
    if (l.epoch_acked && !l.synced) leader_sync_learner(sim::SocketId(socket), l);
  }
  arm_stage_deadline("no quorum acked NEWLEADER within initLimit");
  if (config_.quorum_size() == 1) leader_establish();
}

void Server::leader_sync_learner(sim::SocketId socket, LearnerHandle& l) {
  // LearnerHandler.syncFollower: DIFF when the learner's last zxid is in our
  // history, TRUNC when it has transactions we do not, SNAP when it is
  // further behind than the commit log we keep.
  SyncData sync;
  const Zxid peer = l.last_zxid;
  const size_t keep = static_cast<size_t>(config_.commit_log_count);
  const Zxid oldest_diffable =
      log_.size() > keep ? log_[log_.size() - keep].zxid : base_zxid_;
  auto txns_after = [&](Zxid z) {
    std::vector<Txn> out;
    for (const Txn& t : log_) {
      if (t.zxid > z) out.push_back(t);
    }
    return out;
  };
  if (peer == last_logged()) {
    sync.kind = SyncData::Kind::diff;
  } else if (peer > last_logged()) {
    sync.kind = SyncData::Kind::trunc;
    sync.trunc_to = last_logged();
  } else if (peer < oldest_diffable || (peer < base_zxid_)) {
    sync.kind = SyncData::Kind::snap;
    DataTree committed = snapshot_ ? *snapshot_ : DataTree();
    for (const Txn& t : log_) {
      if (t.zxid <= tree_.last_zxid() && t.zxid > committed.last_zxid()) committed.apply(t);
    }
    sync.snapshot = std::make_shared<const DataTree>(std::move(committed));
    sync.txns = txns_after(sync.snapshot->last_zxid());
  } else {
    const bool known = peer == base_zxid_ ||
                       std::any_of(log_.begin(), log_.end(), [&](const Txn& t) { return t.zxid == peer; });
    if (known) {
      sync.kind = SyncData::Kind::diff;
      sync.txns = txns_after(peer);
    } else {
      // The learner holds a transaction we never had: cut back to the last
      // zxid of ours below it, then send what follows.
      Zxid below = base_zxid_;
      for (const Txn& t : log_) {
        if (t.zxid < peer) below = t.zxid;
      }
      sync.kind = SyncData::Kind::trunc;
      sync.trunc_to = below;
      sync.txns = txns_after(below);
    }
  }
  const char* kind = sync.kind == SyncData::Kind::diff   ? "DIFF"
                     : sync.kind == SyncData::Kind::trunc ? "TRUNC"
                                                          : "SNAP";
  ctx().trace("sync_learner", {{"sid", l.sid},
                               {"kind", kind},
                               {"peer_zxid", to_string(peer)},
                               {"txns", static_cast<uint64_t>(sync.txns.size())}});
  send_quorum(socket, std::move(sync));
  // While the epoch is being established everything logged becomes its
  // history (leader_establish commits it all). A learner that joins later
  // (LearnerHandler.syncFollower + Leader.startForwarding) gets the
  // outstanding proposals as proposals: it logs them but commits only what
  // the leader has committed, and acks them — otherwise a proposal that was
  // outstanding when the only other follower left could never reach a
  // quorum, and the ensemble would commit nothing again (found by
  // `kafkasim fuzz`).
  send_quorum(socket, NewLeader{new_epoch_, established_ ? tree_.last_zxid() : last_logged()});
  l.synced = true;
  l.synced_to = last_logged();
}

void Server::leader_establish() {
  established_ = true;
  ctx().cancel(stage_timer_);
  // The new history is everything we logged: commit it all.
  commit_up_to(last_logged());
  future_ = tree_;
  for (auto& [socket, l] : learners_) {
    if (l.newleader_acked) send_quorum(sim::SocketId(socket), UpToDate{});
  }
  // A new leader gives every session a fresh timeout (SessionTrackerImpl is
  // rebuilt from the tree).
  for (const auto& [session, timeout] : tree_.sessions()) touch(session, timeout);
  ctx().trace("leading", {{"epoch", new_epoch_}, {"zxid", to_string(last_logged())}});
  update_election_vote(new_epoch_);
  start_serving();
  const uint64_t generation = role_generation_;
  ctx().after(sim::Duration::millis(config_.tick_time_ms / 2), [this, generation] {
    if (generation == role_generation_) leader_tick();
  });
}

void Server::leader_tick() {
  // Leader.lead(): ping every half tick; every full tick make sure a quorum
  // has been heard from within syncLimit ticks, and expire sessions.
  for (const auto& [socket, l] : learners_) {
    if (l.synced) send_quorum(sim::SocketId(socket), Ping{});
  }
  const sim::Time now = ctx().now();
  const sim::Duration sync_limit = sim::Duration::millis(config_.tick_time_ms * config_.sync_limit);
  size_t heard = 1;
  for (const auto& [socket, l] : learners_) {
    if (l.newleader_acked && now - l.last_heard <= sync_limit) ++heard;
  }
  if (heard < config_.quorum_size()) {
    become_looking("not sufficient followers synced");
    return;
  }
  leader_expire_sessions();
  const uint64_t generation = role_generation_;
  ctx().after(sim::Duration::millis(config_.tick_time_ms / 2), [this, generation] {
    if (generation == role_generation_) leader_tick();
  });
}

void Server::touch(SessionId session, int32_t timeout_ms) {
  if (closing_.count(session) != 0) return;
  // SessionTrackerImpl rounds expiry up to the next tick boundary.
  const int64_t interval_us = config_.tick_time_ms * 1000;
  const int64_t due = (ctx().now() + sim::Duration::millis(timeout_ms)).us();
  const sim::Time expiry = sim::Time::from_us((due / interval_us + 1) * interval_us);
  auto [it, inserted] = session_expiry_.emplace(session, expiry);
  if (!inserted && it->second < expiry) it->second = expiry;
}

void Server::leader_expire_sessions() {
  const sim::Time now = ctx().now();
  std::vector<SessionId> expired;
  for (const auto& [session, expiry] : session_expiry_) {
    if (expiry <= now && closing_.count(session) == 0) expired.push_back(session);
  }
  for (SessionId s : expired) {
    const auto it = tree_.sessions().find(s);
    ctx().trace("session_expired",
                {{"session", fmt::format("0x{:x}", s.value)},
                 {"timeout_ms", it == tree_.sessions().end() ? 0 : it->second}});
    closing_.insert(s);
    session_expiry_.erase(s);
    propose(s, 0, CloseSessionTxn{});
  }
}

void Server::propose(SessionId session, int64_t cxid, TxnBody body) {
  SIM_ASSERT(established_, "server {} proposes before it is established", config_.myid);
  Txn txn;
  txn.zxid = Zxid::make(new_epoch_, ++next_counter_);
  txn.time_ms = to_ms(ctx().now());
  txn.session = session;
  txn.cxid = cxid;
  txn.body = std::move(body);
  future_.apply(txn);
  outstanding_.push_back(txn);
  acks_[txn.zxid.value];
  append_to_log(txn);
  for (const auto& [socket, l] : learners_) {
    if (l.synced) send_quorum(sim::SocketId(socket), Proposal{txn});
  }
  const uint64_t generation = role_generation_;
  const Zxid zxid = txn.zxid;
  auto self_ack = [this, generation, zxid] {
    if (generation == role_generation_) leader_on_ack(config_.myid, zxid);
  };
  if (config_.force_sync) {
    ctx().fsync(path("version-2/log"), self_ack);
  } else {
    ctx().after(sim::Duration::zero(), self_ack);
  }
}

void Server::leader_on_ack(ServerId sid, Zxid zxid) {
  auto it = acks_.find(zxid.value);
  if (it == acks_.end()) return;
  it->second.insert(sid);
  leader_try_commit();
}

void Server::leader_try_commit() {
  while (!outstanding_.empty()) {
    const Txn& head = outstanding_.front();
    auto it = acks_.find(head.zxid.value);
    if (it == acks_.end() || it->second.size() < config_.quorum_size()) return;
    SIM_ASSERT(it->second.count(config_.myid) == 1 || it->second.size() >= config_.quorum_size(),
               "commit without a quorum");
    const Zxid zxid = head.zxid;
    acks_.erase(it);
    for (const auto& [socket, l] : learners_) {
      if (l.synced) send_quorum(sim::SocketId(socket), Commit{zxid});
    }
    outstanding_.pop_front();
    commit_up_to(zxid);
    auto waiters = sync_waiters_.find(zxid.value);
    if (waiters != sync_waiters_.end()) {
      for (const SyncWaiter& w : waiters->second) answer_sync(w);
      sync_waiters_.erase(waiters);
    }
  }
}

void Server::answer_sync(const SyncWaiter& w) {
  if (w.learner) {
    send_quorum(sim::SocketId(*w.learner), SyncDone{w.session, w.cxid});
    return;
  }
  auto it = pending_.find({w.session.value, w.cxid});
  if (it == pending_.end()) return;
  const uint64_t socket = it->second;
  pending_.erase(it);
  ClientReply reply;
  reply.xid = w.cxid;
  answer(sim::SocketId(socket), std::move(reply));
}

void Server::leader_handle_request(const ForwardedRequest& r, std::optional<uint64_t> learner) {
  if (!established_) return;  // the requester will time out or reconnect
  const SessionId session = r.session;
  const bool session_ok =
      future_.sessions().count(session) != 0 && closing_.count(session) == 0;
  std::visit(
      Overloaded{
          [&](const CreateSessionRequest& c) {
            touch(session, c.timeout_ms);
            propose(session, r.cxid, CreateSessionTxn{c.timeout_ms});
          },
          [&](const CloseSessionRequest&) {
            if (!session_ok) {
              propose(session, r.cxid, ErrorTxn{Error::session_expired});
              return;
            }
            closing_.insert(session);
            session_expiry_.erase(session);
            propose(session, r.cxid, CloseSessionTxn{});
          },
          [&](const SyncRequest&) {
            const SyncWaiter w{session, r.cxid, learner};
            if (outstanding_.empty()) {
              answer_sync(w);
            } else {
              sync_waiters_[outstanding_.back().zxid.value].push_back(w);
            }
          },
          [&](const auto& op) {
            if (!session_ok) {
              propose(session, r.cxid, ErrorTxn{Error::session_expired});
              return;
            }
            touch(session, future_.sessions().at(session));
            if constexpr (std::is_same_v<std::decay_t<decltype(op)>, CreateOp> ||
                          std::is_same_v<std::decay_t<decltype(op)>, MultiOp>) {
              propose(session, r.cxid, future_.prepare(op, session));
            } else {
              propose(session, r.cxid, future_.prepare(op));
            }
          },
      },
      r.request);
}

void Server::on_leader_message(sim::SocketId from, const QuorumMessage& m) {
  auto it = learners_.find(from.value);
  if (const auto* info = std::get_if<FollowerInfo>(&m)) {
    LearnerHandle l;
    l.sid = info->sid;
    l.accepted_epoch = info->accepted_epoch;
    l.last_zxid = info->last_zxid;
    l.last_heard = ctx().now();
    // A learner that reconnects replaces its old handle.
    for (auto old = learners_.begin(); old != learners_.end();) {
      if (old->second.sid == info->sid && old->first != from.value) {
        ctx().close(sim::SocketId(old->first));
        old = learners_.erase(old);
      } else {
        ++old;
      }
    }
    learners_[from.value] = l;
    if (epoch_chosen_) {
      send_quorum(from, LeaderInfo{new_epoch_});
    } else {
      leader_check_epoch_quorum();
    }
    return;
  }
  if (it == learners_.end()) return;
  LearnerHandle& l = it->second;
  l.last_heard = ctx().now();
  std::visit(
      Overloaded{
          [&](const AckEpoch& a) {
            if (a.current_epoch > current_epoch_ ||
                (a.current_epoch == current_epoch_ && a.last_zxid > last_logged() &&
                 current_epoch_ != new_epoch_)) {
              become_looking("a follower is ahead of the leader");
              return;
            }
            l.epoch_acked = true;
            l.last_zxid = a.last_zxid;
            if (current_epoch_ == new_epoch_ && !l.synced) {
              leader_sync_learner(from, l);
            } else {
              leader_check_epoch_quorum();
            }
          },
          [&](const Ack& a) {
            if (!l.newleader_acked && l.synced && a.zxid.epoch() == new_epoch_ &&
                a.zxid.counter() == 0) {
              // The ack of NEWLEADER (its zxid is the epoch's zero counter).
              l.newleader_acked = true;
              newleader_acks_.insert(l.sid);
              if (established_) {
                send_quorum(from, UpToDate{});
                std::vector<Zxid> carried;
                for (const Txn& t : outstanding_) {
                  if (t.zxid <= l.synced_to) carried.push_back(t.zxid);
                }
                for (const Zxid z : carried) leader_on_ack(l.sid, z);
              } else if (newleader_acks_.size() + 1 >= config_.quorum_size()) {
                leader_establish();
              }
              return;
            }
            leader_on_ack(l.sid, a.zxid);
          },
          [&](const Ping& p) {
            for (const SessionTouch& t : p.touched) touch(t.session, t.timeout_ms);
          },
          [&](const ForwardedRequest& r) { leader_handle_request(r, from.value); },
          [&](const Revalidate& r) {
            const bool valid = tree_.sessions().count(r.session) != 0 && closing_.count(r.session) == 0;
            if (valid) touch(r.session, r.timeout_ms);
            send_quorum(from, RevalidateReply{r.session, valid});
          },
          [&](const auto&) {},
      },
      m);
}

// --- follower ----------------------------------------------------------------------------------

void Server::follow() {
  leader_id_ = vote_.leader;
  leader_connected_ = false;
  up_to_date_ = false;
  const PeerAddress& leader = config_.servers.at(*leader_id_);
  leader_socket_ = ctx().connect(leader.host, leader.peer_port);
  follower_reset_silence_timer();
}

void Server::follower_reset_silence_timer() {
  ctx().cancel(silence_timer_);
  const uint64_t generation = role_generation_;
  const int64_t ticks = up_to_date_ ? config_.sync_limit : config_.init_limit;
  silence_timer_ = ctx().after(sim::Duration::millis(config_.tick_time_ms * ticks), [this, generation] {
    if (generation != role_generation_) return;
    become_looking(up_to_date_ ? "leader silent for syncLimit" : "no sync from leader within initLimit");
  });
}

void Server::on_follower_message(const QuorumMessage& m) {
  follower_reset_silence_timer();
  const uint64_t generation = role_generation_;
  std::visit(
      Overloaded{
          [&](const LeaderInfo& info) {
            if (info.new_epoch < accepted_epoch_) {
              become_looking("leader proposed an epoch older than ours");
              return;
            }
            if (info.new_epoch > accepted_epoch_) {
              accepted_epoch_ = info.new_epoch;
              persist_epoch("acceptedEpoch", accepted_epoch_);
            }
            const AckEpoch ack{current_epoch_, last_logged()};
            ctx().fsync(path("acceptedEpoch"), [this, generation, ack] {
              if (generation == role_generation_) send_quorum(leader_socket_, ack);
            });
          },
          [&](const SyncData& sync) {
            if (sync.kind == SyncData::Kind::trunc) truncate_log(sync.trunc_to);
            if (sync.kind == SyncData::Kind::snap) install_snapshot(*sync.snapshot);
            for (const Txn& t : sync.txns) {
              if (t.zxid > last_logged()) append_to_log(t);
            }
          },
          [&](const NewLeader& nl) {
            current_epoch_ = nl.epoch;
            newleader_zxid_ = nl.zxid;
            persist_epoch("currentEpoch", current_epoch_);
            ctx().fsync(path("version-2/log"), [] {});
            const Zxid ack_zxid = Zxid::make(nl.epoch, 0);
            ctx().fsync(path("currentEpoch"), [this, generation, ack_zxid] {
              if (generation == role_generation_) send_quorum(leader_socket_, Ack{ack_zxid});
            });
          },
          [&](const UpToDate&) {
            up_to_date_ = true;
            commit_up_to(newleader_zxid_);
            follower_reset_silence_timer();
            ctx().trace("following", {{"leader", *leader_id_}, {"epoch", current_epoch_}});
            update_election_vote(current_epoch_);
            start_serving();
          },
          [&](const Proposal& p) {
            append_to_log(p.txn);
            const Zxid zxid = p.txn.zxid;
            auto ack = [this, generation, zxid] {
              if (generation == role_generation_) send_quorum(leader_socket_, Ack{zxid});
            };
            if (config_.force_sync) {
              ctx().fsync(path("version-2/log"), ack);
            } else {
              ack();
            }
          },
          [&](const Commit& c) { commit_up_to(c.zxid); },
          [&](const Ping&) {
            Ping reply;
            for (const auto& [session, timeout] : pending_touches_) {
              reply.touched.push_back(SessionTouch{session, timeout});
            }
            pending_touches_.clear();
            send_quorum(leader_socket_, std::move(reply));
          },
          [&](const RevalidateReply& r) {
            auto it = pending_revalidations_.find(r.session.value);
            if (it == pending_revalidations_.end()) return;
            const auto [socket, timeout] = it->second;
            pending_revalidations_.erase(it);
            finish_connect(sim::SocketId(socket), r.session, timeout, r.valid);
          },
          [&](const SyncDone& d) {
            auto it = pending_.find({d.session.value, d.cxid});
            if (it == pending_.end()) return;
            const uint64_t socket = it->second;
            pending_.erase(it);
            ClientReply reply;
            reply.xid = d.cxid;
            answer(sim::SocketId(socket), std::move(reply));
          },
          [&](const auto&) {},
      },
      m);
}

void Server::forward(const ForwardedRequest& r) {
  if (state_ == PeerState::leading) {
    leader_handle_request(r, std::nullopt);
  } else if (state_ == PeerState::following && leader_connected_) {
    send_quorum(leader_socket_, r);
  }
}

// --- commit and apply ---------------------------------------------------------------------------

void Server::commit_up_to(Zxid zxid) {
  // By index, and each transaction copied before it is applied: applying it
  // can answer a client whose next request the leader then proposes, which
  // appends to log_ and may move its elements (a reference into log_, or an
  // iterator over it, would dangle; found by AddressSanitizer).
  for (size_t i = 0; i < log_.size(); ++i) {
    if (log_[i].zxid <= tree_.last_zxid() || log_[i].zxid > zxid) continue;
    const Txn t = log_[i];
    apply_committed(t);
  }
}

void Server::apply_committed(const Txn& txn) {
  ApplyResult result = tree_.apply(txn);
  if (state_ == PeerState::leading) {
    ctx().trace("commit", {{"zxid", to_string(txn.zxid)}});
  }
  const auto pending = pending_.find({txn.session.value, txn.cxid});
  std::optional<uint64_t> socket;
  if (pending != pending_.end()) {
    socket = pending->second;
    pending_.erase(pending);
  }
  std::visit(
      Overloaded{
          [&](const CreateSessionTxn& c) {
            if (state_ == PeerState::leading) {
              ctx().trace("session_created",
                          {{"session", fmt::format("0x{:x}", txn.session.value)},
                           {"timeout_ms", c.timeout_ms}});
              touch(txn.session, c.timeout_ms);
            }
            if (socket) finish_connect(sim::SocketId(*socket), txn.session, c.timeout_ms, true);
          },
          [&](const CloseSessionTxn&) {
            fire_watches(result.triggers);
            if (state_ == PeerState::leading) {
              closing_.erase(txn.session);
              session_expiry_.erase(txn.session);
            }
            if (socket) {
              ClientReply reply;
              reply.xid = txn.cxid;
              answer(sim::SocketId(*socket), std::move(reply));
            }
            // Whoever holds the session's connection closes it: the client
            // learns the session is gone when it reconnects.
            std::vector<uint64_t> doomed;
            for (const auto& [s, conn] : clients_) {
              if (conn.session == txn.session) doomed.push_back(s);
            }
            for (uint64_t s : doomed) close_client(sim::SocketId(s));
          },
          [&](const auto&) {
            fire_watches(result.triggers);
            if (!socket) return;
            ClientReply reply;
            reply.xid = txn.cxid;
            reply.zxid = txn.zxid;
            reply.error = result.error;
            reply.path = result.path;
            if (std::holds_alternative<SetDataTxn>(txn.body) && result.error == Error::ok) {
              reply.stat = result.stat;
            }
            reply.multi_errors = result.multi_errors;
            reply.multi_paths = result.multi_paths;
            answer(sim::SocketId(*socket), std::move(reply));
          },
      },
      txn.body);
}

// --- serving clients ---------------------------------------------------------------------------

void Server::update_election_vote(uint32_t epoch) {
  // QuorumPeer.updateElectionVote (ZOOKEEPER-1732): once the new epoch is
  // established (Leader.lead after the NEWLEADER quorum, Learner.syncWithLeader
  // on UPTODATE) the vote a server reports to a LOOKING peer carries that
  // epoch, so that every member reports the same (leader, epoch), whatever
  // zxid and round each concluded its own election with.
  vote_.peer_epoch = epoch;
}

void Server::start_serving() {
  serving_ = true;
  ctx().trace("serving", {{"role", to_string(state_)}, {"epoch", current_epoch_}});
}

void Server::stop_serving() {
  if (serving_) ctx().trace("not_serving", {{"clients", static_cast<uint64_t>(clients_.size())}});
  serving_ = false;
  std::vector<uint64_t> sockets;
  for (const auto& [socket, conn] : clients_) sockets.push_back(socket);
  for (uint64_t s : sockets) close_client(sim::SocketId(s));
  pending_.clear();
  pending_revalidations_.clear();
  data_watches_.clear();
  child_watches_.clear();
}

SessionId Server::new_session_id() {
  ++session_counter_;
  return SessionId{(uint64_t{config_.myid} << 56) | (session_counter_ & ((uint64_t{1} << 56) - 1))};
}

void Server::on_connect_request(sim::SocketId socket, const ConnectRequest& r) {
  ClientConn& conn = clients_[socket.value];
  if (!serving_) {
    close_client(socket);  // "ZooKeeperServer not running"
    return;
  }
  if (r.last_zxid_seen > last_committed()) {
    // The client has seen a newer state than ours: it must find another server.
    ctx().trace("refused_client", {{"client_zxid", to_string(r.last_zxid_seen)},
                                   {"our_zxid", to_string(last_committed())}});
    close_client(socket);
    return;
  }
  const int32_t timeout = config_.negotiate_session_timeout(r.timeout_ms);
  conn.timeout_ms = timeout;
  if (!r.session) {
    const SessionId session = new_session_id();
    conn.session = session;
    pending_[{session.value, 0}] = socket.value;
    forward(ForwardedRequest{session, 0, CreateSessionRequest{timeout}});
    return;
  }
  conn.session = r.session;
  if (state_ == PeerState::leading) {
    const bool valid = tree_.sessions().count(r.session) != 0 && closing_.count(r.session) == 0;
    if (valid) touch(r.session, timeout);
    finish_connect(socket, r.session, timeout, valid);
  } else {
    pending_revalidations_[r.session.value] = {socket.value, timeout};
    send_quorum(leader_socket_, Revalidate{r.session, timeout});
  }
}

void Server::finish_connect(sim::SocketId socket, SessionId session, int32_t timeout_ms, bool valid) {
  auto it = clients_.find(socket.value);
  if (it == clients_.end()) return;
  if (!valid) {
    ctx().send(socket, sim::Payload(ClientMessage(ConnectResponse{0, session})));
    close_client(socket);
    return;
  }
  it->second.handshake_done = true;
  it->second.session = session;
  it->second.timeout_ms = timeout_ms;
  ctx().send(socket, sim::Payload(ClientMessage(ConnectResponse{timeout_ms, session})));
  pump(socket);
}

void Server::on_client_message(sim::SocketId socket, const ClientMessage& m) {
  if (const auto* r = std::get_if<ConnectRequest>(&m)) {
    on_connect_request(socket, *r);
    return;
  }
  auto it = clients_.find(socket.value);
  if (it == clients_.end() || !it->second.handshake_done) return;
  if (const auto* req = std::get_if<ClientRequest>(&m)) {
    it->second.queue.push_back(*req);
    pump(socket);
  }
}

void Server::pump(sim::SocketId socket) {
  for (;;) {
    auto it = clients_.find(socket.value);
    if (it == clients_.end()) return;
    ClientConn& conn = it->second;
    if (!conn.handshake_done || conn.head_in_flight || conn.queue.empty()) return;
    const ClientRequest req = conn.queue.front();
    // Every request counts as a heartbeat of its session.
    if (state_ == PeerState::leading) {
      touch(conn.session, conn.timeout_ms);
    } else {
      pending_touches_[conn.session] = conn.timeout_ms;
    }
    const bool is_write = std::visit(
        Overloaded{[](const CreateOp&) { return true; }, [](const DeleteOp&) { return true; },
                   [](const SetDataOp&) { return true; }, [](const MultiOp&) { return true; },
                   [](const SyncRequest&) { return true; },
                   [](const CloseSessionRequest&) { return true; },
                   [](const auto&) { return false; }},
        req.op);
    if (!is_write) {
      ClientReply reply = read(req.op, socket);
      reply.xid = req.xid;
      conn.queue.pop_front();
      answer(socket, std::move(reply));
      continue;
    }
    conn.head_in_flight = true;
    pending_[{conn.session.value, req.xid}] = socket.value;
    const WriteRequest w = std::visit(
        Overloaded{[](const CreateOp& o) -> WriteRequest { return o; },
                   [](const DeleteOp& o) -> WriteRequest { return o; },
                   [](const SetDataOp& o) -> WriteRequest { return o; },
                   [](const MultiOp& o) -> WriteRequest { return o; },
                   [](const SyncRequest& o) -> WriteRequest { return o; },
                   [](const auto&) -> WriteRequest { return CloseSessionRequest{}; }},
        req.op);
    forward(ForwardedRequest{conn.session, req.xid, w});
    return;
  }
}

void Server::answer(sim::SocketId socket, ClientReply reply) {
  auto it = clients_.find(socket.value);
  if (it == clients_.end()) return;
  ClientConn& conn = it->second;
  if (reply.zxid == Zxid{}) reply.zxid = last_committed();
  const bool was_head = conn.head_in_flight;
  if (was_head && !conn.queue.empty() && conn.queue.front().xid == reply.xid) {
    conn.queue.pop_front();
    conn.head_in_flight = false;
  }
  ctx().send(socket, sim::Payload(ClientMessage(std::move(reply))));
  if (was_head) pump(socket);
}

ClientReply Server::read(const ClientOp& op, sim::SocketId socket) {
  ClientReply reply;
  reply.zxid = last_committed();
  std::visit(
      Overloaded{
          [&](const GetDataRequest& r) {
            const DataTree::Node* n = tree_.find(r.path);
            if (n == nullptr) {
              reply.error = Error::no_node;
              return;
            }
            reply.data = n->data;
            reply.stat = n->stat;
            if (r.watch) data_watches_[r.path].insert(socket.value);
          },
          [&](const ExistsRequest& r) {
            const DataTree::Node* n = tree_.find(r.path);
            if (n == nullptr) {
              reply.error = Error::no_node;
            } else {
              reply.stat = n->stat;
            }
            if (r.watch) data_watches_[r.path].insert(socket.value);
          },
          [&](const GetChildrenRequest& r) {
            auto children = tree_.children(r.path);
            if (!children) {
              reply.error = Error::no_node;
              return;
            }
            reply.children = std::move(*children);
            if (r.watch) child_watches_[r.path].insert(socket.value);
          },
          [&](const SetWatchesRequest& r) { set_watches(socket, r); },
          [&](const auto&) {},  // ping
      },
      op);
  return reply;
}

void Server::set_watches(sim::SocketId socket, const SetWatchesRequest& r) {
  auto event = [&](EventType type, const std::string& path) {
    ctx().send(socket, sim::Payload(ClientMessage(WatchEvent{type, path})));
  };
  for (const std::string& path : r.data) {
    const DataTree::Node* n = tree_.find(path);
    if (n == nullptr) {
      event(EventType::node_deleted, path);
    } else if (n->stat.mzxid > r.relative_zxid) {
      event(EventType::node_data_changed, path);
    } else {
      data_watches_[path].insert(socket.value);
    }
  }
  for (const std::string& path : r.exist) {
    if (tree_.find(path) != nullptr) {
      event(EventType::node_created, path);
    } else {
      data_watches_[path].insert(socket.value);
    }
  }
  for (const std::string& path : r.child) {
    const DataTree::Node* n = tree_.find(path);
    if (n == nullptr) {
      event(EventType::node_deleted, path);
    } else if (n->stat.pzxid > r.relative_zxid) {
      event(EventType::node_children_changed, path);
    } else {
      child_watches_[path].insert(socket.value);
    }
  }
}

void Server::fire_watches(const std::vector<WatchTrigger>& triggers) {
  for (const WatchTrigger& t : triggers) {
    auto fire = [&](std::map<std::string, std::set<uint64_t>>& watches, EventType type) {
      auto it = watches.find(t.path);
      if (it == watches.end()) return;
      const std::set<uint64_t> sockets = std::move(it->second);
      watches.erase(it);
      for (uint64_t s : sockets) {
        if (clients_.count(s) != 0) {
          ctx().send(sim::SocketId(s), sim::Payload(ClientMessage(WatchEvent{type, t.path})));
        }
      }
    };
    switch (t.type) {
      case EventType::node_created: fire(data_watches_, EventType::node_created); break;
      case EventType::node_deleted:
        fire(data_watches_, EventType::node_deleted);
        fire(child_watches_, EventType::node_deleted);
        break;
      case EventType::node_data_changed: fire(data_watches_, EventType::node_data_changed); break;
      case EventType::node_children_changed:
        fire(child_watches_, EventType::node_children_changed);
        break;
    }
  }
}

void Server::close_client(sim::SocketId socket) {
  if (clients_.erase(socket.value) == 0) return;
  ctx().close(socket);
  for (auto* watches : {&data_watches_, &child_watches_}) {
    for (auto it = watches->begin(); it != watches->end();) {
      it->second.erase(socket.value);
      it = it->second.empty() ? watches->erase(it) : std::next(it);
    }
  }
}

// --- sockets --------------------------------------------------------------------------------------

void Server::send_quorum(sim::SocketId socket, QuorumMessage m) {
  if (!ctx().is_open(socket)) return;
  ctx().send(socket, sim::Payload(std::move(m)));
}

void Server::on_accept(sim::SocketId socket, uint16_t port) {
  const PeerAddress& me = config_.servers.at(config_.myid);
  if (port == config_.client_port) {
    clients_[socket.value] = ClientConn{};
  } else if (port == me.election_port) {
    election_inbound_.insert(socket.value);
  }
  // Learner connections on the peer port are recognised by their FOLLOWERINFO.
}

void Server::on_connected(sim::SocketId socket) {
  for (auto& [sid, link] : election_links_) {
    if (link.dialing && link.dial == socket) {
      link.dialing = false;
      const PeerAddress& me = config_.servers.at(config_.myid);
      ctx().send(socket, sim::Payload(ElectionMessage(ElectionHello{config_.myid, me.host, me.election_port})));
      if (sid > config_.myid) {
        ctx().close(socket);  // the peer dials back
      } else {
        adopt_election_connection(link, socket, true);
      }
      return;
    }
  }
  if (state_ == PeerState::following && socket == leader_socket_) {
    leader_connected_ = true;
    send_quorum(socket, FollowerInfo{config_.myid, accepted_epoch_, last_logged()});
  }
}

void Server::on_connect_failed(sim::SocketId socket, sim::ConnectError) {
  for (auto& [sid, link] : election_links_) {
    if (link.dialing && link.dial == socket) {
      link.dialing = false;  // what is queued waits for the next try
      return;
    }
  }
  if (state_ == PeerState::following && socket == leader_socket_) {
    // Learner.connectToLeader keeps trying (every leaderConnectDelayDuringRetryMs,
    // 100 ms) until initLimit runs out: the leader may not be listening yet.
    const uint64_t generation = role_generation_;
    ctx().after(sim::Duration::millis(100), [this, generation] {
      if (generation != role_generation_ || state_ != PeerState::following) return;
      const PeerAddress& leader = config_.servers.at(*leader_id_);
      leader_socket_ = ctx().connect(leader.host, leader.peer_port);
    });
  }
}

void Server::on_closed(sim::SocketId socket, sim::CloseReason) {
  ctx().close(socket);
  for (auto& [sid, link] : election_links_) {
    if (link.has_conn && link.conn == socket) {
      link.has_conn = false;  // no new connection until there is something to send
      return;
    }
    if (link.dialing && link.dial == socket) {
      link.dialing = false;
      return;
    }
  }
  if (election_inbound_.erase(socket.value) != 0) return;
  if (clients_.count(socket.value) != 0) {
    close_client(socket);
    return;
  }
  if (learners_.erase(socket.value) != 0) return;
  if (state_ == PeerState::following && socket == leader_socket_) {
    leader_connected_ = false;
    become_looking("connection to the leader closed");
  }
}

void Server::on_message(sim::SocketId socket, sim::Payload& payload) {
  if (const auto* e = sim::payload_cast<ElectionMessage>(&payload)) {
    if (const auto* hello = std::get_if<ElectionHello>(e)) {
      on_election_hello(socket, *hello);
    } else {
      on_notification(std::get<Notification>(*e));
    }
  } else if (const auto* q = sim::payload_cast<QuorumMessage>(&payload)) {
    if (state_ == PeerState::leading) {
      on_leader_message(socket, *q);
    } else if (state_ == PeerState::following && socket == leader_socket_) {
      on_follower_message(*q);
    }
  } else if (const auto* c = sim::payload_cast<ClientMessage>(&payload)) {
    on_client_message(socket, *c);
  }
}

}  // namespace zk
