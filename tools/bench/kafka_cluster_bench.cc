// Whole-model throughput: a ZooKeeper ensemble, a Kafka cluster and one
// producer, run for a stretch of virtual time, with and without the model's
// invariant checks after every event.
//
// The world: Z ZooKeeper servers (zk1..) and B brokers (kafka1..), each on a
// host of its own, and a producer process of this file on a host "producer".
// The producer behaves as a client would on a fresh cluster:
//   1. MetadataRequest (no topics) to the bootstrap broker, every 100 ms
//      (retry.backoff.ms), until the answer lists all B brokers and a
//      controller: the admin step waits for the whole cluster, as a
//      deployment script would;
//   2. CreateTopicsRequest to that controller: topic "bench", P partitions,
//      replication factor 3 (or B when B < 3); TOPIC_ALREADY_EXISTS counts as
//      done (a retry after a lost answer), any other error goes back to 1;
//   3. MetadataRequest for the topic to the bootstrap broker until every
//      partition has a leader;
//   4. then one ProduceRequest (acks=-1, one record of 100 bytes) every
//      1000/R ms of virtual time, round-robin over the partitions, each to its
//      partition's leader. An error (a failed send or a partition error)
//      forgets that leader and re-fetches the metadata; a partition whose
//      leader is unknown when its turn comes is skipped. Nothing is retried:
//      the figure is records acknowledged.
//
// Two variants of the very same run (same seed, same world):
//   baseline    no invariant checks;
//   invariants  kafka::Invariants::check() after every event
//               (World::set_invariant_check), as the scenario tests run.
// The checks only read, so both variants must execute the same events and end
// with the same trace hash, events count, acknowledged records and checksum of
// the acknowledged offsets, in every repetition; the harness exits 1 if not.
// (The trace records state changes only, so in a fault-free steady state its
// hash stops moving once the producer is running: the events count and the
// ack checksum are what cover the data path.)
// Each figure is the best of --reps runs (the variants take turns within a
// repetition so drift hits both alike). Wall-clock time is fine here: tools/
// is outside the deterministic core. Only World::boot() and run_until() are
// timed, not the building of the world.
//
//   kafkasim_bench_kafka_cluster [--quick] [--seconds T] [--rate R]
//                                [--partitions P] [--brokers B]
//                                [--zookeepers Z] [--seed S] [--reps N]
//
// Measured on the development machine (2 cores, RelWithDebInfo build, other
// builds running alongside), default settings (seed 1, 3 ZooKeeper servers,
// 3 brokers, 6 partitions, 100 records/s, 600 s virtual, best of 3):
//
//   variant       wall s  sim s/wall    events/s      events    acked     sent  trace hash
//   baseline       0.463      1297.0      920618      425899    59898    59898  5f6e189a272b67ad
//   invariants     1.114       538.5      382258      425899    59898    59898  5f6e189a272b67ad
//   producing from 1.023s, 0 failed, 0 skipped; ack checksum 930d8d35f42f113c
//   ratio invariants/baseline: wall 2.41x (2.41x to 2.43x over three runs)
//
// That was about 1.1 us of simulation and 1.5 us of invariant checks per
// event; iterating each broker's partitions in place instead of copying their
// names brought the ratio to 1.4x-1.8x (0.46 s / 0.83 s at 1.8x).
// With --quick (60 s virtual, one repetition) both runs take 0.05 to 0.15 s and
// the ratio is noise (1.5x to 2.8x seen): the smoke entry asserts nothing about it.

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "model/kafka/broker.h"
#include "model/kafka/config.h"
#include "model/kafka/invariants.h"
#include "model/kafka/network_client.h"
#include "model/kafka/wire.h"
#include "model/properties.h"
#include "model/zk/config.h"
#include "model/zk/server.h"
#include "sim/assert.h"
#include "sim/time.h"
#include "sim/world.h"

namespace {

using Clock = std::chrono::steady_clock;

constexpr char kTopic[] = "bench";
constexpr int32_t kRecordBytes = 100;
constexpr int32_t kBootstrapNode = -1;  // as the Java client numbers bootstrap servers
const sim::Duration kRetryBackoff = sim::Duration::millis(100);  // retry.backoff.ms

// ---------------------------------------------------------------------------
// The producer

struct ProducerOptions {
  kafka::NodeAddress bootstrap;
  size_t expected_brokers = 3;
  int32_t partitions = 6;
  int16_t replication_factor = 3;
  sim::Duration interval = sim::Duration::millis(10);  // between two produce requests
};

struct ProducerStats {
  uint64_t sent = 0;
  uint64_t acked = 0;
  uint64_t failed = 0;
  uint64_t skipped = 0;  // the partition's leader was unknown at its turn
  uint64_t metadata_requests = 0;
  uint64_t ack_checksum = 0xcbf29ce484222325ULL;  // FNV-1a over (partition, offset) of each ack
  sim::Time producing_since = sim::Time::max();
};

class BenchProducer final : public sim::Process {
 public:
  explicit BenchProducer(ProducerOptions options) : options_(std::move(options)) {}

  void on_start() override {
    // max.in.flight.requests.per.connection = 5, request.timeout.ms = 30 s.
    client_ =
        std::make_unique<kafka::NetworkClient>(ctx(), kafka::NetworkClient::Options{30000, 5});
    leaders_.assign(static_cast<size_t>(options_.partitions), kafka::kNoBroker);
    discover();
  }
  void on_connected(sim::SocketId s) override { client_->on_connected(s); }
  void on_connect_failed(sim::SocketId s, sim::ConnectError e) override {
    client_->on_connect_failed(s, e);
  }
  void on_message(sim::SocketId s, sim::Payload& p) override { client_->on_message(s, p); }
  void on_closed(sim::SocketId s, sim::CloseReason r) override { client_->on_closed(s, r); }

  const ProducerStats& stats() const { return stats_; }

 private:
  // Step 1: wait for every broker and a controller.
  void discover() {
    ++stats_.metadata_requests;
    client_->send(kBootstrapNode, options_.bootstrap,
                  kafka::MetadataRequest{std::vector<std::string>{}, false},
                  [this](kafka::SendError e, const kafka::Response* r) {
                    if (e == kafka::SendError::none) {
                      const auto& m = std::get<kafka::MetadataResponse>(*r);
                      remember_brokers(m);
                      if (brokers_.size() >= options_.expected_brokers &&
                          brokers_.count(m.controller_id) != 0) {
                        create_topic(m.controller_id);
                        return;
                      }
                    }
                    ctx().after(kRetryBackoff, [this] { discover(); });
                  });
  }

  // Step 2: CreateTopics to the controller.
  void create_topic(kafka::BrokerId controller) {
    kafka::NewTopic topic{kTopic, options_.partitions, options_.replication_factor, {}, {}};
    client_->send(controller, brokers_.at(controller),
                  kafka::CreateTopicsRequest{{std::move(topic)}, 30000},
                  [this](kafka::SendError e, const kafka::Response* r) {
                    kafka::ErrorCode error = kafka::ErrorCode::unknown_server_error;
                    if (e == kafka::SendError::none) {
                      const auto& c = std::get<kafka::CreateTopicsResponse>(*r);
                      if (!c.topics.empty()) error = c.topics.front().error;
                    }
                    if (error == kafka::ErrorCode::none ||
                        error == kafka::ErrorCode::topic_already_exists) {
                      ctx().trace("bench_topic_created", {{"topic", kTopic},
                                                          {"partitions", options_.partitions},
                                                          {"rf", options_.replication_factor}});
                      refresh_metadata();
                      return;
                    }
                    ctx().after(kRetryBackoff, [this] { discover(); });
                  });
  }

  // Step 3, and after any error: the topic's leaders.
  void refresh_metadata() {
    if (metadata_in_flight_) return;
    metadata_in_flight_ = true;
    ++stats_.metadata_requests;
    client_->send(kBootstrapNode, options_.bootstrap,
                  kafka::MetadataRequest{std::vector<std::string>{kTopic}, false},
                  [this](kafka::SendError e, const kafka::Response* r) {
                    metadata_in_flight_ = false;
                    if (e == kafka::SendError::none &&
                        apply_metadata(std::get<kafka::MetadataResponse>(*r))) {
                      if (!producing_) start_producing();
                      return;
                    }
                    ctx().after(kRetryBackoff, [this] { refresh_metadata(); });
                  });
  }

  void remember_brokers(const kafka::MetadataResponse& m) {
    brokers_.clear();
    for (const kafka::BrokerMetadata& b : m.brokers) {
      brokers_[b.id] = kafka::NodeAddress{b.host, b.port};
    }
  }

  // Returns whether every partition now has a leader we can reach.
  bool apply_metadata(const kafka::MetadataResponse& m) {
    remember_brokers(m);
    std::fill(leaders_.begin(), leaders_.end(), kafka::kNoBroker);
    for (const kafka::TopicMetadata& t : m.topics) {
      if (t.name != kTopic || t.error != kafka::ErrorCode::none) continue;
      for (const kafka::PartitionMetadata& p : t.partitions) {
        if (p.partition < 0 || p.partition >= options_.partitions) continue;
        if (p.error == kafka::ErrorCode::none && brokers_.count(p.leader) != 0) {
          leaders_[static_cast<size_t>(p.partition)] = p.leader;
        }
      }
    }
    return std::none_of(leaders_.begin(), leaders_.end(),
                        [](kafka::BrokerId b) { return b == kafka::kNoBroker; });
  }

  // Step 4.
  void start_producing() {
    producing_ = true;
    stats_.producing_since = ctx().now();
    ctx().trace("bench_producing", {{"partitions", options_.partitions},
                                    {"interval", options_.interval}});
    tick();
  }

  void tick() {
    ctx().after(options_.interval, [this] { tick(); });
    const int32_t partition = next_partition_;
    next_partition_ = (next_partition_ + 1) % options_.partitions;
    const kafka::BrokerId leader = leaders_[static_cast<size_t>(partition)];
    if (leader == kafka::kNoBroker) {
      ++stats_.skipped;
      refresh_metadata();
      return;
    }
    kafka::ProduceBatch batch;
    batch.tp = kafka::TopicPartition{kTopic, partition};
    kafka::Record record;
    record.value = next_value_++;
    record.size = kRecordBytes;
    batch.records.push_back(record);
    ++stats_.sent;
    client_->send(leader, brokers_.at(leader), kafka::ProduceRequest{-1, 30000, {std::move(batch)}},
                  [this, partition, leader](kafka::SendError e, const kafka::Response* r) {
                    on_produced(partition, leader, e, r);
                  });
  }

  void on_produced(int32_t partition, kafka::BrokerId leader, kafka::SendError e,
                   const kafka::Response* r) {
    kafka::ErrorCode error = kafka::ErrorCode::unknown_server_error;
    kafka::Offset offset{-1};
    if (e == kafka::SendError::none) {
      const auto& p = std::get<kafka::ProduceResponse>(*r);
      if (!p.partitions.empty()) {
        error = p.partitions.front().error;
        offset = p.partitions.front().base_offset;
      }
    }
    if (e == kafka::SendError::none && error == kafka::ErrorCode::none) {
      ++stats_.acked;
      fold(static_cast<uint64_t>(partition));
      fold(static_cast<uint64_t>(offset.value));
      return;
    }
    ++stats_.failed;
    const char* why = e != kafka::SendError::none ? kafka::to_string(e) : kafka::to_string(error);
    ctx().trace("bench_produce_failed",
                {{"partition", partition}, {"leader", leader}, {"error", why}});
    // Forget the leader until the metadata names one again.
    if (leaders_[static_cast<size_t>(partition)] == leader) {
      leaders_[static_cast<size_t>(partition)] = kafka::kNoBroker;
    }
    refresh_metadata();
  }

  void fold(uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      stats_.ack_checksum ^= (v >> (8 * i)) & 0xff;
      stats_.ack_checksum *= 0x100000001b3ULL;
    }
  }

  ProducerOptions options_;
  std::unique_ptr<kafka::NetworkClient> client_;
  std::map<kafka::BrokerId, kafka::NodeAddress> brokers_;
  std::vector<kafka::BrokerId> leaders_;  // by partition
  bool metadata_in_flight_ = false;
  bool producing_ = false;
  int32_t next_partition_ = 0;
  uint64_t next_value_ = 1;
  ProducerStats stats_;
};

// ---------------------------------------------------------------------------
// The cluster (the few lines of tests/model/kafka/cluster.cc it needs)

struct Options {
  int64_t seconds = 600;
  int64_t rate = 100;
  int32_t partitions = 6;
  int32_t brokers = 3;
  int32_t zookeepers = 3;
  uint64_t seed = 1;
  int reps = 3;
  bool quick = false;
};

struct BenchCluster {
  sim::World world;
  std::map<kafka::BrokerId, sim::ProcessId> brokers;
  sim::ProcessId producer;

  explicit BenchCluster(const Options& o) : world(o.seed) {
    std::vector<sim::HostId> zk_hosts;
    std::vector<std::string> zk_addresses;
    for (int i = 1; i <= o.zookeepers; ++i) {
      zk_addresses.push_back(fmt::format("10.0.0.{}", i));
      zk_hosts.push_back(world.add_host(fmt::format("zk{}", i), zk_addresses.back()));
    }
    for (int i = 1; i <= o.zookeepers; ++i) {
      zk::ServerConfig c;
      c.myid = static_cast<zk::ServerId>(i);
      for (int j = 1; j <= o.zookeepers; ++j) {
        c.servers[static_cast<zk::ServerId>(j)] =
            zk::PeerAddress{zk_addresses[static_cast<size_t>(j - 1)], 2888, 3888};
      }
      world.add_process(zk_hosts[static_cast<size_t>(i - 1)], fmt::format("zk-{}", i),
                        zk::server_factory(c));
    }
    std::string connect;
    for (const std::string& a : zk_addresses) connect += (connect.empty() ? "" : ",") + a + ":2181";
    std::string bootstrap_host;
    uint16_t bootstrap_port = 0;
    for (kafka::BrokerId id = 1; id <= o.brokers; ++id) {
      const std::string address = fmt::format("10.0.1.{}", id);
      const kafka::BrokerConfig config = kafka::parse_broker_config(
          model::from_map({{"broker.id", std::to_string(id)},
                           {"zookeeper.connect", connect},
                           {"listeners", "PLAINTEXT://:9092"},
                           {"log.dirs", "/var/lib/kafka/data"}},
                          fmt::format("broker {} properties", id)));
      const sim::HostId host = world.add_host(fmt::format("kafka{}", id), address);
      brokers[id] = world.add_process(host, fmt::format("kafka-{}", id),
                                      kafka::broker_factory(config));
      if (id == 1) {
        bootstrap_host = address;
        bootstrap_port = config.listeners.front().port;
      }
    }
    ProducerOptions p;
    p.bootstrap = kafka::NodeAddress{bootstrap_host, bootstrap_port};
    p.expected_brokers = static_cast<size_t>(o.brokers);
    p.partitions = o.partitions;
    p.replication_factor = static_cast<int16_t>(std::min(o.brokers, 3));
    p.interval = sim::Duration::micros(1'000'000 / o.rate);
    const sim::HostId producer_host = world.add_host("producer", "10.0.9.1");
    producer = world.add_process(producer_host, "producer",
                                 [p] { return std::make_unique<BenchProducer>(p); });
  }
};

// ---------------------------------------------------------------------------
// Driver

enum class Checks { off, on };

struct Result {
  double seconds = 0;  // wall
  uint64_t events = 0;
  uint64_t trace_hash = 0;
  uint64_t trace_records = 0;
  ProducerStats producer;
};

Result run_once(const Options& o, Checks checks) {
  BenchCluster c(o);
  std::optional<kafka::Invariants> invariants;
  if (checks == Checks::on) {
    invariants.emplace(c.world, c.brokers);
    c.world.set_invariant_check([&invariants] { invariants->check_after_event(); });
  }
  const sim::Time end = sim::Time::zero() + sim::Duration::seconds(o.seconds);
  const auto start = Clock::now();
  c.world.boot();
  c.world.run_until(end);
  const auto stop = Clock::now();
  Result r;
  r.seconds = std::chrono::duration<double>(stop - start).count();
  r.events = c.world.loop().executed();
  r.trace_hash = c.world.trace().hash();
  r.trace_records = c.world.trace().records();
  const auto* producer = c.world.process_as<BenchProducer>(c.producer);
  SIM_ASSERT(producer != nullptr, "the producer is not running at the end");
  r.producer = producer->stats();
  return r;
}

bool same_run(const Result& a, const Result& b) {
  return a.trace_hash == b.trace_hash && a.trace_records == b.trace_records &&
         a.events == b.events && a.producer.sent == b.producer.sent &&
         a.producer.acked == b.producer.acked && a.producer.failed == b.producer.failed &&
         a.producer.skipped == b.producer.skipped &&
         a.producer.ack_checksum == b.producer.ack_checksum;
}

std::string command_line(const Options& o) {
  return fmt::format(
      "kafkasim_bench_kafka_cluster --seconds {} --rate {} --partitions {} --brokers {} "
      "--zookeepers {} --seed {} --reps {}",
      o.seconds, o.rate, o.partitions, o.brokers, o.zookeepers, o.seed, o.reps);
}

[[noreturn]] void usage(int code) {
  std::fprintf(code == 0 ? stdout : stderr,
               "usage: kafkasim_bench_kafka_cluster [--quick] [--seconds T] [--rate R]\n"
               "                                    [--partitions P] [--brokers B]\n"
               "                                    [--zookeepers Z] [--seed S] [--reps N]\n"
               "  --quick       a smoke run: 60 virtual seconds, 1 repetition\n"
               "  --seconds     virtual seconds per run (default 600)\n"
               "  --rate        produce requests per virtual second, one record each\n"
               "                (default 100)\n"
               "  --partitions  partitions of the topic (default 6; replication factor 3)\n"
               "  --brokers     brokers (default 3, at most 200)\n"
               "  --zookeepers  ZooKeeper servers (default 3, at most 200)\n"
               "  --seed        the world's seed (default 1)\n"
               "  --reps        runs per variant; the best is reported (default 3; --quick: 1)\n");
  std::exit(code);
}

bool parse_u64(std::string_view s, uint64_t& out) {
  if (s.empty()) return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

Options parse(int argc, char** argv) {
  Options o;
  bool seconds_given = false;
  bool reps_given = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    auto value = [&]() -> std::string_view {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "missing value for %s\n", argv[i]);
        usage(2);
      }
      return argv[++i];
    };
    // A number in [1, max].
    auto number = [&](uint64_t max) -> uint64_t {
      const std::string_view s = value();
      uint64_t v = 0;
      if (!parse_u64(s, v) || v == 0 || v > max) {
        std::fprintf(stderr, "bad value for %s: '%.*s' (1 to %llu)\n", std::string(arg).c_str(),
                     static_cast<int>(s.size()), s.data(), static_cast<unsigned long long>(max));
        usage(2);
      }
      return v;
    };
    if (arg == "--quick") {
      o.quick = true;
    } else if (arg == "--seconds") {
      o.seconds = static_cast<int64_t>(number(30 * 24 * 3600));
      seconds_given = true;
    } else if (arg == "--rate") {
      o.rate = static_cast<int64_t>(number(1'000'000));
    } else if (arg == "--partitions") {
      o.partitions = static_cast<int32_t>(number(10'000));
    } else if (arg == "--brokers") {
      o.brokers = static_cast<int32_t>(number(200));
    } else if (arg == "--zookeepers") {
      o.zookeepers = static_cast<int32_t>(number(200));
    } else if (arg == "--seed") {
      const std::string_view s = value();
      if (!parse_u64(s, o.seed)) usage(2);
    } else if (arg == "--reps") {
      o.reps = static_cast<int>(number(100));
      reps_given = true;
    } else if (arg == "--help" || arg == "-h") {
      usage(0);
    } else {
      std::fprintf(stderr, "unknown argument: %s\n", argv[i]);
      usage(2);
    }
  }
  if (o.quick && !seconds_given) o.seconds = 60;
  if (o.quick && !reps_given) o.reps = 1;
  return o;
}

void print_row(const char* name, const Result& r, double simulated_s) {
  const double speed = r.seconds > 0 ? simulated_s / r.seconds : 0.0;
  const double events_per_s = r.seconds > 0 ? static_cast<double>(r.events) / r.seconds : 0.0;
  fmt::print("{:<11} {:>8.3f} {:>11.1f} {:>11.0f} {:>11} {:>8} {:>8}  {:016x}\n", name, r.seconds,
             speed, events_per_s, r.events, r.producer.acked, r.producer.sent, r.trace_hash);
}

int run(const Options& o) {
  fmt::print("seed {}\n", o.seed);
  fmt::print(
      "kafka cluster: {} zookeepers, {} brokers, topic {} with {} partitions (rf {}), "
      "acks=-1, {} records/s of {} bytes, {} s virtual, best of {}\n",
      o.zookeepers, o.brokers, kTopic, o.partitions, std::min(o.brokers, 3), o.rate, kRecordBytes,
      o.seconds, o.reps);
  std::fflush(stdout);

  std::optional<Result> reference;
  Result best_base, best_inv;
  bool ok = true;
  for (int rep = 0; rep < o.reps; ++rep) {
    const Result base = run_once(o, Checks::off);
    const Result inv = run_once(o, Checks::on);
    if (!reference) reference = base;
    for (const Result* r : {&base, &inv}) {
      if (!same_run(*reference, *r)) {
        fmt::print(stderr,
                   "rep {}: {} run differs: trace hash {:016x} vs {:016x}, {} vs {} records, "
                   "{} vs {} events, {} vs {} acked\n",
                   rep + 1, r == &base ? "baseline" : "invariants", r->trace_hash,
                   reference->trace_hash, r->trace_records, reference->trace_records, r->events,
                   reference->events, r->producer.acked, reference->producer.acked);
        ok = false;
      }
    }
    if (rep == 0 || base.seconds < best_base.seconds) best_base = base;
    if (rep == 0 || inv.seconds < best_inv.seconds) best_inv = inv;
  }

  const double simulated_s = static_cast<double>(o.seconds);
  fmt::print("{:<11} {:>8} {:>11} {:>11} {:>11} {:>8} {:>8}  {}\n", "variant", "wall s",
             "sim s/wall", "events/s", "events", "acked", "sent", "trace hash");
  print_row("baseline", best_base, simulated_s);
  print_row("invariants", best_inv, simulated_s);
  const ProducerStats& p = best_base.producer;
  fmt::print("producer: producing from {:.3f}s, {} failed, {} skipped, {} metadata requests; "
             "{} trace records, ack checksum {:016x}\n",
             static_cast<double>(p.producing_since.us()) / 1e6, p.failed, p.skipped,
             p.metadata_requests, best_base.trace_records, p.ack_checksum);
  fmt::print("ratio invariants/baseline: wall {:.2f}x\n",
             best_base.seconds > 0 ? best_inv.seconds / best_base.seconds : 0.0);
  if (p.acked == 0) {
    fmt::print(stderr, "FAILED: no record was acknowledged\nreproduce: {}\n", command_line(o));
    return 1;
  }
  if (!ok) {
    fmt::print(stderr, "FAILED: the variants did not run the same simulation\nreproduce: {}\n",
               command_line(o));
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  try {
    return run(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\nreproduce: %s\n", e.what(), command_line(o).c_str());
    return 1;
  }
}
