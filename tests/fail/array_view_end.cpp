#include <nabla/array.hpp>

#include <vector>
int main() {
    auto [x] = nabla::array_variables<1>();
    const std::vector<double> xs{1.0, 2.0, 3.0};
#ifdef NABLA_FAIL_CASE
    auto f = sum(x(nabla::upto<2>));  // ends count from the end: upto<-1>
#else
    auto f = sum(x(nabla::upto<-1>));
#endif
    return f(xs) == 3.0 ? 0 : 1;
}
