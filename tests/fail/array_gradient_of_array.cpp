#include <nabla/array.hpp>

#include <vector>
int main() {
    auto [x] = nabla::array_variables<1>();
    const std::vector<double> xs{1.0, 2.0};
#ifdef NABLA_FAIL_CASE
    auto g = nabla::grad(x * x, xs);  // an array, not a scalar: no gradient
#else
    auto g = nabla::grad(sum(x * x), xs);
#endif
    return g[1] == 4.0 ? 0 : 1;
}
