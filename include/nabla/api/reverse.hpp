#pragma once
// Reverse-mode transformations of ordinary generic callables, on the run-time tape
// (reverse/tape.hpp): value_and_grad and grad for many inputs and one output, vjp (the value and a
// pullback w -> w^T J that sweeps again without recording again), and hvp, the Hessian-vector
// product by forward over reverse (the tape records dual numbers: one recording and one sweep).
//
//   auto g = nabla::grad(nabla::mode::reverse, energy, positions);   // std::vector in and out
//   auto [y, pullback] = nabla::vjp(F, x);  auto row = pullback(w);
//   auto hv = nabla::hvp(energy, positions, direction);
//
// Each thread keeps one tape per nesting depth and value type, so repeated calls record into
// memory that is already there, and a transformation called inside a function that is itself
// being differentiated records on a tape of its own.

#include <cstddef>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "../forward/dual.hpp"
#include "../reverse/active.hpp"
#include "../reverse/detail/lent_tape.hpp"
#include "../reverse/tape.hpp"
#include "forward.hpp"

namespace nabla {

namespace detail {

template <class F, class... Args>
constexpr void check_reverse_generic() {
    static_assert(std::is_invocable_v<const F&, const Args&...>,
                  "nabla: this function cannot be called with nabla's active variables (reverse "
                  "mode). Write it generically, with auto parameters, and call math functions "
                  "unqualified: [](const auto& x) { using std::exp; return exp(x[0]) * x[1]; }.");
}

// What f returned, as an active variable recorded on the tape (a node is recorded as one
// statement; a plain number is a constant). Anything else is not one number: said at compile
// time, rather than converted.
template <class R, class Y>
active<R> as_active(const Y& y) {
    if constexpr (is_active_v<Y>) {
        return y;
    } else if constexpr (ActiveExpression<Y>) {
        return active<R>(y);
    } else {
        static_assert(std::is_arithmetic_v<Y> || std::is_convertible_v<Y, R>,
                      "nabla: f returns one number here (grad, value_and_grad, hessian, hvp, a "
                      "vjp of one output, or each output of a jacobian); for a function with "
                      "several outputs, use nabla::jacobian or nabla::vjp");
        if constexpr (std::is_arithmetic_v<Y> || std::is_convertible_v<Y, R>)
            return active<R>(static_cast<R>(y));
        else
            return active<R>{};
    }
}

// Records x's elements as new inputs of t, in the active container `inputs` of x's shape (all at
// once where both are arrays of the tape's value type).
template <class R, class Container, class Actives>
void record_inputs(tape<R>& t, const Container& x, Actives& inputs) {
    const std::size_t n = x.size();
    if constexpr (std::is_same_v<typename Container::value_type, R> &&
                  requires { x.data(), inputs.data(); }) {
        t.inputs(std::span<const R>(x.data(), n), std::span<active<R>>(inputs.data(), n));
    } else {
        for (std::size_t k = 0; k < n; ++k)
            element(inputs, k) = t.input(static_cast<R>(element(x, k)));
    }
}

// The adjoints of the active container `inputs`, in g (of the same shape).
template <class R, class Actives, class Container>
void read_adjoints(const tape<R>& t, const Actives& inputs, Container& g) {
    using T = typename Container::value_type;
    const std::size_t n = inputs.size();
    if constexpr (std::is_same_v<T, R> && requires { g.data(), inputs.data(); }) {
        t.adjoints(std::span<const active<R>>(inputs.data(), n), std::span<R>(g.data(), n));
    } else {
        for (std::size_t k = 0; k < n; ++k)
            element(g, k) = static_cast<T>(t.adjoint(element(inputs, k)));
    }
}

// The adjoints of the active container `inputs` in a new container of x's type and shape. A
// vector of the tape's numbers is copied from the tape's adjoints in one pass (the inputs are
// recorded one after another); made at x's size and then filled, it would be zeroed first, a
// pass over the gradient for nothing.
template <class R, class Actives, class Container>
Container gradient_like(const tape<R>& t, const Actives& inputs, const Container& x) {
    if constexpr (std::is_same_v<Container, std::vector<R>>) {
        if (inputs.empty())
            return Container();
        const std::span<const R> g = t.adjoints_from(inputs[0], inputs.size());
        return Container(g.begin(), g.end());
    } else {
        Container g = x;
        read_adjoints(t, inputs, g);
        return g;
    }
}

// f called on the active inputs, as a function of its own: the function being recorded is
// compiled alone, as it would be in a file of its own, whatever surrounds the transformation.
// (Inlined into the transformation, clang++'s code for the recording depends on the code around
// it, and it recorded Lennard-Jones more slowly; g++ takes the same time either way.)
template <class F, class... Inputs>
[[gnu::noinline]] decltype(auto) record_call(const F& f, const Inputs&... inputs) {
    return f(inputs...);
}

template <class F, class... Args>
auto reverse_value_and_grad(const F& f, const Args&... args) {
    using R = promoted<std::common_type_t<Args...>>;
    constexpr std::size_t n = sizeof...(Args);
    check_reverse_generic<F, decltype((void)args, active<R>{})...>();
    value_and_gradient<R, n> result{};
    if constexpr (std::is_invocable_v<const F&, decltype((void)args, active<R>{})...>) {
        lent_tape<R> lent;
        tape<R>& t = lent.get();
        auto recording = t.record();
        const std::array<active<R>, n> inputs{t.input(static_cast<R>(args))...};
        const active<R> y = as_active<R>(std::apply(
            [&f](const auto&... in) -> decltype(auto) { return record_call(f, in...); }, inputs));
        t.gradient(y);
        result.value = y.value;
        for (std::size_t i = 0; i < n; ++i)
            result.gradient[i] = t.adjoint(inputs[i]);
    }
    return result;
}

template <class F, class Container>
auto reverse_value_and_grad_container(const F& f, const Container& x) {
    using T = typename Container::value_type;
    using R = promoted<T>;
    using active_container = rebind<Container, active<R>>;
    check_reverse_generic<F, active_container>();
    if constexpr (std::is_invocable_v<const F&, const active_container&>) {
        lent_tape<R> lent;
        tape<R>& t = lent.get();
        auto recording = t.record();
        const auto differentiate = [&](active_container& inputs) {
            record_inputs(t, x, inputs);
            const active<R> y = as_active<R>(record_call(f, std::as_const(inputs)));
            t.gradient(y);
            return value_with_gradient<R, Container>{y.value, gradient_like(t, inputs, x)};
        };
        if constexpr (std::is_same_v<active_container, std::vector<active<R>>>) {
            return differentiate(lent.inputs(x.size()));
        } else {
            active_container inputs = container_traits<Container>::template make_like<active<R>>(x);
            return differentiate(inputs);
        }
    } else {
        return value_with_gradient<R, Container>{R{}, x};  // (check_reverse_generic has failed)
    }
}

}  // namespace detail

// The value of F at x and its pullback: pullback(w) is w^T J, the vector-Jacobian product, in x's
// container type. F maps a container of numbers to a container of numbers (std::vector,
// std::array, xtensor) or to one number (then w is a number). The recording is kept (in memory
// the pullback owns), so each call to pullback is one reverse sweep, without recording again:
// the rows of the Jacobian are pullback(e_0), pullback(e_1), ...
template <class R, class Container, class Outputs>
class pullback {
public:
    using input_type = Container;

    template <class W>
    Container operator()(const W& w) const {
        tape<R>& t = *tape_;
        t.zero_adjoints();
        if constexpr (detail::is_active_v<Outputs>) {
            static_assert(std::is_convertible_v<W, R>,
                          "nabla::vjp: F returns one number, so the cotangent w is one number");
            t.seed(outputs_, static_cast<R>(w));
        } else {
            if (w.size() != outputs_.size())
                throw std::invalid_argument("nabla::vjp: the cotangent w has " +
                                            std::to_string(w.size()) + " entries, F has " +
                                            std::to_string(outputs_.size()) + " outputs");
            for (std::size_t i = 0; i < outputs_.size(); ++i)
                t.seed(detail::element(outputs_, i), static_cast<R>(detail::element(w, i)));
        }
        t.sweep();
        Container g = like_;
        detail::read_adjoints(t, inputs_, g);
        return g;
    }

    pullback(std::shared_ptr<tape<R>> t,
             Container like,
             detail::rebind<Container, active<R>> inputs,
             Outputs outputs)
        : tape_(std::move(t)),
          like_(std::move(like)),
          inputs_(std::move(inputs)),
          outputs_(std::move(outputs)) {}

private:
    std::shared_ptr<tape<R>> tape_;
    Container like_;
    detail::rebind<Container, active<R>> inputs_;
    Outputs outputs_;
};

template <class Value, class Pullback>
struct value_and_pullback {
    Value value;
    Pullback pullback;
};

template <class F, class Container>
requires(!detail::recorded_arguments<Container>) auto vjp(const F& f, const Container& x) {
    static_assert(detail::NumberContainer<Container>,
                  "nabla::vjp(F, x): x is a container of numbers (std::vector, std::array, "
                  "xtensor)");
    using T = typename Container::value_type;
    using R = detail::promoted<T>;
    using active_container = detail::rebind<Container, active<R>>;
    detail::check_reverse_generic<F, active_container>();
    auto t = detail::kept_tape<R>();
    active_container inputs = detail::container_traits<Container>::template make_like<active<R>>(x);
    auto recording = t->record();
    detail::record_inputs(*t, x, inputs);
    using Y = std::remove_cvref_t<decltype(f(std::as_const(inputs)))>;
    if constexpr (detail::container_traits<Y>::supported) {
        // A container of active variables (or of expressions: each is recorded).
        const Y y = detail::record_call(f, std::as_const(inputs));
        using Outputs = detail::rebind<Y, active<R>>;
        Outputs outputs = detail::container_traits<Y>::template make_like<active<R>>(y);
        auto value = detail::container_traits<Y>::template make_like<R>(y);
        for (std::size_t i = 0; i < y.size(); ++i) {
            detail::element(outputs, i) = detail::as_active<R>(detail::element(y, i));
            detail::element(value, i) = detail::element(outputs, i).value;
        }
        return value_and_pullback<decltype(value), pullback<R, Container, Outputs>>{
            value, pullback<R, Container, Outputs>(t, x, std::move(inputs), std::move(outputs))};
    } else {
        const active<R> y = detail::as_active<R>(detail::record_call(f, std::as_const(inputs)));
        return value_and_pullback<R, pullback<R, Container, active<R>>>{
            y.value, pullback<R, Container, active<R>>(t, x, std::move(inputs), y)};
    }
}

namespace detail {

// Columns first .. first + W - 1 of the Hessian of f at x by forward over reverse on the tape t:
// the inputs carry dual values D whose tangents are W unit directions, and after one sweep the
// tangents of the inputs' adjoints are those W columns of H. set(i, j, value) receives every entry;
// whether one is NaN.
template <class D, std::size_t W, class F, class Container, class Set>
bool reverse_hessian_columns(const F& f, const Container& x, std::size_t first, Set& set) {
    using R = promoted<typename Container::value_type>;
    using active_container = rebind<Container, active<D>>;
    lent_tape<D> lent;
    tape<D>& t = lent.get();
    const std::size_t n = x.size();
    active_container inputs = container_traits<Container>::template make_like<active<D>>(x);
    auto recording = t.record();
    for (std::size_t k = 0; k < n; ++k) {
        D value(static_cast<R>(element(x, k)));
        if (k >= first && k < first + W)
            value.tangent[k - first] = R(1);
        element(inputs, k) = t.input(value);
    }
    const active<D> y = as_active<D>(record_call(f, std::as_const(inputs)));
    t.gradient(y);
    bool nan = false;
    for (std::size_t i = 0; i < n; ++i) {
        const D a = t.adjoint(element(inputs, i));
        for (std::size_t c = 0; c < W && first + c < n; ++c) {
            set(i, first + c, a.tangent[c]);
            nan = nan || is_nan(a.tangent[c]);
        }
    }
    return nan;
}

// The Hessian of f at x by forward over reverse, W columns per recording; columns with a NaN
// again on strong duals, a column per recording (docs/conventions.md).
template <std::size_t W, class F, class Container, class Set>
void reverse_hessian(const F& f, const Container& x, Set set) {
    using R = promoted<typename Container::value_type>;
    using D = dual<R, W>;
    using active_container = rebind<Container, active<D>>;
    check_reverse_generic<F, active_container>();
    if constexpr (std::is_invocable_v<const F&, const active_container&>) {
        for (std::size_t first = 0; first < x.size(); first += W)
            if (reverse_hessian_columns<D, W>(f, x, first, set)) [[unlikely]]
                for (std::size_t c = first; c < std::min(x.size(), first + W); ++c)
                    reverse_hessian_columns<strong_direction_t<D>, 1>(f, x, c, set);
    }
}

// H v on dual numbers D (one tangent), into hv; whether an entry is NaN.
template <class D, class F, class Container, class Direction>
bool hvp_on(const F& f, const Container& x, const Direction& v, Container& hv) {
    using T = typename Container::value_type;
    using R = promoted<T>;
    using active_container = rebind<Container, active<D>>;
    lent_tape<D> lent;
    tape<D>& t = lent.get();
    auto recording = t.record();
    active_container inputs = container_traits<Container>::template make_like<active<D>>(x);
    for (std::size_t k = 0; k < x.size(); ++k)
        element(inputs, k) =
            t.input(D(static_cast<R>(element(x, k)), {static_cast<R>(element(v, k))}));
    const active<D> y = as_active<D>(record_call(f, std::as_const(inputs)));
    t.gradient(y);
    bool nan = false;
    for (std::size_t k = 0; k < x.size(); ++k) {
        element(hv, k) = static_cast<T>(t.adjoint(element(inputs, k)).tangent[0]);
        nan = nan || is_nan(element(hv, k));
    }
    return nan;
}

}  // namespace detail

// The Hessian-vector product H v of a scalar function of a container at x, forward over reverse:
// one recording on dual numbers that carry the direction v, one sweep; the tangents of the
// adjoints are H v. Costs a small constant times one gradient, whatever the number of inputs.
template <class F, class Container, class Direction>
Container hvp(const F& f, const Container& x, const Direction& v) {
    static_assert(detail::NumberContainer<Container>,
                  "nabla::hvp(f, x, v): x is a container of numbers (std::vector, std::array, "
                  "xtensor)");
    using T = typename Container::value_type;
    using R = detail::promoted<T>;
    using D = dual<R, 1>;
    using active_container = detail::rebind<Container, active<D>>;
    detail::check_reverse_generic<F, active_container>();
    if (v.size() != x.size())
        throw std::invalid_argument("nabla::hvp(f, x, v): v has " + std::to_string(v.size()) +
                                    " entries, x has " + std::to_string(x.size()));
    Container hv = x;
    if constexpr (std::is_invocable_v<const F&, const active_container&>) {
        if (detail::hvp_on<D>(f, x, v, hv)) [[unlikely]]  // a NaN: again on strong duals
            detail::hvp_on<detail::strong_direction_t<D, R>>(f, x, v, hv);
    }
    return hv;
}

}  // namespace nabla
