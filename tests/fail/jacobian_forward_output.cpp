#include <nabla/nabla.hpp>
#include <nabla/tensor.hpp>

#include <vector>
int main() {
    using V = std::vector<double>;
#ifdef NABLA_FAIL_CASE
    // One output: that is a gradient (forward mode).
    auto F = [](const auto& x) {
        using T = std::decay_t<decltype(x[0])>;
        return T(x[0] * x[1]);
    };
#else
    auto F = [](const auto& x) {
        using T = std::decay_t<decltype(x[0])>;
        return std::vector<T>{x[0] * x[1], x[0] + x[1]};
    };
#endif
    auto J = nabla::jacobian(F, V{2.0, 3.0});
    return J(0, 0) == 3.0 ? 0 : 1;
}
