#pragma once
// Generic callables over whole arrays, differentiated on the run-time tape: each argument becomes
// a nabla::var_array (array/active.hpp), so each array operation f makes is one tape entry.
//
//   auto lse = [](const auto& x) { using std::log; auto m = amax(x); return log(sum(exp(x - m))) +
//   m; }; auto g = nabla::grad(nabla::mode::arrays, lse, xs);        // xs: std::vector<double>,
//   xtensor auto [v, gx, gy] = nabla::value_and_grad(nabla::mode::arrays, f, xs, ys);
//
// The same lambda runs on xtensor arrays of doubles (amax, sum, exp found there by
// argument-dependent lookup), on static array variables and here.

#include <algorithm>
#include <array>
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "../array/active.hpp"
#include "../array/evaluate.hpp"
#include "../array/matrix.hpp"
#include "../reverse/checkpoint.hpp"
#include "../reverse/detail/lent_tape.hpp"
#include "../reverse/tape.hpp"
#include "grad.hpp"
#include "reverse.hpp"

namespace nabla {

namespace detail {

// A two-dimensional argument (xt::xtensor<double, 2>) becomes a var_matrix; a one-dimensional
// one a var_array.
template <class C>
concept MatrixArgument = requires {
    C::rank;
}
&&C::rank == 2;

// InPlace: the arguments' values are read where they are (the recording ends before the caller
// sees them again), else copied.
template <bool InPlace, class... Args, std::size_t... I>
auto record_arguments(tape<double>& t, std::index_sequence<I...>, const Args&... args) {
    const auto one = [&t](const auto& a, std::size_t k) {
        if constexpr (MatrixArgument<std::remove_cvref_t<decltype(a)>>) {
            if constexpr (InPlace)
                return var_matrix(input_in_place(t, a.data(), a.size()), var_matrix::shape_of(a, 0),
                                  var_matrix::shape_of(a, 1));
            else
                return input_matrix(t, a);
        } else {
            check_array_argument(a, k);
            if constexpr (InPlace)
                return input_in_place(t, first_element(a), static_cast<std::size_t>(a.size()));
            else
                return input_array(t, a);
        }
    };
    return std::tuple{one(args, I)...};
}

template <class C>
using array_input_t = std::conditional_t<MatrixArgument<C>, var_matrix, var_array>;

inline const var_array& elements_of(const var_array& a) {
    return a;
}
inline const var_array& elements_of(const var_matrix& m) {
    return m.elements();
}

// The adjoints of every argument, into gradients shaped like them.
template <class Inputs, class Gradients>
void read_arguments(const tape<double>& t, const Inputs& inputs, Gradients& gradients) {
    [&]<std::size_t... I>(std::index_sequence<I...>) {
        (read_array_adjoints(t, elements_of(std::get<I>(inputs)), std::get<I>(gradients)), ...);
    }
    (std::make_index_sequence<std::tuple_size_v<Inputs>>{});
}

}  // namespace detail

// The value of f at the arrays, with its gradient with respect to each written into the caller's
// arrays (one per argument, of its size, overwritten; they may be the arguments themselves, as
// they are written after the sweep):
//   double v = nabla::value_and_grad_into(nabla::mode::arrays, f, std::tie(gx, gy), xs, ys);
template <class F, class... Gradients, class... Args>
double value_and_grad_into(mode::arrays_t,
                           const F& f,
                           const std::tuple<Gradients&...>& gradients,
                           const Args&... args) {
    static_assert(sizeof...(Args) > 0 && (detail::ArrayArgument<Args> && ...),
                  "nabla::value_and_grad(nabla::mode::arrays, f, arrays...): the arguments are "
                  "arrays of double (std::vector<double>, std::array, std::span<const double>, "
                  "xt::xtensor<double, 1>; xt::xtensor<double, 2> for a matrix), one per "
                  "parameter of f.");
    static_assert(sizeof...(Gradients) == sizeof...(Args),
                  "nabla::value_and_grad_into: one gradient array per argument.");
    static_assert(std::is_invocable_v<const F&, const detail::array_input_t<Args>&...>,
                  "nabla: this function cannot be called with nabla::var_array arguments. Write "
                  "it generically, with auto parameters, and call array functions unqualified: "
                  "[](const auto& x) { using std::exp; return sum(exp(x)); }.");
    [&]<std::size_t... I>(std::index_sequence<I...>) {
        const auto check = [](const auto& g, const auto& a, std::size_t k) {
            if (static_cast<std::size_t>(g.size()) != static_cast<std::size_t>(a.size()))
                throw shape_error("nabla::value_and_grad_into: gradient array " +
                                  std::to_string(k) + " has " + std::to_string(g.size()) +
                                  " elements, its argument " + std::to_string(a.size()));
        };
        (check(std::get<I>(gradients), args, I), ...);
    }
    (std::index_sequence_for<Args...>{});
    detail::lent_tape<double> lent;
    tape<double>& t = lent.get();
    auto recording = t.record();
    const auto inputs =
        detail::record_arguments<true>(t, std::index_sequence_for<Args...>{}, args...);
    const var y = detail::as_active<double>(
        std::apply([&f](const auto&... in) -> decltype(auto) { return f(in...); }, inputs));
    t.gradient(y);
    std::tuple<Gradients&...> out = gradients;
    detail::read_arguments(t, inputs, out);
    return y.value;
}

// The value of f at the arrays and its gradient with respect to each, shaped like it:
// auto [value, gx, gy] = nabla::value_and_grad(nabla::mode::arrays, f, xs, ys).
template <class F, class... Args>
auto value_and_grad(mode::arrays_t, const F& f, const Args&... args) {
    array_value_and_gradient<decltype(detail::gradient_like(args))...> out{
        0.0, std::tuple{detail::gradient_like(args)...}};
    out.value = std::apply(
        [&](auto&... g) { return value_and_grad_into(mode::arrays, f, std::tie(g...), args...); },
        out.gradient);
    return out;
}

namespace detail {

// The pullback of nabla::vjp(nabla::mode::arrays, F, arrays...): it owns the recording, and each
// call seeds F's outputs with w and sweeps it once.
template <class Output, class Inputs, class... Gradients>
class array_pullback {
public:
    array_pullback(std::shared_ptr<tape<double>> t,
                   Inputs inputs,
                   Output output,
                   std::tuple<Gradients...> like)
        : tape_(std::move(t)),
          inputs_(std::move(inputs)),
          output_(std::move(output)),
          like_(std::move(like)) {}

    // w^T J: w is one number where F returns one, else an array of F's length. The gradient with
    // respect to the one array argument, or a tuple of them.
    template <class W>
    auto operator()(const W& w) const {
        tape<double>& t = *tape_;
        t.zero_adjoints();
        if constexpr (std::is_same_v<Output, var>) {
            static_assert(std::is_convertible_v<W, double>,
                          "nabla::vjp: F returns one number, so the cotangent w is one number");
            t.seed(output_, static_cast<double>(w));
        } else {
            static_assert(ArrayArgument<W>,
                          "nabla::vjp: F returns an array, so the cotangent w is an array of its "
                          "length (std::vector<double>, std::span, xtensor)");
            if (static_cast<std::size_t>(w.size()) != output_.size())
                throw shape_error("nabla::vjp: the cotangent w has " + std::to_string(w.size()) +
                                  " elements, F's output " + std::to_string(output_.size()));
            const double* const v = first_element(w);
            for (std::size_t i = 0; i < output_.size(); ++i)
                t.seed(output_[i], v[i]);
        }
        t.sweep();
        std::tuple<Gradients...> g = like_;
        read_arguments(t, inputs_, g);
        if constexpr (sizeof...(Gradients) == 1)
            return std::get<0>(std::move(g));
        else
            return g;
    }

private:
    std::shared_ptr<tape<double>> tape_;
    Inputs inputs_;
    Output output_;
    std::tuple<Gradients...> like_;
};

}  // namespace detail

// F's value at the arrays, and its pullback w -> w^T J, each call one sweep of the recording the
// pullback owns (the rows of the Jacobian are pullback(e_0), pullback(e_1), ...). F returns a
// var_array (the value is a std::vector<double>) or one number.
template <class F, class... Args>
auto vjp(mode::arrays_t, const F& f, const Args&... args) {
    static_assert(sizeof...(Args) > 0 && (detail::ArrayArgument<Args> && ...),
                  "nabla::vjp(nabla::mode::arrays, F, arrays...): the arguments are "
                  "arrays of double (std::vector<double>, std::array, std::span<const double>, "
                  "xt::xtensor<double, 1>; xt::xtensor<double, 2> for a matrix), one per "
                  "parameter of F.");
    auto t = std::make_shared<tape<double>>();
    auto recording = t->record();
    auto inputs = detail::record_arguments<false>(*t, std::index_sequence_for<Args...>{}, args...);
    using Y = std::remove_cvref_t<decltype(std::apply(f, inputs))>;
    using Pullback =
        detail::array_pullback<std::conditional_t<std::is_same_v<Y, var_array>, var_array, var>,
                               decltype(inputs), decltype(detail::gradient_like(args))...>;
    auto like = std::tuple{detail::gradient_like(args)...};
    if constexpr (std::is_same_v<Y, var_array>) {
        var_array y = std::apply([&f](const auto&... in) { return f(in...); }, inputs);
        const std::span<const double> v = y.values();
        return value_and_pullback<std::vector<double>, Pullback>{
            std::vector<double>(v.begin(), v.end()),
            Pullback(std::move(t), std::move(inputs), std::move(y), std::move(like))};
    } else {
        const var y = detail::as_active<double>(
            std::apply([&f](const auto&... in) -> decltype(auto) { return f(in...); }, inputs));
        return value_and_pullback<double, Pullback>{
            y.value, Pullback(std::move(t), std::move(inputs), y, std::move(like))};
    }
}

namespace detail {

// A step of whole arrays, as the checkpointing (reverse/checkpoint.hpp) calls a step of
// containers: on numbers it runs on constant arrays, on active variables on the array of them
// (one entry that hands their adjoints back).
template <class Step>
struct array_step {
    Step step;
    template <class X>
    std::vector<X> operator()(const std::vector<X>& x, const std::vector<X>& p) const {
        const var_array y = step(var_array(x), var_array(p));
        if constexpr (std::is_same_v<X, double>) {
            return std::vector<double>(y.values().begin(), y.values().end());
        } else {
            std::vector<X> out(y.size());
            for (std::size_t i = 0; i < y.size(); ++i)
                out[i] = y[i];
            return out;
        }
    }
};

}  // namespace detail

// Binomial checkpointing (reverse/checkpoint.hpp) of a time loop written over whole arrays:
// step(x, p) takes and returns var_arrays, and each recorded step is one entry per array
// operation.
//   auto [xT, pullback] = nabla::checkpointed_vjp(nabla::mode::arrays, step, x0, p, 1000);
template <class Step>
auto checkpointed_vjp(mode::arrays_t,
                      const Step& step,
                      const std::vector<double>& x0,
                      const std::vector<double>& p,
                      std::size_t steps,
                      std::size_t snapshots = 0) {
    return checkpointed_vjp(detail::array_step<Step>{step}, x0, p, steps, snapshots);
}

namespace detail {

// Argument k as an array (or matrix) of dual numbers D: its values, with tangents set by
// fill(i, d) for element i; independent variables on t, or constants without a tape.
template <class D, class Arg, class Fill>
auto dual_argument(tape<D>* t, const Arg& a, std::size_t k, const Fill& fill) {
    std::size_t rows = 0, cols = 0;
    if constexpr (MatrixArgument<Arg>) {
        rows = var_matrix::shape_of(a, 0);
        cols = var_matrix::shape_of(a, 1);
    } else {
        check_array_argument(a, k);
    }
    const auto n = static_cast<std::size_t>(a.size());
    const double* const x = first_element(a);
    std::shared_ptr<D[]> values = take_buffer<D>(n);
    for (std::size_t i = 0; i < n; ++i) {
        values[i] = D(x[i]);
        fill(i, values[i]);
    }
    basic_var_array<D> elements = t != nullptr
                                      ? input_values<D>(*t, std::move(values), n)
                                      : var_array_access::make<D>(std::move(values), n, 0, 0);
    if constexpr (MatrixArgument<Arg>)
        return basic_var_matrix<D>(std::move(elements), rows, cols);
    else
        return elements;
}

// The arguments as dual arrays whose one tangent is the direction of the same index.
template <class D, class Primals, class Directions>
auto dual_arguments(tape<D>* t, const Primals& primals, const Directions& directions) {
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
        const auto one = [t](const auto& a, const auto& v, std::size_t k) {
            using A = std::remove_cvref_t<decltype(a)>;
            using V = std::remove_cvref_t<decltype(v)>;
            const auto mismatch = [&] {
                throw shape_error("nabla: direction " + std::to_string(k) +
                                  " is not shaped like its array (" + std::to_string(v.size()) +
                                  " elements against " + std::to_string(a.size()) + ")");
            };
            if constexpr (MatrixArgument<A>) {
                if constexpr (!MatrixArgument<V>) {
                    mismatch();
                } else if (var_matrix::shape_of(v, 0) != var_matrix::shape_of(a, 0) ||
                           var_matrix::shape_of(v, 1) != var_matrix::shape_of(a, 1)) {
                    mismatch();
                }
            } else {
                check_array_argument(v, k);
                if (MatrixArgument<V> ||
                    static_cast<std::size_t>(v.size()) != static_cast<std::size_t>(a.size()))
                    mismatch();
            }
            const double* const dv = first_element(v);
            return dual_argument<D>(t, a, k, [dv](std::size_t i, D& d) { d.tangent[0] = dv[i]; });
        };
        return std::tuple{one(std::get<I>(primals), std::get<I>(directions), I)...};
    }
    (std::make_index_sequence<std::tuple_size_v<Primals>>{});
}

template <class D>
const basic_var_array<D>& dual_elements(const basic_var_array<D>& a) {
    return a;
}
template <class D>
const basic_var_array<D>& dual_elements(const basic_var_matrix<D>& m) {
    return m.elements();
}

// f's value and its tangent along the directions, on constant dual arrays D (no tape); whether
// a tangent is NaN.
template <class D, class F, class Primals, class Directions>
auto jvp_on(const F& f, const Primals& primals, const Directions& directions, bool& nan) {
    const auto inputs = dual_arguments<D>(nullptr, primals, directions);
    const auto y =
        std::apply([&f](const auto&... in) -> decltype(auto) { return f(in...); }, inputs);
    using Y = std::remove_cvref_t<decltype(y)>;
    if constexpr (is_var_array_v<Y> || requires { y.elements(); }) {
        const auto values = dual_elements(y).values();
        std::pair<std::vector<double>, std::vector<double>> out{std::vector<double>(values.size()),
                                                                std::vector<double>(values.size())};
        for (std::size_t i = 0; i < values.size(); ++i) {
            out.first[i] = values[i].value;
            out.second[i] = values[i].tangent[0];
            nan = nan || out.second[i] != out.second[i];
        }
        return out;
    } else {
        const D v = as_active<D>(y).value;
        nan = v.tangent[0] != v.tangent[0];
        return std::pair{v.value, v.tangent[0]};
    }
}

template <class... Args>
constexpr void check_array_transformation() {
    static_assert(sizeof...(Args) > 0 && (ArrayArgument<Args> && ...),
                  "nabla (mode::arrays): the arguments are arrays of double (std::vector<double>, "
                  "std::array, std::span<const double>, xt::xtensor<double, 1>; "
                  "xt::xtensor<double, 2> for a matrix), one per parameter of f, and the "
                  "directions arrays of the same shapes.");
}

// H v on the tape of dual numbers D: the tangents of the adjoints; whether one is NaN.
template <class D, class F, class Primals, class Directions, class Out>
bool hvp_on(const F& f, const Primals& primals, const Directions& directions, Out& out) {
    lent_tape<D> lent;
    tape<D>& t = lent.get();
    auto recording = t.record();
    const auto inputs = dual_arguments<D>(&t, primals, directions);
    const active<D> y = as_active<D>(
        std::apply([&f](const auto&... in) -> decltype(auto) { return f(in...); }, inputs));
    t.gradient(y);
    bool nan = false;
    [&]<std::size_t... I>(std::index_sequence<I...>) {
        const auto read = [&](const auto& in, auto& g) {
            const basic_var_array<D>& e = dual_elements(in);
            if (e.empty() || e.is_constant())
                return;
            const std::span<const D> a = t.adjoints_from(e[0], e.size());
            double* const to = g.data();
            for (std::size_t i = 0; i < a.size(); ++i) {
                to[i] = a[i].tangent[0];
                nan = nan || to[i] != to[i];
            }
        };
        (read(std::get<I>(inputs), std::get<I>(out)), ...);
    }
    (std::make_index_sequence<std::tuple_size_v<Primals>>{});
    return nan;
}

}  // namespace detail

// The value of f at the arrays and its directional derivative along the direction arrays (one
// per argument, of its shape), in forward mode: f runs once on arrays of dual numbers, with no
// tape. {value, tangent}: numbers for a scalar f, std::vector<double>s for an array-valued one.
//   auto [v, t] = nabla::jvp(nabla::mode::arrays, f, std::tie(xs, ys), std::tie(vx, vy));
template <class F, class... P, class... V>
auto jvp(mode::arrays_t,
         const F& f,
         const std::tuple<P...>& primals,
         const std::tuple<V...>& directions) {
    static_assert(sizeof...(P) == sizeof...(V),
                  "nabla::jvp(nabla::mode::arrays, f, primals, directions): one direction array "
                  "per argument.");
    detail::check_array_transformation<std::remove_cvref_t<P>..., std::remove_cvref_t<V>...>();
    using D = dual<double, 1>;
    bool nan = false;
    auto out = detail::jvp_on<D>(f, primals, directions, nan);
    if (nan) [[unlikely]] {  // again on strong duals (docs/conventions.md)
        bool again = false;
        out = detail::jvp_on<detail::strong_direction_t<D>>(f, primals, directions, again);
    }
    return out;
}

// H v: the Hessian of the scalar f at the arrays times the direction arrays v (one per argument,
// of its shape), forward over reverse on the tape: one recording on arrays of dual numbers that
// carry v, one sweep; the tangents of the adjoints are H v. One array per argument, shaped like
// it (a tuple of them for several).
//   auto [hx, hy] = nabla::hvp(nabla::mode::arrays, f, std::tie(xs, ys), std::tie(vx, vy));
template <class F, class... P, class... V>
auto hvp(mode::arrays_t,
         const F& f,
         const std::tuple<P...>& primals,
         const std::tuple<V...>& directions) {
    static_assert(sizeof...(P) == sizeof...(V),
                  "nabla::hvp(nabla::mode::arrays, f, primals, directions): one direction array "
                  "per argument.");
    detail::check_array_transformation<std::remove_cvref_t<P>..., std::remove_cvref_t<V>...>();
    using D = dual<double, 1>;
    auto out = std::apply([](const auto&... a) { return std::tuple{detail::gradient_like(a)...}; },
                          primals);
    if (detail::hvp_on<D>(f, primals, directions, out)) [[unlikely]]
        detail::hvp_on<detail::strong_direction_t<D>>(f, primals, directions, out);
    if constexpr (sizeof...(P) == 1)
        return std::get<0>(std::move(out));
    else
        return out;
}

// The gradient alone: the one array argument's, or a tuple of them.
template <class F, class... Args>
auto grad(mode::arrays_t, const F& f, const Args&... args) {
    auto result = value_and_grad(mode::arrays, f, args...);
    if constexpr (sizeof...(Args) == 1)
        return std::get<0>(std::move(result.gradient));
    else
        return std::move(result.gradient);
}

}  // namespace nabla
