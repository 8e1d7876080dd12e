#pragma once
// Custom derivative rules for reverse mode: a function nabla should not (or cannot) differentiate
// through, an external solver, a hand-optimised kernel, a library call, is given its own
// vector-Jacobian product and recorded as one tape entry.
//
//   // x = A^-1 b, adjoint: lambda = A^-T w, db = lambda, dA = -lambda x^T
//   std::vector<nabla::var> x = nabla::custom_vjp(inputs, [n](const std::vector<double>& v) {
//       auto [A, b] = unpack(v);
//       auto lu = factorise(A);
//       std::vector<double> x = lu.solve(b);
//       return std::pair{x, [=](const std::vector<double>& w) {
//           std::vector<double> lambda = lu.solve_transposed(w);
//           return pack(outer(-lambda, x), lambda);              // adjoints of the inputs
//       }};
//   });
//
// The forward function receives the inputs' values and returns the outputs' values together
// with a pullback (a closure that keeps what the adjoint needs: factors, intermediate values). The
// pullback is called once per reverse sweep with the outputs' adjoints w and returns w^T J, one
// adjoint per input. Nothing inside the forward function is recorded, and its cost in the sweep
// is the pullback's.

#include <cstddef>
#include <functional>
#include <type_traits>
#include <utility>
#include <vector>

#include "active.hpp"
#include "detail/access.hpp"
#include "tape.hpp"

namespace nabla {

// Records forward(values of inputs) as one custom operation on the thread's active tape and
// returns its outputs as active variables. Inputs is a range of active<T> (std::vector,
// std::array). Without an active tape (all inputs constants) the outputs are constants.
template <class Inputs, class Forward>
auto custom_vjp(const Inputs& inputs, const Forward& forward) {
    using A = std::remove_cvref_t<decltype(*std::begin(inputs))>;
    static_assert(detail::is_active_v<A>,
                  "nabla::custom_vjp(inputs, forward): inputs is a range of nabla::active<T> "
                  "(nabla::var)");
    using T = typename A::value_type;
    std::vector<T> values;
    std::vector<detail::tape_index> indices;
    tape<T>* on = detail::active_tape<T>;
    for (const A& x : inputs) {
        values.push_back(x.value);
        if (on != nullptr)
            detail::tape_access::check(*on, x.generation(), x.index());
        else if (x.index() != 0)
            detail::throw_no_tape();
        indices.push_back(on != nullptr && x.generation() == on->generation() ? x.index() : 0);
    }
    auto [outputs, pullback] = forward(std::as_const(values));
    using Pullback = decltype(pullback);
    static_assert(std::is_invocable_r_v<std::vector<T>, const Pullback&, const std::vector<T>&>,
                  "nabla::custom_vjp: forward returns {outputs, pullback}, where pullback(w) "
                  "takes the outputs' adjoints as a std::vector and returns the inputs' adjoints "
                  "as a std::vector");
    std::vector<active<T>> result;
    result.reserve(outputs.size());
    bool any_active = false;
    for (detail::tape_index i : indices)
        any_active = any_active || i != 0;
    if (on == nullptr || !any_active || outputs.empty()) {
        for (const T& y : outputs)
            result.push_back(active<T>(y));
        return result;
    }
    const std::size_t first = on->statements();
    for (const T& y : outputs)
        result.push_back(on->input(y));
    detail::tape_access::add_custom(*on, static_cast<detail::tape_index>(first),
                                    static_cast<detail::tape_index>(outputs.size()),
                                    std::move(indices), std::move(pullback));
    return result;
}

}  // namespace nabla
