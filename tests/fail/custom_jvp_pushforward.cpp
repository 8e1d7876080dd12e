#include <nabla/nabla.hpp>

#include <utility>
#include <vector>
int main() {
    const auto twice = [](const std::vector<double>& v) {
#ifdef NABLA_FAIL_CASE
        auto pushforward = [](double t) { return 2.0 * t; };  // not vector to vector
#else
        auto pushforward = [](const std::vector<double>& t) {
            return std::vector<double>{2.0 * t[0]};
        };
#endif
        return std::pair{std::vector<double>{2.0 * v[0]}, pushforward};
    };
    std::vector<nabla::dual<double, 1>> x{nabla::dual<double, 1>(3.0, {1.0})};
    auto y = nabla::custom_jvp(x, twice);
    return y[0].tangent[0] == 2.0 ? 0 : 1;
}
