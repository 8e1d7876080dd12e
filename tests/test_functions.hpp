#pragma once
// Functions the API tests differentiate, written once, generically, as a user would.

#include <cstddef>
#include <type_traits>

namespace nabla_test {

inline const auto seed_function = [](auto x, auto y) {
    using std::log, std::sin;
    return log(x) + x * y - sin(y);
};

// The extended Rosenbrock function of a container of any number type.
inline const auto rosenbrock = [](const auto& x) {
    using T = std::decay_t<decltype(x[0])>;
    T sum = 0;
    for (std::size_t i = 0; i + 1 < x.size(); ++i) {
        const auto a = x[i + 1] - x[i] * x[i];
        const auto b = 1.0 - x[i];
        sum += 100.0 * a * a + b * b;
    }
    return sum;
};

}  // namespace nabla_test
