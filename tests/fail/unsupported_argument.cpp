#include <nabla/nabla.hpp>

#include <string>
int main() {
    auto [x] = nabla::variables<1>();
#ifdef NABLA_FAIL_CASE
    nabla::exp(std::string("x"));  // neither an expression nor a number
    return 0;
#else
    auto f = nabla::exp(x);
    return f(0.0) == 1.0 ? 0 : 1;
#endif
}
