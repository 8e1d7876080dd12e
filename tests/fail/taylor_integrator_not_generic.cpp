#include <nabla/nabla.hpp>

#include <array>
#include <cmath>
int main() {
#ifdef NABLA_FAIL_CASE
    // f takes plain doubles: it cannot be recorded.
    const auto f = [](double, const std::array<double, 2>& y) {
        return std::array{y[1], -std::sin(y[0])};
    };
#else
    const auto f = [](auto, const auto& y) {
        using std::sin;
        return std::array{y[1], -sin(y[0])};
    };
#endif
    nabla::taylor_integrator ode(f, 0.0, std::array{1.0, 0.0});
    return ode.propagate_until(1.0).steps > 0 ? 0 : 1;
}
