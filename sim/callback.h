// A move-only `void()` callable that stores small closures in place.
//
// The event loop keeps one of these per pending event. `std::function` would
// do, but it must be copyable and allocates for any capture above 16 bytes;
// most simulation closures capture a pointer and a few ids, which fit in the
// 48 bytes kept inline here. Larger closures still work: they go to the heap
// (the storage is sim::InlineBox, shared with sim::Payload).
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>

#include "sim/inline_box.h"

namespace sim {

struct CallbackOps {
  void (*move)(void* dst, void* src);
  void (*destroy)(void*);
  void (*invoke)(void*);
  // Every closure that fits stays in place.
  template <typename V>
  static constexpr bool keep_inline = true;
};

class Callback : public InlineBox<48, CallbackOps> {
 public:
  Callback() = default;

  template <typename F, typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, Callback>>>
  Callback(F&& f) {  // NOLINT(google-explicit-constructor): lambdas convert implicitly
    emplace<std::decay_t<F>>(&ops_for<std::decay_t<F>>, std::forward<F>(f));
  }

  // Replaces what the callback holds with `f`, built in place.
  template <typename F, typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, Callback>>>
  void assign(F&& f) {
    reset();
    emplace<std::decay_t<F>>(&ops_for<std::decay_t<F>>, std::forward<F>(f));
  }

  explicit operator bool() const { return ops_ != nullptr; }
  void operator()() { ops_->invoke(buf_); }

 private:
  template <typename Fn>
  static constexpr CallbackOps ops_for = {
      &move_value<Fn>,
      &destroy_value<Fn>,
      [](void* p) { (*target<Fn>(p))(); },
  };
};

}  // namespace sim
