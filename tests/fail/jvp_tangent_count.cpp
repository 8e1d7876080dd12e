#include <nabla/nabla.hpp>

#include <tuple>
int main() {
    auto f = [](auto x, auto y) { return x * y; };
#ifdef NABLA_FAIL_CASE
    auto [value, tangent] = nabla::jvp(f, std::tuple{2.0, 5.0}, std::tuple{1.0});  // one short
#else
    auto [value, tangent] = nabla::jvp(f, std::tuple{2.0, 5.0}, std::tuple{1.0, 0.0});
#endif
    return value == 10.0 && tangent == 5.0 ? 0 : 1;
}
