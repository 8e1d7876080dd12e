#include <nabla/array.hpp>

#include <xtensor/xtensor.hpp>

#include <vector>
int main() {
    auto [a, x] = nabla::array_variables<2>();
    xt::xtensor<double, 2> m = xt::xtensor<double, 2>::from_shape({2, 2});
    m.fill(1.0);
    const std::vector<double> xs{1.0, 2.0};
#ifdef NABLA_FAIL_CASE
    auto f = sum(matvec(a, sum(x)));  // an operand that is a number, not an array
#else
    auto f = sum(2.0 * matvec(a, x));
#endif
    return f(m, xs) == 12.0 ? 0 : 1;
}
