// What sim::Callback and sim::Payload share: a value of any type, kept in
// place when it fits in N bytes (and moves without throwing), else on the
// heap, behind a table of operations chosen per type.
//
// The derived class supplies the table type `Ops`, whose first members are
// `move` (move-constructs the storage at dst from src and ends src) and
// `destroy`; `ops_for<V>` builds those two for a type V, and the derived
// class adds its own (invoke, copy, ...) in its table. `Ops::keep_inline<V>`
// says whether a V that fits may stay in place at all (the derived class's
// policy: a value that is costly to move may be better behind a pointer).
#pragma once

#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

namespace sim {

template <size_t N, typename Ops>
class InlineBox {
 public:
  static constexpr size_t kInlineBytes = N;

  InlineBox() noexcept = default;
  InlineBox(InlineBox&& o) noexcept { take(o); }
  InlineBox& operator=(InlineBox&& o) noexcept {
    if (this != &o) {
      reset();
      take(o);
    }
    return *this;
  }
  InlineBox(const InlineBox&) = delete;
  InlineBox& operator=(const InlineBox&) = delete;
  ~InlineBox() { reset(); }

  void reset() {
    if (ops_ != nullptr) {
      ops_->destroy(buf_);
      ops_ = nullptr;
    }
  }

 protected:
  template <typename V>
  static constexpr bool fits_inline() {
    return sizeof(V) <= N && alignof(V) <= alignof(std::max_align_t) &&
           std::is_nothrow_move_constructible_v<V> && Ops::template keep_inline<V>;
  }

  // Stores a V made from `args`, described by `ops` (the box must be empty).
  template <typename V, typename... Args>
  void emplace(const Ops* ops, Args&&... args) {
    if constexpr (fits_inline<V>()) {
      ::new (static_cast<void*>(buf_)) V(std::forward<Args>(args)...);
    } else {
      ::new (static_cast<void*>(buf_)) V*(new V(std::forward<Args>(args)...));
    }
    ops_ = ops;
  }

  // The V held in `storage` (a buffer of a box holding a V).
  template <typename V>
  static V* target(void* storage) {
    if constexpr (fits_inline<V>()) {
      return std::launder(static_cast<V*>(storage));
    } else {
      return *std::launder(static_cast<V**>(storage));
    }
  }
  template <typename V>
  static const V* target(const void* storage) {
    return target<V>(const_cast<void*>(storage));
  }

  // The move and destroy operations for a V.
  template <typename V>
  static void move_value(void* dst, void* src) {
    if constexpr (fits_inline<V>()) {
      ::new (dst) V(std::move(*static_cast<V*>(src)));
      static_cast<V*>(src)->~V();
    } else {
      ::new (dst) V*(*static_cast<V**>(src));
    }
  }
  template <typename V>
  static void destroy_value(void* p) {
    if constexpr (fits_inline<V>()) {
      static_cast<V*>(p)->~V();
    } else {
      delete *static_cast<V**>(p);
    }
  }

  alignas(std::max_align_t) unsigned char buf_[N];
  const Ops* ops_ = nullptr;

 private:
  void take(InlineBox& o) noexcept {
    ops_ = o.ops_;
    if (ops_ != nullptr) {
      ops_->move(buf_, o.buf_);
      o.ops_ = nullptr;
    }
  }
};

}  // namespace sim
