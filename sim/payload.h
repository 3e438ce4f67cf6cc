// A message body as the network carries it: any value, type-erased, kept in
// place when it is small enough.
//
// The engine never looks inside; the model puts its message types here and
// gets them back with `payload_cast<T>(&p)` (null when `p` holds something
// else), as with `std::any`. Unlike `std::any`, which allocates for anything
// larger than a pointer, a Payload stores up to `kInlineBytes` in place: a
// Kafka request frame (a variant of every request type) fits, so sending one
// costs no allocation of its own. Larger values still work: they go to the
// heap. A receiver may move the value out (`payload_cast` on a non-const
// Payload gives a mutable pointer): the network hands each payload to exactly
// one handler and drops it afterwards.
#pragma once

#include <cstddef>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <typeinfo>
#include <utility>

namespace sim {

class Payload {
 public:
  static constexpr size_t kInlineBytes = 184;

  Payload() noexcept = default;

  template <typename T, typename = std::enable_if_t<!std::is_same_v<std::decay_t<T>, Payload>>>
  Payload(T&& value) {  // NOLINT(google-explicit-constructor): any message converts implicitly
    using V = std::decay_t<T>;
    if constexpr (fits_inline<V>()) {
      ::new (static_cast<void*>(buf_)) V(std::forward<T>(value));
    } else {
      ::new (static_cast<void*>(buf_)) V*(new V(std::forward<T>(value)));
    }
    ops_ = &ops_for<V>;
  }

  Payload(Payload&& o) noexcept : ops_(o.ops_) {
    if (ops_ != nullptr) {
      ops_->move(buf_, o.buf_);
      o.ops_ = nullptr;
    }
  }
  Payload& operator=(Payload&& o) noexcept {
    if (this != &o) {
      reset();
      ops_ = o.ops_;
      if (ops_ != nullptr) {
        ops_->move(buf_, o.buf_);
        o.ops_ = nullptr;
      }
    }
    return *this;
  }
  // Copies the value; a payload holding a move-only value cannot be copied
  // (std::logic_error).
  Payload(const Payload& o) {
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
  ~Payload() { reset(); }

  bool has_value() const { return ops_ != nullptr; }
  // typeid(void) when empty.
  const std::type_info& type() const { return ops_ != nullptr ? ops_->type() : typeid(void); }
  void reset() {
    if (ops_ != nullptr) {
      ops_->destroy(buf_);
      ops_ = nullptr;
    }
  }

  template <typename T>
  const T* get() const {
    if (ops_ != &ops_for<T>) return nullptr;
    if constexpr (fits_inline<T>()) {
      return std::launder(reinterpret_cast<const T*>(buf_));
    } else {
      return *std::launder(reinterpret_cast<T* const*>(buf_));
    }
  }
  template <typename T>
  T* get() {
    return const_cast<T*>(static_cast<const Payload*>(this)->get<T>());
  }

 private:
  struct Ops {
    void (*move)(void* dst, void* src);  // move-constructs dst from src, destroys src
    void (*copy)(void* dst, const void* src);  // null for a move-only value
    void (*destroy)(void*);
    const std::type_info& (*type)();
  };

  template <typename V>
  static constexpr bool fits_inline() {
    return sizeof(V) <= kInlineBytes && alignof(V) <= alignof(std::max_align_t) &&
           std::is_nothrow_move_constructible_v<V>;
  }

  template <typename V>
  static constexpr void (*copier())(void*, const void*) {
    if constexpr (!std::is_copy_constructible_v<V>) {
      return nullptr;
    } else if constexpr (fits_inline<V>()) {
      return [](void* dst, const void* src) { ::new (dst) V(*static_cast<const V*>(src)); };
    } else {
      return [](void* dst, const void* src) { ::new (dst) V*(new V(**static_cast<V* const*>(src))); };
    }
  }

  // One table per type: its address is the type's identity here (the
  // program is linked statically, so each table exists once).
  template <typename V>
  static constexpr Ops ops_for = [] {
    if constexpr (fits_inline<V>()) {
      return Ops{
          [](void* dst, void* src) {
            ::new (dst) V(std::move(*static_cast<V*>(src)));
            static_cast<V*>(src)->~V();
          },
          copier<V>(),
          [](void* p) { static_cast<V*>(p)->~V(); },
          []() -> const std::type_info& { return typeid(V); },
      };
    } else {
      return Ops{
          [](void* dst, void* src) { ::new (dst) V*(*static_cast<V**>(src)); },
          copier<V>(),
          [](void* p) { delete *static_cast<V**>(p); },
          []() -> const std::type_info& { return typeid(V); },
      };
    }
  }();

  alignas(std::max_align_t) unsigned char buf_[kInlineBytes];
  const Ops* ops_ = nullptr;
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
