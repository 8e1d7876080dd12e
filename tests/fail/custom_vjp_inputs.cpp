#include <nabla/nabla.hpp>

#include <utility>
#include <vector>
int main() {
    nabla::tape<> t;
    auto recording = t.record();
    const auto twice = [](const std::vector<double>& v) {
        auto pullback = [](const std::vector<double>& w) {
            return std::vector<double>{2.0 * w[0]};
        };
        return std::pair{std::vector<double>{2.0 * v[0]}, pullback};
    };
#ifdef NABLA_FAIL_CASE
    std::vector<double> x{3.0};  // plain numbers, not active variables
#else
    std::vector<nabla::var> x{t.input(3.0)};
#endif
    std::vector<nabla::var> y = nabla::custom_vjp(x, twice);
    return y[0].value == 6.0 ? 0 : 1;
}
