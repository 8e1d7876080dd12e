#include <nabla/nabla.hpp>
int main() {
    auto [x, y] = nabla::variables<2>();
    auto f = x * y;
#ifdef NABLA_FAIL_CASE
    double v = f(2.0);  // f uses x1: it needs two arguments
#else
    double v = f(2.0, 3.0);
#endif
    return v == 6.0 ? 0 : 1;
}
