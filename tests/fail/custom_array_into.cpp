#include <nabla/array.hpp>
#include <nabla/reverse.hpp>

#include <span>
#include <vector>

// custom_array with a result written in place, whose value function returns the values instead.
int main() {
    nabla::tape<> t;
    auto recording = t.record();
    const nabla::var_array x = nabla::input_array(t, std::vector<double>{1.0, 2.0});
    const auto pullback = [](auto, auto, auto dy, auto dx) {
        for (std::size_t i = 0; i < dy.size(); ++i)
            dx[i] += 2.0 * dy[i];
    };
#ifdef NABLA_FAIL_CASE
    const auto value = [](std::span<const double> a) {  // no place for the result
        std::vector<double> out(a.begin(), a.end());
        for (double& v : out)
            v *= 2.0;
        return out;
    };
#else
    const auto value = [](std::span<double> y, std::span<const double> a) {
        for (std::size_t i = 0; i < a.size(); ++i)
            y[i] = 2.0 * a[i];
    };
#endif
    const nabla::var_array y = nabla::custom_array(2, value, pullback, x);
    return y.values()[1] == 4.0 ? 0 : 1;
}
