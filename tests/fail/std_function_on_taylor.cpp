#include <nabla/nabla.hpp>

#include <cmath>
int main() {
    const auto f = [](auto x) {
#ifdef NABLA_FAIL_CASE
        return std::exp(x) * x;  // std::exp takes plain numbers
#else
        using std::exp;
        return exp(x) * x;
#endif
    };
    return nabla::derivatives<2>(f, 0.0)[1] == 1.0 ? 0 : 1;
}
