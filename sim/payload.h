// A message body as the network carries it: any value, type-erased, kept in
// place when it is small enough.
//
// The engine never looks inside; the model puts its message types here and
// gets them back with `payload_cast<T>(&p)` (null when `p` holds something
// else), as with `std::any`. Plain data (trivially copyable) up to
// `kInlineBytes` is stored in place. Anything else goes to the heap, even when
// it would fit: a payload is moved three or four times on its way through the
// network (into the link's queue, out of it, into the delivery), and moving a
// Kafka frame in place (a variant of every request type, each with its
// vectors) cost about 130 instructions each time, more than one allocation
// from sim/fast_alloc.h plus moving a pointer (measured on seed-000: 2.3 %
// of a run). A receiver may move the value out (`payload_cast` on a non-const
// Payload gives a mutable pointer): the network hands each payload to exactly
// one handler and drops it afterwards.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <type_traits>
#include <typeinfo>
#include <utility>

#include "sim/inline_box.h"

namespace sim {

struct PayloadOps {
  void (*move)(void* dst, void* src);
  void (*destroy)(void*);
  void (*copy)(void* dst, const void* src);  // null for a move-only value
  const std::type_info& (*type)();
  // Only plain data stays in place (see above).
  template <typename V>
  static constexpr bool keep_inline = std::is_trivially_copyable_v<V>;
};

class Payload : public InlineBox<184, PayloadOps> {
 public:
  Payload() noexcept = default;

  template <typename T, typename = std::enable_if_t<!std::is_same_v<std::decay_t<T>, Payload>>>
  Payload(T&& value) {  // NOLINT(google-explicit-constructor): any message converts implicitly
    emplace<std::decay_t<T>>(&ops_for<std::decay_t<T>>, std::forward<T>(value));
  }

  Payload(Payload&&) noexcept = default;
  Payload& operator=(Payload&&) noexcept = default;
  // Copies the value; a payload holding a move-only value cannot be copied
  // (std::logic_error).
  Payload(const Payload& o) : InlineBox() {
    if (o.ops_ == nullptr) return;
    if (o.ops_->copy == nullptr) throw std::logic_error("copy of a payload holding a move-only value");
    o.ops_->copy(buf_, o.buf_);
    ops_ = o.ops_;
  }
  Payload& operator=(const Payload& o) {
    if (this != &o) {
      Payload copy(o);
      *this = std::move(copy);
    }
    return *this;
  }
  ~Payload() = default;

  bool has_value() const { return ops_ != nullptr; }
  // typeid(void) when empty.
  const std::type_info& type() const { return ops_ != nullptr ? ops_->type() : typeid(void); }

  template <typename T>
  const T* get() const {
    return ops_ == &ops_for<T> ? target<T>(static_cast<const void*>(buf_)) : nullptr;
  }
  template <typename T>
  T* get() {
    return ops_ == &ops_for<T> ? target<T>(static_cast<void*>(buf_)) : nullptr;
  }

 private:
  template <typename V>
  static constexpr void (*copier())(void*, const void*) {
    if constexpr (std::is_copy_constructible_v<V>) {
      return [](void* dst, const void* src) {
        if constexpr (fits_inline<V>()) {
          ::new (dst) V(*target<V>(src));
        } else {
          ::new (dst) V*(new V(*target<V>(src)));
        }
      };
    } else {
      return nullptr;
    }
  }

  // One table per type: its address is the type's identity here (the
  // program is linked statically, so each table exists once).
  template <typename V>
  static constexpr PayloadOps ops_for = {
      &move_value<V>,
      &destroy_value<V>,
      copier<V>(),
      []() -> const std::type_info& { return typeid(V); },
  };
};

// The value in `p` if it holds a T, else null (std::any_cast's pointer form).
template <typename T>
const T* payload_cast(const Payload* p) {
  return p == nullptr ? nullptr : p->get<T>();
}
template <typename T>
T* payload_cast(Payload* p) {
  return p == nullptr ? nullptr : p->get<T>();
}

}  // namespace sim
