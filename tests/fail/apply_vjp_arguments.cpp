#include <nabla/array.hpp>

#include <vector>
int main() {
    auto [x, y] = nabla::array_variables<2>();
    const std::vector<double> xs{1.0, 2.0}, w{1.0, 1.0};
#ifdef NABLA_FAIL_CASE
    const auto g = nabla::apply_vjp(x * y, w, xs);  // y has no array
#else
    const auto g = nabla::apply_vjp(x * y, w, xs, xs);
#endif
    return std::get<0>(g)[1] == 2.0 ? 0 : 1;
}
