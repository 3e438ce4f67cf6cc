#include "model/kafka/group_coordinator.h"

#include <algorithm>
#include <charconv>
#include <utility>

#include <fmt/format.h>

#include "model/kafka/record_format.h"
#include "sim/assert.h"

namespace kafka {

const char* to_string(GroupState s) {
  switch (s) {
    case GroupState::empty: return "Empty";
    case GroupState::preparing_rebalance: return "PreparingRebalance";
    case GroupState::completing_rebalance: return "CompletingRebalance";
    case GroupState::stable: return "Stable";
    case GroupState::dead: return "Dead";
  }
  return "?";
}

// --- record encoding ---------------------------------------------------------------------

namespace {

constexpr char kOffsetCommitType = '\x01';
constexpr char kGroupMetadataType = '\x02';

void put(std::string& out, std::string_view field) {
  out += std::to_string(field.size());
  out += ':';
  out += field;
}
void put(std::string& out, int64_t v) { put(out, std::to_string(v)); }

// Reads length-prefixed fields from a string.
class Reader {
 public:
  explicit Reader(std::string_view s) : s_(s) {}
  std::optional<std::string_view> field() {
    const size_t colon = s_.find(':', pos_);
    if (colon == std::string_view::npos || colon == pos_ || colon - pos_ > 9) return std::nullopt;
    size_t len = 0;
    const auto [end, ec] = std::from_chars(s_.data() + pos_, s_.data() + colon, len);
    if (ec != std::errc() || end != s_.data() + colon || colon + 1 + len > s_.size()) {
      return std::nullopt;
    }
    std::string_view f = s_.substr(colon + 1, len);
    pos_ = colon + 1 + len;
    return f;
  }
  std::optional<int64_t> number() {
    auto f = field();
    if (!f || f->empty()) return std::nullopt;
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(f->data(), f->data() + f->size(), v);
    if (ec != std::errc() || end != f->data() + f->size()) return std::nullopt;
    return v;
  }
  size_t pos() const { return pos_; }
  void skip(size_t n) { pos_ += n; }
  bool done() const { return pos_ == s_.size(); }

 private:
  std::string_view s_;
  size_t pos_ = 0;
};

JoinGroupResponse join_error(const std::string& member_id, ErrorCode e) {
  JoinGroupResponse r;
  r.error = e;
  r.member_id = member_id;
  return r;
}

OffsetCommitResponse commit_error(const OffsetCommitRequest& r, ErrorCode e) {
  OffsetCommitResponse resp;
  for (const OffsetCommitPartition& p : r.partitions) resp.partitions.emplace_back(p.tp, e);
  return resp;
}

// GroupMetadataManager.storeOffsets: how a log-append error reaches the client.
ErrorCode commit_error_of(ErrorCode append) {
  switch (append) {
    case ErrorCode::unknown_topic_or_partition:
    case ErrorCode::not_enough_replicas:
    case ErrorCode::not_enough_replicas_after_append:
      return ErrorCode::coordinator_not_available;
    case ErrorCode::not_leader_for_partition:
      return ErrorCode::not_coordinator;
    default:
      return append;  // NONE, REQUEST_TIMED_OUT pass through
  }
}

// GroupMetadataManager.storeGroup's mapping for a group-metadata append.
ErrorCode store_group_error_of(ErrorCode append) {
  switch (append) {
    case ErrorCode::none:
      return ErrorCode::none;
    case ErrorCode::unknown_topic_or_partition:
    case ErrorCode::not_enough_replicas:
    case ErrorCode::not_enough_replicas_after_append:
      return ErrorCode::coordinator_not_available;
    case ErrorCode::not_leader_for_partition:
      return ErrorCode::not_coordinator;
    case ErrorCode::request_timed_out:
      return ErrorCode::rebalance_in_progress;
    default:
      return ErrorCode::unknown_server_error;
  }
}

// Record `i` of an offsets-topic batch the coordinator appends (one batch a
// request), the batch header counted with the first. `value_bytes`: the
// value's own length where the model keeps it apart (a group's metadata
// rides in the key, and is counted there).
int32_t record_size(size_t i, const std::string& key, int32_t value_bytes) {
  const int32_t key_bytes = static_cast<int32_t>(std::min<size_t>(key.size(), 1 << 20));
  return record_bytes(static_cast<int32_t>(i), 0, key_bytes, value_bytes) +
         (i == 0 ? kRecordBatchOverhead : 0);
}
// OffsetCommitValue v3 (2.1+): version int16, offset int64, leader epoch
// int32, metadata string (an empty one: its int16 length), commit timestamp
// int64.
constexpr int32_t kOffsetCommitValueBytes = 2 + 8 + 4 + 2 + 8;

}  // namespace

std::string encode_offset_commit_key(const OffsetCommitKey& k) {
  std::string out(1, kOffsetCommitType);
  put(out, k.group);
  put(out, k.tp.topic);
  put(out, static_cast<int64_t>(k.tp.partition));
  return out;
}

std::string encode_group_metadata(const std::string& group, const StoredGroup& g) {
  std::string out(1, kGroupMetadataType);
  put(out, group);
  put(out, g.protocol_type);
  put(out, static_cast<int64_t>(g.generation));
  put(out, g.protocol);
  put(out, g.leader);
  put(out, static_cast<int64_t>(g.members.size()));
  for (const StoredMember& m : g.members) {
    put(out, m.member_id);
    put(out, m.client_id);
    put(out, static_cast<int64_t>(m.session_timeout_ms));
    put(out, static_cast<int64_t>(m.rebalance_timeout_ms));
    put(out, m.metadata);
    put(out, static_cast<int64_t>(m.assignment.size()));
    for (const TopicPartition& tp : m.assignment) {
      put(out, tp.topic);
      put(out, static_cast<int64_t>(tp.partition));
    }
  }
  return out;
}

std::optional<OffsetCommitKey> decode_offset_commit_key(const std::string& key) {
  if (key.empty() || key[0] != kOffsetCommitType) return std::nullopt;
  Reader r(std::string_view(key).substr(1));
  auto group = r.field();
  auto topic = r.field();
  auto partition = r.number();
  if (!group || !topic || !partition || !r.done() || *partition < 0 || *partition > INT32_MAX) {
    return std::nullopt;
  }
  return OffsetCommitKey{std::string(*group), {std::string(*topic), static_cast<int32_t>(*partition)}};
}

std::optional<std::pair<GroupMetadataKey, StoredGroup>> decode_group_metadata(const std::string& key) {
  if (key.empty() || key[0] != kGroupMetadataType) return std::nullopt;
  Reader r(std::string_view(key).substr(1));
  auto group = r.field();
  auto type = r.field();
  auto generation = r.number();
  auto protocol = r.field();
  auto leader = r.field();
  auto count = r.number();
  if (!group || !type || !generation || !protocol || !leader || !count || *count < 0) {
    return std::nullopt;
  }
  StoredGroup g;
  g.protocol_type = std::string(*type);
  g.generation = static_cast<int32_t>(*generation);
  g.protocol = std::string(*protocol);
  g.leader = std::string(*leader);
  for (int64_t i = 0; i < *count; ++i) {
    StoredMember m;
    auto id = r.field();
    auto client = r.field();
    auto session = r.number();
    auto rebalance = r.number();
    auto metadata = r.field();
    auto parts = r.number();
    if (!id || !client || !session || !rebalance || !metadata || !parts || *parts < 0) {
      return std::nullopt;
    }
    m.member_id = std::string(*id);
    m.client_id = std::string(*client);
    m.session_timeout_ms = static_cast<int32_t>(*session);
    m.rebalance_timeout_ms = static_cast<int32_t>(*rebalance);
    m.metadata = std::string(*metadata);
    for (int64_t j = 0; j < *parts; ++j) {
      auto topic = r.field();
      auto partition = r.number();
      if (!topic || !partition) return std::nullopt;
      m.assignment.push_back({std::string(*topic), static_cast<int32_t>(*partition)});
    }
    g.members.push_back(std::move(m));
  }
  if (!r.done()) return std::nullopt;
  return std::make_pair(GroupMetadataKey{std::string(*group)}, std::move(g));
}

std::optional<std::string> offsets_record_identity(const std::string& key) {
  if (key.empty()) return std::nullopt;
  Reader r(std::string_view(key).substr(1));
  if (key[0] == kOffsetCommitType) {
    if (!decode_offset_commit_key(key)) return std::nullopt;
    return key;
  }
  if (key[0] == kGroupMetadataType) {
    if (!r.field()) return std::nullopt;
    return key.substr(0, 1 + r.pos());
  }
  return std::nullopt;
}

// --- the coordinator ------------------------------------------------------------------------

GroupCoordinator::GroupCoordinator(Environment env)
    : env_(std::move(env)), rng_(env_.ctx->rng().fork("group-coordinator")) {}

int64_t GroupCoordinator::now_ms() const { return env_.ctx->now().us() / 1000; }

int32_t GroupCoordinator::partition_for(const std::string& group) const {
  return offsets_partition_for(group, config().offsets_topic_num_partitions);
}

int32_t offsets_partition_for(const std::string& group, int32_t partitions) {
  // GroupMetadataManager.partitionFor: Utils.abs(groupId.hashCode) modulo the
  // partition count, where hashCode is java.lang.String's (over the bytes of
  // an ASCII group id) and Utils.abs maps Integer.MIN_VALUE to 0.
  uint32_t h = 0;
  for (unsigned char c : group) h = 31 * h + c;
  const int64_t signed_hash = static_cast<int32_t>(h);
  const int64_t abs = signed_hash == INT32_MIN ? 0 : (signed_hash < 0 ? -signed_hash : signed_hash);
  return static_cast<int32_t>(abs % partitions);
}

void GroupCoordinator::send(Reply& reply, Response response) {
  if (!reply) return;
  outbox_.emplace_back(std::move(reply), std::move(response));
  reply = nullptr;
}

void GroupCoordinator::flush() {
  // Replies run only once the state is consistent: a reply lets the broker
  // dispatch the connection's next request, which may come straight back here.
  while (!outbox_.empty()) {
    auto [reply, response] = std::move(outbox_.front());
    outbox_.pop_front();
    reply(std::move(response));
  }
}

ErrorCode GroupCoordinator::validate(const std::string& group) {
  const int32_t partition = partition_for(group);
  if (loading_.count(partition) != 0) return ErrorCode::coordinator_load_in_progress;
  if (owned_.count(partition) == 0) return ErrorCode::not_coordinator;
  const Partition* p = env_.find_partition(offsets_tp(partition));
  if (p == nullptr || !p->is_leader()) return ErrorCode::not_coordinator;
  return ErrorCode::none;
}

GroupCoordinator::Group* GroupCoordinator::find_group(const std::string& group) {
  auto it = groups_.find(group);
  return it == groups_.end() ? nullptr : &it->second;
}

GroupCoordinator::Group& GroupCoordinator::add_group(const std::string& group) {
  Group& g = groups_[group];
  g.id = group;
  g.partition = partition_for(group);
  return g;
}

void GroupCoordinator::transition(Group& g, GroupState to, std::string_view why) {
  // GroupMetadata.validPreviousStates.
  const GroupState from = g.state;
  bool valid = false;
  switch (to) {
    case GroupState::preparing_rebalance:
      valid = from == GroupState::stable || from == GroupState::completing_rebalance ||
              from == GroupState::empty;
      break;
    case GroupState::completing_rebalance:
    case GroupState::empty:
      valid = from == GroupState::preparing_rebalance;
      break;
    case GroupState::stable:
      valid = from == GroupState::completing_rebalance;
      break;
    case GroupState::dead:
      valid = true;
      break;
  }
  SIM_ASSERT(valid, "group {}: no transition from {} to {}", g.id, to_string(from), to_string(to));
  g.state = to;
  ctx().trace("group_state", {{"group", g.id},
                              {"from", to_string(from)},
                              {"to", to_string(to)},
                              {"generation", g.generation},
                              {"why", why}});
}

bool GroupCoordinator::supports_protocols(const Group& g, const std::string& type,
                                          const std::vector<JoinGroupProtocol>& protocols) const {
  // GroupMetadata.supportsProtocols.
  if (g.state == GroupState::empty || g.members.empty()) return !type.empty() && !protocols.empty();
  if (g.protocol_type != type) return false;
  for (const JoinGroupProtocol& p : protocols) {
    const bool everyone = std::all_of(g.members.begin(), g.members.end(), [&](const auto& e) {
      return std::any_of(e.second.protocols.begin(), e.second.protocols.end(),
                         [&](const JoinGroupProtocol& q) { return q.name == p.name; });
    });
    if (everyone) return true;
  }
  return false;
}

std::string GroupCoordinator::select_protocol(const Group& g) const {
  // GroupMetadata.selectProtocol: the protocols every member supports are the
  // candidates; each member votes for the first candidate in its own order;
  // the most votes win. (Kafka breaks a tie by hash-map order; the model by
  // the candidate's name, to stay deterministic.)
  std::map<std::string, int> votes;
  for (const std::string& id : g.join_order) {
    const Member& m = g.members.at(id);
    for (const JoinGroupProtocol& p : m.protocols) {
      const bool candidate = std::all_of(g.members.begin(), g.members.end(), [&](const auto& e) {
        return std::any_of(e.second.protocols.begin(), e.second.protocols.end(),
                           [&](const JoinGroupProtocol& q) { return q.name == p.name; });
      });
      if (candidate) {
        ++votes[p.name];
        break;
      }
    }
  }
  SIM_ASSERT(!votes.empty(), "group {}: no protocol every member supports", g.id);
  std::string best;
  int most = -1;
  for (const auto& [name, n] : votes) {
    if (n > most) {
      best = name;
      most = n;
    }
  }
  return best;
}

int32_t GroupCoordinator::rebalance_timeout_ms(const Group& g) const {
  int32_t t = 0;
  for (const auto& [_, m] : g.members) t = std::max(t, m.rebalance_timeout_ms);
  return t;
}

bool GroupCoordinator::all_members_joined(const Group& g) const {
  // GroupMetadata.hasAllMembersJoined: a pending member id counts as a
  // member still to join.
  return g.pending.empty() && std::all_of(g.members.begin(), g.members.end(),
                     [](const auto& e) { return static_cast<bool>(e.second.awaiting_join); });
}

bool GroupCoordinator::accepts_joining_member(const Group& g, const std::string& member_id) const {
  const int64_t max = config().group_max_size;
  const auto size = static_cast<int64_t>(g.members.size());
  const auto it = g.members.find(member_id);  // "" is never a member's id
  const bool known = it != g.members.end();
  const bool awaiting = known && static_cast<bool>(it->second.awaiting_join);
  if (!config().group_rules.join_admission_by_state) {
    // Kafka 2.2 handleJoinGroup (KIP-389).
    return !(member_id.empty() && size >= max) && !(size > max && known && !awaiting);
  }
  // acceptJoiningMember (2.6+, KAFKA-9885).
  switch (g.state) {
    case GroupState::empty:
    case GroupState::dead:
      return true;
    case GroupState::preparing_rebalance: {
      const auto joined = std::count_if(g.members.begin(), g.members.end(), [](const auto& e) {
        return static_cast<bool>(e.second.awaiting_join);
      });
      return awaiting || joined < max;
    }
    case GroupState::completing_rebalance:
    case GroupState::stable:
      return known || size < max;
  }
  return true;
}

std::string GroupCoordinator::metadata_for(const Member& m, const std::string& protocol) const {
  for (const JoinGroupProtocol& p : m.protocols) {
    if (p.name == protocol) return p.metadata;
  }
  return "";
}

std::string GroupCoordinator::new_member_id(const std::string& client_id) {
  // GroupMetadata.generateMemberId: clientId + "-" + a random UUID, drawn
  // here from the broker's own stream.
  const uint64_t a = rng_.next_u64();
  const uint64_t b = rng_.next_u64();
  return fmt::format("{}-{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", client_id, a >> 32, (a >> 16) & 0xffff,
                     a & 0xffff, b >> 48, b & 0xffffffffffffULL);
}

JoinGroupResponse GroupCoordinator::join_result(const Group& g, const Member& m) const {
  JoinGroupResponse r;
  r.generation_id = g.generation;
  r.protocol_name = g.protocol;
  r.leader = g.leader;
  r.member_id = m.id;
  if (g.leader == m.id) {
    for (const std::string& id : g.join_order) {
      r.members.push_back({id, metadata_for(g.members.at(id), g.protocol)});
    }
  }
  return r;
}

// --- JoinGroup ----------------------------------------------------------------------------------

void GroupCoordinator::handle_join_group(const JoinGroupRequest& r, Reply reply) {
  const ErrorCode e = validate(r.group_id);
  if (e != ErrorCode::none) {
    send(reply, join_error(r.member_id, e));
  } else if (r.session_timeout_ms < config().group_min_session_timeout_ms ||
             r.session_timeout_ms > config().group_max_session_timeout_ms) {
    send(reply, join_error(r.member_id, ErrorCode::invalid_session_timeout));
  } else {
    const bool unknown = r.member_id.empty();
    Group* g = find_group(r.group_id);
    if (g == nullptr && !unknown) {
      send(reply, join_error(r.member_id, ErrorCode::unknown_member_id));
    } else {
      if (g == nullptr) g = &add_group(r.group_id);
      if (!accepts_joining_member(*g, r.member_id)) {
        // KIP-389: turned away, and out of the group if it was in it
        // (GroupMetadata.remove: no rebalance of its own).
        erase_member(*g, r.member_id, "group_max_size");
        if (config().group_rules.turned_away_drops_pending) {
          // (answered first; the rebalance may complete below)
          remove_pending_member(*g, r.member_id, "group_max_size", false);
        }
        send(reply, join_error("", ErrorCode::group_max_size_reached));
      } else if (!supports_protocols(*g, r.protocol_type, r.protocols)) {
        send(reply, join_error(r.member_id, ErrorCode::inconsistent_group_protocol));
      } else if (unknown) {
        add_pending_member(*g, r, std::move(reply));
      } else if (g->pending.count(r.member_id) != 0) {
        // A pending member comes back with its id: it joins.
        add_member_and_rebalance(*g, r.member_id, r, std::move(reply));
      } else if (g->members.count(r.member_id) == 0) {
        send(reply, join_error(r.member_id, ErrorCode::unknown_member_id));
      } else {
        Member& m = g->members.at(r.member_id);
        const bool same = m.protocols.size() == r.protocols.size() &&
                          std::equal(m.protocols.begin(), m.protocols.end(), r.protocols.begin(),
                                     [](const JoinGroupProtocol& a, const JoinGroupProtocol& b) {
                                       return a.name == b.name && a.metadata == b.metadata;
                                     });
        switch (g->state) {
          case GroupState::preparing_rebalance:
            update_member_and_rebalance(*g, m, r, std::move(reply));
            break;
          case GroupState::completing_rebalance:
            if (same) {
              // The member missed its JoinGroup answer: the same again.
              send(reply, join_result(*g, m));
            } else {
              update_member_and_rebalance(*g, m, r, std::move(reply));
            }
            break;
          case GroupState::stable:
            if (g->leader == m.id || !same) {
              // A changed subscription, or the leader asking for a new
              // assignment (topic metadata changed), forces a rebalance.
              update_member_and_rebalance(*g, m, r, std::move(reply));
            } else {
              send(reply, join_result(*g, m));
            }
            break;
          case GroupState::empty:
          case GroupState::dead:
            send(reply, join_error(r.member_id, ErrorCode::unknown_member_id));
            break;
        }
      }
      if (Group* again = find_group(r.group_id);
          again != nullptr && again->state == GroupState::preparing_rebalance) {
        try_complete_join(*again);
      }
    }
  }
  flush();
}

void GroupCoordinator::add_pending_member(Group& g, const JoinGroupRequest& r, Reply reply) {
  const std::string id = new_member_id(r.client_id);
  const std::string group = g.id;
  // addPendingMemberExpiration: a DelayedHeartbeat of the first JoinGroup's
  // session timeout, completed (here: cancelled) when the member joins.
  g.pending[id] = ctx().after(sim::Duration::millis(r.session_timeout_ms), [this, group, id] {
    on_pending_member_expired(group, id);
    flush();
  });
  ctx().trace("group_member_pending", {{"group", g.id}, {"member", id}, {"client", r.client_id}});
  send(reply, join_error(id, ErrorCode::member_id_required));
}

void GroupCoordinator::remove_pending_member(Group& g, const std::string& member_id, std::string_view why,
                                             bool complete) {
  auto it = g.pending.find(member_id);
  if (it == g.pending.end()) return;
  ctx().cancel(it->second);
  g.pending.erase(it);
  ctx().trace("group_pending_member_removed", {{"group", g.id}, {"member", member_id}, {"why", why}});
  if (complete && g.state == GroupState::preparing_rebalance) try_complete_join(g);
}

void GroupCoordinator::on_pending_member_expired(const std::string& group, const std::string& member) {
  Group* g = find_group(group);
  if (g == nullptr) return;
  auto it = g->pending.find(member);
  if (it == g->pending.end()) return;
  it->second = sim::TimerId{};  // it has run
  remove_pending_member(*g, member, "session_timeout");
}

void GroupCoordinator::add_member_and_rebalance(Group& g, const std::string& member_id,
                                                const JoinGroupRequest& r, Reply reply) {
  // The pending id's expiry is done with (tryCompleteHeartbeat completes it
  // once the group has the member); GroupMetadata.add drops it from the
  // pending ids.
  if (auto it = g.pending.find(member_id); it != g.pending.end()) {
    ctx().cancel(it->second);
    g.pending.erase(it);
  }
  Member m;
  m.id = member_id;
  m.client_id = r.client_id;
  m.session_timeout_ms = r.session_timeout_ms;
  m.rebalance_timeout_ms = r.rebalance_timeout_ms;
  m.protocol_type = r.protocol_type;
  m.protocols = r.protocols;
  m.awaiting_join = std::move(reply);
  m.is_new = true;
  // InitialDelayedJoin may wait longer for more new members (KIP-134).
  if (g.state == GroupState::preparing_rebalance && g.generation == 0) g.new_member_added = true;
  // GroupMetadata.add.
  if (g.members.empty()) g.protocol_type = r.protocol_type;
  if (g.leader.empty()) g.leader = m.id;
  const std::string id = m.id;
  g.join_order.push_back(id);
  Member& added = g.members.emplace(id, std::move(m)).first->second;
  ctx().trace("group_member_joined", {{"group", g.id}, {"member", id}, {"client", r.client_id},
                                      {"session_timeout_ms", r.session_timeout_ms},
                                      {"rebalance_timeout_ms", r.rebalance_timeout_ms}});
  // A new member cannot heartbeat before its JoinGroup returns: it gets
  // NewMemberJoinTimeoutMs instead of its session timeout (KAFKA-7610).
  schedule_heartbeat(g, added, kNewMemberJoinTimeoutMs);
  maybe_prepare_rebalance(g, "new member joined");
}

void GroupCoordinator::update_member_and_rebalance(Group& g, Member& m, const JoinGroupRequest& r,
                                                   Reply reply) {
  m.protocols = r.protocols;
  // GroupMetadata.updateMember (GroupRules::rejoin_updates_timeouts).
  if (config().group_rules.rejoin_updates_timeouts) {
    m.session_timeout_ms = r.session_timeout_ms;
    m.rebalance_timeout_ms = r.rebalance_timeout_ms;
  }
  // A JoinGroup already waiting (the client gave up and sent another) is
  // answered so that its connection is not left hanging.
  send(m.awaiting_join, join_error(m.id, ErrorCode::rebalance_in_progress));
  m.awaiting_join = std::move(reply);
  maybe_prepare_rebalance(g, "member rejoined");
}

void GroupCoordinator::maybe_prepare_rebalance(Group& g, std::string_view why) {
  // GroupMetadata.canRebalance.
  if (g.state == GroupState::stable || g.state == GroupState::completing_rebalance ||
      g.state == GroupState::empty) {
    prepare_rebalance(g, why);
  }
}

void GroupCoordinator::prepare_rebalance(Group& g, std::string_view why) {
  // Members waiting for their assignment must rejoin.
  if (g.state == GroupState::completing_rebalance) {
    for (auto& [_, m] : g.members) m.assignment.clear();
    propagate_assignment(g, ErrorCode::rebalance_in_progress);
  }
  const bool initial = g.state == GroupState::empty;
  transition(g, GroupState::preparing_rebalance, why);
  if (initial) {
    // InitialDelayedJoin (KIP-134): wait group.initial.rebalance.delay.ms;
    // each new member extends it by the delay again, up to the rebalance
    // timeout in all.
    const int64_t delay = config().group_initial_rebalance_delay_ms;
    g.initial_delay = true;
    g.new_member_added = false;
    g.initial_remaining_ms = std::max<int64_t>(rebalance_timeout_ms(g) - delay, 0);
    arm_join(g, delay);
  } else {
    // DelayedJoin: every member rejoins, or the rebalance timeout passes.
    g.initial_delay = false;
    arm_join(g, rebalance_timeout_ms(g));
    try_complete_join(g);
  }
}

void GroupCoordinator::arm_join(Group& g, int64_t delay_ms) {
  if (g.join_armed) ctx().cancel(g.join_timer);
  g.join_armed = true;
  const uint64_t seq = ++g.join_seq;
  const std::string id = g.id;
  g.join_timer = ctx().after(sim::Duration::millis(delay_ms), [this, id, seq] {
    on_join_timer(id, seq);
    flush();
  });
}

void GroupCoordinator::on_join_timer(const std::string& group, uint64_t seq) {
  Group* g = find_group(group);
  if (g == nullptr || !g->join_armed || g->join_seq != seq) return;
  g->join_armed = false;
  if (g->initial_delay && g->new_member_added && g->initial_remaining_ms != 0) {
    // InitialDelayedJoin.onComplete: someone new came; wait once more.
    g->new_member_added = false;
    const int64_t delay =
        std::min<int64_t>(config().group_initial_rebalance_delay_ms, g->initial_remaining_ms);
    g->initial_remaining_ms = std::max<int64_t>(g->initial_remaining_ms - delay, 0);
    arm_join(*g, delay);
    return;
  }
  complete_join(*g);
}

void GroupCoordinator::try_complete_join(Group& g) {
  // DelayedJoin.tryComplete (InitialDelayedJoin never completes early).
  if (g.state != GroupState::preparing_rebalance || !g.join_armed || g.initial_delay) return;
  if (!all_members_joined(g)) return;
  ctx().cancel(g.join_timer);
  g.join_armed = false;
  complete_join(g);
}

void GroupCoordinator::complete_join(Group& g) {
  // GroupCoordinator.onCompleteJoin.
  if (g.join_armed) {
    ctx().cancel(g.join_timer);
    g.join_armed = false;
  }
  std::vector<std::string> missing;
  for (const std::string& id : g.join_order) {
    if (!g.members.at(id).awaiting_join) missing.push_back(id);
  }
  for (const std::string& id : missing) erase_member(g, id, "rebalance_timeout");
  // GroupMetadata.initNextGeneration.
  ++g.generation;
  if (!g.members.empty()) {
    g.protocol = select_protocol(g);
    transition(g, GroupState::completing_rebalance, "join complete");
  } else {
    g.protocol.clear();
    transition(g, GroupState::empty, "no members");
  }
  ctx().trace("group_generation", {{"group", g.id},
                                   {"generation", g.generation},
                                   {"protocol", g.protocol},
                                   {"leader", g.leader},
                                   {"members", static_cast<int64_t>(g.members.size())}});
  if (g.state == GroupState::empty) {
    // The empty generation is written too; a failure only means an older
    // generation comes back after a failover, with no members to mind.
    const std::string id = g.id;
    store_group(g, {}, [this, id](ErrorCode e) {
      if (e != ErrorCode::none) {
        ctx().trace("group_metadata_store_failed", {{"group", id}, {"error", to_string(e)}});
      }
    });
    return;
  }
  for (const std::string& id : g.join_order) {
    Member& m = g.members.at(id);
    send(m.awaiting_join, join_result(g, m));
    schedule_heartbeat(g, m, m.session_timeout_ms);
    m.is_new = false;
  }
}

void GroupCoordinator::erase_member(Group& g, const std::string& member_id, std::string_view why) {
  auto it = g.members.find(member_id);
  if (it == g.members.end()) return;
  Member& m = it->second;
  // A JoinGroup still waiting learns that the member is gone.
  send(m.awaiting_join, join_error("", ErrorCode::unknown_member_id));
  send(m.awaiting_sync, SyncGroupResponse{ErrorCode::unknown_member_id, {}});
  if (m.heartbeat_armed) ctx().cancel(m.heartbeat_timer);
  g.members.erase(it);
  g.join_order.erase(std::find(g.join_order.begin(), g.join_order.end(), member_id));
  if (g.leader == member_id) g.leader = g.join_order.empty() ? "" : g.join_order.front();
  ctx().trace("group_member_removed", {{"group", g.id}, {"member", member_id}, {"why", why}});
}

void GroupCoordinator::remove_member(Group& g, const std::string& member_id, std::string_view why) {
  // GroupCoordinator.removeMemberAndUpdateGroup.
  erase_member(g, member_id, why);
  switch (g.state) {
    case GroupState::dead:
    case GroupState::empty:
      break;
    case GroupState::stable:
    case GroupState::completing_rebalance:
      maybe_prepare_rebalance(g, std::string("member removed: ") + std::string(why));
      break;
    case GroupState::preparing_rebalance:
      try_complete_join(g);
      break;
  }
}

void GroupCoordinator::schedule_heartbeat(Group& g, Member& m, int64_t timeout_ms) {
  // completeAndScheduleNextExpiration.
  m.latest_heartbeat_ms = now_ms();
  if (m.heartbeat_armed) ctx().cancel(m.heartbeat_timer);
  m.heartbeat_armed = true;
  const uint64_t seq = ++m.heartbeat_seq;
  const std::string group = g.id;
  const std::string member = m.id;
  m.heartbeat_timer = ctx().after(sim::Duration::millis(timeout_ms), [this, group, member, seq] {
    on_heartbeat_expired(group, member, seq);
    flush();
  });
}

void GroupCoordinator::on_heartbeat_expired(const std::string& group, const std::string& member,
                                            uint64_t seq) {
  Group* g = find_group(group);
  if (g == nullptr) return;
  auto it = g->members.find(member);
  if (it == g->members.end() || it->second.heartbeat_seq != seq) return;
  Member& m = it->second;
  m.heartbeat_armed = false;
  // MemberMetadata.shouldKeepAlive: a member waiting in JoinGroup (unless it
  // is new and past NewMemberJoinTimeoutMs) or in SyncGroup is not expired;
  // its next deadline is set when the rebalance answers it.
  const int64_t now = now_ms();
  bool keep = false;
  if (m.awaiting_join) {
    keep = !m.is_new || m.latest_heartbeat_ms + kNewMemberJoinTimeoutMs > now;
  } else if (m.awaiting_sync) {
    keep = true;
  } else {
    keep = m.latest_heartbeat_ms + m.session_timeout_ms > now;
  }
  if (keep) return;
  remove_member(*g, member, m.is_new ? "new_member_join_timeout" : "session_timeout");
}

void GroupCoordinator::propagate_assignment(Group& g, ErrorCode error) {
  for (const std::string& id : g.join_order) {
    Member& m = g.members.at(id);
    if (!m.awaiting_sync) continue;
    send(m.awaiting_sync, SyncGroupResponse{error, m.assignment});
    // Restart the session timer: an expiry that came while the member
    // waited was ignored.
    schedule_heartbeat(g, m, m.session_timeout_ms);
  }
}

// --- SyncGroup, Heartbeat, LeaveGroup ----------------------------------------------------

void GroupCoordinator::handle_sync_group(const SyncGroupRequest& r, Reply reply) {
  const ErrorCode e = validate(r.group_id);
  Group* g = e == ErrorCode::none ? find_group(r.group_id) : nullptr;
  if (e == ErrorCode::coordinator_load_in_progress) {
    // The rebalance in progress was lost: rejoin (older clients do not
    // expect COORDINATOR_LOAD_IN_PROGRESS here).
    send(reply, SyncGroupResponse{ErrorCode::rebalance_in_progress, {}});
  } else if (e != ErrorCode::none) {
    send(reply, SyncGroupResponse{e, {}});
  } else if (g == nullptr || g->members.count(r.member_id) == 0) {
    send(reply, SyncGroupResponse{ErrorCode::unknown_member_id, {}});
  } else if (r.generation_id != g->generation) {
    send(reply, SyncGroupResponse{ErrorCode::illegal_generation, {}});
  } else {
    Member& m = g->members.at(r.member_id);
    switch (g->state) {
      case GroupState::empty:
      case GroupState::dead:
        send(reply, SyncGroupResponse{ErrorCode::unknown_member_id, {}});
        break;
      case GroupState::preparing_rebalance:
        send(reply, SyncGroupResponse{ErrorCode::rebalance_in_progress, {}});
        break;
      case GroupState::stable:
        send(reply, SyncGroupResponse{ErrorCode::none, m.assignment});
        schedule_heartbeat(*g, m, m.session_timeout_ms);
        break;
      case GroupState::completing_rebalance: {
        send(m.awaiting_sync, SyncGroupResponse{ErrorCode::rebalance_in_progress, {}});
        m.awaiting_sync = std::move(reply);
        if (g->leader != m.id) break;
        // The leader's assignment: members it left out get nothing.
        std::map<std::string, std::vector<TopicPartition>> assignment;
        for (const std::string& id : g->join_order) assignment[id] = {};
        for (const SyncGroupAssignment& a : r.assignments) {
          if (assignment.count(a.member_id) != 0) assignment[a.member_id] = a.partitions;
        }
        const std::string group = g->id;
        const int32_t generation = g->generation;
        store_group(*g, assignment, [this, group, generation, assignment](ErrorCode error) {
          Group* g = find_group(group);
          if (g == nullptr || g->state != GroupState::completing_rebalance ||
              g->generation != generation) {
            return;  // something else happened meanwhile
          }
          if (error != ErrorCode::none) {
            ctx().trace("group_metadata_store_failed", {{"group", group}, {"error", to_string(error)}});
            for (auto& [_, m] : g->members) m.assignment.clear();
            propagate_assignment(*g, error);
            maybe_prepare_rebalance(*g, "storing the assignment failed");
            return;
          }
          for (auto& [id, m] : g->members) {
            auto a = assignment.find(id);
            m.assignment = a == assignment.end() ? std::vector<TopicPartition>{} : a->second;
          }
          propagate_assignment(*g, ErrorCode::none);
          transition(*g, GroupState::stable, "assignment stored");
        });
        break;
      }
    }
  }
  flush();
}

void GroupCoordinator::handle_heartbeat(const HeartbeatRequest& r, Reply reply) {
  const ErrorCode e = validate(r.group_id);
  Group* g = e == ErrorCode::none ? find_group(r.group_id) : nullptr;
  if (e == ErrorCode::coordinator_load_in_progress) {
    send(reply, HeartbeatResponse{ErrorCode::none});  // answered blindly while loading
  } else if (e != ErrorCode::none) {
    send(reply, HeartbeatResponse{e});
  } else if (g == nullptr || g->members.count(r.member_id) == 0) {
    send(reply, HeartbeatResponse{ErrorCode::unknown_member_id});
  } else if (!config().group_rules.heartbeat_checks_member_first &&
             g->state == GroupState::completing_rebalance) {
    // Before 2.3: whatever the member's generation.
    send(reply, HeartbeatResponse{ErrorCode::rebalance_in_progress});
  } else if (r.generation_id != g->generation) {
    send(reply, HeartbeatResponse{ErrorCode::illegal_generation});
  } else {
    Member& m = g->members.at(r.member_id);
    switch (g->state) {
      case GroupState::empty:
      case GroupState::dead:
        send(reply, HeartbeatResponse{ErrorCode::unknown_member_id});
        break;
      case GroupState::completing_rebalance:
        if (config().group_rules.heartbeat_while_completing) {
          schedule_heartbeat(*g, m, m.session_timeout_ms);
          send(reply, HeartbeatResponse{ErrorCode::none});
        } else {
          send(reply, HeartbeatResponse{ErrorCode::rebalance_in_progress});
        }
        break;
      case GroupState::preparing_rebalance:
        schedule_heartbeat(*g, m, m.session_timeout_ms);
        send(reply, HeartbeatResponse{ErrorCode::rebalance_in_progress});
        break;
      case GroupState::stable:
        schedule_heartbeat(*g, m, m.session_timeout_ms);
        send(reply, HeartbeatResponse{ErrorCode::none});
        break;
    }
  }
  flush();
}

void GroupCoordinator::handle_leave_group(const LeaveGroupRequest& r, Reply reply) {
  const ErrorCode e = validate(r.group_id);
  Group* g = e == ErrorCode::none ? find_group(r.group_id) : nullptr;
  if (e != ErrorCode::none) {
    send(reply, LeaveGroupResponse{e});
  } else if (g != nullptr && g->pending.count(r.member_id) != 0) {
    // A pending member leaving (handleLeaveGroup): its id is dropped, which
    // may let the rebalance complete.
    remove_pending_member(*g, r.member_id, "left");
    send(reply, LeaveGroupResponse{ErrorCode::none});
  } else if (g == nullptr || g->members.count(r.member_id) == 0) {
    send(reply, LeaveGroupResponse{ErrorCode::unknown_member_id});
  } else {
    remove_member(*g, r.member_id, "left");
    send(reply, LeaveGroupResponse{ErrorCode::none});
  }
  flush();
}

// --- offsets ------------------------------------------------------------------------------------

void GroupCoordinator::handle_offset_commit(const OffsetCommitRequest& r, Reply reply) {
  const ErrorCode e = validate(r.group_id);
  if (e != ErrorCode::none) {
    send(reply, commit_error(r, e));
    flush();
    return;
  }
  Group* g = find_group(r.group_id);
  if (g == nullptr) {
    if (r.generation_id < 0) {
      // A client that only stores offsets in Kafka (no group management).
      store_offsets(add_group(r.group_id), r, std::move(reply));
    } else {
      // ... or a member of a generation that is gone.
      send(reply, commit_error(r, ErrorCode::illegal_generation));
    }
  } else if (r.generation_id < 0 && g->state == GroupState::empty) {
    store_offsets(*g, r, std::move(reply));
  } else if (!config().group_rules.commit_checks_member_first &&
             g->state == GroupState::completing_rebalance) {
    // Before 2.4: before asking who sends it.
    send(reply, commit_error(r, ErrorCode::rebalance_in_progress));
  } else if (g->members.count(r.member_id) == 0) {
    send(reply, commit_error(r, ErrorCode::unknown_member_id));
  } else if (r.generation_id != g->generation) {
    send(reply, commit_error(r, ErrorCode::illegal_generation));
  } else if (g->state == GroupState::completing_rebalance) {
    // The member has its new generation but not its assignment yet.
    send(reply, commit_error(r, ErrorCode::rebalance_in_progress));
  } else {
    // Stable, or PreparingRebalance: the old generation may still commit
    // before it rejoins; the heartbeat tells it about the rebalance.
    Member& m = g->members.at(r.member_id);
    schedule_heartbeat(*g, m, m.session_timeout_ms);
    store_offsets(*g, r, std::move(reply));
  }
  flush();
}

void GroupCoordinator::store_offsets(Group& g, const OffsetCommitRequest& r, Reply reply) {
  std::vector<Record> records;
  for (const OffsetCommitPartition& p : r.partitions) {
    Record rec;
    rec.key = encode_offset_commit_key({g.id, p.tp});
    rec.value = static_cast<uint64_t>(p.offset);
    rec.size = record_size(records.size(), rec.key, kOffsetCommitValueBytes);
    records.push_back(std::move(rec));
  }
  const std::string group = g.id;
  const int32_t partition = g.partition;
  auto shared_reply = std::make_shared<Reply>(std::move(reply));
  append(partition, std::move(records),
         [this, group, r, shared_reply](ErrorCode append_error, Offset first) {
           const ErrorCode error = commit_error_of(append_error);
           Group* g = find_group(group);
           if (error == ErrorCode::none && g != nullptr) {
             for (size_t i = 0; i < r.partitions.size(); ++i) {
               const Offset at = first + static_cast<int64_t>(i);
               CommittedOffset& c = g->offsets[r.partitions[i].tp];
               if (at > c.record_offset) c = CommittedOffset{r.partitions[i].offset, at};
             }
           }
           if (error == ErrorCode::none) {
             ctx().trace("offset_commit_stored",
                         {{"group", group},
                          {"partitions", static_cast<int64_t>(r.partitions.size())},
                          {"generation", r.generation_id},
                          {"first_record", first.value}});
           } else {
             ctx().trace("offset_commit_failed", {{"group", group},
                                                  {"error", to_string(error)},
                                                  {"append_error", to_string(append_error)}});
           }
           send(*shared_reply, commit_error(r, error));
         });
}

void GroupCoordinator::handle_offset_fetch(const OffsetFetchRequest& r, Reply reply) {
  OffsetFetchResponse resp;
  resp.error = validate(r.group_id);
  if (resp.error == ErrorCode::none) {
    // Answered from the cache whatever the group's state (a group may use
    // Kafka only to store offsets). No partitions: every committed one.
    const Group* g = find_group(r.group_id);
    if (r.partitions.empty()) {
      if (g != nullptr) {
        for (const auto& [tp, c] : g->offsets) resp.partitions.push_back({tp, c.offset, ErrorCode::none});
      }
    } else {
      for (const TopicPartition& tp : r.partitions) {
        int64_t offset = -1;
        if (g != nullptr) {
          auto it = g->offsets.find(tp);
          if (it != g->offsets.end()) offset = it->second.offset;
        }
        resp.partitions.push_back({tp, offset, ErrorCode::none});
      }
    }
  }
  send(reply, std::move(resp));
  flush();
}

// --- writing to __consumer_offsets --------------------------------------------------------------

void GroupCoordinator::store_group(Group& g, std::map<std::string, std::vector<TopicPartition>> assignment,
                                   std::function<void(ErrorCode)> done) {
  // GroupMetadataManager.storeGroup: the group as it is, with the assignment
  // being stored.
  StoredGroup s;
  s.protocol_type = g.protocol_type;
  s.generation = g.generation;
  s.protocol = g.protocol;
  s.leader = g.leader;
  for (const std::string& id : g.join_order) {
    const Member& m = g.members.at(id);
    auto a = assignment.find(id);
    s.members.push_back({m.id, m.client_id, m.session_timeout_ms, m.rebalance_timeout_ms,
                         metadata_for(m, g.protocol),
                         a == assignment.end() ? std::vector<TopicPartition>{} : a->second});
  }
  Record rec;
  rec.key = encode_group_metadata(g.id, s);
  rec.size = record_size(0, rec.key, 0);
  const std::string group = g.id;
  const int32_t generation = g.generation;
  append(g.partition, {std::move(rec)}, [this, group, generation, done](ErrorCode e, Offset at) {
    const ErrorCode error = store_group_error_of(e);
    if (error == ErrorCode::none) {
      ctx().trace("group_metadata_stored",
                  {{"group", group}, {"generation", generation}, {"offset", at.value}});
    }
    done(error);
  });
}

void GroupCoordinator::append(int32_t partition, std::vector<Record> records,
                              std::function<void(ErrorCode, Offset)> done) {
  const TopicPartition tp = offsets_tp(partition);
  Partition* p = env_.find_partition(tp);
  if (p == nullptr || !p->is_leader()) {
    done(ErrorCode::not_leader_for_partition, Offset{-1});
    return;
  }
  const bool all = config().offsets_commit_required_acks == -1;
  if (all && p->under_min_isr()) {
    done(ErrorCode::not_enough_replicas, Offset{-1});
    return;
  }
  const int64_t n = static_cast<int64_t>(records.size());
  appending_ = true;
  const Offset end = env_.append(tp, std::move(records));
  appending_ = false;
  const Offset first = end - n;
  if (!all) {
    // offsets.commit.required.acks 1 (or 0): done once the leader has it.
    done(ErrorCode::none, first);
    return;
  }
  const uint64_t id = next_append_++;
  PendingAppend a;
  a.id = id;
  a.tp = tp;
  a.first = first;
  a.required = end;
  a.done = std::move(done);
  a.timer = ctx().after(sim::Duration::millis(config().offsets_commit_timeout_ms), [this, id] {
    try_complete_append(id, true);
    flush();
  });
  appends_.emplace(id, std::move(a));
  // The append may have moved the high watermark (an ISR of one): whatever
  // waits on this partition, this append included, may be done.
  std::vector<uint64_t> ids;
  for (const auto& [other, pending] : appends_) {
    if (pending.tp == tp) ids.push_back(other);
  }
  for (uint64_t other : ids) try_complete_append(other, false);
}

void GroupCoordinator::try_complete_append(uint64_t id, bool timed_out) {
  // DelayedProduce, for the one partition of an appendForGroup.
  auto it = appends_.find(id);
  if (it == appends_.end()) return;
  PendingAppend& a = it->second;
  ErrorCode e = ErrorCode::none;
  const Partition* p = env_.find_partition(a.tp);
  if (p == nullptr || !p->is_leader()) {
    e = ErrorCode::not_leader_for_partition;
  } else if (p->high_watermark() >= a.required) {
    e = p->under_min_isr_after_append() ? ErrorCode::not_enough_replicas_after_append : ErrorCode::none;
  } else if (timed_out) {
    e = ErrorCode::request_timed_out;
  } else {
    return;
  }
  PendingAppend done = std::move(it->second);
  appends_.erase(it);
  if (!timed_out) ctx().cancel(done.timer);
  done.done(e, done.first);
}

void GroupCoordinator::on_partition_progress(const TopicPartition& tp) {
  // During our own append the caller looks at the pending appends itself.
  if (tp.topic != kOffsetsTopicName || appending_) return;
  std::vector<uint64_t> ids;
  for (const auto& [id, a] : appends_) {
    if (a.tp == tp) ids.push_back(id);
  }
  for (uint64_t id : ids) try_complete_append(id, false);
  flush();
}

// --- loading and unloading ----------------------------------------------------------------------

void GroupCoordinator::on_become_leader(int32_t partition) {
  if (owned_.count(partition) != 0 || loading_.count(partition) != 0) return;
  const uint64_t attempt = next_load_++;
  loading_[partition] = attempt;
  ctx().trace("group_partition_loading", {{"partition", partition}});
  ctx().after(sim::Duration::millis(kLoadDelayMs), [this, partition, attempt] {
    auto it = loading_.find(partition);
    if (it == loading_.end() || it->second != attempt) return;
    load(partition);
    flush();
  });
}

void GroupCoordinator::load(int32_t partition) {
  loading_.erase(partition);
  const TopicPartition tp = offsets_tp(partition);
  const Partition* p = env_.find_partition(tp);
  if (p == nullptr || !p->is_leader()) {
    // The leadership moved on while we waited (logEndOffset is -1 then).
    ctx().trace("group_partition_load_abandoned", {{"partition", partition}});
    return;
  }
  // doLoadGroupsAndOffsets: from the log start to the log end; the last
  // record per key wins.
  const PartitionLog& log = p->log();
  std::map<std::string, std::map<TopicPartition, CommittedOffset>> offsets;
  std::map<std::string, StoredGroup> stored;
  int64_t records = 0;
  for (const Record& r : log.read(log.log_start(), log.log_end(), INT64_MAX)) {
    ++records;
    if (auto k = decode_offset_commit_key(r.key)) {
      offsets[k->group][k->tp] = CommittedOffset{static_cast<int64_t>(r.value), r.offset};
    } else if (auto m = decode_group_metadata(r.key)) {
      stored[m->first.group] = std::move(m->second);
    }
  }
  std::set<std::string> names;
  for (const auto& [name, _] : offsets) names.insert(name);
  for (const auto& [name, _] : stored) names.insert(name);
  owned_.insert(partition);
  for (const std::string& name : names) {
    if (offsets_partition_for(name, config().offsets_topic_num_partitions) != partition) continue;
    Group& g = add_group(name);
    auto o = offsets.find(name);
    if (o != offsets.end()) g.offsets = o->second;
    auto s = stored.find(name);
    if (s != stored.end()) {
      const StoredGroup& sg = s->second;
      g.protocol_type = sg.protocol_type;
      g.generation = sg.generation;
      g.protocol = sg.protocol;
      g.leader = sg.leader;
      for (const StoredMember& sm : sg.members) {
        Member m;
        m.id = sm.member_id;
        m.client_id = sm.client_id;
        m.session_timeout_ms = sm.session_timeout_ms;
        m.rebalance_timeout_ms = sm.rebalance_timeout_ms;
        m.protocol_type = sg.protocol_type;
        m.protocols = {{sg.protocol, sm.metadata}};
        m.assignment = sm.assignment;
        g.join_order.push_back(m.id);
        g.members.emplace(m.id, std::move(m));
      }
      // GroupMetadata.loadGroup: Stable with members, else Empty.
      g.state = g.members.empty() ? GroupState::empty : GroupState::stable;
    }
    ctx().trace("group_loaded", {{"group", name},
                                 {"state", to_string(g.state)},
                                 {"generation", g.generation},
                                 {"members", static_cast<int64_t>(g.members.size())},
                                 {"offsets", static_cast<int64_t>(g.offsets.size())}});
    // onGroupLoaded: every member's session timer starts now.
    for (const std::string& id : g.join_order) {
      Member& m = g.members.at(id);
      schedule_heartbeat(g, m, m.session_timeout_ms);
    }
    if (static_cast<int64_t>(g.members.size()) > config().group_max_size) {
      prepare_rebalance(g, "loaded group is over group.max.size");
    }
  }
  ctx().trace("group_partition_loaded", {{"partition", partition},
                                         {"log_start", log.log_start().value},
                                         {"log_end", log.log_end().value},
                                         {"records", records},
                                         {"groups", static_cast<int64_t>(names.size())}});
}

void GroupCoordinator::on_resign(int32_t partition) {
  if (owned_.count(partition) == 0 && loading_.count(partition) == 0) return;
  unload(partition, "resigned");
  flush();
}

void GroupCoordinator::unload(int32_t partition, std::string_view why) {
  // removeGroupsForPartition / onGroupUnloaded.
  loading_.erase(partition);
  owned_.erase(partition);
  int64_t count = 0;
  for (auto it = groups_.begin(); it != groups_.end();) {
    Group& g = it->second;
    if (g.partition != partition) {
      ++it;
      continue;
    }
    ++count;
    if (g.join_armed) ctx().cancel(g.join_timer);
    for (auto& [id, timer] : g.pending) ctx().cancel(timer);
    for (auto& [id, m] : g.members) {
      if (m.heartbeat_armed) ctx().cancel(m.heartbeat_timer);
      send(m.awaiting_join, join_error(m.id, ErrorCode::not_coordinator));
      send(m.awaiting_sync, SyncGroupResponse{ErrorCode::not_coordinator, {}});
    }
    ctx().trace("group_unloaded", {{"group", g.id},
                                   {"state", to_string(g.state)},
                                   {"generation", g.generation}});
    it = groups_.erase(it);
  }
  // Appends still waiting on this partition fail as a produce to a
  // partition we no longer lead would.
  std::vector<uint64_t> ids;
  for (const auto& [id, a] : appends_) {
    if (a.tp.partition == partition) ids.push_back(id);
  }
  for (uint64_t id : ids) {
    PendingAppend a = std::move(appends_.at(id));
    appends_.erase(id);
    ctx().cancel(a.timer);
    a.done(ErrorCode::not_leader_for_partition, a.first);
  }
  ctx().trace("group_partition_unloaded", {{"partition", partition}, {"groups", count}, {"why", why}});
}

// --- inspection --------------------------------------------------------------------------------

std::optional<GroupState> GroupCoordinator::group_state(const std::string& group) const {
  auto it = groups_.find(group);
  if (it == groups_.end()) return std::nullopt;
  return it->second.state;
}

std::optional<int32_t> GroupCoordinator::generation(const std::string& group) const {
  auto it = groups_.find(group);
  if (it == groups_.end()) return std::nullopt;
  return it->second.generation;
}

std::vector<std::string> GroupCoordinator::members(const std::string& group) const {
  auto it = groups_.find(group);
  if (it == groups_.end()) return {};
  return it->second.join_order;
}

std::optional<std::pair<int32_t, int32_t>> GroupCoordinator::member_timeouts(const std::string& group,
                                                                           const std::string& member) const {
  auto g = groups_.find(group);
  if (g == groups_.end()) return std::nullopt;
  auto m = g->second.members.find(member);
  if (m == g->second.members.end()) return std::nullopt;
  return std::pair{m->second.session_timeout_ms, m->second.rebalance_timeout_ms};
}

std::vector<std::string> GroupCoordinator::pending_members(const std::string& group) const {
  std::vector<std::string> out;
  auto it = groups_.find(group);
  if (it == groups_.end()) return out;
  for (const auto& [id, _] : it->second.pending) out.push_back(id);
  return out;
}

std::optional<std::string> GroupCoordinator::leader(const std::string& group) const {
  auto it = groups_.find(group);
  if (it == groups_.end() || it->second.leader.empty()) return std::nullopt;
  return it->second.leader;
}

std::optional<int64_t> GroupCoordinator::committed(const std::string& group,
                                                   const TopicPartition& tp) const {
  auto it = groups_.find(group);
  if (it == groups_.end()) return std::nullopt;
  auto o = it->second.offsets.find(tp);
  if (o == it->second.offsets.end()) return std::nullopt;
  return o->second.offset;
}

}  // namespace kafka
