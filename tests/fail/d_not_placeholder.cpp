#include <nabla/nabla.hpp>
int main() {
    auto [x, y] = nabla::variables<2>();
    auto f = x * y;
#ifdef NABLA_FAIL_CASE
    auto g = nabla::d(f, x * y);  // not a placeholder
#else
    auto g = nabla::d(f, x);
#endif
    return g(1.0, 2.0) == 2.0 ? 0 : 1;
}
