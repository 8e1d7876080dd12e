#include <nabla/nabla.hpp>

#include <vector>
int main() {
    auto f = [](const auto& x) { return x[0] * x[0] * x[1]; };
#ifdef NABLA_FAIL_CASE
    auto hv = nabla::hvp(f, 2.0, 1.0);  // numbers, not containers
    return hv == 6.0 ? 0 : 1;
#else
    auto hv = nabla::hvp(f, std::vector<double>{2.0, 3.0}, std::vector<double>{1.0, 0.0});
    return hv[0] == 6.0 ? 0 : 1;
#endif
}
