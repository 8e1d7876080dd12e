#include <nabla/array.hpp>

#include <vector>
int main() {
    auto [x] = nabla::array_variables<1>();
    const std::vector<double> xs{1.0, 2.0, 3.0};
#ifdef NABLA_FAIL_CASE
    const auto g = nabla::apply_vjp(sum(x * x), xs, xs);  // a scalar: use grad
#else
    const auto g = nabla::apply_vjp(x * x, xs, xs);
#endif
    return g[1] == 8.0 ? 0 : 1;
}
