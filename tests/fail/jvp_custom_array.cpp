#include <nabla/array.hpp>

#include <span>
#include <tuple>
#include <vector>

// jvp of a static expression holding a custom array function, which has a pullback only.
int main() {
    auto [x] = nabla::array_variables<1>();
    const auto copy = [](std::span<const double> a) {
        return std::vector<double>(a.begin(), a.end());
    };
    const auto pullback = [](auto, auto, auto dy, auto dx) {
        for (std::size_t i = 0; i < dy.size(); ++i)
            dx[i] += dy[i];
    };
    const std::vector<double> xs{1.0, 2.0}, vs{1.0, 0.0};
#ifdef NABLA_FAIL_CASE
    const auto [v, t] =
        nabla::jvp(sum(nabla::custom_array(copy, pullback, x)), std::tie(xs), std::tie(vs));
#else
    const auto [v, t] = nabla::jvp(sum(x), std::tie(xs), std::tie(vs));
    (void)copy;
    (void)pullback;
#endif
    return v == 3.0 && t == 1.0 ? 0 : 1;
}
