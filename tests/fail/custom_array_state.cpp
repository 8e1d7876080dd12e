#include <nabla/array.hpp>

#include <span>
#include <vector>

// custom_array in a static expression with a lambda that captures: the type cannot hold it.
int main() {
    auto [x] = nabla::array_variables<1>();
    const double scale = 2.0;
    const auto pullback = [](auto, auto, auto dy, auto dx) {
        for (std::size_t i = 0; i < dy.size(); ++i)
            dx[i] += 2.0 * dy[i];
    };
#ifdef NABLA_FAIL_CASE
    const auto value = [scale](std::span<const double> a) {  // a capture
        std::vector<double> out(a.begin(), a.end());
        for (double& v : out)
            v *= scale;
        return out;
    };
#else
    (void)scale;
    const auto value = [](std::span<const double> a) {
        std::vector<double> out(a.begin(), a.end());
        for (double& v : out)
            v *= 2.0;
        return out;
    };
#endif
    const auto f = sum(nabla::custom_array(value, pullback, x));
    const std::vector<double> xs{1.0, 2.0};
    return f(xs) == 6.0 ? 0 : 1;
}
