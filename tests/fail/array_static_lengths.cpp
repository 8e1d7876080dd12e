#include <nabla/array.hpp>

#include <array>
int main() {
    auto [x, y] = nabla::array_variables<2>();
    const std::array<double, 3> a{1.0, 2.0, 3.0};
#ifdef NABLA_FAIL_CASE
    const std::array<double, 4> b{1.0, 2.0, 3.0, 4.0};  // lengths in the types differ
#else
    const std::array<double, 3> b{1.0, 2.0, 3.0};
#endif
    return sum(x * y)(a, b) == 14.0 ? 0 : 1;
}
