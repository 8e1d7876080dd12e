#include <nabla/nabla.hpp>

#include <array>
int main() {
    const auto f = [](const auto& v) {
        using T = std::remove_cvref_t<decltype(v[0])>;
#ifdef NABLA_FAIL_CASE
        return std::array<T, 2>{v[0] * v[1], v[0]};  // two outputs: a Jacobian, not a gradient
#else
        return T(v[0] * v[1]);
#endif
    };
    const auto g = nabla::grad(f, std::array<double, 2>{1.0, 2.0});
    return g[0] == 2.0 ? 0 : 1;
}
