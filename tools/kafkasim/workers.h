// The parallel loop of `sweep` and `explore`: runs body(k) for k = 0, 1, ...
// count - 1 on `jobs` threads of a Boost.Asio pool, one simulation per
// thread. Each worker takes the next k from a shared counter when it is free,
// so nothing is queued ahead: memory does not grow with the count, and once
// stop() holds no new k starts (the running ones finish). tick() runs on the
// calling thread about every 200 ms and once more at the end of every
// worker, without any lock of this loop held (progress, Ctrl-C).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>

namespace cli {

template <class Body, class Stop, class Tick>
void run_on_workers(uint64_t jobs, uint64_t count, const Body& body, const Stop& stop, const Tick& tick) {
  std::atomic<uint64_t> next{0};
  std::mutex mutex;
  std::condition_variable cv;
  uint64_t workers_done = 0;
  boost::asio::thread_pool pool(jobs);
  for (uint64_t w = 0; w < jobs; ++w) {
    boost::asio::post(pool, [&] {
      for (;;) {
        if (stop()) break;
        const uint64_t k = next.fetch_add(1);
        if (k >= count) break;
        body(k);
      }
      std::lock_guard lock(mutex);
      ++workers_done;
      cv.notify_all();
    });
  }
  std::unique_lock lock(mutex);
  while (workers_done < jobs) {
    cv.wait_for(lock, std::chrono::milliseconds(200));
    lock.unlock();
    tick();
    lock.lock();
  }
  lock.unlock();
  pool.join();
}

}  // namespace cli
