#include <nabla/nabla.hpp>

#include <cmath>
int main() {
#ifdef NABLA_FAIL_CASE
    auto g = [](double t) { return std::exp(t); };  // not generic
#else
    auto g = [](auto t) {
        using std::exp;
        return exp(t);
    };
#endif
    auto d = nabla::derivatives<2>(g, 0.0);
    return d[2] == 1.0 ? 0 : 1;
}
