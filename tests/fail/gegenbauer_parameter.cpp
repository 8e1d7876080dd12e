#include <nabla/nabla.hpp>
int main() {
    auto [x, a] = nabla::variables<2>();
#ifdef NABLA_FAIL_CASE
    auto f = gegenbauer(3, a, x);  // the parameter must be a constant
#else
    auto f = gegenbauer(3, 1.5, x) + 0.0 * a;
#endif
    return f(0.3, 0.5) < -1.0 ? 0 : 1;
}
