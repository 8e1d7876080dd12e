#include <nabla/array.hpp>

#include <xtensor/xtensor.hpp>

#include <vector>
int main() {
    auto [a, x] = nabla::array_variables<2>();
    xt::xtensor<double, 2> m = xt::xtensor<double, 2>::from_shape({2, 2});
    m.fill(1.0);
    const std::vector<double> xs{1.0, 2.0};
    auto f = sum(matvec(a, x));
#ifdef NABLA_FAIL_CASE
    return f(xs, xs) == 6.0 ? 0 : 1;  // the matrix bound to a one-dimensional array
#else
    return f(m, xs) == 6.0 ? 0 : 1;
#endif
}
