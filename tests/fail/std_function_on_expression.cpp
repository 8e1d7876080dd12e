#include <nabla/nabla.hpp>

#include <cmath>
int main() {
    auto [x] = nabla::variables<1>();
#ifdef NABLA_FAIL_CASE
    auto f = std::sin(x);  // std::sin takes numbers
#else
    using std::sin;
    auto f = sin(x);
#endif
    return f(0.0) == 0.0 ? 0 : 1;
}
