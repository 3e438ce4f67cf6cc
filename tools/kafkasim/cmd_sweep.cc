// `kafkasim sweep` and `kafkasim merge`.
//
// A sweep runs seeds on a boost::asio::thread_pool, one simulation per
// thread: each task copies the scenario and runs it alone; the only shared
// state is the result sink (a mutex, the results file's descriptor and the
// progress counters). Each finished seed is appended to DIR/results.jsonl as
// one complete line with a single write(2) under the mutex, so that an
// interrupted sweep leaves at worst a partial last line, which --resume
// drops. The table is then computed from the file (results.h).
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "model/scenario/json_input.h"
#include "model/scenario/run.h"
#include "model/scenario/scenario.h"
#include "tools/kafkasim/args.h"
#include "tools/kafkasim/commands.h"
#include "tools/kafkasim/results.h"
#include "tools/kafkasim/workers.h"

namespace cli {

namespace {

// Set by the signal handler, read by the pool's threads: a lock-free atomic
// is both async-signal-safe and free of data races.
std::atomic<int> g_interrupted{0};
static_assert(std::atomic<int>::is_always_lock_free);

extern "C" void on_interrupt(int signo) {
  if (g_interrupted.load() != 0) {
    // A second signal: abandon the running seeds. Every line already written
    // is complete (one write(2) each), so nothing is lost but those seeds.
    static const char msg[] = "\nkafkasim: interrupted again; abandoning the running seeds\n";
    ssize_t ignored = ::write(STDERR_FILENO, msg, sizeof msg - 1);
    (void)ignored;
    _exit(kExitInterrupted);
  }
  g_interrupted.store(signo);
}

void install_interrupt_handlers() {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

// Writes all of `line` with one write(2) (retrying only what a short write or
// EINTR left). False on an error.
bool write_line(int fd, const std::string& line) {
  size_t off = 0;
  while (off < line.size()) {
    ssize_t n = ::write(fd, line.data() + off, line.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    off += static_cast<size_t>(n);
  }
  return true;
}

std::string format_eta(double seconds) {
  if (seconds < 0 || seconds > 1e9) return "?";
  auto s = static_cast<uint64_t>(seconds + 0.5);
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
}

class Progress {
 public:
  Progress(uint64_t total, uint64_t already_done, uint64_t already_failed)
      : total_(total),
        base_done_(already_done),
        failures_(already_failed),
        tty_(::isatty(STDERR_FILENO) != 0),
        start_(std::chrono::steady_clock::now()) {}  // lint:allow wall-clock — progress rate only

  void update(uint64_t done_now, uint64_t failures_now, bool final) {
    uint64_t done = base_done_ + done_now;
    uint64_t failures = failures_ + failures_now;
    double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();  // lint:allow wall-clock
    double rate = elapsed > 0 ? static_cast<double>(done_now) / elapsed : 0;
    double eta = rate > 0 ? static_cast<double>(total_ - done) / rate : -1;
    std::string stats = fmt::format("{}/{} seeds  {:.1f}/s  failures {}  ETA {}", done, total_, rate, failures,
                                    done == total_ ? "0s" : format_eta(eta));
    if (tty_) {
      constexpr uint64_t kWidth = 30;
      uint64_t filled = total_ == 0 ? kWidth : done * kWidth / total_;
      std::string bar(filled, '=');
      if (filled < kWidth) bar += '>';
      bar.resize(kWidth, ' ');
      std::fprintf(stderr, "\r[%s] %s\x1b[K%s", bar.c_str(), stats.c_str(), final ? "\n" : "");
      std::fflush(stderr);
      return;
    }
    // Plain lines: one per tenth of the work, and the last.
    uint64_t tenth = total_ == 0 ? 10 : done * 10 / total_;
    if (tenth > last_tenth_ || (final && done != last_printed_done_)) {
      std::fprintf(stderr, "sweep: %s\n", stats.c_str());
      last_tenth_ = tenth;
      last_printed_done_ = done;
    }
  }

 private:
  uint64_t total_;
  uint64_t base_done_;
  uint64_t failures_;
  bool tty_;
  std::chrono::steady_clock::time_point start_;  // lint:allow wall-clock — progress rate only
  uint64_t last_tenth_ = 0;
  uint64_t last_printed_done_ = std::numeric_limits<uint64_t>::max();
};

// The same seed twice must be the same result (runs are deterministic): a
// difference is reported, and by_seed keeps the worse of them.
void warn_conflicting_duplicates(const std::vector<SeedResult>& results, const char* command) {
  std::vector<SeedResult> sorted = results;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const SeedResult& x, const SeedResult& y) { return x.seed < y.seed; });
  for (size_t i = 1; i < sorted.size(); ++i) {
    if (sorted[i].seed != sorted[i - 1].seed) continue;
    nlohmann::json x = sorted[i].line;
    nlohmann::json y = sorted[i - 1].line;
    for (const char* k : {"scenario_file", "commit"}) {
      x.erase(k);
      y.erase(k);
    }
    if (x != y) {
      std::fprintf(stderr, "kafkasim %s: warning: seed %llu has two different results (a determinism bug?)\n",
                   command, static_cast<unsigned long long>(sorted[i].seed));
    }
  }
}

void print_table_and_junit(const std::vector<SeedResult>& sorted, const std::optional<std::string>& junit) {
  std::fputs(verdict_table(sorted).c_str(), stdout);
  std::fflush(stdout);
  if (junit) write_text_file(*junit, junit_xml(sorted), "--junit");
}

}  // namespace

int cmd_sweep(const std::vector<std::string>& argv) {
  Args a("sweep", argv,
         {{.name = "seeds", .takes_value = true, .repeatable = false},
          {.name = "jobs", .takes_value = true, .repeatable = false},
          {.name = "shard", .takes_value = true, .repeatable = false},
          {.name = "out", .takes_value = true, .repeatable = false},
          {.name = "resume", .takes_value = false, .repeatable = false},
          {.name = "junit", .takes_value = true, .repeatable = false},
          {.name = "help", .takes_value = false, .repeatable = false}});
  if (a.flag("help")) {
    std::fputs(usage("sweep").c_str(), stdout);
    return 0;
  }
  a.expect_positionals(1, 1, "SCENARIO");
  if (!a.value("seeds")) a.fail("missing --seeds A..B");
  SeedRange range = parse_seeds("sweep", *a.value("seeds"));
  uint64_t jobs = a.value("jobs") ? parse_uint("sweep", "--jobs", *a.value("jobs"), 1, 1024) : 2;
  Shard shard = a.value("shard") ? parse_shard("sweep", *a.value("shard")) : Shard{};
  if (shard.size(range) > 100'000'000) a.fail("--seeds: more than 100 million seeds in one sweep; use --shard");
  if (shard.size(range) == 0) {
    // A sweep of nothing would pass a CI job unchecked (merge refuses the same).
    a.fail(fmt::format("--shard {}/{}: seeds {}..{} are only {}, so this shard has none (shard I of N takes "
                       "every N-th seed from the I-th)",
                       shard.index, shard.count, range.first, range.last, range.last - range.first + 1));
  }
  bool resume = a.flag("resume");
  std::optional<std::string> junit = a.value("junit");
  const std::string& file = a.positionals()[0];

  scenario::Scenario s = scenario::load_scenario(file);
  std::filesystem::path dir = a.value("out").value_or("sweep-" + std::filesystem::path(file).stem().string());
  std::filesystem::path results_path = dir / "results.jsonl";

  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir)) {
    throw BadInput(fmt::format("--out {}: cannot create the directory: {}", dir.string(),
                               ec ? ec.message() : "not a directory"));
  }
  // Before any seed runs (and with --out created, since the report may go
  // inside it): the report must not land on the scenario or the results.
  if (junit) {
    check_outputs("sweep", {{"--junit", *junit}},
                  {{"the scenario file", file}, {"the sweep's results file", results_path.string()}});
  }

  // What is already done.
  ResultsFile existing = read_results(results_path);
  std::error_code size_ec;
  bool non_empty = std::filesystem::exists(results_path) && std::filesystem::file_size(results_path, size_ec) > 0;
  if (non_empty && !resume) {
    throw BadInput(fmt::format(
        "{} already holds results ({} seeds); use --resume to continue that sweep, or --out DIR to write elsewhere",
        results_path.string(), existing.results.size()));
  }
  for (const SeedResult& r : existing.results) {
    if (r.hash != s.hash) {
      throw BadInput(fmt::format("{}: seed {} was run with scenario hash {}, but {} has hash {} (the file changed?); "
                                 "use another --out",
                                 results_path.string(), r.seed, r.hash, file, s.hash));
    }
  }
  if (existing.partial_tail) {
    // An interrupted write: drop the partial line so the next one starts clean.
    std::filesystem::resize_file(results_path, existing.complete_bytes, size_ec);
    if (size_ec) throw BadInput(fmt::format("{}: cannot truncate: {}", results_path.string(), size_ec.message()));
    std::fprintf(stderr, "kafkasim sweep: dropped a partial last line of %s (an interrupted write)\n",
                 results_path.string().c_str());
  }
  warn_conflicting_duplicates(existing.results, "sweep");
  std::set<uint64_t> done_before;
  for (const SeedResult& r : existing.results) done_before.insert(r.seed);

  // The seeds to run are worked out as they are taken (a range may be
  // huge): only what the file already holds is counted here.
  const uint64_t total = shard.size(range);
  uint64_t already = 0;
  uint64_t already_failed = 0;
  for (const SeedResult& r : by_seed(existing.results)) {
    if (r.seed >= range.first && r.seed <= range.last && shard.contains(range, r.seed)) {
      ++already;
      already_failed += r.exit_code != 0;
    }
  }

  int fd = ::open(results_path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw BadInput(fmt::format("{}: cannot open for writing: {}", results_path.string(), std::strerror(errno)));

  // The sink: everything the tasks share.
  std::mutex mutex;
  uint64_t done_now = 0;  // seeds written
  uint64_t failures_now = 0;
  std::optional<std::string> bad_input;
  std::optional<std::string> internal_error;
  uint64_t internal_error_seed = 0;
  std::atomic<bool> stop{false};

  g_interrupted.store(0);
  install_interrupt_handlers();
  Progress progress(total, already, already_failed);
  {
    // Ctrl-C stops at once: the seeds running finish and are written.
    run_on_workers(
        jobs, total,
        [&](uint64_t k) {
          const uint64_t seed = shard.seed(range, k);
          if (done_before.contains(seed)) return;
          std::optional<std::string> line;
          bool failed = false;
          try {
            scenario::Scenario mine = s;  // nothing shared between simulations
            scenario::RunResult r = scenario::run_scenario(mine, seed);
            nlohmann::json j = r.to_json();
            j["scenario_file"] = file;
            j["commit"] = build_commit();
            line = j.dump() + "\n";
            failed = r.exit_code() != scenario::kExitHeld;
          } catch (const scenario::InputError& e) {
            std::lock_guard lock(mutex);
            if (!bad_input) bad_input = e.what();
            stop.store(true);
          } catch (const std::exception& e) {
            std::lock_guard lock(mutex);
            if (!internal_error) {
              internal_error = fmt::format("seed {}: {}", seed, e.what());
              internal_error_seed = seed;
            }
            stop.store(true);
          }
          if (!line) return;
          std::lock_guard lock(mutex);
          if (write_line(fd, *line)) {
            ++done_now;
            failures_now += failed;
          } else if (!bad_input) {
            bad_input = fmt::format("{}: write failed: {}", results_path.string(), std::strerror(errno));
            stop.store(true);
          }
        },
        [&] { return stop.load() || g_interrupted.load() != 0; },
        [&] {
          std::lock_guard lock(mutex);
          progress.update(done_now, failures_now, false);
          if (g_interrupted.load() != 0) stop.store(true);
        });
    progress.update(done_now, failures_now, true);
  }
  ::close(fd);

  if (bad_input) {
    std::fprintf(stderr, "%s\n", bad_input->c_str());
    return scenario::kExitBadInput;
  }
  if (internal_error) {
    std::fprintf(stderr, "kafkasim sweep: internal error (a kafkasim bug): %s\n  reproduce: %s\n",
                 internal_error->c_str(), reproducer(file, internal_error_seed).c_str());
    return scenario::kExitInvariant;
  }
  if (g_interrupted.load() != 0 && done_now + already < total) {
    std::string cmd = fmt::format("kafkasim sweep {} --seeds {}..{}", shell_quote(file), range.first, range.last);
    if (shard.count > 1) cmd += fmt::format(" --shard {}/{}", shard.index, shard.count);
    cmd += fmt::format(" --jobs {} --out {} --resume", jobs, shell_quote(dir.string()));
    if (junit) cmd += " --junit " + shell_quote(*junit);
    std::fprintf(stderr,
                 "kafkasim sweep: interrupted; %llu of %llu seeds are in %s\n  resume with: %s\n",
                 static_cast<unsigned long long>(done_now + already), static_cast<unsigned long long>(total),
                 results_path.string().c_str(), cmd.c_str());
    return kExitInterrupted;
  }

  // The table is this sweep's: the seeds of --seeds and --shard found in the
  // file (a resumed file may hold others from an earlier, wider sweep).
  std::vector<SeedResult> sorted;
  for (SeedResult& r : by_seed(read_results(results_path).results)) {
    if (r.seed >= range.first && r.seed <= range.last && shard.contains(range, r.seed)) sorted.push_back(std::move(r));
  }
  print_table_and_junit(sorted, junit);
  return sweep_exit_code(sorted);
}

int cmd_merge(const std::vector<std::string>& argv) {
  Args a("merge", argv,
         {{.name = "junit", .takes_value = true, .repeatable = false},
          {.name = "help", .takes_value = false, .repeatable = false}});
  if (a.flag("help")) {
    std::fputs(usage("merge").c_str(), stdout);
    return 0;
  }
  a.expect_positionals(1, std::numeric_limits<size_t>::max(), "DIR");
  if (auto junit = a.value("junit")) {
    std::vector<std::pair<std::string, std::string>> inputs;
    for (const std::string& d : a.positionals()) {
      inputs.emplace_back("a results file being merged", (std::filesystem::path(d) / "results.jsonl").string());
    }
    check_outputs("merge", {{"--junit", *junit}}, inputs);
  }
  std::vector<SeedResult> all;
  std::optional<std::pair<std::string, std::string>> first_hash;  // (dir, hash)
  for (const std::string& d : a.positionals()) {
    std::filesystem::path p = std::filesystem::path(d) / "results.jsonl";
    std::error_code exists_ec;
    if (!std::filesystem::exists(p, exists_ec) && !exists_ec) {
      throw BadInput(fmt::format("{}: no results.jsonl in this directory", d));
    }
    ResultsFile f = read_results(p);  // says what is wrong with one that is there
    if (f.partial_tail) {
      std::fprintf(stderr, "kafkasim merge: %s ends with a partial line (an interrupted sweep); ignoring it\n",
                   p.string().c_str());
    }
    for (SeedResult& r : f.results) {
      if (!first_hash) first_hash.emplace(d, r.hash);
      if (r.hash != first_hash->second) {
        throw BadInput(fmt::format("{}: seed {} is of scenario hash {}, but {} holds hash {}: not the same scenario",
                                   d, r.seed, r.hash, first_hash->first, first_hash->second));
      }
      all.push_back(std::move(r));
    }
  }
  if (all.empty()) {
    // Nothing ran: a table of nothing would let a CI job pass unchecked.
    throw BadInput("merge: no results in the given directories");
  }
  warn_conflicting_duplicates(all, "merge");
  std::vector<SeedResult> sorted = by_seed(std::move(all));
  print_table_and_junit(sorted, a.value("junit"));
  return sweep_exit_code(sorted);
}

}  // namespace cli
