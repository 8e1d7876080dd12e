#include <nabla/array.hpp>

#include <span>
#include <tuple>
#include <vector>

// A custom array function (cumulative sum) inside a function given to hvp.
int main() {
    const auto f = [](const auto& x) {
#ifdef NABLA_FAIL_CASE
        const auto c = nabla::custom_array(
            [](std::span<const double> a) { return std::vector<double>(a.begin(), a.end()); },
            [](auto, auto, auto dy, auto dx) {
                for (std::size_t i = 0; i < dy.size(); ++i)
                    dx[i] += dy[i];
            },
            x);  // first order only
        return sum(c * c);
#else
        return sum(x * x);
#endif
    };
    const std::vector<double> xs{1.0, 2.0}, vs{1.0, 0.0};
    const std::vector<double> hv = nabla::hvp(nabla::mode::arrays, f, std::tie(xs), std::tie(vs));
    return hv[0] == 2.0 && hv[1] == 0.0 ? 0 : 1;
}
