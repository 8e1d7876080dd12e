#include <nabla/array.hpp>

#include <vector>
int main() {
    auto [x] = nabla::array_variables<1>();
#ifdef NABLA_FAIL_CASE
    const std::vector<float> xs{1.0f, 2.0f};  // arrays of double only
#else
    const std::vector<double> xs{1.0, 2.0};
#endif
    return sum(x)(xs) == 3.0 ? 0 : 1;
}
