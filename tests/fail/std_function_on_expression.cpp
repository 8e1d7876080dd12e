#include <nabla/nabla.hpp>

#include <cmath>
int main() {
    auto [x] = nabla::variables<1>();
#ifdef NABLA_FAIL_CASE
    const double v = std::sin(x);  // std::sin takes numbers
    return v == 0.0 ? 0 : 1;
#else
    using std::sin;
    auto f = sin(x);
    return f(0.0) == 0.0 ? 0 : 1;
#endif
}
