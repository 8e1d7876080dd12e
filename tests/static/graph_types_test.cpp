// Facts about graph types, checked by the compiler only: this file is compiled, never run.

#include <nabla/nabla.hpp>

#include <type_traits>

namespace {

constexpr auto vars = nabla::variables<2>();
using x_type = std::tuple_element_t<0, decltype(vars)>;
using y_type = std::tuple_element_t<1, decltype(vars)>;
constexpr x_type x{};
constexpr y_type y{};

template <class E>
using graph = nabla::detail::graph_t<std::remove_cvref_t<E>>;

static_assert(nabla::Expression<x_type>);
static_assert(!nabla::Expression<double>);
static_assert(nabla::Number<double> && nabla::Number<int> && !nabla::Number<bool>);
static_assert(std::is_empty_v<decltype(log(x) + x * y - sin(y))>,
              "a pure expression stores nothing");
static_assert(sizeof(x * 2.0) == sizeof(double), "one run-time constant, nothing else");
static_assert(nabla::is_held_v<decltype(x * 2.0 + y * 3.0)>);

// Constants of the same shape get distinct indices, so they never merge.
static_assert(
    !std::is_same_v<
        graph<decltype(x * 2.0 + x * 3.0)>,
        nabla::node<nabla::rules::add_rule, graph<decltype(x * 2.0)>, graph<decltype(x * 2.0)>>>);

// The schedule holds each distinct node once, operands first, root last.
using seed_schedule = nabla::detail::schedule<decltype(log(x) + x * y - sin(y))>;
static_assert(seed_schedule::size == 7);  // x0, log, x1, *, +, sin, -
static_assert(std::is_same_v<nabla::detail::at<seed_schedule::size - 1, seed_schedule>,
                             decltype(log(x) + x * y - sin(y))>);
using shared_schedule = nabla::detail::schedule<decltype(x * y + sin(x * y))>;
static_assert(shared_schedule::size == 5);

// Placeholder facts.
static_assert(nabla::detail::info<graph<decltype(x * y)>>::placeholder_bound == 2);
static_assert(nabla::detail::depends_on<graph<decltype(sin(y))>, 1>);
static_assert(!nabla::detail::depends_on<graph<decltype(sin(y))>, 0>);
static_assert(nabla::detail::info<graph<decltype(x * 2)>>::has_constants);

// Integer exponents pick the integer-power rule.
static_assert(std::is_same_v<graph<decltype(pow(x, 3))>::rule, nabla::rules::powi_rule>);
static_assert(std::is_same_v<graph<decltype(pow(x, 3.0))>::rule, nabla::rules::pow_rule>);
static_assert(std::is_same_v<decltype(pow(x, nabla::literal<1>{})), std::remove_cv_t<x_type>>);

}  // namespace
