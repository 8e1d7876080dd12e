// The second translation unit (see first.cpp), and the program's main: the same headers, the
// same functions on other types, and the results checked.

#include <nabla/nabla.hpp>
#include <nabla/tensor.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

double seed_gradient_x1();
double tape_gradient_first();

int main() {
    const auto f = [](auto x1, auto x2) {
        using std::log, std::sin;
        return log(x1) + x1 * x2 - sin(x2);
    };
    const double x2 = nabla::grad(f, 2.0, 5.0)[1];
    const double x1 = seed_gradient_x1();
    const auto g = [](const auto& x) { return x[0] * x[1] + exp(x[0]); };
    const double second = nabla::grad(nabla::mode::reverse, g, std::vector<double>{1.0, 2.0})[1];
    const double first = tape_gradient_first();
    const bool ok = std::abs(x1 - 5.5) < 1e-12 && std::abs(x2 - (2.0 - std::cos(5.0))) < 1e-12 &&
                    std::abs(first - (2.0 + std::exp(1.0))) < 1e-12 && second == 1.0;
    std::printf("two translation units: %s\n", ok ? "ok" : "WRONG RESULTS");
    return ok ? 0 : 1;
}
