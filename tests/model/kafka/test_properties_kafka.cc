// Properties of brokers and the controller over seeds, cluster shapes and
// random fault schedules (kills, graceful stops, pauses, network cuts; never
// a power-off, so every write survives in the page cache):
//   - the model's invariants hold after every event (InvariantChecker);
//   - with a safe configuration (RF 3, min.insync.replicas=2, no unclean
//     election, leader-epoch truncation) no write acknowledged with acks=all
//     is lost, and what a replica holds below its high watermark is what
//     every other replica holds there, at every check, for the whole run;
//   - a case run twice gives the same trace.
//
// A schedule is data: a list of fault episodes, each begun some time after
// the previous one and undone (restart, resume, cut removed) some time later.
// Episodes name their victim by role — the controller, the leader or a
// follower of a partition — as often as by id, so that the interesting
// failures come up often; the role is resolved when the episode begins.
// rapidcheck draws and shrinks the case and prints it as the C++ that builds
// it again, ready to paste into a KafkaPropertiesRepro test (see the end of
// this file); RC_LOG adds the timeline as it was resolved against the run.
// Set KAFKASIM_PROP_TRACE=1 to have the trace of every run written to stderr
// (best with one repro test, or with RC_PARAMS="reproduce=...").
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "check_property.h"
#include "kafka/cluster.h"
#include "sim/assert.h"

namespace kafka::testing {
namespace {

using sim::Duration;

// --- the schedule ------------------------------------------------------------------

enum class Fault : uint8_t {
  kill,          // kill -9, started again at the end of the episode
  stop,          // SIGTERM (controlled shutdown), started again at the end
  pause,         // SIGSTOP / a long GC, resumed at the end
  isolate,       // the victim's host reaches no one and no one reaches it
  split,         // the ZooKeeper and broker hosts in two groups (the client reaches all)
  cut_leader_from_followers,  // a partition's leader from its other replicas
  cut_leader_from_zookeeper,  // a partition's leader from every ZooKeeper server
  block,         // packets from the victim's host stop reaching some hosts (one way)
};

enum class Target : uint8_t {
  broker,      // broker 1 + index % brokers
  controller,  // the active controller, if any
  leader,      // the leader (in ZooKeeper) of partition index % partitions
  follower,    // a replica of that partition that is not its leader
  zookeeper,   // ZooKeeper server 1 + index % servers
};

const char* to_string(Fault f) {
  switch (f) {
    case Fault::kill: return "kill";
    case Fault::stop: return "stop";
    case Fault::pause: return "pause";
    case Fault::isolate: return "isolate";
    case Fault::split: return "split";
    case Fault::cut_leader_from_followers: return "cut_leader_from_followers";
    case Fault::cut_leader_from_zookeeper: return "cut_leader_from_zookeeper";
    case Fault::block: return "block";
  }
  return "?";
}

const char* to_string(Target t) {
  switch (t) {
    case Target::broker: return "broker";
    case Target::controller: return "controller";
    case Target::leader: return "leader";
    case Target::follower: return "follower";
    case Target::zookeeper: return "zookeeper";
  }
  return "?";
}

struct Episode {
  int64_t gap_ms = 0;  // after the previous episode began
  Fault fault = Fault::kill;
  Target target = Target::broker;
  int index = 0;
  int64_t duration_ms = 0;  // until the episode is undone
  // split: bit i puts host i (ZooKeeper servers first, then brokers) on one
  // side; block: the destinations cut off.
  uint32_t hosts = 0;
};

struct Shape {
  int zookeepers = 1;
  int brokers = 3;
  int topics = 1;
  int partitions = 1;  // per topic
  int rf = 1;
  int min_insync = 1;
  bool unclean = false;
};

struct Case {
  uint64_t seed = 1;
  Shape shape;
  std::vector<Episode> schedule;
};

const char* enumerator(Fault f) {
  switch (f) {
    case Fault::kill: return "Fault::kill";
    case Fault::stop: return "Fault::stop";
    case Fault::pause: return "Fault::pause";
    case Fault::isolate: return "Fault::isolate";
    case Fault::split: return "Fault::split";
    case Fault::cut_leader_from_followers: return "Fault::cut_leader_from_followers";
    case Fault::cut_leader_from_zookeeper: return "Fault::cut_leader_from_zookeeper";
    case Fault::block: return "Fault::block";
  }
  return "?";
}

const char* enumerator(Target t) {
  switch (t) {
    case Target::broker: return "Target::broker";
    case Target::controller: return "Target::controller";
    case Target::leader: return "Target::leader";
    case Target::follower: return "Target::follower";
    case Target::zookeeper: return "Target::zookeeper";
  }
  return "?";
}

// A case prints as the C++ that rebuilds it, ready for a KafkaPropertiesRepro
// test.
void showValue(const Episode& e, std::ostream& os) {
  os << fmt::format("{{.gap_ms = {}, .fault = {}, .target = {}, .index = {}, .duration_ms = {}", e.gap_ms,
                    enumerator(e.fault), enumerator(e.target), e.index, e.duration_ms);
  if (e.fault == Fault::split || e.fault == Fault::block) os << fmt::format(", .hosts = {:#x}", e.hosts);
  os << "}";
}

void showValue(const Case& k, std::ostream& os) {
  const Shape& s = k.shape;
  os << fmt::format(
      "Case{{.seed = {},\n"
      "     .shape = {{.zookeepers = {}, .brokers = {}, .topics = {}, .partitions = {}, .rf = {},\n"
      "               .min_insync = {}, .unclean = {}}},\n"
      "     .schedule = {{\n",
      k.seed, s.zookeepers, s.brokers, s.topics, s.partitions, s.rf, s.min_insync, s.unclean);
  for (const Episode& e : k.schedule) {
    os << "         ";
    showValue(e, os);
    os << ",\n";
  }
  os << "     }}";
}

// --- generators --------------------------------------------------------------------

// Restarting a killed broker within zookeeper.session.timeout.ms (18 s in
// 2.8) makes it exit at startup, as a real one does; restarting later works.
// Both are drawn, the second more often.
rc::Gen<int64_t> gen_duration_ms() {
  return rc::gen::weightedOneOf<int64_t>({
      {1, rc::gen::inRange<int64_t>(200, 15000)},
      {2, rc::gen::inRange<int64_t>(19000, 45000)},
  });
}

rc::Gen<Episode> gen_episode() {
  return rc::gen::build<Episode>(
      rc::gen::set(&Episode::gap_ms, rc::gen::inRange<int64_t>(0, 15000)),
      rc::gen::set(&Episode::fault, rc::gen::weightedElement<Fault>({
                                        {4, Fault::kill},
                                        {1, Fault::stop},
                                        {3, Fault::pause},
                                        {2, Fault::isolate},
                                        {2, Fault::split},
                                        {3, Fault::cut_leader_from_followers},
                                        {3, Fault::cut_leader_from_zookeeper},
                                        {1, Fault::block},
                                    })),
      rc::gen::set(&Episode::target, rc::gen::weightedElement<Target>({
                                         {2, Target::broker},
                                         {3, Target::controller},
                                         {4, Target::leader},
                                         {2, Target::follower},
                                         {1, Target::zookeeper},
                                     })),
      rc::gen::set(&Episode::index, rc::gen::inRange(0, 6)),
      rc::gen::set(&Episode::duration_ms, gen_duration_ms()),
      rc::gen::set(&Episode::hosts, rc::gen::inRange<uint32_t>(1, 256)));
}

// Up to 12 episodes whatever the case's size; shrinking removes episodes.
// (rapidcheck's inRange narrows with the size: resize(100) draws every field
// from its whole range in every case.)
rc::Gen<std::vector<Episode>> gen_schedule() {
  return rc::gen::resize(12, rc::gen::container<std::vector<Episode>>(rc::gen::resize(100, gen_episode())));
}

rc::Gen<uint64_t> gen_seed() {
  return rc::gen::noShrink(rc::gen::resize(100, rc::gen::inRange<uint64_t>(1, 1ULL << 48)));
}

// Any shape: 1-5 brokers, RF <= brokers, 1-3 ZooKeeper servers, 1-3 topics of
// 1-2 partitions, min.insync.replicas <= RF, unclean election on or off.
rc::Gen<Shape> gen_any_shape() {
  return rc::gen::map(
      rc::gen::build<Shape>(rc::gen::set(&Shape::zookeepers, rc::gen::inRange(1, 4)),
                            rc::gen::set(&Shape::brokers, rc::gen::inRange(1, 6)),
                            rc::gen::set(&Shape::topics, rc::gen::inRange(1, 4)),
                            rc::gen::set(&Shape::partitions, rc::gen::inRange(1, 3)),
                            rc::gen::set(&Shape::rf, rc::gen::inRange(1, 4)),
                            rc::gen::set(&Shape::min_insync, rc::gen::inRange(1, 3)),
                            rc::gen::set(&Shape::unclean, rc::gen::arbitrary<bool>())),
      [](Shape s) {
        s.rf = std::min(s.rf, s.brokers);
        s.min_insync = std::min(s.min_insync, s.rf);
        return s;
      });
}

// The safe configuration: RF 3 on 3-5 brokers, min.insync.replicas=2, no
// unclean election.
rc::Gen<Shape> gen_safe_shape() {
  return rc::gen::build<Shape>(rc::gen::set(&Shape::zookeepers, rc::gen::inRange(1, 4)),
                               rc::gen::set(&Shape::brokers, rc::gen::inRange(3, 6)),
                               rc::gen::set(&Shape::topics, rc::gen::inRange(1, 3)),
                               rc::gen::set(&Shape::partitions, rc::gen::inRange(1, 3)),
                               rc::gen::set(&Shape::rf, rc::gen::just(3)),
                               rc::gen::set(&Shape::min_insync, rc::gen::just(2)),
                               rc::gen::set(&Shape::unclean, rc::gen::just(false)));
}

rc::Gen<Case> gen_case(rc::Gen<Shape> shape) {
  return rc::gen::build<Case>(rc::gen::set(&Case::seed, gen_seed()),
                              rc::gen::set(&Case::shape, rc::gen::resize(100, std::move(shape))),
                              rc::gen::set(&Case::schedule, gen_schedule()));
}

// --- coverage: what the resolved schedules actually did, over a property's cases ----

struct Coverage {
  std::map<std::string, int> counts;
  int cases = 0;
  void add(const std::string& what) { ++counts[what]; }
  void print(std::string_view property) const {
    std::cout << fmt::format("{}: {} cases; resolved faults (cases with at least one):\n", property, cases);
    for (const auto& [what, n] : counts) std::cout << fmt::format("  {:<44} {}\n", what, n);
  }
};

// --- the workload --------------------------------------------------------------------

enum class AckMode { all, mixed };

// Sends a new, distinct value to the current leader (in ZooKeeper) of every
// partition every 100-500 ms of virtual time, with at most a few requests
// outstanding per partition, and remembers which values were acknowledged.
// Nothing is retried: a value is acknowledged once or never.
class Producer {
 public:
  Producer(Cluster& c, std::vector<TopicPartition> tps, AckMode mode)
      : c_(c), tps_(std::move(tps)), mode_(mode), rng_(c.world().rng("workload")) {}

  void start() { tick(); }
  void stop() { stopped_ = true; }

  // Moves every answered request out of the pending list.
  void collect() {
    std::vector<Pending> still;
    for (Pending& p : pending_) {
      if (!p.out->has_value()) {
        still.push_back(std::move(p));
        continue;
      }
      const ProducePartitionResponse& r = **p.out;
      if (r.error == ErrorCode::none) {
        ++acked_count_;
        if (p.acks == -1) acked_all_[p.tp].insert(p.value);
      } else {
        ++errors_[to_string(r.error)];
      }
    }
    pending_ = std::move(still);
  }

  const std::vector<TopicPartition>& tps() const { return tps_; }
  // Acknowledged with acks=all, per partition.
  const std::map<TopicPartition, std::set<uint64_t>>& acked_all() const { return acked_all_; }
  uint64_t acked_count() const { return acked_count_; }
  uint64_t sent() const { return next_value_ - 1; }
  const std::map<std::string, int>& errors() const { return errors_; }
  // Which partition each value was sent to.
  const std::map<uint64_t, TopicPartition>& sent_to() const { return sent_to_; }

 private:
  struct Pending {
    uint64_t value = 0;
    TopicPartition tp;
    int16_t acks = -1;
    sim::Time sent;
    std::shared_ptr<std::optional<ProducePartitionResponse>> out;
  };

  void tick() {
    if (stopped_) return;
    collect();
    const sim::Time now = c_.world().now();
    for (const TopicPartition& tp : tps_) {
      // A request unanswered after the client's 30 s request timeout never
      // will be; it stops counting against the partition's window.
      int outstanding = 0;
      for (const Pending& p : pending_) {
        if (p.tp == tp && now - p.sent < Duration::seconds(31)) ++outstanding;
      }
      if (outstanding >= 4) continue;
      auto s = c_.state(tp);
      if (!s || s->leader == kNoBroker) continue;
      Pending p;
      p.value = next_value_++;
      p.tp = tp;
      p.acks = mode_ == AckMode::all || rng_.chance(1, 2) ? int16_t{-1} : int16_t{1};
      p.sent = now;
      p.out = std::make_shared<std::optional<ProducePartitionResponse>>();
      sent_to_[p.value] = tp;
      c_.produce_async(tp, {p.value}, p.acks, p.out, /*timeout_ms=*/10000);
      pending_.push_back(std::move(p));
    }
    c_.world().loop().after(rng_.uniform(Duration::millis(100), Duration::millis(500)),
                            [this] { tick(); });
  }

  Cluster& c_;
  std::vector<TopicPartition> tps_;
  AckMode mode_;
  sim::Rng rng_;
  bool stopped_ = false;
  uint64_t next_value_ = 1;
  std::vector<Pending> pending_;
  uint64_t acked_count_ = 0;
  std::map<TopicPartition, std::set<uint64_t>> acked_all_;
  std::map<uint64_t, TopicPartition> sent_to_;
  std::map<std::string, int> errors_;
};

// --- what replicas hold below their high watermarks ----------------------------------

// Everything a replica holds below its high watermark is committed: it must
// never differ from what any replica held at that offset below its own high
// watermark, at any time. Checked every second and at the end, over every
// running broker's replica of every partition.
class CommittedChecker {
 public:
  explicit CommittedChecker(Cluster& c) : c_(c) {}

  // Returns a description of the first divergence found, if any.
  std::optional<std::string> check(const std::vector<TopicPartition>& tps) {
    const int64_t now_ms = c_.world().now().us() / 1000;
    for (const TopicPartition& tp : tps) {
      auto& ref = committed_[tp];
      // Pairwise, at this instant: the records below min(hw_a, hw_b).
      struct View {
        BrokerId id;
        const Partition* p;
      };
      std::vector<View> views;
      for (BrokerId id : c_.broker_ids()) {
        const Broker* b = c_.broker(id);
        if (b == nullptr) continue;
        const Partition* p = b->partition(tp);
        if (p != nullptr) views.push_back({id, p});
      }
      for (size_t i = 0; i < views.size(); ++i) {
        for (size_t j = i + 1; j < views.size(); ++j) {
          const Partition& a = *views[i].p;
          const Partition& b = *views[j].p;
          const Offset from = std::max(a.log().log_start(), b.log().log_start());
          const Offset upto = std::min(a.high_watermark(), b.high_watermark());
          for (Offset o = from; o < upto; o = o + 1) {
            const Record* ra = a.log().at(o);
            const Record* rb = b.log().at(o);
            if (ra == nullptr || rb == nullptr || ra->value != rb->value) {
              return fmt::format(
                  "{}: replicas diverge below their high watermarks at offset {}: broker {} (hw {}) "
                  "holds {}, broker {} (hw {}) holds {}",
                  to_string(tp), o.value, views[i].id, a.high_watermark().value, describe(ra),
                  views[j].id, b.high_watermark().value, describe(rb));
            }
          }
        }
      }
      // Against everything ever seen below a high watermark.
      for (const View& v : views) {
        const PartitionLog& log = v.p->log();
        for (Offset o = log.log_start(); o < v.p->high_watermark(); o = o + 1) {
          const Record* r = log.at(o);
          if (r == nullptr) {
            return fmt::format("{}: broker {} has no record at offset {} below its high watermark {}",
                               to_string(tp), v.id, o.value, v.p->high_watermark().value);
          }
          auto [it, inserted] = ref.emplace(o.value, Seen{r->value, r->leader_epoch.value, v.id, now_ms});
          if (!inserted && it->second.value != r->value) {
            return fmt::format(
                "{}: committed record changed at offset {}: broker {} now holds {} below its high "
                "watermark {}, but value {} (leader epoch {}) was below broker {}'s high watermark "
                "there at {} ms",
                to_string(tp), o.value, v.id, describe(r), v.p->high_watermark().value,
                it->second.value, it->second.leader_epoch, it->second.broker, it->second.at_ms);
          }
        }
      }
    }
    return std::nullopt;
  }

 private:
  struct Seen {
    uint64_t value;
    int64_t leader_epoch;
    BrokerId broker;
    int64_t at_ms;
  };
  static std::string describe(const Record* r) {
    if (r == nullptr) return "nothing";
    return fmt::format("value {} (leader epoch {})", r->value, r->leader_epoch.value);
  }

  Cluster& c_;
  std::map<TopicPartition, std::map<int64_t, Seen>> committed_;
};

// --- running a case --------------------------------------------------------------------

std::vector<TopicPartition> topic_partitions(const Shape& s) {
  std::vector<TopicPartition> tps;
  for (int t = 0; t < s.topics; ++t) {
    for (int p = 0; p < s.partitions; ++p) tps.push_back({fmt::format("t{}", t), p});
  }
  return tps;
}

ClusterOptions cluster_options(const Case& k) {
  ClusterOptions o;
  o.zookeepers = k.shape.zookeepers;
  o.brokers = k.shape.brokers;
  o.seed = k.seed;
  o.broker_properties = {
      {"min.insync.replicas", std::to_string(k.shape.min_insync)},
      {"unclean.leader.election.enable", k.shape.unclean ? "true" : "false"},
  };
  return o;
}

struct RunOptions {
  AckMode acks = AckMode::mixed;
  bool check_committed = false;  // CommittedChecker every second and at the end
  bool keep_lines = false;       // keep the trace's lines (to compare two runs)
};

// One case, start to finish: the cluster comes up, the topics are created,
// the producer starts, the schedule runs, then everything heals, every
// process is started and the cluster is left alone for two minutes.
class CaseRun {
 public:
  CaseRun(const Case& k, RunOptions options, Coverage* coverage)
      : k_(k), options_(options), coverage_(coverage), c_(cluster_options(k)), checker_(c_),
        tps_(topic_partitions(k.shape)), producer_(c_, tps_, options.acks), committed_(c_) {
    if (const char* t = std::getenv("KAFKASIM_PROP_TRACE"); t != nullptr && *t == '1') {
      c_.world().trace().set_text_sink(&std::cerr);
    }
    c_.world().trace().keep_lines(options.keep_lines);
  }

  Cluster& cluster() { return c_; }
  const Producer& producer() const { return producer_; }
  const std::vector<std::string>& timeline() const { return timeline_; }
  const std::optional<std::string>& divergence() const { return divergence_; }

  // Returns an error for a cluster that never came up (before any fault).
  std::optional<std::string> setup() {
    c_.start();
    if (!c_.await_ready()) return "the cluster never became ready";
    for (int t = 0; t < k_.shape.topics; ++t) {
      const ErrorCode e =
          c_.create_topic(fmt::format("t{}", t), k_.shape.partitions, static_cast<int16_t>(k_.shape.rf));
      if (e != ErrorCode::none) return fmt::format("creating t{} failed: {}", t, to_string(e));
    }
    return std::nullopt;
  }

  void run() {
    producer_.start();
    if (options_.check_committed) check_committed_every_second();
    run_schedule();
    recover();
  }

  // After the run: every partition has a running leader that knows it leads.
  std::optional<std::string> check_leaders() const {
    for (const TopicPartition& tp : tps_) {
      auto s = c_.state(tp);
      if (!s || s->leader == kNoBroker) return fmt::format("{} has no leader at the end", to_string(tp));
      const Broker* b = c_.broker(s->leader);
      const Partition* p = b == nullptr ? nullptr : b->partition(tp);
      if (p == nullptr || !p->is_leader()) {
        return fmt::format("{}: broker {} is leader in ZooKeeper but does not lead", to_string(tp), s->leader);
      }
    }
    return std::nullopt;
  }

  std::optional<std::string> check_committed_now() {
    if (!divergence_) divergence_ = committed_.check(tps_);
    return divergence_;
  }

 private:
  // A process the schedule acts on.
  struct Victim {
    bool zookeeper = false;
    int id = 0;  // broker id or ZooKeeper server (1-based)
    std::string label;
  };
  // A timed step: an episode begins or ends.
  struct Step {
    sim::Time at;
    size_t episode;
    bool begin;
  };
  // What an episode did when it began, so that its end undoes just that.
  struct Applied {
    std::optional<sim::ProcessId> process;  // killed, stopped or paused
    bool cut = false;
    std::vector<std::vector<sim::HostId>> groups;  // partition(groups)
    std::optional<sim::HostId> isolated;
    std::vector<std::pair<sim::HostId, sim::HostId>> blocked;
  };

  sim::ProcessId process_of(const Victim& v) const {
    return v.zookeeper ? c_.zk_process(v.id) : c_.broker_process(v.id);
  }
  sim::HostId host_of(const Victim& v) {
    return v.zookeeper ? c_.world().host_of(c_.zk_process(v.id)) : c_.broker_host(v.id);
  }
  std::vector<sim::HostId> zk_hosts() {
    std::vector<sim::HostId> hs;
    for (int i = 1; i <= k_.shape.zookeepers; ++i) hs.push_back(c_.world().host_of(c_.zk_process(i)));
    return hs;
  }
  // ZooKeeper hosts first, then broker hosts: the order of Episode::hosts' bits.
  std::vector<sim::HostId> all_hosts() {
    std::vector<sim::HostId> hs = zk_hosts();
    for (BrokerId id : c_.broker_ids()) hs.push_back(c_.broker_host(id));
    return hs;
  }
  const TopicPartition& partition_of(const Episode& e) const {
    return tps_[static_cast<size_t>(e.index) % tps_.size()];
  }

  std::optional<Victim> resolve(const Episode& e) const {
    switch (e.target) {
      case Target::broker: {
        const int id = 1 + e.index % k_.shape.brokers;
        return Victim{false, id, fmt::format("broker {}", id)};
      }
      case Target::controller: {
        auto id = c_.controller();
        if (!id) return std::nullopt;
        return Victim{false, *id, fmt::format("controller (broker {})", *id)};
      }
      case Target::leader:
      case Target::follower: {
        const TopicPartition& tp = partition_of(e);
        auto s = c_.state(tp);
        if (!s) return std::nullopt;
        if (e.target == Target::leader) {
          if (s->leader == kNoBroker) return std::nullopt;
          return Victim{false, s->leader, fmt::format("leader of {} (broker {})", to_string(tp), s->leader)};
        }
        // The replicas from the assignment, as the controller knows them.
        std::vector<BrokerId> others;
        for (BrokerId r : replicas(tp)) {
          if (r != s->leader) others.push_back(r);
        }
        if (others.empty()) return std::nullopt;
        const BrokerId id = others[static_cast<size_t>(e.index / static_cast<int>(tps_.size())) % others.size()];
        return Victim{false, id, fmt::format("follower of {} (broker {})", to_string(tp), id)};
      }
      case Target::zookeeper: {
        const int i = 1 + e.index % k_.shape.zookeepers;
        return Victim{true, i, fmt::format("zookeeper {}", i)};
      }
    }
    return std::nullopt;
  }

  // A partition's replicas: from any running broker that holds it.
  std::vector<BrokerId> replicas(const TopicPartition& tp) const {
    for (BrokerId id : c_.broker_ids()) {
      const Broker* b = c_.broker(id);
      const Partition* p = b == nullptr ? nullptr : b->partition(tp);
      if (p != nullptr && !p->replicas().empty()) return p->replicas();
    }
    return {};
  }

  void note(const std::string& what) {
    timeline_.push_back(fmt::format("{:>10.3f}s  {}", static_cast<double>(c_.world().now().us()) / 1e6, what));
  }
  void cover(const std::string& what) {
    if (coverage_ != nullptr) covered_.insert(what);
  }

  void begin(size_t i) {
    const Episode& e = k_.schedule[i];
    Applied& a = applied_[i];
    const std::string name = fmt::format("#{} {}", i, to_string(e.fault));
    switch (e.fault) {
      case Fault::kill:
      case Fault::stop:
      case Fault::pause: {
        auto v = resolve(e);
        if (!v) {
          note(fmt::format("{} {}: no such process now, skipped", name, to_string(e.target)));
          return;
        }
        const sim::ProcessId p = process_of(*v);
        if (!c_.world().is_running(p) || c_.world().is_paused(p)) {
          note(fmt::format("{} {}: not running, skipped", name, v->label));
          return;
        }
        if (e.fault == Fault::kill) c_.world().kill(p);
        if (e.fault == Fault::stop) c_.world().terminate(p, Duration::seconds(30));
        if (e.fault == Fault::pause) c_.world().pause(p);
        a.process = p;
        note(fmt::format("{} {}", name, v->label));
        cover(fmt::format("{} {}{}", to_string(e.fault), to_string(e.target),
                          e.fault == Fault::kill && !v->zookeeper && e.duration_ms < 18000
                              ? " (restart < session timeout)"
                              : ""));
        return;
      }
      case Fault::isolate: {
        auto v = resolve(e);
        if (!v) {
          note(fmt::format("{} {}: no such host now, skipped", name, to_string(e.target)));
          return;
        }
        a.cut = true;
        a.isolated = host_of(*v);
        note(fmt::format("{} {}", name, v->label));
        cover(fmt::format("isolate {}", to_string(e.target)));
        break;
      }
      case Fault::split: {
        std::vector<sim::HostId> one, other;
        const std::vector<sim::HostId> hs = all_hosts();
        for (size_t h = 0; h < hs.size(); ++h) ((e.hosts >> h) & 1u ? one : other).push_back(hs[h]);
        if (one.empty() || other.empty()) {
          note(fmt::format("{} hosts={:#x}: one side empty, skipped", name, e.hosts));
          return;
        }
        a.cut = true;
        a.groups = {one, other};
        note(fmt::format("{} {}", name, describe(a.groups)));
        cover("split");
        break;
      }
      case Fault::cut_leader_from_followers:
      case Fault::cut_leader_from_zookeeper: {
        const TopicPartition& tp = partition_of(e);
        auto s = c_.state(tp);
        if (!s || s->leader == kNoBroker) {
          note(fmt::format("{} {}: no leader now, skipped", name, to_string(tp)));
          return;
        }
        std::vector<sim::HostId> others;
        if (e.fault == Fault::cut_leader_from_zookeeper) {
          others = zk_hosts();
        } else {
          for (BrokerId r : replicas(tp)) {
            if (r != s->leader) others.push_back(c_.broker_host(r));
          }
        }
        if (others.empty()) {
          note(fmt::format("{} {}: no one to cut the leader from, skipped", name, to_string(tp)));
          return;
        }
        a.cut = true;
        a.groups = {{c_.broker_host(s->leader)}, others};
        note(fmt::format("{} {} leader {}: {}", name, to_string(tp), s->leader, describe(a.groups)));
        cover(to_string(e.fault));
        break;
      }
      case Fault::block: {
        auto v = resolve(e);
        if (!v) {
          note(fmt::format("{} {}: no such host now, skipped", name, to_string(e.target)));
          return;
        }
        const sim::HostId from = host_of(*v);
        const std::vector<sim::HostId> hs = all_hosts();
        std::vector<std::vector<sim::HostId>> shown(1);
        for (size_t h = 0; h < hs.size(); ++h) {
          if ((e.hosts >> h) & 1u && hs[h] != from) {
            a.blocked.emplace_back(from, hs[h]);
            shown[0].push_back(hs[h]);
          }
        }
        if (a.blocked.empty()) {
          note(fmt::format("{} {}: no destination, skipped", name, v->label));
          return;
        }
        a.cut = true;
        note(fmt::format("{} from {} to {}", name, v->label, describe(shown)));
        cover(fmt::format("block from {}", to_string(e.target)));
        break;
      }
    }
    apply_cuts();
  }

  void end(size_t i) {
    const Episode& e = k_.schedule[i];
    Applied& a = applied_[i];
    if (a.process) {
      if (e.fault == Fault::pause) {
        c_.world().resume(*a.process);
      } else {
        c_.world().start(*a.process);
      }
      note(fmt::format("#{} ends: {} {}{}", i, e.fault == Fault::pause ? "resume" : "start",
                       c_.world().process_name(*a.process),
                       c_.world().is_running(*a.process) ? "" : " (exited at startup)"));
      a.process.reset();
    }
    if (a.cut) {
      a.cut = false;
      note(fmt::format("#{} ends: cut removed", i));
      apply_cuts();
    }
  }

  // The network has one heal for every cut: heal, then make again the cuts
  // of the episodes still under way.
  void apply_cuts() {
    sim::Network& net = c_.world().network();
    net.heal();
    for (const auto& [_, a] : applied_) {
      if (!a.cut) continue;
      if (!a.groups.empty()) net.partition(a.groups);
      if (a.isolated) net.isolate(*a.isolated);
      for (const auto& [from, to] : a.blocked) net.block(from, to);
    }
  }

  std::string describe(const std::vector<std::vector<sim::HostId>>& groups) {
    std::string out;
    for (const auto& g : groups) {
      if (!out.empty()) out += " | ";
      for (size_t i = 0; i < g.size(); ++i) out += (i == 0 ? "" : ",") + c_.world().host_name(g[i]);
    }
    return out;
  }

  void run_schedule() {
    std::vector<Step> steps;
    sim::Time t = c_.world().now();
    for (size_t i = 0; i < k_.schedule.size(); ++i) {
      const Episode& e = k_.schedule[i];
      t += Duration::millis(e.gap_ms);
      steps.push_back({t, i, true});
      steps.push_back({t + Duration::millis(e.duration_ms), i, false});
    }
    // By time; at the same instant, in the order they were made.
    std::stable_sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) { return a.at < b.at; });
    for (const Step& s : steps) {
      c_.world().run_until(s.at);
      if (s.begin) {
        begin(s.episode);
      } else {
        end(s.episode);
      }
    }
    if (coverage_ != nullptr) {
      ++coverage_->cases;
      for (const std::string& what : covered_) coverage_->add(what);
    }
  }

  // The end of every schedule: heal, resume and start everything (again and
  // again: a broker started within the session timeout of its crash exits),
  // stop producing, and leave the cluster alone for two minutes.
  void recover() {
    c_.world().network().heal();
    note("heal; resume and start everything for a minute");
    // A graceful stop may still be under way (up to its 30 s grace) and a
    // broker started within its old session's timeout exits: keep starting
    // whatever is down for a minute.
    for (int round = 0; round < 30; ++round) {
      for (int i = 1; i <= k_.shape.zookeepers; ++i) bring_up(c_.zk_process(i));
      for (BrokerId id : c_.broker_ids()) bring_up(c_.broker_process(id));
      c_.world().run_for(Duration::seconds(2));
    }
    producer_.stop();
    note("producer stopped; two quiet minutes");
    c_.world().run_for(Duration::seconds(120));
    producer_.collect();
    note(fmt::format("end: sent {}, acknowledged {}", producer_.sent(), producer_.acked_count()));
  }

  void bring_up(sim::ProcessId p) {
    if (c_.world().is_paused(p)) c_.world().resume(p);
    if (c_.world().is_running(p)) return;
    c_.world().start(p);
    note(fmt::format("start {}{}", c_.world().process_name(p),
                     c_.world().is_running(p) ? "" : " (exited at startup)"));
  }

  void check_committed_every_second() {
    if (divergence_) return;
    divergence_ = committed_.check(tps_);
    c_.world().loop().after(Duration::seconds(1), [this] { check_committed_every_second(); });
  }

  const Case& k_;
  RunOptions options_;
  Coverage* coverage_;
  Cluster c_;
  InvariantChecker checker_;
  std::vector<TopicPartition> tps_;
  Producer producer_;
  CommittedChecker committed_;
  std::map<size_t, Applied> applied_;
  std::vector<std::string> timeline_;
  std::set<std::string> covered_;
  std::optional<std::string> divergence_;
};

// What one case came to: the first failure, if any, and the timeline of the
// schedule as it was resolved.
struct Verdict {
  std::optional<std::string> failure;
  std::vector<std::string> timeline;
  std::string stats;
  uint64_t trace_hash = 0;
};

// Sets the case up and runs it; an invariant violation (SIM_ASSERT) ends it.
bool run_case(CaseRun& r, Verdict& v) {
  try {
    if (auto error = r.setup()) {
      v.failure = "setup: " + *error;
    } else {
      r.run();
    }
  } catch (const sim::InvariantViolation& e) {
    v.failure = fmt::format("{}", e.what());
  }
  v.timeline = r.timeline();
  v.trace_hash = r.cluster().world().trace().hash();
  return !v.failure.has_value();
}

// Property 1: the invariants hold after every event.
Verdict invariants_case(const Case& k, Coverage* coverage) {
  Verdict v;
  CaseRun r(k, {.acks = AckMode::mixed}, coverage);
  run_case(r, v);
  return v;
}

// Property 2: no acknowledged write lost, no divergence below a high
// watermark (and the invariants, as always).
Verdict durability_case(const Case& k, Coverage* coverage) {
  Verdict v;
  CaseRun r(k, {.acks = AckMode::all, .check_committed = true}, coverage);
  if (!run_case(r, v)) return v;
  const Producer& producer = r.producer();
  v.stats = fmt::format("sent {}, acknowledged {}; errors:", producer.sent(), producer.acked_count());
  for (const auto& [e, n] : producer.errors()) v.stats += fmt::format(" {}={}", e, n);
  auto fail = [&](std::string what) {
    v.failure = std::move(what);
    return v;
  };
  if (auto d = r.divergence()) return fail(*d);
  if (auto e = r.check_leaders()) return fail("liveness after the heal: " + *e);
  if (auto d = r.check_committed_now()) return fail(*d);
  for (const TopicPartition& tp : producer.tps()) {
    const std::vector<uint64_t> committed = r.cluster().committed_values(tp);
    std::map<uint64_t, int> count;
    for (uint64_t value : committed) {
      ++count[value];
      auto to = producer.sent_to().find(value);
      if (to == producer.sent_to().end() || to->second != tp) {
        return fail(fmt::format("{}: committed value {} was never sent to it", to_string(tp), value));
      }
    }
    for (const auto& [value, n] : count) {
      if (n > 1) return fail(fmt::format("{}: value {} committed {} times", to_string(tp), value, n));
    }
    auto acked = producer.acked_all().find(tp);
    if (acked == producer.acked_all().end()) continue;
    for (uint64_t value : acked->second) {
      if (count.count(value) == 0) {
        const BrokerId leader = r.cluster().state(tp)->leader;
        const Partition* p = r.cluster().broker(leader)->partition(tp);
        return fail(fmt::format(
            "{}: value {} was acknowledged (acks=all) but is not in the committed log of leader {} "
            "({} committed records; log start {}, log end {}, high watermark {})",
            to_string(tp), value, leader, committed.size(), p->log().log_start().value,
            p->log().log_end().value, p->high_watermark().value));
      }
    }
  }
  return v;
}

// Property 3: two runs of the case, one trace.
Verdict determinism_case(const Case& k) {
  Verdict first, second;
  {
    CaseRun r(k, {.acks = AckMode::mixed}, nullptr);
    run_case(r, first);
  }
  {
    CaseRun r(k, {.acks = AckMode::mixed}, nullptr);
    run_case(r, second);
  }
  if (first.trace_hash == second.trace_hash) return first;
  // Again, keeping the lines, to name the first difference.
  std::vector<std::string> a, b;
  {
    CaseRun r(k, {.acks = AckMode::mixed, .keep_lines = true}, nullptr);
    Verdict ignored;
    run_case(r, ignored);
    a = r.cluster().world().trace().lines();
  }
  {
    CaseRun r(k, {.acks = AckMode::mixed, .keep_lines = true}, nullptr);
    Verdict ignored;
    run_case(r, ignored);
    b = r.cluster().world().trace().lines();
  }
  const auto at = sim::first_difference(a, b);
  first.failure = fmt::format("trace hashes differ ({:#x} vs {:#x}); first difference at line {}:\n  {}\n  {}",
                              first.trace_hash, second.trace_hash, at.value_or(0),
                              at && *at < a.size() ? a[*at] : "(none)", at && *at < b.size() ? b[*at] : "(none)");
  return first;
}

std::string describe(const Verdict& v) {
  std::string out = v.failure.value_or("passed") + "\ntimeline:\n";
  for (const std::string& line : v.timeline) out += line + "\n";
  if (!v.stats.empty()) out += v.stats + "\n";
  return out;
}

// Fails the rapidcheck case with the verdict, the timeline in the log.
void rc_assert_passed(const Verdict& v) {
  if (!v.failure) return;
  RC_LOG() << "timeline:\n";
  for (const std::string& line : v.timeline) RC_LOG() << line << "\n";
  if (!v.stats.empty()) RC_LOG() << v.stats << "\n";
  RC_FAIL(*v.failure);
}

using kafkasim::testing::check_property;

// --- the properties -----------------------------------------------------------------------

// 1. Safety: whatever the shape and the faults, every invariant holds after
// every event.
TEST(KafkaProperties, InvariantsHoldUnderKillsPausesAndPartitions) {
  Coverage coverage;
  const bool passed = check_property(
      [&] { rc_assert_passed(invariants_case(*gen_case(gen_any_shape()), &coverage)); }, 100);
  if (passed) coverage.print("InvariantsHoldUnderKillsPausesAndPartitions");
}

// 2. Durability under the safe configuration: every value acknowledged with
// acks=all is, after the faults heal, below the high watermark of its
// partition's leader, once; and no replica ever holds below its high
// watermark anything other than what was committed there.
TEST(KafkaProperties, AcknowledgedWritesSurviveWithMinInsyncTwo) {
  Coverage coverage;
  const bool passed = check_property(
      [&] { rc_assert_passed(durability_case(*gen_case(gen_safe_shape()), &coverage)); }, 100);
  if (passed) coverage.print("AcknowledgedWritesSurviveWithMinInsyncTwo");
}

// 3. Determinism: the same case gives the same trace, byte for byte.
TEST(KafkaProperties, SameCaseSameTrace) {
  check_property([] { rc_assert_passed(determinism_case(*gen_case(gen_any_shape()))); }, 25);
}

// --- counterexamples, shrunk, as plain tests ---------------------------------------------
// Each is a case the properties found, shrunk, with what it showed, and the
// commit that fixed it (KAFKASIM_PROP_TRACE=1 prints a case's trace).

// Found by AcknowledgedWritesSurvive (fixed in e522c47): the leader adds a
// follower back to the ISR with a ZooKeeper write; while the write was in
// flight the high watermark kept moving over the old, smaller ISR, and when
// the write landed the new member's log end was below it. Kafka computes the
// high watermark over the maximal ISR meanwhile (KIP-497; before 2.7 the ZK
// write was synchronous under the leaderIsrUpdateLock).
TEST(KafkaPropertiesRepro, HighWatermarkWaitsForAFollowerRejoiningTheIsr) {
  const Case k{.seed = 80814539167824,
               .shape = {.zookeepers = 3, .brokers = 5, .topics = 2, .partitions = 2, .rf = 3,
                         .min_insync = 2, .unclean = false},
               .schedule = {
                   {.gap_ms = 1664, .fault = Fault::kill, .target = Target::follower, .index = 3,
                    .duration_ms = 200},
                   {.gap_ms = 504, .fault = Fault::cut_leader_from_followers, .target = Target::zookeeper,
                    .index = 5, .duration_ms = 31647},
               }};
  const Verdict v = durability_case(k, nullptr);
  EXPECT_FALSE(v.failure.has_value()) << describe(v);
}

// Found by AcknowledgedWritesSurvive (the invariant was refined in 73bbf6f):
// broker 4's fetch at offset 58, sent while it was cut off from the leader,
// is retransmitted by its kernel and reaches the leader at 96 s, long after
// the follower gave up on it and caught up to 145 on a new connection. The
// leader then records 58 as its log end, below the high watermark; a real
// broker does the same (Replica.updateFetchState takes the fetch offset as
// it comes), so the invariant judges the highest log end heard.
TEST(KafkaPropertiesRepro, StaleFetchDeliveredAfterAHeal) {
  const Case k{.seed = 80814539167824,
               .shape = {.zookeepers = 3, .brokers = 4, .topics = 1, .partitions = 1, .rf = 3,
                         .min_insync = 2, .unclean = false},
               .schedule = {
                   {.gap_ms = 4050, .fault = Fault::isolate, .target = Target::controller, .index = 0,
                    .duration_ms = 11187},
                   {.gap_ms = 7791, .fault = Fault::kill, .target = Target::broker, .index = 0,
                    .duration_ms = 19000},
                   {.gap_ms = 13155, .fault = Fault::pause, .target = Target::controller, .index = 0,
                    .duration_ms = 19000},
                   {.gap_ms = 233, .fault = Fault::cut_leader_from_followers, .target = Target::zookeeper,
                    .index = 0, .duration_ms = 44168},
               }};
  const Verdict v = durability_case(k, nullptr);
  EXPECT_FALSE(v.failure.has_value()) << describe(v);
}

// MODEL BUG (fixed: end_offset_for_epoch now answers as Kafka's
// LeaderEpochFileCache.endOffsetFor, and the follower asks again while its
// epoch differs, as KIP-279). Replicas diverged below the high watermark: offset 0 of
// t0-0 is value 1 (leader epoch 0) on brokers 1 and 3, value 5 (leader epoch
// 1) on broker 2, and all three have high watermark 2.
//   1.08 s  leader 1 (epoch 0) appends value 1 at offset 0; broker 3 fetches
//           it, broker 2 not yet; broker 1 is killed.
//   20.02 s controller 2 elects itself leader, epoch 1 (log empty; its epoch
//           cache: {1 -> 0}) and is paused at once (for 20 s).
//   40.02 s broker 1, now controller, removes 2 and elects 3, epoch 3 (its
//           log: 1@epoch0; epoch cache {0 -> 0, 3 -> 1}).
//   40.04 s broker 2 resumes: still leader in epoch 1, it appends a queued
//           produce, value 5, at offset 0.
//   40.27 s broker 2 becomes a follower of 3 and asks for the end of epoch 1;
//           broker 3 answers (epoch 0, end offset 1). Broker 2 knows no epoch
//           <= 0: PartitionLog::end_offset_for_epoch(0) returns nullopt, so
//           on_epoch_response truncates to min(1, log end 1) = 1, keeping 5@1
//           at offset 0, and then fetches from offset 1.
// Kafka's LeaderEpochFileCache.endOffsetFor answers a request below every
// known epoch with (requested epoch, start offset of the first known epoch)
// = (0, 0) here, and AbstractFetcherThread.getOffsetTruncationState then
// truncates to min(0, 1) = 0 (apache/kafka 2.8,
// core/src/main/scala/kafka/server/epoch/LeaderEpochFileCache.scala and
// core/src/main/scala/kafka/server/AbstractFetcherThread.scala). Separately,
// when the follower's floor epoch differs from the one the leader answered
// with, Kafka truncates to the follower's end of that floor epoch and asks
// again (truncationCompleted = false); the model truncates once.
TEST(KafkaPropertiesRepro, FollowerBelowItsEarliestEpochKeepsADivergentRecord) {
  const Case k{.seed = 152943957930895,
               .shape = {.zookeepers = 3, .brokers = 3, .topics = 1, .partitions = 1, .rf = 3,
                         .min_insync = 2, .unclean = false},
               .schedule = {
                   {.gap_ms = 2, .fault = Fault::kill, .target = Target::leader, .index = 0,
                    .duration_ms = 19000},
                   {.gap_ms = 6585, .fault = Fault::cut_leader_from_followers, .target = Target::controller,
                    .index = 0, .duration_ms = 19000},
                   {.gap_ms = 12359, .fault = Fault::pause, .target = Target::leader, .index = 0,
                    .duration_ms = 20012},
               }};
  const Verdict v = durability_case(k, nullptr);
  EXPECT_FALSE(v.failure.has_value()) << describe(v);
}

// MODEL BUG (fixed: a retried write that finds its own state applied counts
// as done and is sent). After the heal t0-0 stayed unavailable: ZooKeeper says
// leader 3, epoch 1, ISR 3,2, but no broker was ever told (every produce gets
// NOT_LEADER_FOR_PARTITION until the auto rebalance, 300 s later).
//   4.51 s  controller 2 is paused; leader 1 starts a controlled shutdown.
//   12.19 s controller 2 resumes and handles ControlledShutdown(1): it
//           writes leader 3 / epoch 1 (zxid 0x100000042 commits at 12.1924)
//           but its ZooKeeper client times out the connection at 12.1925
//           (the read timer ran late over the pause), so the multi fails
//           with a connection loss although it was applied.
//   13.05 s Controller::update_states retries: load_states reads back its
//           own write, and the controlled-shutdown decide() returns nullopt
//           ("leader not shutting down"), so no LeaderAndIsr is batched for
//           it; broker 1 is told it may stop (nothing remaining).
// Kafka's ZooKeeperClient resends a request that failed with CONNECTIONLOSS
// (KafkaZkClient.retryRequestsUntilConnected); the resent conditional write
// fails with BADVERSION, and PartitionStateMachine.electLeaderForPartitions
// re-reads the state and elects again without asking whether the leader is
// still shutting down (Election.leaderForControlledShutdown), so a new epoch
// is written and sent. The offline election's "settled meanwhile" check has
// the same hole.
TEST(KafkaPropertiesRepro, ElectionWhoseZooKeeperAnswerWasLostIsNeverSent) {
  const Case k{.seed = 119834054072718,
               .shape = {.zookeepers = 1, .brokers = 3, .topics = 1, .partitions = 1, .rf = 3,
                         .min_insync = 2, .unclean = false},
               .schedule = {
                   {.gap_ms = 4316, .fault = Fault::pause, .target = Target::controller, .index = 0,
                    .duration_ms = 7679},
                   {.gap_ms = 0, .fault = Fault::stop, .target = Target::leader, .index = 0,
                    .duration_ms = 200},
               }};
  const Verdict v = durability_case(k, nullptr);
  EXPECT_FALSE(v.failure.has_value()) << describe(v);
}

// Found by AcknowledgedWritesSurvive with a random seed (the invariant was
// wrong, not the broker): broker 1 leads t0-0 in epoch 0 and is cut from its
// followers at once; broker 2's fetch at offset 0, sent on a connection that
// was already open, stalls in its kernel's retransmission queue. Both
// followers catch up to 4 on new connections after the first heal (31.9 s),
// and the high watermark reaches 4. Broker 1 is then cut from ZooKeeper and
// becomes a zombie leader (broker 2 leads epoch 1 from 32 s); at 51.9 s the
// retransmitted fetch at offset 0 reaches it, and the zombie, still leading
// epoch 0, records 0 as broker 2's log end (Replica.updateFetchState takes
// the fetch offset as it comes). At 53.4 s its session has expired and it
// registers again with a new broker epoch, keeping its partitions. The
// invariant tracked "the highest log end heard" per broker epoch, so the new
// registration forgot the 4 and took the stale 0: "high watermark 4 above ISR
// member 2's log end 0". It now keys that history on the process incarnation
// (a restart), which is when a real broker forgets its followers' progress.
TEST(KafkaPropertiesRepro, ZombieLeaderRegisteringAgainKeepsWhatItHeard) {
  const Case k{.seed = 221114760831905,
               .shape = {.zookeepers = 3, .brokers = 3, .topics = 1, .partitions = 1, .rf = 3,
                         .min_insync = 2, .unclean = false},
               .schedule = {
                   {.gap_ms = 0, .fault = Fault::cut_leader_from_followers, .target = Target::controller,
                    .index = 0, .duration_ms = 3001},
                   {.gap_ms = 3866, .fault = Fault::split, .target = Target::controller, .index = 0,
                    .duration_ms = 200, .hosts = 0x1},
                   {.gap_ms = 221, .fault = Fault::cut_leader_from_followers, .target = Target::leader,
                    .index = 0, .duration_ms = 21314},
                   {.gap_ms = 7478, .fault = Fault::cut_leader_from_zookeeper, .target = Target::zookeeper,
                    .index = 0, .duration_ms = 36418},
               }};
  const Verdict v = durability_case(k, nullptr);
  EXPECT_FALSE(v.failure.has_value()) << describe(v);
}

}  // namespace
}  // namespace kafka::testing
