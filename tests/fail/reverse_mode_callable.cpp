#include <nabla/nabla.hpp>

#include <vector>
int main() {
    const std::vector<double> x{2.0, 3.0};
#ifdef NABLA_FAIL_CASE
    auto f = [](const std::vector<double>& v) { return v[0] * v[1]; };  // not generic
#else
    auto f = [](const auto& v) { return v[0] * v[1]; };
#endif
    auto g = nabla::grad(nabla::mode::reverse, f, x);
    return g[0] == 3.0 ? 0 : 1;
}
