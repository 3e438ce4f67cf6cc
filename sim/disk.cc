#include "sim/disk.h"

#include <algorithm>
#include <iterator>

namespace sim {

void File::append(std::string_view data, bool intact, Time now) {
  bytes_.append(data);
  end_record(intact, now);
}

void File::cut(size_t n) {
  if (n >= size()) return;
  bytes_.resize(n == 0 ? 0 : ends_[n - 1]);
  ends_.resize(n);
  intact_.resize(n);
  written_at_.resize(n);
}

void File::truncate(size_t n, Time now) {
  if (n >= size()) return;
  if (n < durable_prefix_) {
    // The platter still holds the records being cut away (until synced).
    std::vector<std::pair<std::string, bool>> tail;
    for (size_t i = n; i < durable_prefix_; ++i) {
      const Record r = record(i);
      tail.emplace_back(std::string(r.data), r.intact);
    }
    tail.insert(tail.end(), std::make_move_iterator(durable_tail_.begin()),
                std::make_move_iterator(durable_tail_.end()));
    durable_tail_ = std::move(tail);
    durable_prefix_ = n;
  }
  cut(n);
  last_truncate_at_ = now;
}

void File::rewrite(std::vector<std::string> records, Time now) {
  truncate(0, now);
  for (const std::string& r : records) append(r, now);
}

void File::make_durable(size_t n) {
  n = std::min(n, size());
  if (n >= durable_prefix_) {
    durable_prefix_ = n;
    // Syncing past the point of a truncation persists the truncation too.
    durable_tail_.clear();
  }
}

void File::crash(Time now, const DiskOptions& options, Rng& rng) {
  const bool writeback_on = options.writeback_delay != Duration::max();
  const Time horizon = writeback_on ? now - options.writeback_delay : Time::zero();
  // Writeback persists a truncation once it is old enough.
  if (writeback_on && !durable_tail_.empty() && last_truncate_at_ <= horizon) {
    durable_tail_.clear();
  }
  if (!durable_tail_.empty()) {
    cut(durable_prefix_);
    for (const auto& [data, intact] : durable_tail_) append(data, intact, Time::zero());
  } else {
    size_t keep = durable_prefix_;
    // Records are appended in time order, so the written-back ones are a prefix.
    while (writeback_on && keep < size() && written_at_[keep] <= horizon) ++keep;
    // The kernel may have been part-way through writing the rest.
    const size_t dirty = size() - keep;
    if (dirty > 0) keep += static_cast<size_t>(rng.below(dirty + 1));
    std::string torn;
    const bool tear = keep < size() && rng.chance(options.torn_write_percent, 100);
    if (tear) {
      const std::string_view whole = record(keep).data;
      const size_t part = whole.empty() ? 0 : static_cast<size_t>(rng.below(whole.size()));
      torn = std::string(whole.substr(0, part));
    }
    cut(keep);
    if (tear) append(torn, false, Time::zero());
  }
  written_at_.assign(size(), Time::zero());
  durable_prefix_ = size();
  durable_tail_.clear();
}

File& Disk::open(const std::string& path) {
  auto [it, created] = files_.try_emplace(path);
  if (created) it->second.id_ = next_file_id_++;
  return it->second;
}

File* Disk::find(const std::string& path) {
  auto it = files_.find(path);
  return it == files_.end() ? nullptr : &it->second;
}

std::vector<std::string> Disk::list(const std::string& prefix) const {
  std::vector<std::string> out;
  for (auto it = files_.lower_bound(prefix); it != files_.end(); ++it) {
    if (it->first.compare(0, prefix.size(), prefix) != 0) break;
    out.push_back(it->first);
  }
  return out;
}

Time Disk::fsync(const std::string& path, Callback done) {
  File& file = open(path);
  const size_t covered = file.size();
  const uint64_t file_id = file.id_;
  // Drawn for every fsync, used or not: the disk's random stream stays the
  // same whatever the fsyncs find to write.
  const Duration latency = rng_.uniform(options_.fsync_latency_min, options_.fsync_latency_max);
  Time finish;
  if (!file.dirty()) {
    // Nothing to write: no device time.
    finish = loop_->now();
  } else if (file.fsync_generation_ == generation_ && file.fsync_finish_ > loop_->now() &&
             covered <= file.fsync_covered_) {
    // An fsync in flight covers every record: done when it is.
    finish = file.fsync_finish_;
  } else {
    const Time start = std::max(loop_->now(), device_busy_until_);
    finish = start + latency;
    device_busy_until_ = finish;
    file.fsync_covered_ = covered;
    file.fsync_finish_ = finish;
    file.fsync_generation_ = generation_;
  }
  const uint64_t generation = generation_;
  loop_->at(finish, [this, path, covered, generation, file_id, done = std::move(done)]() mutable {
    // A power loss between the call and now means the fsync never completed.
    if (generation != generation_) return;
    // The file may have been removed (and perhaps re-created) meanwhile.
    File* f = find(path);
    if (f != nullptr && f->id_ == file_id) f->make_durable(covered);
    if (done) done();
  });
  return finish;
}

void Disk::sync_all() {
  for (auto& [path, file] : files_) file.make_durable(file.size());
}

void Disk::power_loss(Time now) {
  for (auto& [path, file] : files_) file.crash(now, options_, rng_);
  device_busy_until_ = now;
  ++generation_;
}

}  // namespace sim

