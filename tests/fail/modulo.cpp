#include <nabla/nabla.hpp>
int main() {
    auto [x, y] = nabla::variables<2>();
#ifdef NABLA_FAIL_CASE
    auto f = x % y;  // an integer operation, with no derivative
#else
    auto f = x - y * floor(x / y);
#endif
    return f(7.0, 3.0) == 1.0 ? 0 : 1;
}
