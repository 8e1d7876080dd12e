// The period of a pendulum at large amplitude, exactly, and how it changes with the amplitude.
//
// A pendulum of length L released from rest at the angle a swings with the period
//   T(a) = 4 sqrt(L / g) K(sin(a / 2)),
// K the complete elliptic integral of the first kind (nabla::comp_ellint_1); the small-angle
// period 2 pi sqrt(L / g) is its limit. nabla differentiates T in every mode from the one rule
// of K: dT/da and d2T/da2 here by a static expression, dual numbers and the tape, and its Taylor
// series in a by derivatives<4>. Each period is checked against the motion itself, integrated by
// nabla's Taylor integrator (the time at which the swing first comes back to rest, half a
// period), and dT/da against a difference of integrated periods. Exits 1 if any check
// fails.

#include <nabla/nabla.hpp>

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <numbers>

namespace {

constexpr double length = 1.0;    // m
constexpr double gravity = 9.81;  // m/s^2

// The exact period, written once for numbers, expressions, dual and Taylor numbers and the tape.
const auto period = [](const auto& amplitude) {
    using std::sin;
    using std::sqrt;
    return 4.0 * std::sqrt(length / gravity) * comp_ellint_1(sin(amplitude / 2.0));
};

// The period from the motion: theta'' = -(g / L) sin(theta) from rest at the amplitude, until the
// angular velocity, negative on the way down, comes back to 0 (at -amplitude, half a period).
double integrated_period(double amplitude) {
    nabla::taylor_integrator ode(
        [](auto, const auto& y) {
            using std::sin;
            return std::array{y[1], -(gravity / length) * sin(y[0])};
        },
        0.0, std::array{amplitude, 0.0}, {.tolerance = 1e-16});
    ode.add_event([](auto, const auto& y) { return y[1]; }, nabla::event_direction::rising, true);
    const auto result = ode.propagate_until(100.0);
    return 2.0 * result.events.back().time;
}

bool close(double a, double b, double tolerance) {
    return std::abs(a - b) <= tolerance * std::abs(b);
}

}  // namespace

int main() {
    bool ok = true;
    const double small = 2.0 * std::numbers::pi * std::sqrt(length / gravity);
    std::printf("Pendulum, L = %g m, g = %g m/s^2: small-angle period 2 pi sqrt(L/g) = %.12f s\n\n",
                length, gravity, small);
    std::printf("%9s %16s %16s %10s %14s %14s %14s\n", "amplitude", "T (exact)", "T (integrated)",
                "T / T0", "dT/da", "dT/da (motion)", "d2T/da2");

    const auto [a] = nabla::variables<1>();
    const auto t = period(a);
    const auto dt = nabla::d(t, a);
    const auto dt2 = nabla::d(dt, a);

    for (double degrees : {5.0, 30.0, 60.0, 90.0, 120.0, 150.0, 170.0, 179.0}) {
        const double amplitude = degrees * std::numbers::pi / 180.0;
        const double exact = t(amplitude);
        const double motion = integrated_period(amplitude);
        // dT/da three more ways: dual numbers, the tape, a difference of integrated periods.
        const auto dual = period(nabla::dual<double, 1>(amplitude, {1.0}));
        nabla::tape<> tape;
        double taped;
        {
            auto recording = tape.record();
            const nabla::var x = tape.input(amplitude);
            const nabla::var y = period(x);
            tape.gradient(y);
            taped = tape.adjoint(x);
        }
        // (The five-point difference, of error O(h^4), with a step that shrinks as the
        // derivatives grow towards 180 degrees.)
        const double h = 1e-3 * (std::numbers::pi - amplitude);
        const double difference =
            (8.0 * (integrated_period(amplitude + h) - integrated_period(amplitude - h)) -
             (integrated_period(amplitude + 2.0 * h) - integrated_period(amplitude - 2.0 * h))) /
            (12.0 * h);
        const auto series = nabla::derivatives<2>(period, amplitude);

        std::printf("%8.0f° %16.12f %16.12f %10.6f %14.9f %14.9f %14.9f\n", degrees, exact, motion,
                    exact / small, dt(amplitude), difference, dt2(amplitude));
        ok = ok && close(motion, exact, 1e-12);
        ok = ok && close(dual.tangent[0], dt(amplitude), 1e-14) &&
             close(taped, dt(amplitude), 1e-14) && close(series[1], dt(amplitude), 1e-14) &&
             close(series[2], dt2(amplitude), 1e-12);
        ok = ok && close(difference, dt(amplitude), 1e-8);
    }
    // At small amplitudes, the series T(a) / T0 = 1 + a^2/16 + 11 a^4/3072 + 173 a^6/737280 +
    // 22931 a^8/1321205760 + 1319183 a^10/951268147200 + ... (K(k) = pi/2 sum_n ((2n)! / (2^2n
    // n!^2))^2 k^2n with k = sin(a/2), expanded by sympy) gives T and its first four derivatives
    // to far below rounding; amplitude 0 included, where the pendulum does not swing.
    const std::array<double, 6> coefficients = {1.0,
                                                1.0 / 16.0,
                                                11.0 / 3072.0,
                                                173.0 / 737280.0,
                                                22931.0 / 1321205760.0,
                                                1319183.0 / 951268147200.0};
    std::printf("\nSmall amplitudes: derivatives<4> of T against its series in a\n");
    std::printf("%9s %16s %16s %16s %16s %16s\n", "amplitude", "T", "dT/da", "d2T/da2", "d3T/da3",
                "d4T/da4");
    for (double amplitude : {0.0, 1e-6, 1e-3}) {
        const auto series = nabla::derivatives<4>(period, amplitude);
        std::printf("%9.0e", amplitude);
        for (std::size_t n = 0; n <= 4; ++n) {
            // The n-th derivative of sum_j c_j a^(2j), times T0.
            double expected = 0.0;
            for (std::size_t j = 0; j < coefficients.size(); ++j) {
                if (2 * j < n)
                    continue;
                double term = coefficients[j] * small;
                for (std::size_t i = 0; i < n; ++i)
                    term *= static_cast<double>(2 * j - i);
                expected += term * std::pow(amplitude, static_cast<double>(2 * j - n));
            }
            std::printf(" %16.12f", series[n]);
            ok = ok && std::abs(series[n] - expected) <= 1e-14 * small;
        }
        std::printf("\n");
    }

    std::printf("\nThe period grows without bound as the amplitude nears 180° (K(1) = inf), and\n"
                "so does its sensitivity: at 179° a tenth of a degree more adds %.3f s.\n",
                dt(179.0 * std::numbers::pi / 180.0) * (0.1 * std::numbers::pi / 180.0));
    std::printf("%s\n", ok ? "all checks passed" : "CHECK FAILED");
    return ok ? 0 : 1;
}
