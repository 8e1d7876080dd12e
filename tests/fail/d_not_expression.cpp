#include <nabla/nabla.hpp>
int main() {
    auto [x] = nabla::variables<1>();
#ifdef NABLA_FAIL_CASE
    auto f = nabla::d(2.0, x);  // a number, not an expression of the placeholders
#else
    auto f = nabla::d(x * x, x);
#endif
    return f(3.0) == 6.0 ? 0 : 1;
}
