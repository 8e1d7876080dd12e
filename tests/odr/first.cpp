// One of two translation units that include every public header and use nabla: linked into one
// program, a definition in a header that is not inline (a function, a variable) is defined twice
// and the link fails.

#include <nabla/nabla.hpp>
#include <nabla/tensor.hpp>

#include <vector>

double seed_gradient_x1() {
    const auto f = [](auto x1, auto x2) {
        using std::log, std::sin;
        return log(x1) + x1 * x2 - sin(x2);
    };
    return nabla::grad(f, 2.0, 5.0)[0];
}

double tape_gradient_first() {
    const auto f = [](const auto& x) { return x[0] * x[1] + exp(x[0]); };
    return nabla::grad(nabla::mode::reverse, f, std::vector<double>{1.0, 2.0})[0];
}
