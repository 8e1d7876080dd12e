#include <nabla/nabla.hpp>
int main() {
    auto [x] = nabla::variables<1>();
#ifdef NABLA_FAIL_CASE
    auto f = legendre(2.0, x);  // the degree must be an integer
#else
    auto f = legendre(2, x);
#endif
    return f(0.5) < 0.0 ? 0 : 1;
}
