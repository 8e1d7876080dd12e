#include <nabla/nabla.hpp>

#include <utility>
#include <vector>
int main() {
    const auto twice = [](const std::vector<double>& v) {
        auto pushforward = [](const std::vector<double>& t) {
            return std::vector<double>{2.0 * t[0]};
        };
        return std::pair{std::vector<double>{2.0 * v[0]}, pushforward};
    };
#ifdef NABLA_FAIL_CASE
    std::vector<double> x{3.0};  // plain numbers, not dual numbers
#else
    std::vector<nabla::dual<double, 1>> x{nabla::dual<double, 1>(3.0, {1.0})};
#endif
    auto y = nabla::custom_jvp(x, twice);
    return y[0].value == 6.0 ? 0 : 1;
}
