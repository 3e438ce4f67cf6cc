#include "model/scenario/scenario.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "model/properties.h"
#include "model/scenario/nemesis.h"
#include "sim/random.h"

namespace scenario {

std::string WorkloadSpec::role_of(const std::string& client) const {
  if (type == "lab") {
    if (!client.empty() && client == lab.producer) return "producer";
    if (!client.empty() && client == lab.consumer) return "consumer";
    return "";
  }
  for (const std::string& p : steady.producers) {
    if (p == client) return "producer";
  }
  for (const std::string& c : steady.consumers) {
    if (c == client) return "consumer";
  }
  return "";
}

const char* to_string(FaultAction a) {
  switch (a) {
    case FaultAction::power_off: return "power_off";
    case FaultAction::power_on: return "power_on";
    case FaultAction::kill: return "kill";
    case FaultAction::start: return "start";
    case FaultAction::stop: return "stop";
    case FaultAction::pause: return "pause";
    case FaultAction::resume: return "resume";
    case FaultAction::partition: return "partition";
    case FaultAction::isolate: return "isolate";
    case FaultAction::heal: return "heal";
    case FaultAction::replace_address: return "replace_address";
    case FaultAction::restart_clients: return "restart_clients";
  }
  return "?";
}

const HostSpec* Scenario::host(const std::string& name) const {
  for (const HostSpec& h : hosts) {
    if (h.name == name) return &h;
  }
  return nullptr;
}

const HostSpec* Scenario::host_of_process(const std::string& process) const {
  for (const ZooKeeperSpec& z : zookeepers) {
    if (fmt::format("zk{}", z.id) == process) return host(z.host);
  }
  for (const BrokerSpec& b : brokers) {
    if (fmt::format("kafka{}", b.id) == process) return host(b.host);
  }
  for (const ClientSpec& c : clients) {
    if (c.name == process) return host(c.host);
  }
  return nullptr;
}

namespace {

// A limit on virtual times: a year, far beyond any experiment, and far from
// int64 overflow in microseconds.
constexpr double kMaxSeconds = 365.0 * 24 * 3600;

const std::vector<std::string> kFaultActions = {
    "power_off", "power_on", "kill",  "start", "stop", "pause", "resume", "partition",
    "isolate",   "heal",     "replace_address", "restart_clients"};

FaultAction action_from(const std::string& s) {
  for (size_t i = 0; i < kFaultActions.size(); ++i) {
    if (kFaultActions[i] == s) return static_cast<FaultAction>(i);
  }
  return FaultAction::heal;  // not reached: callers pass a checked choice
}

int64_t seconds_to_us(double s) { return static_cast<int64_t>(std::llround(s * 1e6)); }

std::string read_text_file(const Value& where, const std::string& path) {
  std::optional<std::string> text = read_file_text(path);
  if (!text) where.fail(fmt::format("cannot read the file \"{}\": {}", path, why_unreadable(path)));
  return std::move(*text);
}

bool valid_topic_name(const std::string& t) {
  // Kafka's Topic.validate: [a-zA-Z0-9._-], at most 249 characters, not "." or "..".
  if (t.empty() || t.size() > 249 || t == "." || t == "..") return false;
  return std::all_of(t.begin(), t.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  });
}

bool valid_address(const std::string& a) {
  // A dotted IPv4 address: what the simulated network routes by.
  int parts = 0;
  size_t i = 0;
  while (i <= a.size()) {
    size_t j = a.find('.', i);
    if (j == std::string::npos) j = a.size();
    const std::string part = a.substr(i, j - i);
    // No leading zeros: "10.0.0.01" would be another spelling of an address
    // another host may hold (and to inet_aton, octal).
    if (part.empty() || part.size() > 3 || (part.size() > 1 && part[0] == '0') ||
        !std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
        std::stoi(part) > 255) {
      return false;
    }
    ++parts;
    i = j + 1;
    if (j == a.size()) break;
  }
  return parts == 4;
}

// Why a well-formed address cannot be a host's own (the address other hosts
// reach it at), or nullopt: ranges reserved for other purposes (RFC 6890's
// special-purpose registry; multicast, RFC 5771).
std::optional<std::string> unusable_host_address(const std::string& a) {
  const int first = std::stoi(a.substr(0, a.find('.')));
  if (first == 0) return "0.0.0.0/8 is \"this network\" (0.0.0.0 is the non-routable meta-address): no host answers at it";
  if (first == 127) return "127.0.0.0/8 is loopback: every host's own, which no other host can reach";
  if (first >= 224 && first <= 239) return "224.0.0.0/4 is multicast, not one host's address";
  if (first >= 240) return "240.0.0.0/4 is reserved (255.255.255.255 is the broadcast address), not one host's address";
  return std::nullopt;
}

class Loader {
 public:
  Loader(std::string file, std::string_view text) : file_(std::move(file)) {
    root_ = parse_json(file_, text);
    dir_ = std::filesystem::path(file_).parent_path().string();
  }

  Scenario load() {
    s_.file = file_;
    ObjectReader r(Value(file_, root_, "$"));
    s_.name = r.string("name", std::filesystem::path(file_).stem().string());
    s_.description = r.string("description", "");
    if (std::optional<Value> v = r.optional("version")) {
      try {
        s_.version = kafka::parse_version_profile(v->as_string(), file_, "version");
      } catch (const model::ConfigError& e) {
        v->fail(e.message());
      }
    }
    // Any seed a sweep can run, so that a reproducer's --seed can go in the file.
    if (std::optional<Value> seed = r.optional("seed")) {
      s_.seed = seed->as_uint64();
    } else {
      s_.seed = 1;
    }
    s_.duration_us = seconds_to_us(r.number("duration_s", 0.000001, kMaxSeconds));

    // Cluster-wide configuration first: hosts' processes are built from it.
    read_cluster_config(r);
    for (const Value& h : r.required("hosts").as_array(1)) read_host(h);
    if (pending_zk_.empty()) r.value().fail("a cluster needs at least one ZooKeeper server (\"zookeeper\" on a host)");
    build_zookeeper_configs();
    build_broker_configs();

    if (std::optional<Value> c = r.optional("clients")) read_client_properties(*c);
    if (std::optional<Value> t = r.optional("topics")) {
      for (const Value& v : t->as_array()) read_topic(v);
    }
    read_workload(r.required("workload"));
    if (std::optional<Value> e = r.optional("environment")) read_environment(*e);
    if (std::optional<Value> ps = r.optional("phases")) {
      std::set<std::string> seen;
      for (const Value& v : ps->as_array()) read_phase(v, seen);
    }
    if (std::optional<Value> ss = r.optional("snapshots")) {
      std::set<std::string> seen;
      for (const Value& v : ss->as_array()) read_snapshot(v, seen);
      std::stable_sort(s_.snapshots.begin(), s_.snapshots.end(),
                       [](const SnapshotSpec& a, const SnapshotSpec& b) { return a.at_us < b.at_us; });
    }
    if (std::optional<Value> f = r.optional("faults")) {
      for (const Value& v : f->as_array()) read_fault(v);
    }
    std::stable_sort(s_.faults.begin(), s_.faults.end(),
                     [](const Fault& a, const Fault& b) { return a.at_us < b.at_us; });
    check_address_moves();
    if (std::optional<Value> n = r.optional("nemesis")) read_nemesis(*n);
    if (std::optional<Value> e = r.optional("expect")) {
      for (const Value& v : e->as_array()) {
        try {
          s_.expectations.push_back(Expectation::parse(v.as_string()));
        } catch (const ExpectationError& err) {
          // A very long expectation is quoted by its start (the column
          // still counts in the whole text).
          std::string text = v.as_string();
          if (text.size() > 120) text = fmt::format("{}… ({} characters)", text.substr(0, 100), text.size());
          v.fail(fmt::format("in the expectation \"{}\": {}", model::printable(text), err.what()));
        }
      }
    }
    r.finish();
    s_.hash = fmt::format("{:016x}", sim::hash_name(root_.dump() + referenced_));
    s_.source = root_;
    return std::move(s_);
  }

 private:
  // --- configuration ---------------------------------------------------------------

  // "properties" (inline) and "file" (a properties file, relative to the
  // scenario) of one object; inline keys win over the file's.
  struct PropertySource {
    std::map<std::string, std::string> values;
    std::map<std::string, std::string> paths;  // key -> JSON path (inline) or "FILE line N"
    std::string file;                           // the referenced file, if any
    std::optional<Value> where;                 // the object, for messages
  };
  PropertySource read_properties(ObjectReader& r) {
    PropertySource out;
    out.where = r.value();
    if (std::optional<Value> f = r.optional("file")) {
      const std::string name = f->as_string();
      if (name.empty()) f->fail("expected the name of a properties file, got \"\"");
      const std::string path = std::filesystem::path(name).is_absolute()
                                   ? name
                                   : (std::filesystem::path(dir_) / name).string();
      try {
        const std::string text = read_text_file(*f, path);
        // The hash covers what a referenced file says, not only its name.
        referenced_ += fmt::format("\n{}\n{}", f->path(), text);
        const model::Properties p = model::parse_properties(text, path);
        for (const auto& [k, v] : p.values) {
          out.values[k] = v;
          auto line = p.lines.find(k);
          out.paths[k] = fmt::format("{} line {}", path, line == p.lines.end() ? 0 : line->second);
        }
      } catch (const model::ConfigError& e) {
        f->fail(e.what());
      }
      out.file = path;
      if (std::find(s_.referenced_files.begin(), s_.referenced_files.end(), path) == s_.referenced_files.end()) {
        s_.referenced_files.push_back(path);
      }
    }
    if (std::optional<Value> p = r.optional("properties")) {
      for (const auto& [k, v] : r.properties("properties")) {
        out.values[k] = v;
        out.paths[k] = child_path(p->path(), k);
      }
    }
    return out;
  }

  // A ConfigError from a parser, turned into an error at the key's JSON path
  // (or the file line it came from).
  [[noreturn]] void config_error(const PropertySource& a, const PropertySource* b,
                                 const model::ConfigError& e, const Value& fallback) {
    for (const PropertySource* src : {b, &a}) {
      if (src == nullptr || e.key().empty() || src->paths.count(e.key()) == 0) continue;
      key_error(*src, e.key(), e.message());
    }
    fallback.fail(e.key().empty() ? e.message() : fmt::format("key '{}': {}", e.key(), e.message()));
  }

  // An error about `key` where `src` set it: at its JSON path when inline
  // (the path names the key), or at the object with the file, its line and
  // the key when it came from a referenced file.
  [[noreturn]] void key_error(const PropertySource& src, const std::string& key, const std::string& message) {
    const std::string& where = src.paths.at(key);
    if (where.rfind("$", 0) == 0) throw InputError(file_, where, message);
    throw InputError(file_, src.where->path(), fmt::format("{}: '{}': {}", where, key, message));
  }

  void read_cluster_config(ObjectReader& r) {
    if (std::optional<Value> z = r.optional("zookeeper")) {
      ObjectReader zr(*z);
      zk_ = read_properties(zr);
      zr.finish();
    }
    if (std::optional<Value> k = r.optional("kafka")) {
      ObjectReader kr(*k);
      kafka_ = read_properties(kr);
      kr.finish();
    }
  }

  // --- hosts and processes ------------------------------------------------------------

  void claim_name(const Value& where, const std::string& name) {
    // Names appear in faults, the timeline, the history and expectations
    // (clients.<name>): white space, quotes or a line break there would
    // garble every report.
    for (char c : name) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') {
        where.fail(fmt::format("{}: a host or client name is letters, digits, '_', '-' and '.'",
                               nlohmann::json(name).dump()));
      }
    }
    if (name == kAdminName) {
      where.fail(fmt::format("the name \"{}\" is the runner's own (the process that creates the topics)", name));
    }
    if (!names_.insert(name).second) {
      where.fail(fmt::format("the name \"{}\" is used twice (hosts and processes share one namespace)", name));
    }
  }
  void claim_port(const Value& where, const std::string& host, int64_t port, const std::string& who) {
    auto [it, fresh] = ports_.emplace(std::make_pair(host, port), who);
    if (!fresh) {
      where.fail(fmt::format("port {} on host \"{}\" is already taken by {}", port, host, it->second));
    }
  }

  // The "address" field of `r`: one a host can hold (a host's, or the one a
  // replace_address gives it).
  static std::string host_address(ObjectReader& r) {
    const std::string address = r.string("address");
    if (!valid_address(address)) {
      r.required("address").fail(fmt::format(
          "expected an IPv4 address such as \"10.0.0.1\" (four numbers from 0 to 255, no leading zeros), got \"{}\"",
          address));
    }
    if (auto why = unusable_host_address(address)) {
      r.required("address").fail(fmt::format("{} cannot be a host's address: {}", address, *why));
    }
    return address;
  }

  void read_host(const Value& v) {
    ObjectReader r(v);
    HostSpec h;
    h.name = r.string("name");
    if (h.name.empty()) r.required("name").fail("a host needs a non-empty name");
    claim_name(r.required("name"), h.name);
    h.address = host_address(r);
    for (const HostSpec& other : s_.hosts) {
      if (other.address == h.address) {
        r.required("address").fail(fmt::format("the address {} is already host \"{}\"'s", h.address, other.name));
      }
    }
    if (h.address == kAdminAddress) {
      r.required("address").fail(fmt::format("the address {} is the runner's own (its admin host)", h.address));
    }
    s_.hosts.push_back(h);

    if (std::optional<Value> z = r.optional("zookeeper")) {
      ObjectReader zr(*z);
      PendingZk p;
      p.id = static_cast<int32_t>(zr.integer("id", 1, 255));
      p.host = h.name;
      p.where = *z;
      p.own = read_properties(zr);
      zr.finish();
      for (const PendingZk& other : pending_zk_) {
        if (other.id == p.id) zr.required("id").fail(fmt::format("ZooKeeper server id {} is used twice", p.id));
      }
      claim_name(zr.required("id"), fmt::format("zk{}", p.id));
      pending_zk_.push_back(std::move(p));
    }
    if (std::optional<Value> bs = r.optional("brokers")) {
      for (const Value& b : bs->as_array()) {
        ObjectReader br(b);
        PendingBroker p;
        p.id = static_cast<kafka::BrokerId>(br.integer("id", 0, 2147483647));
        p.host = h.name;
        p.where = b;
        p.own = read_properties(br);
        br.finish();
        for (const PendingBroker& other : pending_brokers_) {
          if (other.id == p.id) br.required("id").fail(fmt::format("broker id {} is used twice", p.id));
        }
        claim_name(br.required("id"), fmt::format("kafka{}", p.id));
        pending_brokers_.push_back(std::move(p));
      }
    }
    if (std::optional<Value> cs = r.optional("clients")) {
      for (const Value& c : cs->as_array()) {
        const std::string name = c.as_string();
        if (name.empty()) c.fail("a client needs a non-empty name");
        claim_name(c, name);
        s_.clients.push_back({name, h.name, c.path()});
      }
    }
    r.finish();
  }

  void build_zookeeper_configs() {
    for (const PendingZk& p : pending_zk_) {
      std::map<std::string, std::string> values = zk_.values;
      for (const auto& [k, v] : p.own.values) values[k] = v;
      for (const auto& [k, _] : values) {
        const PropertySource& src = p.own.values.count(k) ? p.own : zk_;
        if (k.rfind("server.", 0) == 0) {
          key_error(src, k, "the ensemble's server list comes from the hosts; remove it");
        }
        if (k == "myid") {
          // ZooKeeper reads its id from the file dataDir/myid, not from zoo.cfg.
          key_error(src, k, "not a zoo.cfg key: a server's myid is its \"id\" in the scenario; remove it");
        }
      }
      values["myid"] = std::to_string(p.id);
      for (const PendingZk& q : pending_zk_) {
        values[fmt::format("server.{}", q.id)] = fmt::format("{}:2888:3888", s_.host(q.host)->address);
      }
      if (values.count("dataDir") == 0) values["dataDir"] = "/var/lib/zookeeper";
      ZooKeeperSpec spec;
      spec.id = p.id;
      spec.host = p.host;
      try {
        spec.config = zk::parse_server_config(
            model::from_map(values, fmt::format("{} (zk{})", file_, p.id)));
      } catch (const model::ConfigError& e) {
        config_error(zk_, &p.own, e, *p.where);
      }
      claim_port(*p.where, p.host, spec.config.client_port, fmt::format("zk{}", p.id));
      claim_port(*p.where, p.host, 2888, fmt::format("zk{}", p.id));
      claim_port(*p.where, p.host, 3888, fmt::format("zk{}", p.id));
      s_.zookeepers.push_back(std::move(spec));
    }
    std::sort(s_.zookeepers.begin(), s_.zookeepers.end(),
              [](const ZooKeeperSpec& a, const ZooKeeperSpec& b) { return a.id < b.id; });
  }

  void build_broker_configs() {
    std::string connect;
    for (const ZooKeeperSpec& z : s_.zookeepers) {
      connect += fmt::format("{}{}:{}", connect.empty() ? "" : ",", s_.host(z.host)->address,
                             z.config.client_port);
    }
    for (const PendingBroker& p : pending_brokers_) {
      std::map<std::string, std::string> values = kafka_.values;
      for (const auto& [k, v] : p.own.values) values[k] = v;
      if (values.count("broker.id") != 0 && values["broker.id"] != std::to_string(p.id)) {
        key_error(p.own.values.count("broker.id") ? p.own : kafka_, "broker.id",
                  fmt::format("{} contradicts the broker's \"id\" {}", values["broker.id"], p.id));
      }
      values["broker.id"] = std::to_string(p.id);
      if (values.count("zookeeper.connect") == 0) values["zookeeper.connect"] = connect;
      if (values.count("listeners") == 0) values["listeners"] = "PLAINTEXT://:9092";
      if (values.count("log.dirs") == 0 && values.count("log.dir") == 0) values["log.dirs"] = "/var/lib/kafka/data";
      BrokerSpec spec;
      spec.id = p.id;
      spec.host = p.host;
      try {
        spec.config = kafka::parse_broker_config(
            model::from_map(values, fmt::format("{} (kafka{})", file_, p.id)), s_.version);
      } catch (const model::ConfigError& e) {
        config_error(kafka_, &p.own, e, *p.where);
      }
      for (const kafka::Listener& l : spec.config.listeners) {
        // A listener binds an address of its own host, or all of them; a real
        // broker bound to another host's address fails to start (EADDRNOTAVAIL).
        const std::string& address = s_.host(p.host)->address;
        // (A name is left to the model; a loopback address binds anywhere.)
        if (valid_address(l.host) && l.host != "0.0.0.0" && l.host.rfind("127.", 0) != 0 && l.host != address) {
          const std::string text = fmt::format("{}://{}:{}", l.name, l.host, l.port);
          const std::string why = fmt::format("{} binds {}, which is not an address of host \"{}\" ({})", text,
                                              l.host, p.host, address);
          const PropertySource& src = p.own.values.count("listeners") ? p.own : kafka_;
          if (src.paths.count("listeners") != 0) key_error(src, "listeners", why);
          p.where->fail(why);
        }
        claim_port(*p.where, p.host, l.port, fmt::format("kafka{}", p.id));
      }
      for (const BrokerSpec& other : s_.brokers) {
        if (other.host != p.host) continue;
        for (const std::string& d : spec.config.log_dirs) {
          for (const std::string& e : other.config.log_dirs) {
            if (d == e) {
              p.where->fail(fmt::format("log directory {} on host \"{}\" is already kafka{}'s", d, p.host, other.id));
            }
          }
        }
      }
      s_.brokers.push_back(std::move(spec));
    }
    std::sort(s_.brokers.begin(), s_.brokers.end(),
              [](const BrokerSpec& a, const BrokerSpec& b) { return a.id < b.id; });
  }

  void read_client_properties(const Value& v) {
    ObjectReader r(v);
    s_.producer_properties = r.properties("producer");
    s_.consumer_properties = r.properties("consumer");
    r.finish();
  }

  // --- topics, workload --------------------------------------------------------------

  void read_topic(const Value& v) {
    ObjectReader r(v);
    TopicSpec t;
    t.name = r.string("name");
    if (!valid_topic_name(t.name) || t.name.rfind("__", 0) == 0) {
      r.required("name").fail(fmt::format(
          "\"{}\" is not a topic name a client may create (letters, digits, '.', '_', '-'; at most 249; "
          "not starting with \"__\")",
          t.name));
    }
    for (const TopicSpec& other : s_.topics) {
      if (other.name == t.name) r.required("name").fail(fmt::format("topic \"{}\" is defined twice", t.name));
      // Topic.hasCollision: '.' and '_' map to one metric name, so Kafka
      // refuses the second topic (InvalidTopicException on create).
      std::string a = other.name;
      std::string b = t.name;
      std::replace(a.begin(), a.end(), '.', '_');
      std::replace(b.begin(), b.end(), '.', '_');
      if (a == b) {
        r.required("name").fail(fmt::format("topic \"{}\" collides with topic \"{}\" ('.' and '_' are one to "
                                            "Kafka's metrics; Kafka refuses to create it)",
                                            t.name, other.name));
      }
    }
    t.partitions = static_cast<int32_t>(r.integer("partitions", 1, 1, 100000));
    const int64_t brokers = static_cast<int64_t>(s_.brokers.size());
    if (brokers == 0) r.value().fail("a topic needs brokers, and the scenario has none");
    t.replication_factor = static_cast<int16_t>(r.integer("replication_factor", 1, 1, 32767));
    if (t.replication_factor > brokers) {
      r.required("replication_factor")
          .fail(fmt::format("replication factor {} is above the number of brokers ({})", t.replication_factor,
                            brokers));
    }
    t.config = r.properties("config");
    if (std::optional<Value> c = r.optional("config")) {
      try {
        // As every broker would read them (a message format version is
        // refused where some broker uses it).
        for (const BrokerSpec& b : s_.brokers) {
          kafka::apply_topic_overrides(kafka::LogConfig{}, model::from_map(t.config, "topic " + t.name), false,
                                       kafka::message_format_reading(b.config));
        }
      } catch (const model::ConfigError& e) {
        if (!e.key().empty()) {
          throw InputError(file_, fmt::format("{}[{}]", c->path(), nlohmann::json(e.key()).dump()), e.message());
        }
        c->fail(e.message());
      }
    }
    r.finish();
    s_.topics.push_back(std::move(t));
  }

  // Client properties on top of a workload's defaults; bootstrap.servers
  // defaults to every broker's listener.
  std::map<std::string, std::string> client_props(const std::map<std::string, std::string>& file_props) const {
    std::map<std::string, std::string> props = file_props;
    if (props.count("bootstrap.servers") == 0) {
      std::string servers;
      for (const BrokerSpec& b : s_.brokers) {
        const uint16_t port = b.config.listeners.empty() ? 9092 : b.config.listeners.front().port;
        servers += fmt::format("{}{}:{}", servers.empty() ? "" : ",", s_.host(b.host)->address, port);
      }
      props["bootstrap.servers"] = servers;
    }
    return props;
  }

  // A client property's error at its own JSON path when the file set it
  // (a default it did not set, such as bootstrap.servers, at the object).
  InputError client_error(const char* side, const std::map<std::string, std::string>& props,
                          const model::ConfigError& e) const {
    if (!e.key().empty() && props.count(e.key()) != 0) {
      return InputError(file_, child_path(fmt::format("$.clients.{}", side), e.key()), e.message());
    }
    return InputError(file_, fmt::format("$.clients.{}", side),
                      e.key().empty() ? e.message() : fmt::format("key '{}': {}", e.key(), e.message()));
  }

  client::ProducerConfig producer_config(client::ProducerConfig defaults) {
    try {
      return client::parse_producer_config(
          model::from_map(client_props(s_.producer_properties), fmt::format("{} (clients.producer)", file_)),
          std::move(defaults));
    } catch (const model::ConfigError& e) {
      throw client_error("producer", s_.producer_properties, e);
    }
  }
  // `group`: the group the workload puts the consumer in (checked as if
  // group.id said so, when the file does not set group.id itself).
  client::ConsumerConfig consumer_config(client::ConsumerConfig defaults, const std::string& group = "") {
    std::map<std::string, std::string> props = client_props(s_.consumer_properties);
    if (!group.empty() && props.count("group.id") == 0) props["group.id"] = group;
    try {
      return client::parse_consumer_config(model::from_map(props, fmt::format("{} (clients.consumer)", file_)),
                                           std::move(defaults));
    } catch (const model::ConfigError& e) {
      throw client_error("consumer", s_.consumer_properties, e);
    }
  }

  std::string workload_topic(ObjectReader& r) {
    if (r.string("topic", "").empty()) {
      if (s_.topics.size() != 1) {
        r.value().fail(fmt::format("\"topic\" is required when the file defines {} topics", s_.topics.size()));
      }
      return s_.topics.front().name;
    }
    const std::string t = r.string("topic");
    bool found = false;
    for (const TopicSpec& topic : s_.topics) found = found || topic.name == t;
    if (!found) r.required("topic").fail(fmt::format("no topic named \"{}\" in \"topics\"", t));
    return t;
  }

  // A client name of the workload: declared on a host, one role only.
  std::string workload_client(const Value& v, std::set<std::string>& used) {
    const std::string name = v.as_string();
    bool declared = false;
    for (const ClientSpec& c : s_.clients) declared = declared || c.name == name;
    if (!declared) {
      std::string names;
      for (const ClientSpec& c : s_.clients) names += (names.empty() ? "" : ", ") + c.name;
      v.fail(fmt::format("no client named \"{}\" on any host; clients: {}", name, names.empty() ? "(none)" : names));
    }
    if (!used.insert(name).second) v.fail(fmt::format("client \"{}\" already has a role in the workload", name));
    return name;
  }

  void read_workload(const Value& v) {
    ObjectReader r(v);
    s_.workload.type = r.choice("type", {"lab", "steady"});
    s_.workload.path = v.path();
    std::set<std::string> used;
    if (s_.workload.type == "lab") {
      LabWorkload& w = s_.workload.lab;
      w.topic = workload_topic(r);
      w.options.topic = w.topic;
      for (const char* role : {"producer", "consumer"}) {
        std::string name = role;
        if (std::optional<Value> c = r.optional(role)) {
          name = c->as_string();
          if (!name.empty()) workload_client(*c, used);
        } else {
          bool declared = false;
          for (const ClientSpec& c : s_.clients) declared = declared || c.name == name;
          if (!declared) {
            name.clear();
          } else if (!used.insert(name).second) {
            r.value().fail(fmt::format("the client \"{0}\" would be both producer and consumer: \"{1}\" is "
                                       "\"{0}\" when not given; name another client, or \"\" for none",
                                       name, role));
          }
        }
        (std::string(role) == "producer" ? w.producer : w.consumer) = name;
      }
      w.options.tries = static_cast<int32_t>(r.integer("tries", 5, 1, 1'000'000));
      w.options.pause = sim::Duration::millis(r.integer("pause_ms", 10, 0, 3'600'000));
      // Absent: each value's decimal digits, as producer.py sends them.
      w.options.value_size = static_cast<int32_t>(r.integer("value_size", 0, 1, 1 << 20));
      w.options.poll_timeout = sim::Duration::millis(r.integer("poll_timeout_ms", 500, 1, 3'600'000));
      w.consumer_head_start_us = seconds_to_us(r.number("consumer_head_start_s", 2, 0, kMaxSeconds));
      w.producer_config = producer_config(client::lab_producer_defaults());
      if (!w.producer.empty() && w.producer_config.acks == 0 && w.options.pause == sim::Duration::zero()) {
        // With acks=0 a send is done once written, at the instant it is
        // sent: the model spends no time sending, so the script would send
        // without end at one virtual instant.
        r.fail_at("pause_ms",
                  "0 with acks=0 would make the producer send without end at one virtual instant "
                  "(the model spends no time writing a request); give at least 1");
      }
      w.consumer_config = consumer_config(client::lab_consumer_defaults());
    } else {
      SteadyWorkload& w = s_.workload.steady;
      client::SteadyOptions& o = w.options;
      o.topic = workload_topic(r);
      for (const Value& c : r.required("producers").as_array()) w.producers.push_back(workload_client(c, used));
      if (std::optional<Value> cs = r.optional("consumers")) {
        for (const Value& c : cs->as_array()) w.consumers.push_back(workload_client(c, used));
      }
      o.producers = static_cast<int32_t>(w.producers.size());
      o.consumers = static_cast<int32_t>(w.consumers.size());
      o.producer_names = w.producers;
      o.consumer_names = w.consumers;
      o.rate_per_s = static_cast<int32_t>(r.integer("rate_per_s", 100, 1, 1'000'000));
      o.arrivals = r.choice("arrivals", "poisson", {"poisson", "fixed"}) == "fixed" ? client::SteadyOptions::Arrivals::fixed
                                                                                 : client::SteadyOptions::Arrivals::poisson;
      o.keys = static_cast<int32_t>(r.integer("keys", 16, 0, 1'000'000));
      o.value_size = static_cast<int32_t>(r.integer("value_size", 100, 1, 1 << 20));
      o.max_outstanding = static_cast<size_t>(r.integer("max_outstanding", 100000, 1, 10'000'000));
      if (std::optional<Value> gs = r.optional("groups")) {
        o.groups.clear();
        for (const Value& g : gs->as_array()) {
          const std::string name = g.as_string();
          if (name.empty()) g.fail("a group name cannot be empty (use [] for consumers without a group)");
          o.groups.push_back(name);
        }
      }
      o.poll_timeout = sim::Duration::millis(r.integer("poll_timeout_ms", 500, 1, 3'600'000));
      // (-1, outside the range: absent.)
      if (const double start = r.number("consumers_start_s", -1, 0, kMaxSeconds); start >= 0) {
        w.consumers_start_us = seconds_to_us(start);
      }
      o.producer = producer_config(client::steady_producer_defaults());
      o.consumer = consumer_config(client::steady_consumer_defaults(), o.groups.empty() ? "" : o.groups.front());
    }
    // Unknown fields before the checks between fields: a misspelt field
    // (consumer_head_start, consumer) must be named, not show up as its
    // default failing a check.
    r.finish();
    if (const LabWorkload& w = s_.workload.lab;
        s_.workload.type == "lab" && !w.producer.empty() && w.consumer_head_start_us >= s_.duration_us) {
      r.fail_at("consumer_head_start_s",
                fmt::format("the producer would start {} s in, not before the end of the run (duration_s {})",
                            w.consumer_head_start_us / 1e6, s_.duration_us / 1e6));
    }
    if (s_.workload.type == "steady") {
      const SteadyWorkload& w = s_.workload.steady;
      if (w.producers.empty() && w.consumers.empty()) r.value().fail("a steady workload needs a producer or a consumer");
      if (w.consumers_start_us) {
        if (w.consumers.empty()) r.fail_at("consumers_start_s", "there are no consumers to start");
        if (*w.consumers_start_us >= s_.duration_us) {
          r.fail_at("consumers_start_s", fmt::format("{} s is not before the end of the run (duration_s {})",
                                                     *w.consumers_start_us / 1e6, s_.duration_us / 1e6));
        }
      }
      try {
        client::validate(w.options);
      } catch (const std::invalid_argument& e) {
        r.value().fail(e.what());
      }
    }
    for (const ClientSpec& c : s_.clients) {
      if (used.count(c.name) == 0) {
        throw InputError(file_, c.path, fmt::format("client \"{}\" has no role in the {} workload ({})", c.name,
                                                    s_.workload.type,
                                                    s_.workload.type == "lab" ? "\"producer\" or \"consumer\""
                                                                             : "\"producers\" or \"consumers\""));
      }
    }
  }

  void read_environment(const Value& v) {
    ObjectReader r(v);
    EnvironmentSpec& e = s_.environment;
    e.boot_delay_us = seconds_to_us(r.number("boot_delay_s", 1, 0, 3600));
    if (std::optional<Value> u = r.optional("host_unreachable_after_s")) {
      e.host_unreachable_after_us = seconds_to_us(u->as_number(0, 3600));
    }
    e.fsync_latency_min_us = seconds_to_us(r.number("fsync_latency_min_ms", 0.5, 0, 60'000) / 1000);
    e.fsync_latency_max_us = seconds_to_us(r.number("fsync_latency_max_ms", 5, 0, 60'000) / 1000);
    if (std::optional<Value> w = r.optional("writeback_delay_s")) {
      if (w->json().is_null()) e.writeback_delay_us.reset();
      else e.writeback_delay_us = seconds_to_us(w->as_number(0, kMaxSeconds));
    }
    e.restart = r.choice("restart", "no", {"no", "always"}) == "always" ? sim::RestartPolicy::always
                                                                      : sim::RestartPolicy::no;
    e.restart_delay_us = seconds_to_us(r.number("restart_delay_s", 10, 0, 3600));
    // Unknown fields first: a misspelt fsync_latency_max_ms must be named,
    // not show up as its default being below the minimum.
    r.finish();
    if (e.fsync_latency_max_us < e.fsync_latency_min_us) {
      if (r.has("fsync_latency_max_ms")) {
        r.fail_at("fsync_latency_max_ms", "fsync_latency_max_ms is below fsync_latency_min_ms");
      }
      r.fail_at("fsync_latency_min_ms", fmt::format("{} ms is above fsync_latency_max_ms (by default {} ms); set that too",
                                                    e.fsync_latency_min_us / 1e3, e.fsync_latency_max_us / 1e3));
    }
  }

  void check_name(const Value& v, const std::string& name, std::set<std::string>& seen, const char* what) {
    if (name.empty()) v.fail(fmt::format("a {} needs a name", what));
    for (char c : name) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') {
        v.fail(fmt::format("\"{}\": a {} name is letters, digits, '_' and '-' (expectations name it)", name, what));
      }
    }
    if (!seen.insert(name).second) v.fail(fmt::format("{} \"{}\" is defined twice", what, name));
  }

  void read_phase(const Value& v, std::set<std::string>& seen) {
    ObjectReader r(v);
    PhaseSpec p;
    p.name = r.string("name");
    check_name(r.required("name"), p.name, seen, "phase");
    p.from_us = seconds_to_us(r.number("from_s", 0, kMaxSeconds));
    p.to_us = seconds_to_us(r.number("to_s", 0, kMaxSeconds));
    if (p.to_us <= p.from_us) r.required("to_s").fail("to_s must be after from_s");
    if (p.to_us > s_.duration_us) {
      r.required("to_s").fail(fmt::format("to_s is after the end of the run ({} s)", s_.duration_us / 1e6));
    }
    r.finish();
    s_.phases.push_back(std::move(p));
  }

  void read_snapshot(const Value& v, std::set<std::string>& seen) {
    ObjectReader r(v);
    SnapshotSpec p;
    p.name = r.string("name");
    check_name(r.required("name"), p.name, seen, "snapshot");
    p.at_us = seconds_to_us(r.number("at_s", 0, kMaxSeconds));
    if (p.at_us > s_.duration_us) {
      r.required("at_s").fail(fmt::format("at_s is after the end of the run ({} s)", s_.duration_us / 1e6));
    }
    r.finish();
    s_.snapshots.push_back(std::move(p));
  }

  // --- faults -------------------------------------------------------------------------

  std::string require_host(ObjectReader& r, const char* key) {
    const Value v = r.required(key);
    const std::string name = v.as_string();
    if (s_.host(name) == nullptr) {
      std::string hint = s_.is_process(name)
                             ? fmt::format(" (\"{}\" is a process, on host \"{}\")", name, s_.host_of_process(name)->name)
                             : "";
      v.fail(fmt::format("no host named \"{}\"{}; hosts: {}", name, hint, host_list()));
    }
    return name;
  }
  std::string require_process(ObjectReader& r, const char* key) {
    const Value v = r.required(key);
    const std::string name = v.as_string();
    if (!s_.is_process(name)) {
      std::string hint = s_.host(name) != nullptr ? fmt::format(" (\"{}\" is a host)", name) : "";
      v.fail(fmt::format("no process named \"{}\"{}; processes: {}", name, hint, process_list()));
    }
    return name;
  }
  std::string host_list() const {
    std::string out;
    for (const HostSpec& h : s_.hosts) out += (out.empty() ? "" : ", ") + h.name;
    return out;
  }
  std::string process_list() const {
    std::string out;
    for (const ZooKeeperSpec& z : s_.zookeepers) out += fmt::format("{}zk{}", out.empty() ? "" : ", ", z.id);
    for (const BrokerSpec& b : s_.brokers) out += fmt::format("{}kafka{}", out.empty() ? "" : ", ", b.id);
    for (const ClientSpec& c : s_.clients) out += (out.empty() ? "" : ", ") + c.name;
    return out;
  }

  void read_fault(const Value& v) {
    ObjectReader r(v);
    Fault f;
    f.path = v.path();
    f.at_us = seconds_to_us(r.number("at", 0, kMaxSeconds));
    if (f.at_us > s_.duration_us) {
      r.required("at").fail(fmt::format("{} s is after the end of the run (duration_s {})", f.at_us / 1e6,
                                        s_.duration_us / 1e6));
    }
    f.action = action_from(r.choice("action", kFaultActions));
    switch (f.action) {
      case FaultAction::power_off:
      case FaultAction::power_on:
      case FaultAction::isolate:
        f.target = require_host(r, "target");
        break;
      case FaultAction::replace_address: {
        f.target = require_host(r, "target");
        f.address = host_address(r);
        // Whether another host holds the address at that moment (a host may
        // take one another has left) is check_address_moves's question.
        f.update_ensemble = r.boolean("update_ensemble", false);
        break;
      }
      case FaultAction::stop:
        f.grace_us = seconds_to_us(r.number("grace_s", 90, 0, 3600));
        f.target = require_process(r, "target");
        break;
      case FaultAction::kill:
      case FaultAction::start:
      case FaultAction::pause:
      case FaultAction::resume:
        f.target = require_process(r, "target");
        break;
      case FaultAction::partition:
        read_partition(r, f);
        break;
      case FaultAction::heal:
      case FaultAction::restart_clients:
        break;
    }
    r.finish();
    s_.faults.push_back(std::move(f));
  }

  // Replays the replace_address faults in time order: a host may not move to
  // an address another host holds at that moment (nor the admin's).
  void check_address_moves() {
    std::map<std::string, std::string> holder;  // address -> host
    for (const HostSpec& h : s_.hosts) holder[h.address] = h.name;
    holder[kAdminAddress] = "the runner's admin host";
    std::map<std::string, std::string> address_of;
    for (const HostSpec& h : s_.hosts) address_of[h.name] = h.address;
    for (const Fault& f : s_.faults) {
      if (f.action != FaultAction::replace_address) continue;
      auto it = holder.find(f.address);
      if (it != holder.end() && it->second != f.target) {
        throw InputError(file_, f.path + ".address",
                         fmt::format("{} is held by {} at {} s", f.address,
                                     it->second.rfind("the ", 0) == 0 ? it->second : "host \"" + it->second + "\"",
                                     f.at_us / 1e6));
      }
      holder.erase(address_of[f.target]);
      holder[f.address] = f.target;
      address_of[f.target] = f.address;
    }
  }

  void read_partition(ObjectReader& r, Fault& f) {
    const bool groups = r.has("groups");
    const bool one_way = r.has("from") || r.has("to");
    const bool cuts = r.has("cuts");
    if (int(groups) + int(one_way) + int(cuts) != 1) {
      r.value().fail("a partition has one of \"groups\" (sides that cannot reach each other), \"from\" and "
                     "\"to\" (one way) or \"cuts\" (pairs of hosts cut both ways)");
    }
    if (one_way) {
      f.from = require_host(r, "from");
      f.to = require_host(r, "to");
      if (f.from == f.to) r.required("to").fail("a host cannot be cut from itself");
      return;
    }
    if (cuts) {
      for (const Value& pair : r.required("cuts").as_array(1)) {
        const std::vector<Value> ends = pair.as_array(2);
        if (ends.size() != 2) pair.fail(fmt::format("expected a pair of hosts, got {} of them", ends.size()));
        std::string names[2];
        for (int i = 0; i < 2; ++i) {
          names[i] = ends[i].as_string();
          if (s_.host(names[i]) == nullptr) {
            ends[i].fail(fmt::format("no host named \"{}\"; hosts: {}", names[i], host_list()));
          }
        }
        if (names[0] == names[1]) ends[1].fail("a host cannot be cut from itself");
        f.cuts.emplace_back(names[0], names[1]);
      }
      return;
    }
    std::set<std::string> seen;
    for (const Value& side : r.required("groups").as_array(2)) {
      std::vector<std::string> hosts;
      for (const Value& h : side.as_array(1)) {
        const std::string name = h.as_string();
        if (s_.host(name) == nullptr) h.fail(fmt::format("no host named \"{}\"; hosts: {}", name, host_list()));
        if (!seen.insert(name).second) h.fail(fmt::format("host \"{}\" is in two groups", name));
        hosts.push_back(name);
      }
      f.groups.push_back(std::move(hosts));
    }
  }

  void read_nemesis(const Value& v) {
    ObjectReader r(v);
    NemesisSpec n;
    for (const Value& k : r.required("kinds").as_array(1)) {
      n.kinds.push_back(action_from(k.as_choice({"kill", "pause", "stop", "power_off", "partition", "isolate"})));
    }
    for (const Value& t : r.required("targets").as_array(1)) {
      const std::string name = t.as_string();
      if (name != "brokers" && name != "zookeepers" && name != "clients" && s_.host(name) == nullptr &&
          !s_.is_process(name)) {
        t.fail(fmt::format("expected \"brokers\", \"zookeepers\", \"clients\", a host or a process, got \"{}\"", name));
      }
      n.targets.push_back(name);
    }
    n.start_us = seconds_to_us(r.number("start_s", 0, 0, kMaxSeconds));
    n.mean_interval_us = seconds_to_us(r.number("mean_interval_s", 30, 0.001, kMaxSeconds));
    n.min_duration_us = seconds_to_us(r.number("min_duration_s", 5, 0, kMaxSeconds));
    n.max_duration_us = seconds_to_us(r.number("max_duration_s", 30, 0, kMaxSeconds));
    n.quiet_us = seconds_to_us(r.number("quiet_s", 60, 0, kMaxSeconds));
    // Unknown fields first: a misspelt one (quite_s) would otherwise show up
    // only as its default breaking a check between fields.
    r.finish();
    if (n.max_duration_us < n.min_duration_us) {
      r.fail_at("max_duration_s", fmt::format("{} s is below min_duration_s ({} s)", n.max_duration_us / 1e6,
                                              n.min_duration_us / 1e6));
    }
    // About (window / mean interval) faults are drawn; a million is more than
    // any run can use and bounds the generator's work.
    const int64_t window = s_.duration_us - n.start_us - n.quiet_us;
    if (window > 0 && window / n.mean_interval_us > 1'000'000) {
      r.fail_at("mean_interval_s", fmt::format(
          "a mean interval of {} s draws about {} faults in {} s; at most 1000000 (make it at least {} s)",
          n.mean_interval_us / 1e6, window / n.mean_interval_us, window / 1e6, window / 1e6 / 1'000'000));
    }
    if (n.start_us + n.quiet_us >= s_.duration_us) {
      r.value().fail(fmt::format("start_s + quiet_s ({} s) leaves no time for faults in a run of {} s",
                                 (n.start_us + n.quiet_us) / 1e6, s_.duration_us / 1e6));
    }
    s_.nemesis = std::move(n);
    // Targets that leave a kind with nothing to act on are errors now, not
    // when a run draws the schedule.
    (void)generate_nemesis(s_, *s_.nemesis, s_.duration_us, sim::Rng(0));
  }

  struct PendingZk {
    int32_t id = 0;
    std::string host;
    std::optional<Value> where;
    PropertySource own;
  };
  struct PendingBroker {
    kafka::BrokerId id = 0;
    std::string host;
    std::optional<Value> where;
    PropertySource own;
  };

  std::string file_;
  std::string dir_;
  nlohmann::json root_;
  std::string referenced_;  // the JSON path and text of every referenced properties file
  Scenario s_;
  PropertySource zk_;
  PropertySource kafka_;
  std::vector<PendingZk> pending_zk_;
  std::vector<PendingBroker> pending_brokers_;
  std::set<std::string> names_;
  std::map<std::pair<std::string, int64_t>, std::string> ports_;
};

}  // namespace

Scenario parse_scenario(const std::string& file, std::string_view text) {
  Loader loader(file, text);
  return loader.load();
}

Scenario load_scenario(const std::string& file) {
  return parse_scenario(file, read_input_file(file));
}

}  // namespace scenario
