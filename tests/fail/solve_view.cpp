#include <nabla/array.hpp>

#include <xtensor/xtensor.hpp>

#include <vector>

int main() {
    auto [a, b] = nabla::array_variables<2>();
    const xt::xtensor<double, 2> as{{2.0, 0.0}, {0.0, 4.0}};
    const std::vector<double> bs{2.0, 4.0};
#ifdef NABLA_FAIL_CASE
    const double v = sum(solve(a, b)(nabla::from<1>))(as, bs);  // a view of a solve
#else
    const double v = sum(solve(a, b))(as, bs);
#endif
    return v == 2.0 ? 0 : 1;
}
