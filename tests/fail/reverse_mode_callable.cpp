#include <nabla/nabla.hpp>
int main() {
    auto f = [](auto x, auto y) { return x * y; };
#ifdef NABLA_FAIL_CASE
    auto g = nabla::grad(nabla::mode::reverse, f, 2.0, 3.0);  // no tape yet for callables
#else
    auto g = nabla::grad(nabla::mode::forward, f, 2.0, 3.0);
#endif
    return g[0] == 3.0 ? 0 : 1;
}
