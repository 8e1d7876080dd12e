#include <nabla/nabla.hpp>

#include <cmath>
int main() {
#ifdef NABLA_FAIL_CASE
    auto f = [](double x, double y) { return std::sin(x) * y; };  // takes doubles, not auto
#else
    auto f = [](auto x, auto y) {
        using std::sin;
        return sin(x) * y;
    };
#endif
    return nabla::grad(f, 0.0, 2.0)[0] == 2.0 ? 0 : 1;
}
