#pragma once
// nabla::jacobian: the matrix of first derivatives of a vector function F: R^n -> R^m. F takes a
// container of numbers (std::array, std::vector, xtensor) and returns one (of the same number
// type). The result is an xt::xtensor<R, 2> of shape (m, n), J(i, j) = dF_i / dx_j.
//
//   nabla::jacobian(F, x)                 // forward mode: forward_chunk columns per evaluation
//   nabla::jacobian(nabla::mode::reverse, F, x)   // one recording, then one sweep per row
//   auto [y, J] = nabla::value_and_jacobian(F, x)  // F(x) as well, from the same evaluations
//
// Forward mode costs about n / forward_chunk evaluations on dual numbers, reverse mode one
// recording and m sweeps: reverse for few outputs and many inputs, forward otherwise. (The default
// is forward: m is known only once F has been called.)

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "../forward/dual.hpp"
#include "../reverse/active.hpp"
#include "../tensor/matrix.hpp"
#include "forward.hpp"
#include "grad.hpp"
#include "reverse.hpp"

namespace nabla {

// F(x) as plain numbers (F's container type rebound to the input's number type) and its Jacobian.
template <class Value, class Jacobian>
struct value_with_jacobian {
    Value value;
    Jacobian jacobian;
};

namespace detail {

// The plain values of F's outputs y, into value (made like y where its size is not y's).
template <class Outputs, class Value>
void values_into(const Outputs& y, Value& value) {
    using R = std::remove_cvref_t<decltype(element(value, 0))>;
    if (size_of(value) != size_of(y))
        value = container_traits<Outputs>::template make_like<R>(y);
    for (std::size_t i = 0; i < size_of(y); ++i) {
        if constexpr (is_dual_v<std::remove_cvref_t<decltype(element(y, i))>>)
            element(value, i) = element(y, i).value;
        else
            element(value, i) = static_cast<R>(element(y, i));
    }
}
template <class R, class Outputs>
using values_type =
    decltype(container_traits<Outputs>::template make_like<R>(std::declval<const Outputs&>()));

// Columns start .. stop - 1 of the Jacobian from the outputs y of one pass; whether an entry is
// NaN. Outputs that are plain numbers (F returned constants) have zero rows, written as such.
template <class Outputs, class J>
bool write_columns(const Outputs& y, std::size_t start, std::size_t stop, J& j) {
    using R = typename J::value_type;
    using Y = std::remove_cvref_t<decltype(element(y, 0))>;
    bool nan = false;
    for (std::size_t i = 0; i < size_of(y); ++i)
        for (std::size_t k = start; k < stop; ++k) {
            if constexpr (is_dual_v<Y>) {
                j(i, k) = element(y, i).tangent[k - start];
            } else {
                static_assert(std::is_arithmetic_v<Y>,
                              "nabla::jacobian(F, x): F returns a container of numbers");
                j(i, k) = R(0);
            }
            nan |= is_nan(j(i, k));  // no branch per entry
        }
    return nan;
}

// The same columns again on strong duals (a NaN in the plain ones), a column per evaluation: off
// the fast path.
template <class R, class D, class F, class Container, class J>
[[gnu::noinline]] void
strong_columns(const F& f, const Container& x, std::size_t start, std::size_t stop, J& j) {
    using S = strong_direction_t<D, R>;
    for (std::size_t k = start; k < stop; ++k)
        write_columns(f(seeded_chunk<R, S>(x, k, k + 1)), k, k + 1, j);
}

// The outputs of F on the dual numbers D of a container like x.
template <class D, class F, class Container>
using outputs_on = std::remove_cvref_t<decltype(std::declval<const F&>()(
    std::declval<const rebind<Container, D>&>()))>;

// The Jacobian's type for F at x: a fixed-size matrix where the sizes of x and of F's result are
// known at compile time (no allocation), else an xtensor matrix.
template <class D, class F, class Container>
struct jacobian_of {
    using R = promoted<typename Container::value_type>;
    static constexpr std::size_t inputs = container_traits<Container>::static_size;
    static constexpr std::size_t outputs =
        container_traits<outputs_on<D, F, Container>>::static_size;
    using type = std::
        conditional_t<fixed_result<outputs, inputs>, fixed_matrix<R, outputs, inputs>, matrix<R>>;
};
template <class D, class F, class Container>
using jacobian_type = typename jacobian_of<D, F, Container>::type;

// Whether a transformation returns its matrix M as it is for inputs of type Container (not as
// an Eigen matrix, say), so that it is returned without a copy.
template <class Container, class M>
inline constexpr bool matrix_as_is =
    std::is_same_v<decltype(matrix_for<Container>(std::declval<M&>())), M>;

// The Jacobian of F at x into j on dual numbers D, D::size columns per evaluation, and F(x) into
// *value unless value is nullptr.
template <class D, class F, class Container, class J, class ValuePointer>
void forward_jacobian_into(const F& f, const Container& x, J& j, ValuePointer value) {
    using R = promoted<typename Container::value_type>;
    constexpr std::size_t width = D::size;
    const std::size_t n = size_of(x);
    if constexpr (std::is_same_v<Container, std::array<typename Container::value_type, width>>) {
        // One pass, each input built seeded whole: seeding the directions one by one into
        // inputs made as constants had f's loads of them wait for those stores to drain.
        std::array<D, width> active;
        for (std::size_t k = 0; k < width; ++k)
            active[k] = D(static_cast<R>(x[k]), units<R, width>[k]);
        const auto y = f(std::as_const(active));
        if constexpr (!std::is_null_pointer_v<ValuePointer>)
            values_into(y, *value);
        if constexpr (std::is_same_v<J, matrix<R>>)
            j = zero_matrix<R>(size_of(y), n);
        if (write_columns(y, 0, width, j)) [[unlikely]]  // again on strong duals
            strong_columns<R, D>(f, x, 0, width, j);
    } else {
        auto active = container_traits<Container>::template make_like<D>(x);
        for (std::size_t k = 0; k < n; ++k)
            element(active, k) = D(static_cast<R>(element(x, k)));
        for (std::size_t start = 0; start == 0 || start < n; start += width) {
            const std::size_t stop = std::min(n, start + width);
            for (std::size_t k = start; k < stop; ++k)
                seed(element(active, k), k - start);
            const auto y = f(std::as_const(active));
            if (start == 0) {
                if constexpr (!std::is_null_pointer_v<ValuePointer>)
                    values_into(y, *value);
                if constexpr (std::is_same_v<J, matrix<R>>)
                    j = zero_matrix<R>(size_of(y), n);
            }
            if (write_columns(y, start, stop, j)) [[unlikely]]  // again on strong duals
                strong_columns<R, D>(f, x, start, stop, j);
            for (std::size_t k = start; k < stop; ++k)
                unseed(element(active, k), k - start);
            if (n == 0)
                break;
        }
    }
}

template <class D, class Value, class F, class Container>
auto forward_value_and_jacobian(const F& f, const Container& x) {
    using J = jacobian_type<D, F, Container>;
    value_with_jacobian<Value, J> result;  // a fixed-size matrix is not zeroed: all is written
    if constexpr (std::is_same_v<J, matrix<promoted<typename Container::value_type>>>)
        result.jacobian = J(typename J::shape_type{0, size_of(x)});
    forward_jacobian_into<D>(f, x, result.jacobian, &result.value);
    return result;
}

template <class D, class F, class Container>
auto forward_jacobian(const F& f, const Container& x) {
    using J = jacobian_type<D, F, Container>;
    J j;  // a fixed-size matrix is not zeroed: every entry is written
    if constexpr (std::is_same_v<J, matrix<promoted<typename Container::value_type>>>)
        j = J(typename J::shape_type{0, size_of(x)});
    forward_jacobian_into<D>(f, x, j, nullptr);
    return j;
}

}  // namespace detail

// F(x), as plain numbers in a container like F's, and its Jacobian, in forward mode from the same
// evaluations.
template <class F, class Container>
auto value_and_jacobian(mode::forward_t, const F& f, const Container& x) {
    static_assert(detail::NumberContainer<Container>,
                  "nabla::jacobian(F, x): x is a container of numbers (std::vector, std::array, "
                  "xtensor).");
    using R = detail::promoted<typename Container::value_type>;
    // All columns in one pass for a std::array of up to 16 numbers, as grad does.
    using D = dual<R, detail::chunk_width<Container>()>;
    using active_container = detail::rebind<Container, D>;
    detail::check_generic<F, active_container>();
    if constexpr (std::is_invocable_v<const F&, const active_container&>) {
        using Y = detail::outputs_on<D, F, Container>;
        static_assert(detail::container_traits<Y>::supported,
                      "nabla::jacobian(F, x): F returns a container of numbers (std::vector, "
                      "std::array, xtensor); for one number, use nabla::grad.");
        if constexpr (detail::container_traits<Y>::supported) {
            using Value = detail::values_type<R, Y>;
            if constexpr (detail::matrix_as_is<Container, detail::jacobian_type<D, F, Container>>) {
                return detail::forward_value_and_jacobian<D, Value>(f, x);
            } else {
                auto [value, j] = detail::forward_value_and_jacobian<D, Value>(f, x);
                return value_with_jacobian<Value, decltype(detail::matrix_for<Container>(j))>{
                    std::move(value), detail::matrix_for<Container>(j)};
            }
        } else {
            return value_with_jacobian<R, matrix<R>>{R{},
                                                     detail::zero_matrix<R>(0, detail::size_of(x))};
        }
    } else {
        // (check_generic has failed)
        return value_with_jacobian<R, matrix<R>>{R{},
                                                 detail::zero_matrix<R>(0, detail::size_of(x))};
    }
}

template <class F, class Container>
auto jacobian(mode::forward_t, const F& f, const Container& x) {
    static_assert(detail::NumberContainer<Container>,
                  "nabla::jacobian(F, x): x is a container of numbers (std::vector, std::array, "
                  "xtensor).");
    using R = detail::promoted<typename Container::value_type>;
    using D = dual<R, detail::chunk_width<Container>()>;
    using active_container = detail::rebind<Container, D>;
    detail::check_generic<F, active_container>();
    if constexpr (std::is_invocable_v<const F&, const active_container&>) {
        using Y = detail::outputs_on<D, F, Container>;
        static_assert(detail::container_traits<Y>::supported,
                      "nabla::jacobian(F, x): F returns a container of numbers (std::vector, "
                      "std::array, xtensor); for one number, use nabla::grad.");
        if constexpr (!detail::container_traits<Y>::supported)
            return detail::matrix_for<Container>(detail::zero_matrix<R>(0, detail::size_of(x)));
        else if constexpr (detail::matrix_as_is<Container, detail::jacobian_type<D, F, Container>>)
            return detail::forward_jacobian<D>(f, x);
        else
            return detail::matrix_for<Container>(detail::forward_jacobian<D>(f, x));
    } else {
        // (check_generic has failed)
        return detail::matrix_for<Container>(detail::zero_matrix<R>(0, detail::size_of(x)));
    }
}

// Reverse mode: row i is the vector-Jacobian product with e_i, one sweep of one recording each.
template <class F, class Container>
auto value_and_jacobian(mode::reverse_t, const F& f, const Container& x) {
    static_assert(detail::NumberContainer<Container>,
                  "nabla::jacobian(mode::reverse, F, x): x is a container of numbers "
                  "(std::vector, std::array, xtensor).");
    if constexpr (detail::recorded_arguments<Container>) {
        // Inside a reverse derivative: forward mode, which the enclosing tape records.
        return value_and_jacobian(mode::forward, f, x);
    } else {
        using R = detail::promoted<typename Container::value_type>;
        using active_container = detail::rebind<Container, active<R>>;
        detail::check_reverse_generic<F, active_container>();
        const std::size_t n = detail::size_of(x);
        const auto wrap = [](auto value, auto j) {
            return value_with_jacobian<decltype(value), decltype(detail::matrix_for<Container>(j))>{
                std::move(value), detail::matrix_for<Container>(std::move(j))};
        };
        if constexpr (std::is_invocable_v<const F&, const active_container&>) {
            using Y = std::remove_cvref_t<decltype(f(std::declval<const active_container&>()))>;
            static_assert(detail::container_traits<Y>::supported,
                          "nabla::jacobian(mode::reverse, F, x): F returns a container of numbers "
                          "(std::vector, std::array, xtensor); for one number, use nabla::grad.");
            constexpr std::size_t inputs = detail::container_traits<Container>::static_size;
            constexpr std::size_t outputs = detail::container_traits<Y>::static_size;
            // Fixed-size where both sizes are known at compile time, as in forward mode.
            auto j = [&] {
                if constexpr (detail::fixed_result<outputs, inputs>)
                    return detail::zero_fixed_matrix<R, outputs, inputs>();
                else
                    return detail::zero_matrix<R>(0, n);
            }();
            if constexpr (detail::container_traits<Y>::supported) {
                // One recording on the thread's tape for R (its memory kept across calls), one
                // sweep per output.
                detail::lent_tape<R> lent;
                tape<R>& t = lent.get();
                auto recording = t.record();
                const auto differentiate = [&](active_container& in) {
                    detail::record_inputs(t, x, in);
                    const Y y = detail::record_call(f, std::as_const(in));
                    auto value = detail::container_traits<Y>::template make_like<R>(y);
                    const std::size_t m = detail::size_of(y);
                    if constexpr (!detail::fixed_result<outputs, inputs>)
                        j = detail::zero_matrix<R>(m, n);
                    for (std::size_t i = 0; i < m; ++i) {
                        const active<R> out = detail::as_active<R>(detail::element(y, i));
                        detail::element(value, i) = out.value;
                        // A constant output's row is zeros; it is swept only where the tape
                        // holds entries whose sweeps communicate (MPI: every rank sweeps as
                        // often as the others, whatever its outputs).
                        if (!out.is_active() && !t.holds_custom_entries())
                            continue;
                        t.gradient(out);
                        for (std::size_t k = 0; k < n; ++k)
                            j(i, k) = t.adjoint(detail::element(in, k));
                    }
                    return value;
                };
                if constexpr (std::is_same_v<active_container, std::vector<active<R>>>) {
                    auto value = differentiate(lent.inputs(n));
                    return wrap(std::move(value), std::move(j));
                } else {
                    active_container in =
                        detail::container_traits<Container>::template make_like<active<R>>(x);
                    auto value = differentiate(in);
                    return wrap(std::move(value), std::move(j));
                }
            } else {
                return wrap(R{}, std::move(j));
            }
        } else {
            // (check_reverse_generic has failed)
            return wrap(R{}, detail::zero_matrix<R>(0, n));
        }
    }
}

template <class F, class Container>
auto jacobian(mode::reverse_t, const F& f, const Container& x) {
    return value_and_jacobian(mode::reverse, f, x).jacobian;
}

// The pullback of a vjp taken at the active variables of an enclosing reverse derivative: the
// Jacobian computed in forward mode (which the enclosing tape records), each pullback(w) the
// product w^T J.
template <class R, class Container, bool Scalar>
class forward_pullback {
public:
    using input_type = Container;

    template <class W>
    Container operator()(const W& w) const {
        Container g = like_;
        const std::size_t n = g.size();
        if constexpr (Scalar) {
            static_assert(std::is_convertible_v<W, R>,
                          "nabla::vjp: F returns one number, so the cotangent w is one number");
            for (std::size_t k = 0; k < n; ++k)
                detail::element(g, k) = detail::element(gradient_, k) * static_cast<R>(w);
        } else {
            const std::size_t m = jacobian_.shape()[0];
            if (w.size() != m)
                throw std::invalid_argument("nabla::vjp: the cotangent w has " +
                                            std::to_string(w.size()) + " entries, F has " +
                                            std::to_string(m) + " outputs");
            for (std::size_t k = 0; k < n; ++k) {
                R sum(0);
                for (std::size_t i = 0; i < m; ++i)
                    sum = sum + static_cast<R>(detail::element(w, i)) * jacobian_(i, k);
                detail::element(g, k) = sum;
            }
        }
        return g;
    }

    forward_pullback(Container like, Container gradient, matrix<R> jacobian)
        : like_(std::move(like)),
          gradient_(std::move(gradient)),
          jacobian_(std::move(jacobian)) {}

private:
    Container like_;
    Container gradient_;
    matrix<R> jacobian_;
};

// vjp at the active variables of an enclosing reverse derivative: forward mode (above).
template <class F, class Container>
requires detail::recorded_arguments<Container>
auto vjp(const F& f, const Container& x) {
    using R = detail::promoted<typename Container::value_type>;
    using Y = std::remove_cvref_t<decltype(f(x))>;
    if constexpr (detail::container_traits<Y>::supported) {
        auto value = f(x);
        using P = forward_pullback<R, Container, false>;
        return value_and_pullback<decltype(value), P>{
            value, P(x, x, matrix<R>(detail::forward_jacobian<dual<R, forward_chunk>>(f, x)))};
    } else {
        auto [value, gradient] = value_and_grad(mode::forward, f, x);
        using P = forward_pullback<R, Container, true>;
        return value_and_pullback<R, P>{value,
                                        P(x, std::move(gradient), detail::zero_matrix<R>(0, 0))};
    }
}

// Forward mode (above) unless a mode is given.
template <class F, class Container>
auto jacobian(const F& f, const Container& x) {
    return jacobian(mode::forward, f, x);
}
template <class F, class Container>
auto value_and_jacobian(const F& f, const Container& x) {
    return value_and_jacobian(mode::forward, f, x);
}

}  // namespace nabla
