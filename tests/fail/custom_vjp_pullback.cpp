#include <nabla/nabla.hpp>

#include <utility>
#include <vector>
int main() {
    nabla::tape<> t;
    auto recording = t.record();
    const auto twice = [](const std::vector<double>& v) {
#ifdef NABLA_FAIL_CASE
        auto pullback = [](double w) { return 2.0 * w; };  // not vector to vector
#else
        auto pullback = [](const std::vector<double>& w) {
            return std::vector<double>{2.0 * w[0]};
        };
#endif
        return std::pair{std::vector<double>{2.0 * v[0]}, pullback};
    };
    std::vector<nabla::var> x{t.input(3.0)};
    std::vector<nabla::var> y = nabla::custom_vjp(x, twice);
    return y[0].value == 6.0 ? 0 : 1;
}
