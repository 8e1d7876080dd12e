#include <nabla/nabla.hpp>
int main() {
    auto [x, y] = nabla::variables<2>();
#ifdef NABLA_FAIL_CASE
    auto f = polygamma(y, x);  // the order must be a constant integer
#else
    auto f = polygamma(1, x) + 0.0 * y;
#endif
    return f(1.0, 0.0) > 1.6 ? 0 : 1;
}
