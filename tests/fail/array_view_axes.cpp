#include <nabla/array.hpp>

#include <vector>
int main() {
    auto [x] = nabla::array_variables<1>();
    const std::vector<double> xs{1.0, 2.0, 3.0};
#ifdef NABLA_FAIL_CASE
    auto f = sum(x(nabla::whole, nabla::from<1>));  // two axes of a one-dimensional array
#else
    auto f = sum(x(nabla::from<1>));
#endif
    return f(xs) == 5.0 ? 0 : 1;
}
