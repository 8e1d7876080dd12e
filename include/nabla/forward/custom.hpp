#pragma once
// Custom derivative rules for forward mode: a function nabla should not differentiate through is
// given its own Jacobian-vector product and applied to dual numbers as one operation.
//
//   // x = A^-1 b; tangent: dx = A^-1 (db - dA x)
//   std::vector<D> x = nabla::custom_jvp(A_then_b, [n](const std::vector<double>& v) {
//       ... x = solve(A, b) ...
//       return std::pair{x, [=](const std::vector<double>& dv) {  // dv: tangents of A, then b
//           ... return solve(A, db - dA x);
//       }};
//   });
//
// The forward function receives the inputs' values and returns the outputs' values and a
// pushforward, called once per tangent direction of the dual numbers with the inputs' tangents in
// that direction; it returns the outputs' tangents. The reverse-mode counterpart is
// nabla::custom_vjp (reverse/custom.hpp).

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "dual.hpp"

namespace nabla {

template <class Inputs, class Forward>
auto custom_jvp(const Inputs& inputs, const Forward& forward) {
    using D = std::remove_cvref_t<decltype(*std::begin(inputs))>;
    static_assert(is_dual_v<D>,
                  "nabla::custom_jvp(inputs, forward): inputs is a range of nabla::dual<T, N>");
    using T = typename D::value_type;
    std::vector<T> values;
    std::size_t directions = 0;
    for (const D& x : inputs) {
        values.push_back(x.value);
        directions = std::max(directions, detail::directions(x));
    }
    auto [outputs, pushforward] = forward(std::as_const(values));
    using Pushforward = decltype(pushforward);
    static_assert(std::is_invocable_r_v<std::vector<T>, const Pushforward&, const std::vector<T>&>,
                  "nabla::custom_jvp: forward returns {outputs, pushforward}, where "
                  "pushforward(v) takes the inputs' tangents in one direction as a std::vector "
                  "and returns the outputs' tangents as a std::vector");
    std::vector<D> result(outputs.size());
    for (std::size_t j = 0; j < outputs.size(); ++j) {
        result[j].value = outputs[j];
        detail::make_room(result[j], directions);
    }
    std::vector<T> v(values.size());
    for (std::size_t k = 0; k < directions; ++k) {
        std::size_t i = 0;
        for (const D& x : inputs)
            v[i++] = detail::tangent_at(x, k);
        const std::vector<T> jv = pushforward(std::as_const(v));
        if (jv.size() != outputs.size())
            throw std::invalid_argument("nabla::custom_jvp: the pushforward returned " +
                                        std::to_string(jv.size()) + " tangents for " +
                                        std::to_string(outputs.size()) + " outputs");
        for (std::size_t j = 0; j < outputs.size(); ++j)
            result[j].tangent[k] = jv[j];
    }
    return result;
}

}  // namespace nabla
