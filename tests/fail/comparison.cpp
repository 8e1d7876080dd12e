#include <nabla/nabla.hpp>
int main() {
    auto [x, y] = nabla::variables<2>();
#ifdef NABLA_FAIL_CASE
    bool smaller = x < y;  // a static graph has no values to compare
#else
    bool smaller = x(1.0, 2.0) < y(1.0, 2.0);
#endif
    return smaller ? 0 : 1;
}
