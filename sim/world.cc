#include "sim/world.h"

namespace sim {

// --- Process and ProcessContext ----------------------------------------------

void Process::on_terminate() { ctx().exit(); }

ProcessContext::ProcessContext(World& world, ProcessId id, HostId host, std::string name,
                               ProcessFactory factory, Autostart autostart)
    : world_(world),
      id_(id),
      host_(host),
      name_(std::move(name)),
      factory_(std::move(factory)),
      autostart_(autostart) {}

Time ProcessContext::now() const { return world_.now(); }
EventLoop& ProcessContext::loop() { return world_.loop_; }
const std::string& ProcessContext::host_name() const { return world_.host_name(host_); }
const std::string& ProcessContext::address() const { return world_.network_.address(host_); }
Disk& ProcessContext::disk() { return world_.disk(host_); }

bool ProcessContext::cancel(TimerId id) { return world_.loop_.cancel(id); }

void ProcessContext::listen(uint16_t port) { world_.network_.listen(host_, port, endpoint()); }
void ProcessContext::unlisten(uint16_t port) { world_.network_.unlisten(host_, port); }

SocketId ProcessContext::connect(const std::string& address, uint16_t port) {
  return world_.network_.connect(host_, endpoint(), address, port);
}

void ProcessContext::send(SocketId socket, Payload&& payload) {
  world_.network_.send(socket, std::move(payload));
}

void ProcessContext::close(SocketId socket) { world_.network_.close(socket); }
bool ProcessContext::is_open(SocketId socket) const { return world_.network_.is_open(socket); }

void ProcessContext::trace(std::string_view kind, std::initializer_list<TraceField> fields) {
  world_.trace_.emit(host_name(), name_, kind, fields);
}

void ProcessContext::exit() {
  SIM_ASSERT(alive_, "{} exited twice", name_);
  world_.network_.process_exited(endpoint(), CloseReason::eof);
  world_.stop_process(*this, "exited");
}

// --- World -------------------------------------------------------------------

World::World(uint64_t seed, WorldOptions options)
    : options_(options),
      loop_(options.limits),
      info_{seed, loop_.now_ptr()},
      root_(seed),
      trace_(loop_.now_ptr()),
      network_(loop_, trace_, root_.fork("network"), *this, options.network) {
  loop_.set_after_event([this] { after_event(); });
}

World::~World() = default;

HostId World::add_host(const std::string& name, const std::string& address) {
  SIM_ASSERT(!find_host(name), "host {} already exists", name);
  const HostId id = network_.add_host(name, address);
  SIM_ASSERT(id.value == hosts_.size(), "host ids out of step");
  Host host;
  host.name = name;
  host.disk = std::make_unique<Disk>(loop_, options_.disk, root_.fork("disk").fork(name));
  hosts_.push_back(std::move(host));
  return id;
}

ProcessId World::add_process(HostId host, const std::string& name, ProcessFactory factory,
                             Autostart autostart) {
  SIM_ASSERT(host.value < hosts_.size(), "no host {}", host.value);
  SIM_ASSERT(!find_process(name), "process {} already exists", name);
  const ProcessId id(static_cast<uint32_t>(processes_.size()));
  processes_.push_back(std::unique_ptr<ProcessContext>(
      new ProcessContext(*this, id, host, name, std::move(factory), autostart)));
  hosts_[host.value].processes.push_back(id);
  return id;
}

std::optional<HostId> World::find_host(const std::string& name) const {
  for (size_t i = 0; i < hosts_.size(); ++i) {
    if (hosts_[i].name == name) return HostId(static_cast<uint32_t>(i));
  }
  return std::nullopt;
}

std::optional<ProcessId> World::find_process(const std::string& name) const {
  for (size_t i = 0; i < processes_.size(); ++i) {
    if (processes_[i]->name() == name) return ProcessId(static_cast<uint32_t>(i));
  }
  return std::nullopt;
}

Process* World::process(ProcessId p) const {
  const ProcessContext& ctx = *processes_.at(p.value);
  return ctx.alive_ ? ctx.object_.get() : nullptr;
}

void World::emit(const ProcessContext& p, std::string_view kind,
                 std::initializer_list<TraceField> fields) {
  trace_.emit(hosts_[p.host().value].name, p.name(), kind, fields);
}

void World::start(ProcessId id) {
  RunScope scope(&info_);
  ProcessContext& p = *processes_.at(id.value);
  if (p.alive_) return;
  if (!hosts_[p.host().value].up) {
    emit(p, "start_refused", {{"reason", "host is powered off"}});
    return;
  }
  ++p.incarnation_;
  ++p.activity_;
  p.alive_ = true;
  p.paused_ = false;
  p.terminating_ = false;
  p.deferred_.clear();
  p.rng_ = root_.fork("process").fork(p.name()).fork(fmt::format("#{}", p.incarnation_));
  p.object_ = p.factory_();
  SIM_ASSERT(p.object_ != nullptr, "factory of {} made no process", p.name());
  p.object_->ctx_ = &p;
  emit(p, "started", {{"incarnation", p.incarnation_}});
  p.object_->on_start();
}

void World::set_restart(ProcessId id, RestartPolicy policy, Duration delay) {
  ProcessContext& p = *processes_.at(id.value);
  p.restart_ = policy;
  p.restart_delay_ = delay;
}

void World::stop_process(ProcessContext& p, std::string_view kind) {
  const bool asked_to_stop = p.terminating_;
  ++p.activity_;
  p.alive_ = false;
  p.paused_ = false;
  p.terminating_ = false;
  p.deferred_.clear();
  // The object may be running the very callback that stopped it; it is
  // destroyed after the current event.
  graveyard_.push_back(std::move(p.object_));
  emit(p, kind, {{"incarnation", p.incarnation_}});
  if (p.restart_ == RestartPolicy::always && !asked_to_stop && kind != "lost_power") {
    const ProcessId id = p.id_;
    const uint64_t incarnation = p.incarnation_;
    const uint64_t boot = hosts_[p.host().value].boot;
    loop_.after(p.restart_delay_, [this, id, incarnation, boot] {
      const ProcessContext& q = *processes_[id.value];
      const Host& host = hosts_[q.host().value];
      // Not if it was started by someone else meanwhile, or its host lost
      // power (the service manager went with it).
      if (q.alive_ || q.incarnation_ != incarnation || !host.up || host.boot != boot) return;
      emit(q, "restarted_by_service_manager", {{"after_incarnation", incarnation}});
      start(id);
    });
  }
}

void World::kill(ProcessId id) {
  RunScope scope(&info_);
  ProcessContext& p = *processes_.at(id.value);
  if (!p.alive_) return;
  network_.process_exited(p.endpoint(), CloseReason::reset);
  stop_process(p, "killed");
}

void World::terminate(ProcessId id, Duration grace) {
  RunScope scope(&info_);
  ProcessContext& p = *processes_.at(id.value);
  if (!p.alive_ || p.terminating_) return;
  p.terminating_ = true;
  emit(p, "terminating", {{"grace_us", grace}});
  const uint64_t incarnation = p.incarnation_;
  // SIGTERM is handled by the process (late, if it is paused) ...
  post(p.endpoint(), [&p] { p.object_->on_terminate(); });
  // ... and SIGKILL follows at the deadline, as a service manager would send.
  loop_.after(grace, [this, id, incarnation] {
    const ProcessContext& q = *processes_[id.value];
    if (q.alive_ && q.incarnation_ == incarnation) kill(id);
  });
}

void World::pause(ProcessId id) {
  ProcessContext& p = *processes_.at(id.value);
  if (!p.alive_ || p.paused_) return;
  ++p.activity_;
  p.paused_ = true;
  emit(p, "paused");
}

void World::resume(ProcessId id) {
  RunScope scope(&info_);
  ProcessContext& p = *processes_.at(id.value);
  if (!p.alive_ || !p.paused_) return;
  ++p.activity_;
  p.paused_ = false;
  emit(p, "resumed", {{"deferred", static_cast<uint64_t>(p.deferred_.size())}});
  // The backlog runs now, before anything else reaches the process: a timer
  // or message already queued for this instant came due after everything
  // held, and would overtake it if the backlog waited for an event of its own.
  drain_deferred(id, p.incarnation_);
}

void World::drain_deferred(ProcessId id, uint64_t incarnation) {
  ProcessContext& p = *processes_[id.value];
  // Everything that came due while the process was stopped runs now, in the
  // order it came due — unless the process is stopped again or dies part-way.
  while (p.alive_ && p.incarnation_ == incarnation && !p.paused_ && !p.deferred_.empty()) {
    Callback fn = std::move(p.deferred_.front());
    p.deferred_.pop_front();
    ++p.activity_;
    fn();
  }
}

void World::power_off(HostId h) {
  RunScope scope(&info_);
  Host& host = hosts_.at(h.value);
  if (!host.up) return;
  host.up = false;
  trace_.emit(host.name, "host", "power_off");
  for (ProcessId id : host.processes) {
    ProcessContext& p = *processes_[id.value];
    if (p.alive_) stop_process(p, "lost_power");
  }
  network_.host_down(h);
  host.disk->power_loss(now());
}

void World::power_on(HostId h) {
  RunScope scope(&info_);
  Host& host = hosts_.at(h.value);
  if (host.up) return;
  host.up = true;
  ++host.boot;
  network_.host_up(h);
  trace_.emit(host.name, "host", "power_on", {{"boot", host.boot}});
  const uint64_t boot = host.boot;
  loop_.after(options_.boot_delay, [this, h, boot] {
    const Host& host = hosts_[h.value];
    if (!host.up || host.boot != boot) return;
    for (ProcessId id : host.processes) {
      if (processes_[id.value]->autostart_ == Autostart::yes) start(id);
    }
  });
}

void World::replace_address(HostId h, const std::string& address) {
  RunScope scope(&info_);
  network_.set_address(h, address);
}

void World::boot() {
  for (size_t i = 0; i < processes_.size(); ++i) {
    const ProcessContext& p = *processes_[i];
    if (p.autostart_ == Autostart::yes && hosts_[p.host().value].up) {
      start(ProcessId(static_cast<uint32_t>(i)));
    }
  }
}

bool World::alive(const Endpoint& e) const {
  if (e.process.value >= processes_.size()) return false;
  const ProcessContext& p = *processes_[e.process.value];
  return p.alive_ && p.incarnation_ == e.incarnation;
}

bool World::runnable(const Endpoint& e) const {
  return alive(e) && !processes_[e.process.value]->paused_;
}

void World::post(const Endpoint& e, Callback fn) {
  if (!alive(e)) return;
  ProcessContext& p = *processes_[e.process.value];
  if (p.paused_) {
    p.deferred_.push_back(std::move(fn));
    return;
  }
  ++p.activity_;
  fn();
}

SocketHandler* World::handler(const Endpoint& e) {
  SIM_ASSERT(alive(e), "no live process behind endpoint {}", e.process.value);
  ProcessContext& p = *processes_[e.process.value];
  ++p.activity_;  // the caller is about to run the process's code
  return p.object_.get();
}

void World::after_event() {
  graveyard_.clear();
  if (invariant_check_) invariant_check_();
}

bool World::step() {
  RunScope scope(&info_);
  ++runs_;
  return loop_.step();
}

void World::run_until(Time t) {
  RunScope scope(&info_);
  ++runs_;
  loop_.run_until(t);
}

bool World::run_until(const std::function<bool()>& done, Time limit) {
  RunScope scope(&info_);
  ++runs_;
  return loop_.run_until(done, limit);
}

bool World::run_until_quiet(Time limit) {
  RunScope scope(&info_);
  ++runs_;
  return loop_.run_until_quiet(limit);
}

}  // namespace sim
