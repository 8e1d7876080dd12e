#include <nabla/nabla.hpp>
#include <nabla/tensor.hpp>

#include <vector>
int main() {
    auto F = [](const auto& x) { return std::vector{x[0] * x[1], x[0] + x[1]}; };
#ifdef NABLA_FAIL_CASE
    auto J = nabla::jacobian(F, 2.0);  // a number, not a container
#else
    auto J = nabla::jacobian(F, std::vector<double>{2.0, 3.0});
#endif
    return J(0, 0) == 3.0 ? 0 : 1;
}
