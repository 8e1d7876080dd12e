#include <nabla/array.hpp>

#include <xtensor/xtensor.hpp>

#include <tuple>
#include <vector>

int main() {
    auto [a, b] = nabla::array_variables<2>();
    const xt::xtensor<double, 2> as{{2.0, 0.0}, {0.0, 4.0}}, va{{0.0, 0.0}, {0.0, 0.0}};
    const std::vector<double> bs{2.0, 4.0}, vb{1.0, 0.0};
#ifdef NABLA_FAIL_CASE
    const auto [v, t] =
        nabla::jvp(sum(solve(a, b)), std::tie(as, bs), std::tie(va, vb));  // no tangent rule
#else
    const auto [v, t] = nabla::jvp(sum(b / 2.0), std::tie(as, bs), std::tie(va, vb));
#endif
    return v == 3.0 && t == 0.5 ? 0 : 1;
}
