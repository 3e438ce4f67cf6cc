// A Kafka broker's configuration, by server.properties' own key names, and the
// topic-level overrides (kafka-configs.sh / --config at creation).
//
// A version profile supplies a release's defaults: the same server.properties
// behaves differently on 2.2 and on 3.9 because some defaults changed
// (KIP-537, Kafka 2.5: zookeeper.session.timeout.ms 6 s -> 18 s and
// replica.lag.time.max.ms 10 s -> 30 s). Every other default follows the
// broker configuration reference (kafka.apache.org/documentation/#brokerconfigs)
// of that release.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/kafka/types.h"
#include "model/properties.h"

namespace kafka {

// The release lines the model knows, oldest first. A profile sets the
// defaults and the mechanisms (ReplicationRules, GroupRules, StartupRules)
// of its line; default_broker_config says which rule starts in which release.
enum class VersionProfile { v2_2, v2_3, v2_8, v3_1, v3_9 };
inline constexpr VersionProfile kVersionProfiles[] = {VersionProfile::v2_2, VersionProfile::v2_3,
                                                      VersionProfile::v2_8, VersionProfile::v3_1,
                                                      VersionProfile::v3_9};
const char* to_string(VersionProfile v);
// "2.2", "2.3", "2.8", "3.1", "3.9" (also "2.2.1", "3.9.0" ...: the minor line
// decides). Throws model::ConfigError (source/key given) for anything else.
VersionProfile parse_version_profile(const std::string& s, const std::string& source,
                                     const std::string& key);

// An inter-broker protocol version (inter.broker.protocol.version; Kafka's
// ApiVersion in 2.x, MetadataVersion in 3.x), by its place in the list of
// every version Kafka has named, oldest first: "0.8.0" ... "2.7-IV2", "2.8-IV0"
// ... "3.9-IV0", "4.0-IV1". A broker speaks its release's newest production
// version unless told an older one, as during a rolling upgrade, where the
// new binaries run first on the old protocol and the protocol is raised
// after. The model's mechanisms that a protocol version switches are named
// by the version they need (ReplicationRules and StartupRules say which).
struct InterBrokerProtocol {
  int ordinal = 0;
  // The full name: "2.7-IV2" ("0.9.0" for the versions before 0.10.0).
  std::string_view name() const;
  friend auto operator<=>(const InterBrokerProtocol&, const InterBrokerProtocol&) = default;
};
// The version with this full name ("2.7-IV2"); the name must be one.
InterBrokerProtocol inter_broker_protocol(std::string_view full_name);
// A release's reading of a configured version (ApiVersion.apply,
// MetadataVersion.fromVersionString): the first three dot-separated parts of
// a 0.x version and the first two of any other, matched against the full
// names the release knows and the short ones, a short one meaning its
// release's last production version ("2.7" is 2.7-IV2, "2.7.1" too; 3.9
// knows 4.0-IV0 and 4.0-IV1, not yet for production, by their full names
// only). nullopt when it names no version the release knows.
std::optional<InterBrokerProtocol> find_inter_broker_protocol(std::string_view s, VersionProfile release);
// The newest version a release line knows, and its default, the newest
// production one (3.9 knows 4.0-IV1 but defaults to 3.9-IV0).
InterBrokerProtocol newest_inter_broker_protocol(VersionProfile v);
InterBrokerProtocol default_inter_broker_protocol(VersionProfile v);

// How a replica that becomes a follower decides where its log diverges.
enum class Truncation {
  leader_epoch,    // KIP-101 / KIP-279: ask the leader for the end offset of our latest epoch
  high_watermark,  // before Kafka 0.11: truncate to the local high watermark (a what-if)
};
const char* to_string(Truncation t);

struct Listener {
  std::string name = "PLAINTEXT";
  std::string host;  // "" or 0.0.0.0: every address of the host
  uint16_t port = 9092;
  friend bool operator==(const Listener&, const Listener&) = default;
};

// The per-log settings: broker defaults, overridden per topic.
struct LogConfig {
  int64_t segment_bytes = 1073741824;        // log.segment.bytes / segment.bytes
  int64_t segment_ms = 7LL * 24 * 3600 * 1000;  // log.roll.ms|hours / segment.ms
  int64_t retention_ms = 7LL * 24 * 3600 * 1000;  // log.retention.ms|minutes|hours / retention.ms; -1: forever
  int64_t retention_bytes = -1;              // log.retention.bytes / retention.bytes; -1: no limit
  // message.max.bytes / max.message.bytes: the largest record batch a leader
  // appends (1 MiB + 12 since Kafka 2.5, 1000000 + 12 before).
  int32_t max_message_bytes = 1048588;
  int32_t min_insync_replicas = 1;           // min.insync.replicas
  bool unclean_leader_election = false;      // unclean.leader.election.enable
  int64_t flush_interval_messages = INT64_MAX;  // log.flush.interval.messages / flush.messages
  int64_t flush_interval_ms = INT64_MAX;     // log.flush.interval.ms / flush.ms; INT64_MAX: never
  // cleanup.policy names delete: retention.ms and retention.bytes delete
  // segments (Log.deleteOldSegments). Only the internal offsets topic may be
  // compact alone; compaction itself is not modelled (every record is kept).
  bool retention_deletes = true;
  friend bool operator==(const LogConfig&, const LogConfig&) = default;
};

// ReplicationRules::alter_isr_retry.
enum class AlterIsrRetry { stays_pending, falls_back, sent_again };

// Not keys: where a release's replication differs in mechanism, not in a
// default. The version profile sets them (default_broker_config); every
// Partition the broker makes follows them (Partition::set_rules).
struct ReplicationRules {
  // From Kafka 3.7 (KAFKA-15583, part of KIP-966) min.insync.replicas counts
  // at most the replication factor, and a leader's high watermark stays put
  // while its ISR is below it.
  bool min_isr_holds_high_watermark = false;
  // From 3.3 a leader given a new epoch counts a follower outside the ISR as
  // never having fetched (Replica.resetReplicaState: last fetch time 0),
  // where 2.x counts the new epoch as every follower's last fetch
  // (Replica.resetLastCaughtUpTime).
  bool new_epoch_forgets_out_of_sync_fetch = false;
  // From 2.6.1 / 2.7.0 (KAFKA-10706) a truncation to the log end or beyond,
  // which cuts no record, still drops the leader-epoch entries that start
  // there: a leader that was given an epoch and appended nothing before it
  // lost leadership leaves such an entry. In 2.2 it stays, and a follower
  // asking OffsetsForLeaderEpoch with it asks the same again forever.
  bool no_op_truncation_trims_epochs = false;
  // Kafka 2.2 writes an ISR change to ZooKeeper while it holds the
  // partition's lock (Partition.maybeShrinkIsr / maybeExpandIsr call
  // updateIsr inside inWriteLock), and a write whose connection is lost
  // waits for it to come back (retryRequestUntilConnected →
  // waitUntilConnected, no timeout). Meanwhile a request that needs the
  // lock waits on its request handler thread, and the ISR-expiration pass
  // waits on the write. From 2.7 the change goes to the controller
  // (AlterIsr, KIP-497) and nothing waits — on inter-broker protocol
  // 2.7-IV2 or later. Below it, up to 3.0 the write is still made under the
  // lock (2.8.2: ZkIsrManager.submit, called inside inWriteLock), and from
  // 3.1 after the lock is released (maybeShrinkIsr / maybeExpandIsr submit
  // outside it; 3.1.0, 3.9), still on the thread that found the change: the
  // ISR-expiration pass waits for each of its writes
  // (Broker::continue_shrink_pass), and no request waits for the partition.
  // Set from the release and the protocol (apply_inter_broker_protocol).
  bool isr_write_holds_partition_lock = false;
  // Until Kafka 3.1 (KAFKA-8529) a replica fetcher whose request fails
  // sleeps replica.fetch.backoff.ms and then delays every partition by as
  // much again (AbstractFetcherThread.processFetchRequest); from 3.1 it only
  // delays them.
  bool failed_fetch_sleeps = false;
  // From 3.3 (KAFKA-14140) a follower joins the ISR only while its broker is
  // alive in the leader's metadata cache (ZooKeeper mode:
  // Partition.isReplicaIsrEligible, hasAliveBroker).
  bool isr_join_needs_live_broker = false;
  // From 3.6 (KAFKA-15021) a caught-up follower outside the ISR holds the
  // high watermark only while it may join the ISR (the same check); before,
  // any caught-up follower held it (Partition.maybeIncrementLeaderHW).
  bool high_watermark_waits_for_eligible_only = false;
  // From 3.8 (KAFKA-16452) a waiting fetch whose offset is above the end it
  // may read to (a consumer above the high watermark) is answered at once,
  // and bytes are counted only within one segment; before, only a fetch
  // offset on a later segment than that end was answered at once
  // (DelayedFetch.tryComplete).
  bool fetch_above_end_completes = false;
  // From Kafka 2.5 (KIP-360, ProducerAppendInfo.checkSequence) a leader that
  // has no state for a producer id (its records were truncated away, or an
  // unclean election chose a replica that never had them) takes its batch
  // at any sequence number. 2.2 refuses one that does not start at 0
  // (UNKNOWN_PRODUCER_ID in Kafka; the model answers OUT_OF_ORDER_SEQUENCE_NUMBER,
  // which its client handles as librdkafka handles UNKNOWN_PRODUCER_ID when
  // nothing earlier is in flight: drain and bump the epoch).
  bool unknown_producer_any_sequence = false;
  // From Kafka 2.7 (inter-broker protocol 2.7-IV2, KIP-497) a leader does not
  // write an ISR change to ZooKeeper itself: it sends AlterIsr to the
  // controller, which writes it (conditional on the version the leader
  // knows), answers with the new state and sends UpdateMetadata; no ISR
  // change notification is written. Until the answer the leader holds the
  // change pending: it proposes no other, and its high watermark counts the
  // larger of the two ISRs (the "maximal" ISR). A refused change (an old
  // leader epoch, a stale version) stays pending until the next
  // LeaderAndIsr; a request the controller never answers is sent again,
  // without end (DefaultAlterIsrManager, Partition.sendAlterIsrRequest /
  // handleAlterIsrResponse in 2.8). So a leader cut off from the controller
  // but not from ZooKeeper can neither shrink nor grow its ISR.
  bool isr_changes_through_controller = false;
  // From Kafka 3.0 (KAFKA-12686) a LeaderAndIsr no longer drops the
  // partition's change from the AlterIsr manager (2.8.2's clearPending is
  // gone): the change sent stays there until its answer comes, and a new
  // change for the partition meanwhile is refused (OperationNotAttempted:
  // the leader falls back to its committed ISR and proposes again later).
  // So the answer to an old change can no longer remove a newer one, which
  // in 2.8 was then never sent (DefaultAlterIsrManager.submit's
  // putIfAbsent, Partition.submitAlterIsr / handleAlterIsrError in 3.1.0).
  bool alter_isr_keeps_sent_change = false;
  // From Kafka 3.1 (KAFKA-13091) a committed ISR change recomputes the
  // leader's high watermark at once (Partition.handleAlterIsrUpdate calls
  // maybeIncrementLeaderHW); in 2.8 it moves at the next fetch or append.
  bool isr_commit_moves_high_watermark = false;
  // What a leader does with an AlterIsr answer for its partition that is an
  // error other than FENCED_LEADER_EPOCH, INVALID_UPDATE_VERSION and
  // UNKNOWN_TOPIC_OR_PARTITION (which leave the change pending until the next
  // LeaderAndIsr in every release) — a failed ZooKeeper write, say. Each
  // release tries the same change again from inside the answer's callback,
  // while the manager still holds the answered item:
  //   stays_pending (2.8, 3.0): the manager refuses the retry and the
  //     change stays pending until the next LeaderAndIsr (2.8.2 throws
  //     IllegalStateException, 3.0 logs it);
  //   falls_back (3.1 to 3.2.0): the refusal goes through
  //     handleAlterIsrError(OPERATION_NOT_ATTEMPTED), which puts the
  //     partition back on its committed ISR, free to propose again;
  //   sent_again (3.2.1 / 3.3 on, KAFKA-14010): the item is removed before
  //     the callback runs, so the same change goes again.
  AlterIsrRetry alter_isr_retry = AlterIsrRetry::stays_pending;
  // From Kafka 3.3 (AlterPartition, KIP-841; KAFKA-14154, KAFKA-14140): the controller compares
  // the proposal with its own copy of the state first (a newer leader epoch
  // or version than its own: NOT_CONTROLLER, an older version:
  // INVALID_UPDATE_VERSION), refuses an ISR naming a broker that is not
  // alive or is shutting down (INELIGIBLE_REPLICA), and the leader then
  // falls back to its last committed ISR (KafkaController
  // .tryProcessAlterPartition, Partition.handleAlterPartitionError in 3.9;
  // 3.1.0's processAlterIsr checks only for an older leader epoch and an
  // unchanged state, and writes the rest conditional on the leader's version).
  bool alter_partition_checks = false;
  // From inter-broker protocol 2.8-IV0 (KIP-516) the leader's AlterPartition
  // names topics by id, which makes it version 2 or later; to an earlier
  // version a 3.3+ controller answers an ineligible member
  // OPERATION_NOT_ATTEMPTED instead of INELIGIBLE_REPLICA
  // (KafkaController.tryProcessAlterPartition, 3.9), which the leader
  // handles alike. Set by the protocol, not the release.
  bool alter_isr_by_topic_id = true;
  // From Kafka 2.3 (KAFKA-3143) a controller taking over moves the replicas
  // of dead brokers to OfflineReplica as it starts its replica state
  // machine, which takes them out of every ISR (leader -1 where one led,
  // leader epoch + 1) before the partitions without a live leader are
  // elected. Until 2.2 the failover only elects: the ISR of a partition led
  // by a live broker keeps its dead members until that leader shrinks it,
  // and one led by a dead broker gets the live part of its ISR in the
  // election alone (ReplicaStateMachine.startup, 2.2.2 against 2.3.0).
  bool failover_takes_offline_replicas_out_of_isr = false;
  // From Kafka 2.8 (KAFKA-10825) a leader that writes its ISR to ZooKeeper
  // itself (on an inter-broker protocol below 2.7-IV2: ZkIsrManager) and
  // loses the conditional write keeps the change pending until the next
  // LeaderAndIsr (Partition.handleAlterIsrResponse: INVALID_UPDATE_VERSION,
  // "Giving up"; 2.8.2, and handleAlterPartitionError in 3.x): it proposes
  // nothing else for the partition, and its high watermark goes on counting
  // the larger ISR. Up to 2.7 it drops the change and looks again at the
  // next ISR check (Partition.updateIsr / 2.7's maybeUpdateIsrAndVersionWithZk:
  // "skip updating ISR").
  bool zk_isr_failure_stays_pending = false;
  // From Kafka 2.7 (Partition.isrState) the ISR-expiration pass looks at a
  // partition's change in flight before it takes the lock
  // (maybeShrinkIsr: !isrState.isInflight) and passes by one whose expand is
  // being written; 2.2 and 2.3 take the lock (inWriteLock) and wait for it.
  bool shrink_pass_skips_change_in_flight = false;
  // From Kafka 2.7 an acks=all write whose records the high watermark has
  // passed is answered against the maximal ISR: a member whose return is
  // still pending counts (Partition.checkEnoughReplicasReachOffset,
  // isrState.maximalIsr); 2.2 and 2.3 count the ISR.
  bool acks_count_maximal_isr = false;
  // From Kafka 2.8 (KAFKA-10554), on inter-broker protocol 2.7-IV1 or later,
  // a follower learns where its log diverges from the leader's in the Fetch
  // answer itself: each fetch carries the epoch of the last batch it holds
  // (lastFetchedEpoch), a leader whose log ends that epoch elsewhere answers
  // with no records and the diverging epoch and its end offset, and the
  // follower truncates as it would on an OffsetsForLeaderEpoch answer and
  // fetches on. A new follower whose log has an epoch starts fetching at
  // once from its log end; OffsetsForLeaderEpoch is left for older
  // protocols (AbstractFetcherThread.partitionFetchState / truncateOnFetchResponse,
  // Partition.readRecords, DelayedFetch case H; 2.8.2, 3.1.0, 3.9). Set
  // from the release and the protocol (apply_inter_broker_protocol).
  bool truncation_on_fetch = false;
  // From 3.4.1 / 3.5 (KAFKA-14704) a follower given a diverging epoch
  // truncates without taking the answer's high watermark and log start
  // (the next answer brings them); before, it takes them first
  // (processPartitionData), then truncates.
  bool diverging_epoch_skips_high_watermark = false;
  friend bool operator==(const ReplicationRules&, const ReplicationRules&) = default;
};

// Where a release's group coordinator differs in mechanism, not in a
// default; set by the version profile, as ReplicationRules are.
struct GroupRules {
  // From Kafka 2.6 (KAFKA-9885, GroupCoordinator.acceptJoiningMember) the
  // group.max.size admission depends on the group's state: while it prepares
  // a rebalance a member is admitted while fewer than group.max.size members
  // have (re)joined, so a member that rejoins after the places are taken is
  // turned away and removed; otherwise a new member is admitted while the
  // group has fewer members. Before (2.2 and 2.3, KIP-389) a new member is turned
  // away once the group has group.max.size members, and a member of a group
  // over the limit (after a coordinator move to a broker with a smaller
  // group.max.size) that has not rejoined yet is turned away and removed.
  bool join_admission_by_state = true;
  // From Kafka 2.7 a heartbeat while the group completes its rebalance
  // (after JoinGroup, before the assignment is stored) is answered NONE and
  // restarts the member's session timer, as newer clients heartbeat while
  // they wait for SyncGroup; before (2.2, 2.3) it is answered
  // REBALANCE_IN_PROGRESS (GroupCoordinator.handleHeartbeat).
  bool heartbeat_while_completing = true;
  // From Kafka 2.3 a Heartbeat is checked for its member and generation
  // (UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION) before the group's state; before
  // (2.2 profile) one from a member of a group completing its rebalance is
  // answered REBALANCE_IN_PROGRESS whatever its generation
  // (GroupCoordinator.handleHeartbeat, 2.2.2 against 2.3.0).
  bool heartbeat_checks_member_first = true;
  // The same for an OffsetCommit from Kafka 2.4; before (2.2 and 2.3
  // profiles) one that arrives while the group completes its rebalance is
  // answered REBALANCE_IN_PROGRESS whoever sends it
  // (GroupCoordinator.doCommitOffsets, 2.3.0 against 2.4).
  bool commit_checks_member_first = true;
  // From Kafka 3.0 a member turned away by group.max.size also loses a
  // pending member id (GroupMetadata.remove drops it from pendingMembers),
  // so a rebalance that waited only for that id completes at once; before
  // (2.2, 2.3, 2.8 profiles) the id stays pending until it expires.
  bool turned_away_drops_pending = true;
  // From Kafka 3.4 (and 3.3.2; KAFKA-14009) a known member that rejoins
  // takes the session and rebalance timeouts of its new JoinGroup
  // (GroupMetadata.updateMember); before, it keeps those of its first join
  // (2.2.2 to 3.1.0 update only its protocols).
  bool rejoin_updates_timeouts = true;
  friend bool operator==(const GroupRules&, const GroupRules&) = default;
};

// Where a release's broker startup differs in mechanism; set by the version
// profile, as ReplicationRules are.
struct StartupRules {
  // Every release answers no request before its startup is done, after the
  // broker has registered (KafkaServer.startup: startProcessingRequests /
  // enableRequestProcessing at its end; KAFKA-6772, Kafka 2.0). Up to 3.4 the
  // listener's port is bound early, once the ZooKeeper client is up
  // (SocketServer.startup(startProcessingRequests = false); from 3.3 the
  // Acceptor's constructor): connections are made and their requests wait
  // unread. From 3.5 (KAFKA-14658) a port with a fixed number is opened only
  // when processing starts (Acceptor.start), so a connection before that is
  // refused.
  bool listen_at_end_of_startup = true;
  // Before 3.0, and later with an inter-broker protocol below 3.0, the
  // TransactionCoordinator's ProducerIdManager claims its first block of
  // producer ids from /latest_producer_id_block when it is built, during
  // startup after the registration and before requests are read: a read and
  // a conditional write, again while another broker wins, retried until
  // ZooKeeper answers (ProducerIdManager's constructor, getNewProducerIdBlock;
  // 2.2.2 and 2.8.2). From 3.0 (KIP-730) a broker asks the controller for
  // blocks, AllocateProducerIds, when its first InitProducerId comes and
  // again when 90 % of its block is handed out (RPCProducerIdManager; 3.1.0,
  // 3.9); the controller claims each from ZooKeeper the same way.
  bool producer_id_block_at_startup = false;
  // Until 3.6 (KAFKA-14694) an InitProducerId that finds no id left waits
  // for the next block on its request handler thread, one at a time (the
  // manager's lock), up to request.timeout.ms, then fails REQUEST_TIMED_OUT
  // (RPCProducerIdManager.generateProducerId, 3.1.0; ZkProducerIdManager
  // likewise waits for ZooKeeper). From 3.6 it is answered at once with
  // COORDINATOR_LOAD_IN_PROGRESS while the block is asked for, and the
  // client tries again (3.9).
  bool producer_id_waits_for_block = false;
  // Up to 2.8 a log that loads cuts its leader-epoch cache at its log start,
  // the first segment's base when no larger one was checkpointed (Log's
  // constructor, truncateFromStart(logStartOffset)); from 3.0 LogLoader cuts
  // at the checkpointed log start alone, which is absent (0) when the log
  // start is a segment's base (LogLoader.load, 3.0.0 to 3.9), so entries
  // below it that a stale checkpoint still names stay until the log start
  // next moves.
  bool load_cuts_epochs_at_log_start = false;
  // A channel to the controller gives each request controller.socket.
  // timeout.ms; from 3.3.2 / 3.4 no more than the channel's retry timeout
  // (NodeToControllerChannelManager: request.timeout.ms for the forwarding
  // channel that carries AllocateProducerIds, unbounded for AlterIsr).
  bool controller_request_timeout_capped = false;
  // (Shutdown, too.) Before Kafka 3.0 a broker going down finds the
  // controller to ask for its controlled shutdown by reading /controller
  // and the controller's /brokers/ids/<id> from ZooKeeper before every
  // attempt, waiting for a lost connection to come back
  // (KafkaServer.doControlledShutdown: zkClient.getControllerId /
  // getBroker; 2.2.2, 2.8.2). From 3.0 (KAFKA-9189) it asks the one its
  // metadata cache names (metadataCache.getControllerId; 3.1.0, 3.9).
  bool controlled_shutdown_reads_zookeeper = false;
  friend bool operator==(const StartupRules&, const StartupRules&) = default;
};

struct BrokerConfig {
  VersionProfile version = VersionProfile::v3_9;
  // inter.broker.protocol.version (default: the profile's; see
  // parse_broker_config for what the model accepts).
  InterBrokerProtocol inter_broker_protocol = default_inter_broker_protocol(VersionProfile::v3_9);
  BrokerId broker_id = -1;                  // broker.id (required)
  std::vector<Listener> listeners;          // listeners (default PLAINTEXT://:9092)
  std::vector<Listener> advertised_listeners;  // advertised.listeners (default: listeners)
  std::string inter_broker_listener = "PLAINTEXT";  // inter.broker.listener.name
  std::vector<std::string> log_dirs = {"/tmp/kafka-logs"};  // log.dirs / log.dir
  std::string zookeeper_connect;            // zookeeper.connect (required)
  int32_t zookeeper_session_timeout_ms = 18000;   // 6000 before 2.5
  int32_t zookeeper_connection_timeout_ms = -1;   // -1: the session timeout
  int32_t default_replication_factor = 1;
  int32_t num_partitions = 1;
  int32_t num_io_threads = 8;                // num.io.threads: request handler threads
  int64_t replica_lag_time_max_ms = 30000;  // 10000 before 2.5
  int32_t replica_fetch_wait_max_ms = 500;
  int32_t replica_fetch_min_bytes = 1;
  int32_t replica_fetch_max_bytes = 1048576;           // per partition (KIP-74)
  int32_t replica_fetch_response_max_bytes = 10485760;  // the whole answer (KIP-74)
  int32_t replica_fetch_backoff_ms = 1000;
  int32_t replica_socket_timeout_ms = 30000;
  int64_t replica_high_watermark_checkpoint_interval_ms = 5000;
  bool controlled_shutdown_enable = true;
  int32_t controlled_shutdown_max_retries = 3;
  int64_t controlled_shutdown_retry_backoff_ms = 5000;
  bool auto_leader_rebalance_enable = true;
  int64_t leader_imbalance_check_interval_seconds = 300;
  int32_t leader_imbalance_per_broker_percentage = 10;
  bool auto_create_topics_enable = true;
  int32_t offsets_topic_num_partitions = 50;
  int16_t offsets_topic_replication_factor = 3;
  int32_t offsets_topic_segment_bytes = 104857600;  // offsets.topic.segment.bytes
  int64_t offsets_retention_minutes = 10080;  // 1440 before 2.0; accepted, not modelled
  int64_t log_retention_check_interval_ms = 300000;
  int64_t log_flush_scheduler_interval_ms = INT64_MAX;
  int32_t request_timeout_ms = 30000;
  int32_t controller_socket_timeout_ms = 30000;
  int32_t group_initial_rebalance_delay_ms = 3000;
  int32_t group_min_session_timeout_ms = 6000;
  int32_t group_max_session_timeout_ms = 1800000;  // 300000 before 2.3 (KIP-345)
  int32_t group_max_size = 2147483647;             // group.max.size (KIP-389, 2.2)
  int32_t offsets_commit_timeout_ms = 5000;        // offsets.commit.timeout.ms
  int16_t offsets_commit_required_acks = -1;       // offsets.commit.required.acks
  int32_t transaction_state_log_replication_factor = 3;  // accepted, not modelled
  // The mechanisms of the profile's release (default_broker_config sets
  // them; these initial values are not any one profile's).
  ReplicationRules replication_rules{.min_isr_holds_high_watermark = true,
                                     .new_epoch_forgets_out_of_sync_fetch = true};
  GroupRules group_rules;
  StartupRules startup_rules;
  // A simulation-only what-if, not a Kafka key: "kafkasim.truncation" =
  // leader-epoch (default) | high-watermark.
  Truncation truncation = Truncation::leader_epoch;
  LogConfig log;  // broker-wide defaults of the per-topic settings

  // The advertised endpoint other brokers and clients use (the inter-broker
  // listener's), with an empty host resolved to `host_address`.
  Endpoint advertised_endpoint(const std::string& host_address) const;
};

// server.properties keys that a real broker understands and the model accepts
// but that change nothing in a simulation (thread counts, buffer sizes,
// metrics, security settings that must stay PLAINTEXT). Their values are
// still checked where a type is obvious.
extern const std::vector<std::string> kBrokerKeysWithoutEffect;

// The defaults of a release, before any property is applied.
BrokerConfig default_broker_config(VersionProfile version);

// Builds a broker configuration from server.properties. `version` picks the
// defaults. Throws model::ConfigError naming the source and the key for an
// unknown key (with a did-you-mean), a malformed or out-of-range value, or an
// inconsistent whole (no broker.id, no zookeeper.connect, an advertised
// listener without a matching listener, min.insync.replicas < 1 ...).
BrokerConfig parse_broker_config(const model::Properties& props,
                                 VersionProfile version = VersionProfile::v3_9);

// How a broker reads a message format version (log.message.format.version,
// a topic's message.format.version): the versions its release knows, and
// whether it uses the key at all — a 3.x broker on inter-broker protocol
// 3.0-IV1 or later ignores both (KIP-724: LogConfig.
// shouldIgnoreMessageFormatVersion, LogManager.fetchTopicConfigOverrides).
// Where it is used, a version below 0.11.0 (record formats v0 and v1) is
// refused as not modelled.
struct MessageFormatReading {
  VersionProfile release = VersionProfile::v3_9;
  bool used = true;
};
MessageFormatReading message_format_reading(const BrokerConfig& c);

// Topic-level overrides (segment.ms, segment.bytes, retention.ms,
// retention.bytes, max.message.bytes, min.insync.replicas,
// unclean.leader.election.enable, flush.messages, flush.ms) applied over the broker's defaults. Throws
// model::ConfigError for an unknown key or a bad value.
// `internal`: the topic is Kafka's own __consumer_offsets, which Kafka
// creates with cleanup.policy=compact (GroupCoordinator.offsetsTopicConfigs);
// for it, and only for it, compact is accepted. `reading`: how the broker
// applying them reads message.format.version.
LogConfig apply_topic_overrides(const LogConfig& defaults, const model::Properties& overrides,
                                bool internal = false, MessageFormatReading reading = {});
// The topic-level keys, in the form /config/topics/<t> stores them.
extern const std::vector<std::string> kTopicConfigKeys;

}  // namespace kafka
