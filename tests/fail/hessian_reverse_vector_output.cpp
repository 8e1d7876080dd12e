#include <nabla/nabla.hpp>

#include <array>
#include <type_traits>
#include <vector>
int main() {
#ifdef NABLA_FAIL_CASE
    // Several outputs (here one, in an array): a Hessian is of a scalar function (reverse mode).
    auto f = [](const auto& x) {
        using T = std::decay_t<decltype(x[0])>;
        return std::array<T, 1>{x[0] * x[0] * x[1]};
    };
#else
    auto f = [](const auto& x) { return x[0] * x[0] * x[1]; };
#endif
    auto h = nabla::hessian(f, std::vector{1.0, 2.0});
    return h(0, 0) == 4.0 ? 0 : 1;
}
