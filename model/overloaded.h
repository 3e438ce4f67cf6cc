// `std::visit(Overloaded{[](const A&) {...}, [](const B&) {...}}, v)`: one
// lambda per alternative of a variant, the usual C++17 idiom.
#pragma once

namespace model {

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

}  // namespace model
