// The world: hosts, the processes on them, and the faults that befall both.
//
// A `World` owns one simulation — the event loop, the root random stream
// forked from the seed, the trace, the network and every host's disk — and is
// what a scenario drives. Model code never sees the world: a process sees only
// its `ProcessContext`, the narrow environment of TigerBeetle's replicas
// (now, its random stream, timers, sockets, its host's disk, the trace).
//
// A process is an event-driven object made afresh by its factory on every
// start, so a restart recovers only what it left on disk. The faults act as
// their real counterparts do:
//   kill          kill -9: the object is gone, its kernel resets its
//                 connections, its page-cached writes stay;
//   terminate     SIGTERM: `on_terminate` runs, the process should `exit()`
//                 by itself; if it has not by the deadline it is killed;
//   pause/resume  SIGSTOP/SIGCONT or a long GC: nothing is delivered to the
//                 process meanwhile (its kernel still accepts connections and
//                 buffers data); its timers and messages run late, in order,
//                 on resume;
//   power_off/on  the host's processes vanish without a word on the network,
//                 unsynced writes are lost; on power-on the host boots with a
//                 new kernel and starts its autostart processes after
//                 `boot_delay`.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/assert.h"
#include "sim/disk.h"
#include "sim/event_loop.h"
#include "sim/ids.h"
#include "sim/network.h"
#include "sim/random.h"
#include "sim/trace.h"

namespace sim {

class ProcessContext;
class World;

// A simulated program. Override what the program reacts to.
class Process : public SocketHandler {
 public:
  ~Process() override = default;
  // The process has just started; durable state, if any, is on disk().
  virtual void on_start() = 0;
  // SIGTERM. The default exits at once.
  virtual void on_terminate();

  void on_accept(SocketId, uint16_t) override {}
  void on_connected(SocketId) override {}
  void on_connect_failed(SocketId, ConnectError) override {}
  void on_message(SocketId, Payload&) override {}
  void on_closed(SocketId, CloseReason) override {}

 protected:
  ProcessContext& ctx() const { return *ctx_; }

 private:
  friend class World;
  ProcessContext* ctx_ = nullptr;
};

using ProcessFactory = std::function<std::unique_ptr<Process>()>;

enum class Autostart { no, yes };

// What a service manager does when a process ends without being asked to
// (systemd's Restart=): `always` starts it again RestartSec later after it
// exits on its own or is killed; a process stopped by `terminate`
// (`systemctl stop`) or by a power loss is left alone.
enum class RestartPolicy { no, always };

// Everything a process may touch.
class ProcessContext {
 public:
  Time now() const;
  Rng& rng() { return rng_; }
  const std::string& name() const { return name_; }
  const std::string& host_name() const;
  const std::string& address() const;
  HostId host() const { return host_; }
  ProcessId id() const { return id_; }
  // Counts starts: 1 for the first run, 2 after the first restart, ...
  uint64_t incarnation() const { return incarnation_; }

  // Timers. A timer of a process that has died never fires; one that comes
  // due while the process is paused fires on resume.
  template <typename F>
  TimerId after(Duration d, F&& fn) {
    return loop().after(d, guard(std::forward<F>(fn)));
  }
  template <typename F>
  TimerId at(Time t, F&& fn) {
    return loop().at(t, guard(std::forward<F>(fn)));
  }
  bool cancel(TimerId id);

  void listen(uint16_t port);
  void unlisten(uint16_t port);
  SocketId connect(const std::string& address, uint16_t port);
  // Sends a message; the payload is moved along the path, never copied.
  void send(SocketId socket, Payload&& payload);
  // Sends a copy of `payload` (an echo of what arrived, say).
  void send(SocketId socket, const Payload& payload) { send(socket, Payload(payload)); }
  void close(SocketId socket);
  bool is_open(SocketId socket) const;

  Disk& disk();
  // fsync of `path`; `done` runs once the data is durable, if the process is
  // still alive then.
  template <typename F>
  Time fsync(const std::string& path, F&& done) {
    return disk().fsync(path, guard(std::forward<F>(done)));
  }

  void trace(std::string_view kind, std::initializer_list<TraceField> fields = {});
  // The process ends itself (after an orderly shutdown): its connections are
  // closed with FIN, its listeners go.
  void exit();

 private:
  friend class World;
  ProcessContext(World& world, ProcessId id, HostId host, std::string name,
                 ProcessFactory factory, Autostart autostart);
  EventLoop& loop();

  // Wraps `fn` so that it runs only in this incarnation, late if paused.
  template <typename F>
  Callback guard(F&& fn) {
    return [this, incarnation = incarnation_, fn = std::forward<F>(fn)]() mutable {
      if (!alive_ || incarnation != incarnation_) return;
      if (paused_) {
        deferred_.emplace_back(std::move(fn));
        return;
      }
      ++activity_;
      fn();
    };
  }
  Endpoint endpoint() const { return Endpoint{id_, incarnation_}; }

  World& world_;
  ProcessId id_;
  HostId host_;
  std::string name_;
  ProcessFactory factory_;
  Autostart autostart_;
  RestartPolicy restart_ = RestartPolicy::no;
  Duration restart_delay_ = Duration::zero();
  Rng rng_{0};
  std::unique_ptr<Process> object_;
  uint64_t incarnation_ = 0;
  // Bumped whenever the process's code may run or its state may change (a
  // timer, a delivery, a start, a stop, a pause): see World::activity.
  uint64_t activity_ = 0;
  bool alive_ = false;
  bool paused_ = false;
  bool terminating_ = false;
  std::deque<Callback> deferred_;
};

struct WorldOptions {
  EventLimits limits;
  NetworkOptions network;
  DiskOptions disk;
  // From power-on until the host's autostart processes start.
  Duration boot_delay = Duration::zero();
};

class World final : public NetworkHost {
 public:
  explicit World(uint64_t seed, WorldOptions options = {});
  ~World() override;
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  uint64_t seed() const { return info_.seed; }
  Time now() const { return loop_.now(); }
  EventLoop& loop() { return loop_; }
  Trace& trace() { return trace_; }
  Network& network() { return network_; }
  // A random stream for a component outside any process (a nemesis, say).
  Rng rng(std::string_view name) const { return root_.fork(name); }

  // --- topology ------------------------------------------------------------
  HostId add_host(const std::string& name, const std::string& address);
  ProcessId add_process(HostId host, const std::string& name, ProcessFactory factory,
                        Autostart autostart = Autostart::yes);
  std::optional<HostId> find_host(const std::string& name) const;
  std::optional<ProcessId> find_process(const std::string& name) const;
  size_t host_count() const { return hosts_.size(); }
  size_t process_count() const { return processes_.size(); }
  const std::string& host_name(HostId h) const { return hosts_.at(h.value).name; }
  const std::string& process_name(ProcessId p) const { return processes_.at(p.value)->name(); }
  HostId host_of(ProcessId p) const { return processes_.at(p.value)->host(); }
  Disk& disk(HostId h) { return *hosts_.at(h.value).disk; }
  const Disk& disk(HostId h) const { return *hosts_.at(h.value).disk; }

  // --- faults and control ---------------------------------------------------
  void start(ProcessId p);
  // The service manager's policy for `p` (default: no restarts).
  void set_restart(ProcessId p, RestartPolicy policy, Duration delay);
  void kill(ProcessId p);
  void terminate(ProcessId p, Duration grace);
  void pause(ProcessId p);
  void resume(ProcessId p);
  void power_off(HostId h);
  void power_on(HostId h);
  // The host answers at a new address from now on; the old one is dead air.
  void replace_address(HostId h, const std::string& address);
  // Starts every autostart process on every host: the beginning of a run.
  void boot();

  // --- inspection -----------------------------------------------------------
  bool is_up(HostId h) const { return hosts_.at(h.value).up; }
  bool is_running(ProcessId p) const { return processes_.at(p.value)->alive_; }
  bool is_paused(ProcessId p) const { return processes_.at(p.value)->paused_; }
  // How many times the process has started (its ProcessContext::incarnation).
  uint64_t incarnation(ProcessId p) const { return processes_.at(p.value)->incarnation_; }
  // Changes whenever the process's code may have run or its lifecycle
  // changed (timers, deliveries, fsync completions, start, stop, pause,
  // resume) during the events of one run_until/step call; together with
  // `runs()` it lets an after-event check skip processes that cannot have
  // changed since it last looked. Code outside the event loop may touch a
  // process directly between runs: `runs()` changes at every entry.
  uint64_t activity(ProcessId p) const { return processes_.at(p.value)->activity_; }
  uint64_t runs() const { return runs_; }
  // The live object of a running process, or null.
  Process* process(ProcessId p) const;
  template <typename T>
  T* process_as(ProcessId p) const {
    return dynamic_cast<T*>(process(p));
  }

  // --- running ---------------------------------------------------------------
  bool step();
  void run_until(Time t);
  void run_for(Duration d) { run_until(now() + d); }
  bool run_until(const std::function<bool()>& done, Time limit);
  bool run_until_quiet(Time limit = Time::max());
  // Runs after every event, e.g. the model's invariant checks.
  void set_invariant_check(std::function<void()> check) { invariant_check_ = std::move(check); }

  // NetworkHost
  bool alive(const Endpoint& e) const override;
  bool runnable(const Endpoint& e) const override;
  void post(const Endpoint& e, Callback fn) override;
  SocketHandler* handler(const Endpoint& e) override;

 private:
  friend class ProcessContext;
  struct Host {
    std::string name;
    bool up = true;
    uint64_t boot = 0;
    std::unique_ptr<Disk> disk;
    std::vector<ProcessId> processes;
  };

  void stop_process(ProcessContext& p, std::string_view kind);
  void drain_deferred(ProcessId p, uint64_t incarnation);
  void after_event();
  void emit(const ProcessContext& p, std::string_view kind,
            std::initializer_list<TraceField> fields = {});

  WorldOptions options_;
  EventLoop loop_;
  RunInfo info_;
  Rng root_;
  Trace trace_;
  Network network_;
  std::vector<Host> hosts_;
  std::vector<std::unique_ptr<ProcessContext>> processes_;
  std::vector<std::unique_ptr<Process>> graveyard_;
  std::function<void()> invariant_check_;
  uint64_t runs_ = 0;
};

}  // namespace sim
