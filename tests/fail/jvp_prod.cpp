#include <nabla/array.hpp>

#include <tuple>
#include <vector>
int main() {
    auto [x] = nabla::array_variables<1>();
    const std::vector<double> xs{1.0, 2.0, 3.0}, vs{1.0, 0.0, 0.0};
#ifdef NABLA_FAIL_CASE
    const auto [v, t] = nabla::jvp(prod(x), std::tie(xs), std::tie(vs));  // prod has no tangent
#else
    const auto [v, t] = nabla::jvp(exp(sum(log(x))), std::tie(xs), std::tie(vs));
#endif
    return v == 6.0 && t > 5.99 && t < 6.01 ? 0 : 1;
}
