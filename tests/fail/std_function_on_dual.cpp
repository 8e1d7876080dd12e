#include <nabla/nabla.hpp>

#include <cmath>
int main() {
    const auto f = [](auto x, auto y) {
#ifdef NABLA_FAIL_CASE
        return std::sin(x) * y;  // std::sin takes plain numbers
#else
        using std::sin;
        return sin(x) * y;
#endif
    };
    return nabla::grad(f, 0.0, 2.0)[0] == 2.0 ? 0 : 1;
}
