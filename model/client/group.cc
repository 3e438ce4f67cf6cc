#include "model/client/group.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "model/client/assignor.h"

namespace client {

using kafka::ErrorCode;
using kafka::SendError;
using kafka::TopicPartition;

namespace {

// The coordinator gets a connection of its own, apart from the one to the
// same broker as a partition leader (the Java client's
// AbstractCoordinator uses node id Integer.MAX_VALUE - coordinator id).
int32_t coordinator_node(kafka::BrokerId id) { return std::numeric_limits<int32_t>::max() - id; }

// The answers that say the coordinator is elsewhere or gone: the member
// looks it up again (Java's markCoordinatorUnknown, librdkafka's
// rd_kafka_cgrp_coord_dead). COORDINATOR_LOAD_IN_PROGRESS is not one of
// them: the coordinator is right and still reading its partition, and the
// request is simply asked again.
bool is_coordinator_error(ErrorCode e) {
  return e == ErrorCode::not_coordinator || e == ErrorCode::coordinator_not_available;
}

// The group requests' timeouts are librdkafka's (rdkafka_request.c): a
// JoinGroup waits for the whole group to join, up to the rebalance timeout,
// so it gets exactly max.poll.interval.ms + 3 s (rd_kafka_JoinGroupRequest,
// a forced timeout); a SyncGroup session.timeout.ms + 3 s, a Heartbeat
// session.timeout.ms and a LeaveGroup 5 s (best effort, never retried), each
// at most socket.timeout.ms (request.timeout.ms here) as every timeout not
// forced is (rd_kafka_buf_calc_timeout); the rest socket.timeout.ms. So with
// socket.timeout.ms above session.timeout.ms a coordinator that stops
// answering is given up on just as the session check fires. The Java
// client gives JoinGroup max.poll.interval.ms + 5 s
// (JOIN_GROUP_TIMEOUT_LAPSE) and every other request request.timeout.ms.
constexpr int32_t kJoinTimeoutLapseMs = 3000;
constexpr int32_t kSyncTimeoutLapseMs = 3000;
constexpr int32_t kLeaveTimeoutMs = 5000;

// How long close() keeps trying to commit: KafkaConsumer.close()'s default
// timeout (DEFAULT_CLOSE_TIMEOUT_MS). librdkafka's close waits for its
// deferred commits, which it keeps while the coordinator is away.
constexpr int64_t kCloseTimeoutMs = 30000;

// librdkafka paces its JoinGroups (rd_kafka_cgrp_join_state_serve): the next
// goes out once kJoinIntervalMs, plus kJoinErrorBackoffMs after an answer
// with an error code (rd_interval_backoff in rd_kafka_cgrp_handle_JoinGroup),
// have passed since the last; the first goes at once (rd_interval_immediate).
// So a JoinGroup or SyncGroup that failed, or a lost coordinator, is
// followed by a JoinGroup no sooner than that. MEMBER_ID_REQUIRED, and a
// rejoin that revokes the assignment (a heartbeat's or commit's error, the
// session timeout, max.poll.interval.ms), reset the interval
// (rd_interval_reset) and join at once. A JoinGroup that got no answer (a
// transport error) adds no backoff. The Java client rejoins at once after
// UNKNOWN_MEMBER_ID, REBALANCE_IN_PROGRESS and ILLEGAL_GENERATION and waits
// retry.backoff.ms after other errors.
constexpr int64_t kJoinIntervalMs = 1000;
constexpr int64_t kJoinErrorBackoffMs = 1000;

}  // namespace

const char* to_string(GroupConsumer::State s) {
  switch (s) {
    case GroupConsumer::State::unjoined: return "unjoined";
    case GroupConsumer::State::revoking: return "revoking";
    case GroupConsumer::State::joining: return "joining";
    case GroupConsumer::State::syncing: return "syncing";
    case GroupConsumer::State::fetching_offsets: return "fetching_offsets";
    case GroupConsumer::State::stable: return "stable";
    case GroupConsumer::State::left: return "left";
    case GroupConsumer::State::closed: return "closed";
    case GroupConsumer::State::failed: return "failed";
  }
  return "?";
}

GroupConsumer::GroupConsumer(sim::ProcessContext& ctx, ConsumerConfig config,
                             std::vector<std::string> topics, ConsumerListener& listener,
                             check::History* history, std::string process_name)
    : ctx_(ctx),
      config_(std::move(config)),
      topics_(std::move(topics)),
      listener_(listener),
      history_(history),
      process_name_(process_name.empty() ? ctx.name() : std::move(process_name)),
      // A connection that does not come up within
      // socket.connection.setup.timeout.ms (librdkafka's default 30 s; Java's
      // 10 s growing to 30 s) fails what waits on it (a
      // powered-off host would otherwise hold it for the kernel's SYN
      // retries, ~2 minutes). Requests to the coordinator are pipelined up to
      // max.in.flight, as the consumer's own (consumer.cc).
      net_(ctx, kafka::NetworkClient::Options{
                    std::max(config_.request_timeout_ms, config_.max_poll_interval_ms + kJoinTimeoutLapseMs),
                    config_.max_in_flight, config_.connection_setup_timeout_ms}) {
  if (config_.group_id.empty()) throw std::invalid_argument("GroupConsumer: group.id is empty");
  if (topics_.empty()) throw std::invalid_argument("GroupConsumer: no topic to subscribe to");
  for (const std::string& t : topics_) {
    if (t.empty() || t.find(',') != std::string::npos) {
      throw std::invalid_argument(fmt::format("GroupConsumer: bad topic name '{}'", t));
    }
  }
  std::sort(topics_.begin(), topics_.end());
  topics_.erase(std::unique(topics_.begin(), topics_.end()), topics_.end());
  consumer_ = std::make_unique<Consumer>(ctx_, config_, static_cast<ConsumerListener&>(*this));
  for (const std::string& t : topics_) consumer_->metadata().add_topic(t);
  consumer_->metadata().refresh();
  last_poll_ms_ = now_ms();
  after(config_.max_poll_interval_ms, [this] { check_poll_interval(); });
  if (config_.enable_auto_commit) after(config_.auto_commit_interval_ms, [this] { auto_commit(); });
  step();
}

GroupConsumer::~GroupConsumer() = default;

std::optional<kafka::BrokerId> GroupConsumer::coordinator() const {
  if (!coordinator_) return std::nullopt;
  return coordinator_->id;
}

// --- plumbing ----------------------------------------------------------------------------

bool GroupConsumer::on_connected(sim::SocketId s) { return net_.on_connected(s) || consumer_->on_connected(s); }
bool GroupConsumer::on_connect_failed(sim::SocketId s, sim::ConnectError e) {
  return net_.on_connect_failed(s, e) || consumer_->on_connect_failed(s, e);
}
bool GroupConsumer::on_message(sim::SocketId s, sim::Payload& p) {
  return net_.on_message(s, p) || consumer_->on_message(s, p);
}
bool GroupConsumer::on_closed(sim::SocketId s, sim::CloseReason r) {
  return net_.on_closed(s, r) || consumer_->on_closed(s, r);
}

void GroupConsumer::on_client_event(const std::string& event, int32_t node) {
  listener_.on_client_event(event, node);
}
void GroupConsumer::on_records(const std::vector<ConsumedRecord>& records) {
  listener_.on_records(records);
}
void GroupConsumer::on_fetch_error(const TopicPartition& tp, const std::string& error) {
  listener_.on_fetch_error(tp, error);
}

template <typename F>
void GroupConsumer::after(int32_t delay_ms, F&& fn) {
  ctx_.after(sim::Duration::millis(delay_ms),
             [life = std::weak_ptr<int>(life_), fn = std::forward<F>(fn)]() mutable {
               if (!life.expired()) fn();
             });
}

void GroupConsumer::record(check::OpType type, check::OpFunction f, const std::string& detail,
                           const std::string& error, const TopicPartition* tp, int64_t offset) {
  if (history_ == nullptr) return;
  check::Op op;
  op.time_us = ctx_.now().us();
  op.process = history_->process(process_name_);
  op.type = type;
  op.f = f;
  if (tp != nullptr) {
    op.topic = history_->intern(tp->topic);
    op.partition = tp->partition;
  }
  op.offset = offset;
  op.error = history_->intern(error);
  op.detail = history_->intern(detail);
  history_->add(op);
}

void GroupConsumer::trace(const std::string& what, const std::string& why) {
  ctx_.trace("group", {{"group", config_.group_id},
                       {"event", what},
                       {"state", to_string(state_)},
                       {"generation", generation_},
                       {"member", member_id_},
                       {"why", why}});
}

void GroupConsumer::send_to(int32_t node, const kafka::NodeAddress& address, kafka::Request request,
                            int32_t timeout_ms, Handler done) {
  // The shared NetworkClient's timeout is the JoinGroup's (long); every
  // other request has request.timeout.ms, kept here, and a request that runs
  // out of it takes its connection down, as the NetworkClient does: it fails
  // with request_timed_out, the others on the connection as closed.
  const uint64_t id = next_request_++;
  outstanding_[id] = node;
  if (timeout_ms < net_timeout_ms()) {
    after(timeout_ms, [this, id, node] {
      if (outstanding_.count(id) == 0) return;
      drop_connection(node, id, SendError::request_timed_out, SendError::closed);
    });
  }
  net_.send(node, address, std::move(request),
            [this, id, node, done = std::move(done)](SendError e, const kafka::Response* r) {
              outstanding_.erase(id);
              if (auto f = forced_.find(id); f != forced_.end()) {
                e = f->second;
                forced_.erase(f);
              }
              if (e == SendError::none && coordinator_ && node == coordinator_node(coordinator_->id)) {
                coordinator_failures_ = 0;
              }
              done(e, e == SendError::none ? r : nullptr);
            });
}

void GroupConsumer::drop_connection(int32_t node, uint64_t first, SendError first_error, SendError rest) {
  for (const auto& [id, n] : outstanding_) {
    if (n == node) forced_[id] = id == first ? first_error : rest;
  }
  net_.close(node);
}

int32_t GroupConsumer::capped(int32_t timeout_ms) const {
  return std::min(timeout_ms, config_.request_timeout_ms);
}

int32_t GroupConsumer::net_timeout_ms() const {
  return std::max(config_.request_timeout_ms, config_.max_poll_interval_ms + kJoinTimeoutLapseMs);
}

void GroupConsumer::send_to_coordinator(kafka::Request request, int32_t timeout_ms, Handler done) {
  SIM_ASSERT(coordinator_.has_value(), "group request without a coordinator");
  send_to(coordinator_node(coordinator_->id), coordinator_->address, std::move(request), timeout_ms,
          std::move(done));
}

void GroupConsumer::step_later(int32_t delay_ms) {
  if (step_scheduled_) return;
  step_scheduled_ = true;
  after(delay_ms, [this] {
    step_scheduled_ = false;
    step();
  });
}

// --- the state machine ---------------------------------------------------------------------

void GroupConsumer::step() {
  if (state_ == State::closed || state_ == State::failed || state_ == State::left) return;
  if (!coordinator_) {
    find_coordinator();
    return;
  }
  switch (state_) {
    case State::unjoined:
      if (last_join_) {
        const sim::Time due = *last_join_ + sim::Duration::millis(kJoinIntervalMs + join_backoff_ms_);
        if (ctx_.now() < due) {
          // (rounded up to the next millisecond, the timers' unit here)
          step_later(static_cast<int32_t>(((due - ctx_.now()).us() + 999) / 1000));
          return;
        }
      }
      last_join_ = ctx_.now();
      join_backoff_ms_ = 0;
      join();
      return;
    case State::fetching_offsets:
      fetch_offsets();
      return;
    case State::stable:
      if (!heartbeat_timer_set_ && !heartbeat_in_flight_) heartbeat();
      return;
    default:
      return;  // a request is in flight
  }
}

void GroupConsumer::find_coordinator() {
  if (finding_ || coordinator_) return;
  Metadata& metadata = consumer_->metadata();
  const auto broker = metadata.any_broker();
  const auto address = broker ? metadata.address(*broker) : std::nullopt;
  if (!broker || !address) {
    // No broker known yet: the metadata's first answer will name some.
    metadata.refresh();
    step_later(backoff_ms());
    return;
  }
  finding_ = true;
  const kafka::BrokerId b = *broker;
  send_to(b, *address, kafka::FindCoordinatorRequest{config_.group_id}, config_.request_timeout_ms,
          [this, b](SendError e, const kafka::Response* r) {
            finding_ = false;
            const auto* resp = r == nullptr ? nullptr : std::get_if<kafka::FindCoordinatorResponse>(r);
            if (e != SendError::none || resp == nullptr) {
              listener_.on_client_event(kafka::to_string(e), b);
              consumer_->metadata().note_failure(b);
              consumer_->metadata().skip_broker();
              step_later(backoff_ms());
              return;
            }
            if (resp->error != ErrorCode::none) {
              // COORDINATOR_NOT_AVAILABLE: the offsets topic has no leader
              // for the group's partition yet (or is being created).
              trace("find_coordinator_failed", kafka::to_string(resp->error));
              step_later(backoff_ms());
              return;
            }
            coordinator_ = Coordinator{resp->node, kafka::NodeAddress{resp->host, resp->port}};
            ctx_.trace("group_coordinator", {{"group", config_.group_id}, {"node", resp->node}});
            step();
          });
}

void GroupConsumer::coordinator_lost(const std::string& why, SendError cause) {
  if (!coordinator_) return;
  const kafka::BrokerId id = coordinator_->id;
  trace("coordinator_lost", why);
  if (cause != SendError::none && cause != SendError::cancelled) listener_.on_client_event(kafka::to_string(cause), id);
  coordinator_.reset();
  ++epoch_;
  heartbeat_in_flight_ = false;
  offsets_in_flight_ = false;
  cancel_heartbeat();
  if (state_ == State::joining || state_ == State::syncing) {
    // A JoinGroup that never left (the connection was refused or never
    // came up) is still the same attempt to join: the rebalance op stays
    // open. One that was sent may or may not have been acted on.
    const bool never_sent = cause == SendError::refused || cause == SendError::unreachable ||
                            cause == SendError::connect_timed_out;
    if (!never_sent) end_join(check::OpType::info, why);
    state_ = State::unjoined;
  }
  // Whatever is still queued or in flight there fails now (its answer
  // would be stale).
  net_.close(coordinator_node(id));
  // FindCoordinator names the dead broker until the controller has moved
  // the offsets partition: back off exponentially (the clients' reconnect
  // backoff), up to a second.
  const int64_t backoff = std::min<int64_t>(
      std::max(backoff_ms(), 1000),
      static_cast<int64_t>(backoff_ms()) << std::min(coordinator_failures_, 10));
  ++coordinator_failures_;
  step_later(static_cast<int32_t>(backoff));
}

void GroupConsumer::join() {
  state_ = State::joining;
  leader_ = false;
  kafka::JoinGroupRequest req;
  req.group_id = config_.group_id;
  req.session_timeout_ms = config_.session_timeout_ms;
  req.rebalance_timeout_ms = config_.max_poll_interval_ms;
  req.member_id = member_id_;
  req.client_id = config_.client_id;
  req.protocol_type = "consumer";
  req.protocols.push_back({config_.partition_assignment_strategy, encode_subscription(topics_)});
  if (!join_open_) {
    record(check::OpType::invoke, check::OpFunction::rebalance, group_detail(), "");
    join_open_ = true;
  }
  trace("join", "");
  const uint64_t epoch = epoch_;
  send_to_coordinator(std::move(req), config_.max_poll_interval_ms + kJoinTimeoutLapseMs,
                      [this, epoch](SendError e, const kafka::Response* r) {
    if (epoch != epoch_ || state_ != State::joining) return;
    const auto* resp = r == nullptr ? nullptr : std::get_if<kafka::JoinGroupResponse>(r);
    if (e != SendError::none || resp == nullptr) {
      coordinator_lost(kafka::to_string(e), e);
      return;
    }
    on_join(*resp);
  });
}

void GroupConsumer::on_join(const kafka::JoinGroupResponse& r) {
  if (r.error != ErrorCode::none) join_backoff_ms_ = kJoinErrorBackoffMs;
  switch (r.error) {
    case ErrorCode::none:
      break;
    case ErrorCode::unknown_member_id:
      // The coordinator does not know the id we offered: join as new.
      end_join(check::OpType::fail, kafka::to_string(r.error));
      member_id_.clear();
      state_ = State::unjoined;
      step();
      return;
    case ErrorCode::member_id_required:
      // KIP-394: the coordinator handed out our member id and holds it for
      // the session timeout; the same attempt to join goes on at once with
      // it (rd_kafka_cgrp_handle_JoinGroup skips the join backoff; Java's
      // joinGroupIfNeeded rejoins without one).
      member_id_ = r.member_id;
      state_ = State::unjoined;
      skip_join_pacing();
      trace("member_id_required", "");
      step();
      return;
    case ErrorCode::coordinator_load_in_progress:
      // The coordinator is still reading its offsets partition: the same
      // attempt goes on after a backoff, with the same coordinator (Java's
      // JoinGroupResponseHandler retries it without looking the coordinator
      // up again).
      state_ = State::unjoined;
      step_later(backoff_ms());
      return;
    case ErrorCode::inconsistent_group_protocol:
    case ErrorCode::invalid_session_timeout:
    case ErrorCode::group_max_size_reached:
      // The member stops, as a Java application whose poll() raises the
      // error does; librdkafka reports it and keeps rejoining after its
      // join backoff (a departure, docs/fidelity.md "fatal errors").
      end_join(check::OpType::fail, kafka::to_string(r.error));
      state_ = State::failed;
      trace("failed", kafka::to_string(r.error));
      unassign();
      return;
    default:
      end_join(check::OpType::fail, kafka::to_string(r.error));
      state_ = State::unjoined;
      if (is_coordinator_error(r.error)) {
        coordinator_lost(kafka::to_string(r.error));
      } else {
        step_later(backoff_ms());
      }
      return;
  }
  member_id_ = r.member_id;
  generation_ = r.generation_id;
  protocol_ = r.protocol_name;
  leader_ = r.leader == r.member_id;
  state_ = State::syncing;
  trace(leader_ ? "joined_as_leader" : "joined", "");
  if (leader_) {
    lead(r, 0);
  } else {
    sync({});
  }
}

void GroupConsumer::lead(kafka::JoinGroupResponse r, int32_t attempt) {
  if (state_ != State::syncing || generation_ != r.generation_id) return;
  Subscriptions subscriptions;
  std::set<std::string> topics;
  for (const kafka::JoinGroupMember& m : r.members) {
    auto decoded = decode_subscription(m.metadata);
    if (!decoded) {
      trace("bad_subscription", m.member_id);
      decoded.emplace();
    }
    topics.insert(decoded->begin(), decoded->end());
    subscriptions[m.member_id] = std::move(*decoded);
  }
  // The leader assigns over its metadata, which must know every topic the
  // group subscribes to (the Java leader updates its metadata with the
  // group's subscription first; librdkafka requests it). Wait for it up to
  // request.timeout.ms; a topic still unknown then gets no partitions.
  Metadata& metadata = consumer_->metadata();
  bool missing = false;
  for (const std::string& t : topics) {
    if (!metadata.knows(t)) {
      metadata.add_topic(t);
      missing = true;
    }
  }
  if (missing && static_cast<int64_t>(attempt) * backoff_ms() < config_.request_timeout_ms) {
    metadata.refresh();
    const uint64_t epoch = epoch_;
    after(backoff_ms(), [this, r = std::move(r), attempt, epoch]() mutable {
      if (epoch == epoch_) lead(std::move(r), attempt + 1);
    });
    return;
  }
  std::map<std::string, int32_t> counts;
  for (const std::string& t : topics) {
    if (metadata.knows(t)) counts[t] = metadata.partition_count(t);
  }
  const std::string strategy =
      protocol_ == "range" || protocol_ == "roundrobin" ? protocol_ : config_.partition_assignment_strategy;
  const GroupAssignment assignment = assign_partitions(strategy, counts, subscriptions);
  std::vector<kafka::SyncGroupAssignment> out;
  for (const auto& [member, tps] : assignment) out.push_back({member, tps});
  sync(std::move(out));
}

void GroupConsumer::sync(std::vector<kafka::SyncGroupAssignment> assignments) {
  state_ = State::syncing;
  kafka::SyncGroupRequest req;
  req.group_id = config_.group_id;
  req.generation_id = generation_;
  req.member_id = member_id_;
  req.assignments = std::move(assignments);
  const uint64_t epoch = epoch_;
  send_to_coordinator(std::move(req), capped(config_.session_timeout_ms + kSyncTimeoutLapseMs),
                      [this, epoch](SendError e, const kafka::Response* r) {
                        if (epoch != epoch_ || state_ != State::syncing) return;
                        const auto* resp = r == nullptr ? nullptr : std::get_if<kafka::SyncGroupResponse>(r);
                        if (e != SendError::none || resp == nullptr) {
                          coordinator_lost(kafka::to_string(e), e);
                          return;
                        }
                        on_sync(*resp);
                      });
}

void GroupConsumer::on_sync(const kafka::SyncGroupResponse& r) {
  if (r.error != ErrorCode::none) {
    end_join(check::OpType::fail, kafka::to_string(r.error));
    state_ = State::unjoined;
    switch (r.error) {
      case ErrorCode::unknown_member_id:
        member_id_.clear();
        generation_ = -1;
        step();
        return;
      case ErrorCode::illegal_generation:
        generation_ = -1;
        step();
        return;
      case ErrorCode::rebalance_in_progress:
        step();
        return;
      default:
        if (is_coordinator_error(r.error)) {
          coordinator_lost(kafka::to_string(r.error));
        } else {
          step_later(backoff_ms());
        }
        return;
    }
  }
  pending_assignment_ = r.assignment;
  std::sort(pending_assignment_.begin(), pending_assignment_.end());
  std::string assigned;
  for (const TopicPartition& tp : pending_assignment_) {
    assigned += (assigned.empty() ? "" : ",") + kafka::to_string(tp);
  }
  record(check::OpType::ok, check::OpFunction::rebalance,
         fmt::format("group={} generation={} assigned={}", config_.group_id, generation_, assigned), "");
  join_open_ = false;
  trace("assigned", assigned);
  // The coordinator's session clock for the member restarted with the
  // generation.
  last_heartbeat_ok_ms_ = now_ms();
  arm_session_check();
  state_ = State::fetching_offsets;
  fetch_offsets();
}

void GroupConsumer::fetch_offsets() {
  if (offsets_in_flight_ || !coordinator_) return;
  if (pending_assignment_.empty()) {
    start_fetching({});
    return;
  }
  offsets_in_flight_ = true;
  const uint64_t epoch = epoch_;
  const int32_t generation = generation_;
  send_to_coordinator(
      kafka::OffsetFetchRequest{config_.group_id, pending_assignment_}, config_.request_timeout_ms,
      [this, epoch, generation](SendError e, const kafka::Response* r) {
        if (epoch != epoch_) return;
        offsets_in_flight_ = false;
        if (state_ != State::fetching_offsets || generation != generation_) return;
        const auto* resp = r == nullptr ? nullptr : std::get_if<kafka::OffsetFetchResponse>(r);
        if (e != SendError::none || resp == nullptr) {
          coordinator_lost(kafka::to_string(e), e);
          return;
        }
        ErrorCode error = resp->error;
        for (const kafka::OffsetFetchPartition& p : resp->partitions) {
          if (error == ErrorCode::none && p.error != ErrorCode::none) error = p.error;
        }
        if (error != ErrorCode::none) {
          if (is_coordinator_error(error)) {
            coordinator_lost(kafka::to_string(error));
          } else if (!handle_group_error(error)) {
            // COORDINATOR_LOAD_IN_PROGRESS (the new coordinator is reading
            // the offsets topic) and the like: ask again.
            trace("offset_fetch_retry", kafka::to_string(error));
            step_later(backoff_ms());
          }
          return;
        }
        std::map<TopicPartition, int64_t> offsets;
        for (const kafka::OffsetFetchPartition& p : resp->partitions) {
          if (p.offset >= 0) offsets[p.tp] = p.offset;
        }
        start_fetching(offsets);
      });
}

void GroupConsumer::start_fetching(const std::map<TopicPartition, int64_t>& committed) {
  // Positions first, then the assignment, so that the consumer does not
  // reset (auto.offset.reset) a partition that has a committed offset.
  for (const TopicPartition& tp : pending_assignment_) {
    auto it = committed.find(tp);
    if (it != committed.end()) {
      consumer_->seek(tp, it->second);
      committed_[tp] = it->second;
    } else {
      committed_.erase(tp);
    }
  }
  consumer_->assign(pending_assignment_);
  assignment_ = std::set<TopicPartition>(pending_assignment_.begin(), pending_assignment_.end());
  pending_assignment_.clear();
  state_ = State::stable;
  trace("stable", "");
  schedule_heartbeat();
}

// --- heartbeats and the session ------------------------------------------------------------

void GroupConsumer::cancel_heartbeat() {
  if (heartbeat_timer_set_) ctx_.cancel(heartbeat_timer_);
  heartbeat_timer_set_ = false;
}

void GroupConsumer::schedule_heartbeat() {
  if (heartbeat_timer_set_) return;
  heartbeat_timer_set_ = true;
  heartbeat_timer_ = ctx_.after(sim::Duration::millis(config_.heartbeat_interval_ms),
                                [this, life = std::weak_ptr<int>(life_)] {
                                  if (life.expired()) return;
                                  heartbeat_timer_set_ = false;
                                  heartbeat();
                                });
}

void GroupConsumer::heartbeat() {
  if (state_ != State::stable || heartbeat_in_flight_) return;
  if (!coordinator_) {
    step();
    return;
  }
  heartbeat_in_flight_ = true;
  const uint64_t epoch = epoch_;
  const int32_t generation = generation_;
  send_to_coordinator(
      kafka::HeartbeatRequest{config_.group_id, generation_, member_id_}, capped(config_.session_timeout_ms),
      [this, epoch, generation](SendError e, const kafka::Response* r) {
        if (epoch != epoch_) return;
        heartbeat_in_flight_ = false;
        if (state_ != State::stable || generation != generation_) return;
        const auto* resp = r == nullptr ? nullptr : std::get_if<kafka::HeartbeatResponse>(r);
        if (e != SendError::none || resp == nullptr) {
          coordinator_lost(kafka::to_string(e), e);
          return;
        }
        if (resp->error == ErrorCode::none || resp->error == ErrorCode::rebalance_in_progress) {
          last_heartbeat_ok_ms_ = now_ms();  // the coordinator holds the member
        }
        if (resp->error == ErrorCode::none) {
          schedule_heartbeat();
          return;
        }
        if (is_coordinator_error(resp->error)) {
          coordinator_lost(kafka::to_string(resp->error));
          return;
        }
        if (!handle_group_error(resp->error)) {
          trace("heartbeat_error", kafka::to_string(resp->error));
          schedule_heartbeat();
        }
      });
}

void GroupConsumer::arm_session_check() {
  if (session_check_set_) return;
  session_check_set_ = true;
  const int64_t due = last_heartbeat_ok_ms_ + config_.session_timeout_ms;
  after(static_cast<int32_t>(std::max<int64_t>(1, due - now_ms())), [this] {
    session_check_set_ = false;
    check_session();
  });
}

void GroupConsumer::check_session() {
  // Only a member that holds (or is taking up) an assignment has a session
  // to lose; a join in progress is timed by its request.
  if (state_ != State::stable && state_ != State::fetching_offsets) return;
  if (now_ms() - last_heartbeat_ok_ms_ >= config_.session_timeout_ms) {
    // librdkafka: "Consumer group session timed out ... without a successful
    // response from the group coordinator": the partitions are lost, the
    // member id is reset, and it rejoins.
    membership_lost(true, "session timed out");
    return;
  }
  arm_session_check();
}

void GroupConsumer::polled() {
  last_poll_ms_ = now_ms();
  if (state_ == State::left) {
    trace("rejoin_after_poll", "");
    state_ = State::unjoined;
    step();
  }
}

void GroupConsumer::check_poll_interval() {
  if (state_ == State::closed || state_ == State::failed) return;
  const int64_t due = last_poll_ms_ + config_.max_poll_interval_ms;
  if (state_ != State::left && now_ms() >= due) {
    // librdkafka: "Application maximum poll interval exceeded: leaving
    // group" (KIP-62): the partitions go to the others until it polls again.
    leave("max.poll.interval.ms exceeded", {});
    state_ = State::left;
    after(config_.max_poll_interval_ms, [this] { check_poll_interval(); });
    return;
  }
  after(static_cast<int32_t>(std::max<int64_t>(1, due - now_ms())), [this] { check_poll_interval(); });
}

// --- rebalances ------------------------------------------------------------------------------

bool GroupConsumer::handle_group_error(ErrorCode e) {
  if (state_ != State::stable && state_ != State::fetching_offsets) {
    return e == ErrorCode::rebalance_in_progress || e == ErrorCode::unknown_member_id ||
           e == ErrorCode::illegal_generation;
  }
  switch (e) {
    case ErrorCode::rebalance_in_progress:
      rejoin(true, "REBALANCE_IN_PROGRESS");
      return true;
    case ErrorCode::unknown_member_id:
      membership_lost(true, "UNKNOWN_MEMBER_ID");
      return true;
    case ErrorCode::illegal_generation:
      membership_lost(false, "ILLEGAL_GENERATION");
      return true;
    default:
      return false;
  }
}

void GroupConsumer::unassign() {
  consumer_->assign({});
  assignment_.clear();
  pending_assignment_.clear();
}

void GroupConsumer::rejoin(bool commit_first, const std::string& why) {
  if (state_ == State::closed || state_ == State::failed || state_ == State::left) return;
  trace("rejoin", why);
  cancel_heartbeat();
  // Revoke: what was consumed is committed (enable.auto.commit) before the
  // partitions go, and fetching them stops.
  std::map<TopicPartition, int64_t> offsets;
  if (commit_first && config_.enable_auto_commit && state_ == State::stable) offsets = commit_candidates();
  unassign();
  if (!offsets.empty() && generation_ >= 0) {
    // Java commits synchronously in onJoinPrepare, within the rebalance
    // timeout; librdkafka holds the rejoin until its commit is done.
    state_ = State::revoking;
    const sim::Time deadline = ctx_.now() + sim::Duration::millis(config_.max_poll_interval_ms);
    commit_sync(std::move(offsets), deadline, [this](bool) {
      if (state_ != State::revoking) return;
      state_ = State::unjoined;
      skip_join_pacing();
      step();
    });
    return;
  }
  state_ = State::unjoined;
  skip_join_pacing();
  step();
}

void GroupConsumer::skip_join_pacing() {
  // "Skip the join backoff": librdkafka resets its join interval once a
  // revocation is done (rd_kafka_cgrp_unassign_done) or when there is
  // nothing to revoke (rd_kafka_cgrp_revoke_all_rejoin).
  last_join_.reset();
  join_backoff_ms_ = 0;
}

void GroupConsumer::membership_lost(bool reset_member_id, const std::string& why) {
  if (reset_member_id) member_id_.clear();
  generation_ = -1;
  rejoin(false, why);
}

void GroupConsumer::end_join(check::OpType type, const std::string& error) {
  if (!join_open_) return;
  record(type, check::OpFunction::rebalance, group_detail(), error);
  join_open_ = false;
}

void GroupConsumer::leave(const std::string& why, std::function<void()> done) {
  trace("leave", why);
  cancel_heartbeat();
  unassign();
  // The "left" op completes a join still open (pair_index pairs it).
  join_open_ = false;
  record(check::OpType::info, check::OpFunction::rebalance, group_detail() + " left", why);
  const std::string member = member_id_;
  member_id_.clear();
  generation_ = -1;
  ++epoch_;  // answers to what was in flight for the old membership are stale
  heartbeat_in_flight_ = false;
  offsets_in_flight_ = false;
  if (!coordinator_ || member.empty()) {
    if (done) done();
    return;
  }
  send_to_coordinator(kafka::LeaveGroupRequest{config_.group_id, member}, capped(kLeaveTimeoutMs),
                      [done = std::move(done)](SendError, const kafka::Response*) {
                        if (done) done();
                      });
}

// --- offsets -----------------------------------------------------------------------------------

std::map<TopicPartition, int64_t> GroupConsumer::commit_candidates() const {
  std::map<TopicPartition, int64_t> out;
  for (const TopicPartition& tp : assignment_) {
    const auto pos = consumer_->position(tp);
    if (!pos) continue;
    auto c = committed_.find(tp);
    if (c != committed_.end() && c->second == *pos) continue;
    out[tp] = *pos;
  }
  return out;
}

void GroupConsumer::auto_commit() {
  if (state_ == State::closed || state_ == State::failed) return;
  if (state_ == State::stable && coordinator_ && commits_in_flight_ == 0) {
    send_commit(commit_candidates(), {});
  }
  after(config_.auto_commit_interval_ms, [this] { auto_commit(); });
}

void GroupConsumer::commit(std::function<void(bool)> done) {
  if (state_ != State::stable) {
    if (done) done(false);
    return;
  }
  send_commit(commit_candidates(), [done = std::move(done)](CommitResult r) {
    if (done) done(r == CommitResult::ok);
  });
}

void GroupConsumer::commit_sync(std::map<TopicPartition, int64_t> offsets, sim::Time deadline,
                                std::function<void(bool)> done) {
  auto again = [this, deadline](std::map<TopicPartition, int64_t> offsets, std::function<void(bool)> done) {
    after(backoff_ms(), [this, deadline, offsets = std::move(offsets), done = std::move(done)]() mutable {
      commit_sync(std::move(offsets), deadline, std::move(done));
    });
  };
  if (!coordinator_ && !offsets.empty() && generation_ >= 0) {
    // AbstractCoordinator.ensureCoordinatorReady, within the same timer.
    if (ctx_.now() >= deadline) {
      done(false);
      return;
    }
    find_coordinator();
    again(std::move(offsets), std::move(done));
    return;
  }
  if (ctx_.now() >= deadline) {
    done(false);
    return;
  }
  // The whole commit, retries included, ends by the deadline (Java's
  // commitOffsetsSync waits on one timer): the last attempt gets what is left.
  const int64_t left_ms = (deadline - ctx_.now()).us() / 1000;
  std::map<TopicPartition, int64_t> copy = offsets;
  send_commit(
      std::move(copy),
      [this, deadline, again, offsets = std::move(offsets), done = std::move(done)](CommitResult r) mutable {
        if (r == CommitResult::retriable && ctx_.now() < deadline) {
          again(std::move(offsets), std::move(done));
          return;
        }
        done(r == CommitResult::ok);
      },
      std::max<int64_t>(1, std::min<int64_t>(config_.request_timeout_ms, left_ms)));
}

void GroupConsumer::send_commit(std::map<TopicPartition, int64_t> offsets, std::function<void(CommitResult)> done,
                                std::optional<int64_t> timeout_ms) {
  if (offsets.empty()) {
    if (done) done(CommitResult::ok);
    return;
  }
  if (!coordinator_ || generation_ < 0) {
    if (done) done(generation_ < 0 ? CommitResult::failed : CommitResult::retriable);
    return;
  }
  kafka::OffsetCommitRequest req;
  req.group_id = config_.group_id;
  req.generation_id = generation_;
  req.member_id = member_id_;
  for (const auto& [tp, offset] : offsets) {
    req.partitions.push_back({tp, offset});
    record(check::OpType::invoke, check::OpFunction::commit, "", "", &tp, offset);
  }
  ++commits_in_flight_;
  const uint64_t epoch = epoch_;
  send_to_coordinator(
      std::move(req), timeout_ms.value_or(config_.request_timeout_ms),
      [this, epoch, offsets = std::move(offsets), done = std::move(done)](SendError e,
                                                                         const kafka::Response* r) {
        --commits_in_flight_;
        const auto* resp = r == nullptr ? nullptr : std::get_if<kafka::OffsetCommitResponse>(r);
        if (e != SendError::none || resp == nullptr) {
          // The request may have been written: unknown outcome.
          const std::string error = kafka::to_string(e);
          for (const auto& [tp, offset] : offsets) {
            record(check::OpType::info, check::OpFunction::commit, "", error, &tp, offset);
          }
          if (epoch == epoch_) coordinator_lost(error, e);
          if (done) done(CommitResult::retriable);
          return;
        }
        bool all_ok = true;
        ErrorCode group_error = ErrorCode::none;
        for (const auto& [tp, offset] : offsets) {
          ErrorCode pe = ErrorCode::unknown_server_error;
          for (const auto& [rtp, re] : resp->partitions) {
            if (rtp == tp) pe = re;
          }
          if (pe == ErrorCode::none) {
            record(check::OpType::ok, check::OpFunction::commit, "", "", &tp, offset);
            committed_[tp] = offset;
            continue;
          }
          all_ok = false;
          if (group_error == ErrorCode::none) group_error = pe;
          // A commit that timed out in the broker's purgatory (the offsets
          // topic did not replicate it in time) may still be written.
          const bool unknown = pe == ErrorCode::request_timed_out || pe == ErrorCode::unknown_server_error;
          record(unknown ? check::OpType::info : check::OpType::fail, check::OpFunction::commit, "",
                 kafka::to_string(pe), &tp, offset);
        }
        const bool retriable = is_coordinator_error(group_error) || group_error == ErrorCode::request_timed_out ||
                               group_error == ErrorCode::coordinator_load_in_progress;
        if (group_error != ErrorCode::none && epoch == epoch_) {
          if (is_coordinator_error(group_error) || group_error == ErrorCode::request_timed_out) {
            // A commit the coordinator could not replicate in time: it may
            // have lost its offsets partition without knowing yet (cut off
            // from ZooKeeper and the other replicas), so the member looks
            // the coordinator up again rather than keep committing there
            // (Java's OffsetCommitResponseHandler marks it unknown;
            // librdkafka's rd_kafka_handle_OffsetCommit_error refreshes it).
            coordinator_lost(kafka::to_string(group_error));
          } else if (group_error == ErrorCode::coordinator_load_in_progress) {
            trace("commit_retry", kafka::to_string(group_error));  // the same coordinator, later
          } else if (group_error == ErrorCode::rebalance_in_progress) {
            // Java: the commit fails (CommitFailedException) and the
            // member rejoins; its positions were not committed.
            if (state_ == State::stable) rejoin(false, "commit: REBALANCE_IN_PROGRESS");
          } else {
            handle_group_error(group_error);
          }
        }
        if (done) done(all_ok ? CommitResult::ok : retriable ? CommitResult::retriable : CommitResult::failed);
      });
}

void GroupConsumer::close(std::function<void()> done) {
  if (state_ == State::closed) {
    if (done) done();
    return;
  }
  std::map<TopicPartition, int64_t> offsets;
  if (config_.enable_auto_commit && state_ == State::stable) offsets = commit_candidates();
  state_ = State::closed;
  trace("close", "");
  cancel_heartbeat();
  // The application has stopped polling: fetching stops before the commit
  // (librdkafka's close revokes the assignment first, stopping its
  // fetchers, rd_kafka_assignment_serve_removals), so nothing is read
  // while the commit waits and no partition has two readers once the
  // others take it over.
  unassign();
  auto finish = [this, done = std::move(done)](bool) mutable {
    leave("close", [this, done = std::move(done)] {
      net_.close_all();
      if (done) done();
    });
  };
  if (offsets.empty()) {
    finish(true);
  } else {
    commit_sync(std::move(offsets), ctx_.now() + sim::Duration::millis(kCloseTimeoutMs), std::move(finish));
  }
}

}  // namespace client
