// nabla.hpp without xtensor (NABLA_NO_XTENSOR stands for a machine without it): hessian says
// what it needs instead of "'hessian' is not a member of 'nabla'".
#define NABLA_NO_XTENSOR
#include <nabla/nabla.hpp>

int main() {
    auto f = [](auto x, auto y) { return x * x * y; };
#ifdef NABLA_FAIL_CASE
    auto h = nabla::hessian(f, 1.0, 2.0);
    return h(0, 0) == 4.0 ? 0 : 1;
#else
    return nabla::grad(f, 1.0, 2.0)[0] == 4.0 ? 0 : 1;
#endif
}
