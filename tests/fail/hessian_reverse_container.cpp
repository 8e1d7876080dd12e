#include <nabla/nabla.hpp>
#include <nabla/tensor.hpp>

#include <vector>
int main() {
    auto f = [](const auto& x) { return x[0] * x[0] * x[1]; };
#ifdef NABLA_FAIL_CASE
    auto H = nabla::hessian(nabla::mode::reverse, f, 2.0);  // a number, not a container
#else
    auto H = nabla::hessian(nabla::mode::reverse, f, std::vector<double>{2.0, 3.0});
#endif
    return H(0, 0) == 6.0 ? 0 : 1;
}
