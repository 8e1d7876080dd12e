#include <nabla/array.hpp>

#include <span>
#include <vector>

// custom_array in a static expression whose value function returns a number, not the values.
int main() {
    auto [x] = nabla::array_variables<1>();
    const auto pullback = [](auto, auto, auto dy, auto dx) {
        for (std::size_t i = 0; i < dy.size(); ++i)
            dx[i] += 2.0 * dy[i];
    };
#ifdef NABLA_FAIL_CASE
    const auto value = [](std::span<const double> a) {  // one number
        double s = 0.0;
        for (double v : a)
            s += 2.0 * v;
        return s;
    };
#else
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
