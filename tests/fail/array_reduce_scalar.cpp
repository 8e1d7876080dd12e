#include <nabla/array.hpp>

#include <vector>
int main() {
    auto [x] = nabla::array_variables<1>();
    const std::vector<double> xs{1.0, 2.0};
#ifdef NABLA_FAIL_CASE
    auto f = sum(sum(x));  // sum(x) is already a scalar
#else
    auto f = sum(x);
#endif
    return f(xs) == 3.0 ? 0 : 1;
}
