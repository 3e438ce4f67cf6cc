// The consumer-group coordinator inside a broker
// (kafka.coordinator.group.GroupCoordinator, GroupMetadata, MemberMetadata,
// GroupMetadataManager, DelayedJoin / InitialDelayedJoin / DelayedHeartbeat,
// Kafka 2.x–3.x in ZooKeeper mode). Owned by the Broker, which routes the
// group requests (JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit,
// OffsetFetch) and the leadership changes of __consumer_offsets here.
//
// Who coordinates a group: the leader of __consumer_offsets partition
// group_partition(group id, offsets.topic.num.partitions)
// (GroupMetadataManager.partitionFor). A request for a group whose partition
// this broker does not own gets NOT_COORDINATOR; while that partition is being
// loaded, COORDINATOR_LOAD_IN_PROGRESS (GroupCoordinator.validateGroupStatus).
//
// Owning a partition (GroupMetadataManager.scheduleLoadGroupAndOffsets /
// doLoadGroupsAndOffsets): when the broker becomes the partition's leader,
// the partition is "loading" for kLoadDelay (Kafka loads on its scheduler
// thread; the model takes a fixed, documented delay), then the log is read
// from its log start to its log END offset (doLoadGroupsAndOffsets reads
// while currOffset < logEndOffset, the local LEO — not the high watermark),
// and the last record per key rebuilds the committed offsets and each
// group's metadata; a group with members comes back Stable, one without
// Empty, and every member's session timer starts (onGroupLoaded). Becoming a
// follower, or StopReplica, unloads the partition (removeGroupsForPartition /
// onGroupUnloaded): timers are cancelled, a JoinGroup or SyncGroup waiting
// is answered NOT_COORDINATOR, and so is an append still waiting for
// replication.
//
// Writes (GroupMetadataManager.appendForGroup): offset commits and group
// metadata are appended to the group's partition as its leader, with
// offsets.commit.required.acks (-1: wait for the high watermark to pass the
// records, like a produce with acks=all) and offsets.commit.timeout.ms
// (REQUEST_TIMED_OUT). Errors map as storeOffsets / storeGroup map them.
//
// Records in __consumer_offsets. kafka::Record carries one string, `key`,
// and a uint64 `value`. We keep Kafka's split between a record's key (its
// identity, which "last record per key wins" compares) and its value by
// writing the key bytes first and the value bytes after them in `key`: the
// key is self-delimiting, so decode_offsets_key() finds where it ends. Every
// field is length-prefixed ("<decimal length>:<bytes>"), so any group id,
// topic name or member id is unambiguous:
//   offset commit    key   = "\x01" lp(group) lp(topic) lp(partition)
//                    value = nothing; the committed offset is Record::value
//   group metadata   key   = "\x02" lp(group)
//                    value = lp(protocol_type) lp(generation) lp(protocol)
//                            lp(leader) lp(member count), then per member
//                            lp(member id) lp(client id) lp(session timeout)
//                            lp(rebalance timeout) lp(subscription metadata)
//                            lp(assignment size), then per partition
//                            lp(topic) lp(partition)
// (Kafka's own schemas: GroupMetadataManager's OFFSET_COMMIT_KEY_SCHEMA,
// key versions 0/1 for offsets and 2 for group metadata, which the type byte
// echoes.)
//
// A new member's first JoinGroup (no member id) does not join (KIP-394,
// Kafka 2.2+, JoinGroup v4+, which every client here sends): the
// coordinator hands out a member id, holds it as a pending member for the
// session timeout, and answers MEMBER_ID_REQUIRED; the member joins when it
// comes back with that id (doUnknownJoinGroup / doJoinGroup,
// addPendingMemberExpiration). A pending member keeps a rebalance from
// completing before the rebalance timeout, as one that has not rejoined
// does (GroupMetadata.hasAllMembersJoined), until it joins, leaves or
// expires.
//
// Not modelled (see docs/fidelity.md, "Group coordinator"): static membership (KIP-345);
// offset retention and expiry (offsets.retention.minutes); group deletion
// and tombstones; transactional offset commits; INVALID_GROUP_ID for an
// empty group id.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "model/kafka/config.h"
#include "model/kafka/partition.h"
#include "model/kafka/wire.h"
#include "sim/random.h"
#include "sim/world.h"

namespace kafka {

inline constexpr const char* kOffsetsTopicName = "__consumer_offsets";

// GroupMetadataManager.partitionFor: which __consumer_offsets partition holds
// a group (java.lang.String.hashCode of the id, Utils.abs, modulo the count).
int32_t offsets_partition_for(const std::string& group, int32_t partitions);

// The group states (kafka.coordinator.group.GroupState).
enum class GroupState { empty, preparing_rebalance, completing_rebalance, stable, dead };
const char* to_string(GroupState s);

// --- records of __consumer_offsets ----------------------------------------------------

struct OffsetCommitKey {
  std::string group;
  TopicPartition tp;
  friend bool operator==(const OffsetCommitKey&, const OffsetCommitKey&) = default;
};
struct GroupMetadataKey {
  std::string group;
  friend bool operator==(const GroupMetadataKey&, const GroupMetadataKey&) = default;
};
struct StoredMember {
  std::string member_id;
  std::string client_id;
  int32_t session_timeout_ms = 0;
  int32_t rebalance_timeout_ms = 0;
  std::string metadata;  // the subscription for the group's protocol
  std::vector<TopicPartition> assignment;
  friend bool operator==(const StoredMember&, const StoredMember&) = default;
};
struct StoredGroup {
  std::string protocol_type;
  int32_t generation = 0;
  std::string protocol;
  std::string leader;
  std::vector<StoredMember> members;
  friend bool operator==(const StoredGroup&, const StoredGroup&) = default;
};

std::string encode_offset_commit_key(const OffsetCommitKey& k);
// Key and value of a group-metadata record, in one string (see above).
std::string encode_group_metadata(const std::string& group, const StoredGroup& g);
// The identity part of a record key (the bytes a compaction would compare),
// or nullopt when the string is not one of the formats above.
std::optional<std::string> offsets_record_identity(const std::string& key);
// What an offsets record is; nullopt for anything else (a client record).
std::optional<OffsetCommitKey> decode_offset_commit_key(const std::string& key);
std::optional<std::pair<GroupMetadataKey, StoredGroup>> decode_group_metadata(const std::string& key);

// --- the coordinator --------------------------------------------------------------------

class GroupCoordinator {
 public:
  using Reply = std::function<void(Response)>;
  // What the coordinator needs from its broker.
  struct Environment {
    sim::ProcessContext* ctx = nullptr;
    const BrokerConfig* config = nullptr;
    // The local replica of a partition, or null.
    std::function<Partition*(const TopicPartition&)> find_partition;
    // Appends `records` to a partition this broker leads (assigning offsets,
    // updating its high watermark and waking whatever waits on it); returns
    // the log end offset after them.
    std::function<Offset(const TopicPartition&, std::vector<Record>)> append;
  };

  // Kafka loads a partition on the group-metadata-manager scheduler thread;
  // the model takes this fixed time (a small log of a few records).
  static constexpr int64_t kLoadDelayMs = 10;
  // GroupCoordinator.NewMemberJoinTimeoutMs (KAFKA-7610, 2.2+).
  static constexpr int64_t kNewMemberJoinTimeoutMs = 5 * 60 * 1000;

  explicit GroupCoordinator(Environment env);
  GroupCoordinator(const GroupCoordinator&) = delete;
  GroupCoordinator& operator=(const GroupCoordinator&) = delete;

  // --- requests --------------------------------------------------------------------------
  void handle_join_group(const JoinGroupRequest& r, Reply reply);
  void handle_sync_group(const SyncGroupRequest& r, Reply reply);
  void handle_heartbeat(const HeartbeatRequest& r, Reply reply);
  void handle_leave_group(const LeaveGroupRequest& r, Reply reply);
  void handle_offset_commit(const OffsetCommitRequest& r, Reply reply);
  void handle_offset_fetch(const OffsetFetchRequest& r, Reply reply);

  // --- partition ownership (from the replica manager) --------------------------------------
  // This broker now leads __consumer_offsets-`partition` (onElection /
  // handleGroupImmigration): load it, unless already loaded or loading.
  void on_become_leader(int32_t partition);
  // It follows or no longer holds it (onResignation / handleGroupEmigration).
  void on_resign(int32_t partition);
  // The high watermark or the role of an offsets partition changed.
  void on_partition_progress(const TopicPartition& tp);

  // --- inspection (tests) --------------------------------------------------------------------
  int32_t partition_for(const std::string& group) const;
  bool owns(int32_t partition) const { return owned_.count(partition) != 0; }
  bool loading(int32_t partition) const { return loading_.count(partition) != 0; }
  std::optional<GroupState> group_state(const std::string& group) const;
  std::optional<int32_t> generation(const std::string& group) const;
  std::vector<std::string> members(const std::string& group) const;  // in join order
  // A member's session and rebalance timeouts (ms), or nullopt.
  std::optional<std::pair<int32_t, int32_t>> member_timeouts(const std::string& group,
                                                             const std::string& member) const;
  // KIP-394 member ids handed out and not joined yet, in id order.
  std::vector<std::string> pending_members(const std::string& group) const;
  std::optional<std::string> leader(const std::string& group) const;
  // The cached committed offset, or nullopt.
  std::optional<int64_t> committed(const std::string& group, const TopicPartition& tp) const;

 private:
  struct Member {
    std::string id;
    std::string client_id;
    int32_t session_timeout_ms = 0;
    int32_t rebalance_timeout_ms = 0;
    std::string protocol_type;
    std::vector<JoinGroupProtocol> protocols;  // in the member's preference order
    std::vector<TopicPartition> assignment;
    Reply awaiting_join;  // set while a JoinGroup waits
    Reply awaiting_sync;  // set while a SyncGroup waits
    bool is_new = false;
    int64_t latest_heartbeat_ms = 0;
    sim::TimerId heartbeat_timer;
    bool heartbeat_armed = false;
    uint64_t heartbeat_seq = 0;  // tells a stale expiry apart
  };
  struct CommittedOffset {
    int64_t offset = -1;
    Offset record_offset{-1};  // where its record sits in the log (newest wins)
  };
  struct Group {
    std::string id;
    int32_t partition = 0;
    GroupState state = GroupState::empty;
    int32_t generation = 0;
    std::string protocol_type;
    std::string protocol;
    std::string leader;
    std::map<std::string, Member> members;
    std::vector<std::string> join_order;  // member ids, oldest first
    // KIP-394: member ids handed out with MEMBER_ID_REQUIRED and not joined
    // yet, with their expiry (the session timeout of that first JoinGroup).
    std::map<std::string, sim::TimerId> pending;
    // The pending DelayedJoin / InitialDelayedJoin.
    bool join_armed = false;
    sim::TimerId join_timer;
    uint64_t join_seq = 0;
    bool initial_delay = false;     // the pending join is an InitialDelayedJoin
    bool new_member_added = false;  // GroupMetadata.newMemberAdded
    int64_t initial_remaining_ms = 0;
    std::map<TopicPartition, CommittedOffset> offsets;
  };
  // An append to an offsets partition waiting for the high watermark.
  struct PendingAppend {
    uint64_t id = 0;
    TopicPartition tp;
    Offset first;     // of the records appended
    Offset required;  // the high watermark that completes it
    sim::TimerId timer;
    // With the log-append error (NONE, REQUEST_TIMED_OUT ...) and `first`.
    std::function<void(ErrorCode, Offset)> done;
  };

  sim::ProcessContext& ctx() { return *env_.ctx; }
  // Replies are queued and sent by flush() at the end of each entry point,
  // once the state is consistent: a reply lets the broker dispatch the
  // connection's next request, which may come straight back in here.
  void send(Reply& reply, Response response);
  void flush();
  const BrokerConfig& config() const { return *env_.config; }
  int64_t now_ms() const;
  TopicPartition offsets_tp(int32_t partition) const { return {kOffsetsTopicName, partition}; }
  // validateGroupStatus: NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS or none.
  ErrorCode validate(const std::string& group);
  Group* find_group(const std::string& group);
  Group& add_group(const std::string& group);

  // GroupMetadata.
  void transition(Group& g, GroupState to, std::string_view why);
  bool supports_protocols(const Group& g, const std::string& type,
                          const std::vector<JoinGroupProtocol>& protocols) const;
  std::string select_protocol(const Group& g) const;
  int32_t rebalance_timeout_ms(const Group& g) const;
  bool all_members_joined(const Group& g) const;
  // Whether group.max.size lets `member_id` ("" for a new member) join now
  // (GroupRules::join_admission_by_state says which release's rule).
  bool accepts_joining_member(const Group& g, const std::string& member_id) const;
  std::string metadata_for(const Member& m, const std::string& protocol) const;
  std::string new_member_id(const std::string& client_id);

  // GroupCoordinator.
  // doUnknownJoinGroup with requireKnownMemberId: a pending member id,
  // answered MEMBER_ID_REQUIRED.
  void add_pending_member(Group& g, const JoinGroupRequest& r, Reply reply);
  // removePendingMemberAndUpdateGroup (it left or expired): the rebalance
  // may complete, unless `complete` is false (the caller sees to it).
  void remove_pending_member(Group& g, const std::string& member_id, std::string_view why,
                             bool complete = true);
  void on_pending_member_expired(const std::string& group, const std::string& member);
  // `member_id`: the pending id the member came back with.
  void add_member_and_rebalance(Group& g, const std::string& member_id, const JoinGroupRequest& r,
                                Reply reply);
  void update_member_and_rebalance(Group& g, Member& m, const JoinGroupRequest& r, Reply reply);
  void maybe_prepare_rebalance(Group& g, std::string_view why);
  void prepare_rebalance(Group& g, std::string_view why);
  void arm_join(Group& g, int64_t delay_ms);
  void on_join_timer(const std::string& group, uint64_t seq);
  void try_complete_join(Group& g);
  void complete_join(Group& g);
  // Takes the member out (answering what it has waiting) without touching
  // the group's state; remove_member also moves the group on.
  void erase_member(Group& g, const std::string& member_id, std::string_view why);
  void remove_member(Group& g, const std::string& member_id, std::string_view why);
  void schedule_heartbeat(Group& g, Member& m, int64_t timeout_ms);
  void on_heartbeat_expired(const std::string& group, const std::string& member, uint64_t seq);
  void propagate_assignment(Group& g, ErrorCode error);
  JoinGroupResponse join_result(const Group& g, const Member& m) const;

  // GroupMetadataManager.
  void store_group(Group& g, std::map<std::string, std::vector<TopicPartition>> assignment,
                   std::function<void(ErrorCode)> done);
  void store_offsets(Group& g, const OffsetCommitRequest& r, Reply reply);
  // appendForGroup: appends and calls `done` with the log-append error.
  void append(int32_t partition, std::vector<Record> records,
              std::function<void(ErrorCode, Offset)> done);
  void try_complete_append(uint64_t id, bool timed_out);
  void load(int32_t partition);
  void unload(int32_t partition, std::string_view why);

  Environment env_;
  sim::Rng rng_;
  std::set<int32_t> owned_;
  std::map<int32_t, uint64_t> loading_;  // partition -> load attempt (a resign cancels it)
  uint64_t next_load_ = 1;
  std::map<std::string, Group> groups_;
  std::map<uint64_t, PendingAppend> appends_;
  uint64_t next_append_ = 1;
  std::deque<std::pair<Reply, Response>> outbox_;
  bool appending_ = false;
};

}  // namespace kafka
