#include <nabla/nabla.hpp>

#include <vector>
int main() {
    auto f = [](const auto& x, auto y) { return x[0] * y; };
    const std::vector<double> x{2.0, 3.0};
#ifdef NABLA_FAIL_CASE
    auto g = nabla::grad(f, x, 5.0);  // a container and a number
#else
    auto h = [&](const auto& v) { return f(v, 5.0); };
    auto g = nabla::grad(h, x);
#endif
    return g[0] == 5.0 ? 0 : 1;
}
