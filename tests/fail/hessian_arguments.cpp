#include <nabla/nabla.hpp>
#include <nabla/tensor.hpp>
int main() {
    auto f = [](auto x, auto y) { return x * x * y; };
#ifdef NABLA_FAIL_CASE
    auto H = nabla::hessian(nabla::mode::forward, f, 2.0, "3");  // a string, not a number
#else
    auto H = nabla::hessian(nabla::mode::forward, f, 2.0, 3.0);
#endif
    return H(0, 0) == 6.0 ? 0 : 1;
}
