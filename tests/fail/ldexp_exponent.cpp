#include <nabla/nabla.hpp>
int main() {
    auto [x, n] = nabla::variables<2>();
#ifdef NABLA_FAIL_CASE
    auto f = ldexp(x, n);  // the exponent must be a constant integer
#else
    auto f = ldexp(x, 2) + 0.0 * n;
#endif
    return f(1.0, 2.0) == 4.0 ? 0 : 1;
}
