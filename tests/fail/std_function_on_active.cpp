#include <nabla/nabla.hpp>

#include <cmath>
#include <vector>
int main() {
    const auto f = [](const auto& x) {
#ifdef NABLA_FAIL_CASE
        return std::pow(x[0], 2) * x[1];  // std::pow takes plain numbers
#else
        using std::pow;
        return pow(x[0], 2) * x[1];
#endif
    };
    return nabla::grad(f, std::vector<double>{1.0, 2.0})[0] == 4.0 ? 0 : 1;
}
