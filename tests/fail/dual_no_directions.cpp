#include <nabla/nabla.hpp>

int main() {
#ifdef NABLA_FAIL_CASE
    nabla::dual<double, 0> x(2.0);
#else
    nabla::dual<double, 1> x(2.0);
#endif
    return x.value == 2.0 ? 0 : 1;
}
