#include <nabla/nabla.hpp>

#include <vector>
int main() {
    auto f = [](const auto& x) { return x[0] * x[1]; };
#ifdef NABLA_FAIL_CASE
    auto [value, pullback] = nabla::vjp(f, 2.0);  // a number, not a container
#else
    auto [value, pullback] = nabla::vjp(f, std::vector<double>{2.0, 3.0});
#endif
    return value == 6.0 ? 0 : 1;
}
