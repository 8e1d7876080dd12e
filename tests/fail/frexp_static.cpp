#include <nabla/nabla.hpp>
int main() {
    auto [x] = nabla::variables<1>();
    int e = 0;
#ifdef NABLA_FAIL_CASE
    auto f = frexp(x, &e);  // the exponent is known only when x has a value
#else
    auto f = ldexp(x, -1);
#endif
    return f(1.0) == 0.5 && e == 0 ? 0 : 1;
}
