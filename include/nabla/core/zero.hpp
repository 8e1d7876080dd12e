#pragma once
// Whether a number is exactly zero: a plain number equal to 0, or a dual number (of any nesting)
// whose value and tangents all are. The tape's sweep skips statements whose adjoint is exactly
// zero, and strong-zero products on dual numbers drop terms with an exactly-zero factor.

#include "../concepts.hpp"

namespace nabla::detail {

template <class T>
constexpr bool exactly_zero(const T& a) {
    if constexpr (DualLike<T>) {
        if (!exactly_zero(a.value))
            return false;
        for (const auto& t : a.tangent)
            if (!exactly_zero(t))
                return false;
        return true;
    } else {
        return a == T(0);
    }
}

}  // namespace nabla::detail
