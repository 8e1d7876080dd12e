#include <nabla/nabla.hpp>

#include <vector>
int main() {
    auto f = [](const auto& x) { return x[0] * x[1]; };  // one output
    const std::vector<double> x{2.0, 3.0};
    auto [value, pullback] = nabla::vjp(f, x);
#ifdef NABLA_FAIL_CASE
    auto g = pullback(std::vector<double>{1.0});  // a vector cotangent for a number
#else
    auto g = pullback(1.0);
#endif
    return value == 6.0 && g[0] == 3.0 ? 0 : 1;
}
