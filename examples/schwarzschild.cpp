// Geodesics and curvature of the Schwarzschild metric, every derivative by nabla:
//   - the Christoffel symbols from the Jacobian of the metric (nabla::value_and_jacobian);
//   - the Riemann tensor from the Jacobian of the Christoffel symbols (jacobian of a function
//     that calls jacobian), and the Kretschmann scalar R_abcd R^abcd against 48 M^2 / r^6;
//   - a bound, precessing orbit integrated by nabla's Taylor integrator, whose right-hand side
//     takes the Christoffel symbols by jacobian (recorded once, replayed at every step): the
//     periapses (events) against the closed form of the angle between them (a complete elliptic
//     integral), and the conservation of energy, angular momentum and g_ab u^a u^b = -1.
// Units G = c = 1, coordinates (t, r, theta, phi).

#include <nabla/nabla.hpp>

#include <array>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <type_traits>

namespace {

constexpr double mass = 1.0;

// The metric, row-major 4 x 4 (diagonal in these coordinates).
const auto metric = [](const auto& x) {
    using std::sin;
    using T = std::remove_cvref_t<decltype(x[0])>;
    const T r = x[1];
    const T s = sin(x[2]);
    const T f = 1.0 - 2.0 * mass / r;
    std::array<T, 16> g{};
    g[0] = -f;
    g[5] = 1.0 / f;
    g[10] = r * r;
    g[15] = r * r * s * s;
    return g;
};

// Gamma^a_bc at x, index a * 16 + b * 4 + c, from dg_ab / dx^c = J(a * 4 + b, c).
const auto christoffel = [](const auto& x) {
    using T = std::remove_cvref_t<decltype(x[0])>;
    const auto [g, dg] = nabla::value_and_jacobian(metric, x);  // one evaluation for both
    std::array<T, 64> gamma{};
    for (std::size_t a = 0; a < 4; ++a)
        for (std::size_t b = 0; b < 4; ++b)
            for (std::size_t c = 0; c < 4; ++c)
                gamma[a * 16 + b * 4 + c] =
                    0.5 / g[a * 5] * (dg(a * 4 + c, b) + dg(a * 4 + b, c) - dg(b * 4 + c, a));
    return gamma;
};

// R^a_bcd = d_c Gamma^a_db - d_d Gamma^a_cb + Gamma^a_ce Gamma^e_db - Gamma^a_de Gamma^e_cb, and
// the Kretschmann scalar (the metric being diagonal, raising an index divides by g_aa).
double kretschmann(const std::array<double, 4>& x) {
    const auto g = metric(x);
    // Gamma and its Jacobian, row a * 16 + b * 4 + c, column d.
    const auto [gamma, dgamma] = nabla::value_and_jacobian(christoffel, x);
    double k = 0.0;
    for (std::size_t a = 0; a < 4; ++a)
        for (std::size_t b = 0; b < 4; ++b)
            for (std::size_t c = 0; c < 4; ++c)
                for (std::size_t d = 0; d < 4; ++d) {
                    double riemann = dgamma(a * 16 + d * 4 + b, c) - dgamma(a * 16 + c * 4 + b, d);
                    for (std::size_t e = 0; e < 4; ++e)
                        riemann += gamma[a * 16 + c * 4 + e] * gamma[e * 16 + d * 4 + b] -
                                   gamma[a * 16 + d * 4 + e] * gamma[e * 16 + c * 4 + b];
                    k += g[a * 5] / (g[b * 5] * g[c * 5] * g[d * 5]) * riemann * riemann;
                }
    return k;
}

// The geodesic equation in proper time: x' = u, u'^a = -Gamma^a_bc u^b u^c; state (x, u).
const auto geodesic = [](auto, const auto& s) {
    using T = std::remove_cvref_t<decltype(s[0])>;
    const std::array<T, 4> x{s[0], s[1], s[2], s[3]};
    const auto gamma = christoffel(x);
    std::array<T, 8> ds{s[4], s[5], s[6], s[7]};
    for (std::size_t a = 0; a < 4; ++a) {
        T acceleration = 0.0;
        for (std::size_t b = 0; b < 4; ++b)
            for (std::size_t c = 0; c < 4; ++c)
                if (const auto& g = gamma[a * 16 + b * 4 + c];
                    !(g.is_constant() && g.constant() == 0.0))  // skip the structural zeros
                    acceleration -= g * s[4 + b] * s[4 + c];
        ds[4 + a] = acceleration;
    }
    return ds;
};

}  // namespace

int main() {
    std::printf("Schwarzschild metric, M = %g\n\nKretschmann scalar from nested jacobians:\n",
                mass);
    int failed = 0;
    for (const double r : {3.0, 6.0, 10.0}) {
        const double k = kretschmann({0.0, r, 1.1, 0.3});
        const double expected = 48.0 * mass * mass / std::pow(r, 6);
        const double error = std::abs(k / expected - 1.0);
        std::printf("  r = %4.1f: %.15e   48 M^2 / r^6 = %.15e   relative error %.1e\n", r, k,
                    expected, error);
        failed += error > 1e-12;
    }

    // A bound orbit in the equatorial plane from apoapsis r_a, with 0.9 of the circular orbit's
    // angular velocity there. Energy E = (1 - 2M/r) u^t and angular momentum L = r^2 u^phi are
    // conserved, and the angle between periapses is 4 K(k) / sqrt(2 M (u3 - u1)), from the roots
    // u1 < u2 < u3 of (du/dphi)^2 = 2M (u - u1) (u - u2) (u - u3), u = 1 / r.
    const double ra = 20.0;
    const double f0 = 1.0 - 2.0 * mass / ra;
    const double uphi = 0.9 * std::sqrt(mass / (ra * ra * ra)) / std::sqrt(1.0 - 3.0 * mass / ra);
    const double ut = std::sqrt((1.0 + ra * ra * uphi * uphi) / f0);
    const double energy = f0 * ut, momentum = ra * ra * uphi;
    const double u1 = 1.0 / ra;
    const double sum23 = 1.0 / (2.0 * mass) - u1;
    const double product23 = -(energy * energy - 1.0) / (2.0 * mass * momentum * momentum * u1);
    const double root = std::sqrt(sum23 * sum23 - 4.0 * product23);
    const double u2 = (sum23 - root) / 2.0, u3 = (sum23 + root) / 2.0;
    const double k = std::sqrt((u2 - u1) / (u3 - u1));
    const double between_periapses =
        4.0 * std::comp_ellint_1(k) / std::sqrt(2.0 * mass * (u3 - u1));

    const std::array<double, 8> start{0.0, ra, std::numbers::pi / 2, 0.0, ut, 0.0, 0.0, uphi};
    nabla::taylor_integrator orbit(geodesic, 0.0, start, {.tolerance = 1e-15});
    // Periapsis: dr/dtau crosses 0 from below.
    orbit.add_event([](auto, const auto& s) { return s[5]; }, nabla::event_direction::rising);
    const auto result = orbit.propagate_until(2000.0);
    std::printf("\nA bound orbit from r = %g M (E = %.6f, L = %.6f M), proper time 2000, by the "
                "Taylor\nintegrator with the Christoffel symbols by jacobian inside f (%zu steps "
                "of order %zu, %zu recorded operations):\n",
                ra, energy, momentum, result.steps, orbit.order(), orbit.operations());
    std::printf("  periapsis at r = %.6f M; the angle between periapses %.12f (closed form "
                "%.12f),\n  an advance of %.6f rad per orbit\n",
                1.0 / u2,
                result.events.size() > 1 ? result.events[1].state[3] - result.events[0].state[3]
                                         : 0.0,
                between_periapses, between_periapses - 2 * std::numbers::pi);
    for (std::size_t i = 0; i < result.events.size(); ++i) {
        const double expected = (i + 0.5) * between_periapses;
        const double error = result.events[i].state[3] - expected;
        std::printf("  periapsis %zu: phi = %.12f, closed form %.12f, error %.1e\n", i + 1,
                    result.events[i].state[3], expected, error);
        failed += std::abs(error) > 1e-11;
    }
    const auto& s = orbit.state();
    const auto g = metric(std::array{s[0], s[1], s[2], s[3]});
    const double norm =
        g[0] * s[4] * s[4] + g[5] * s[5] * s[5] + g[10] * s[6] * s[6] + g[15] * s[7] * s[7];
    const double energy_error = -g[0] * s[4] - energy, momentum_error = g[15] * s[7] - momentum;
    std::printf("  at the end: E error %.1e, L error %.1e, g(u, u) + 1 = %.1e\n", energy_error,
                momentum_error, norm + 1.0);
    failed += result.events.size() < 3 || std::abs(energy_error) > 1e-12 ||
              std::abs(momentum_error) > 1e-10 || std::abs(norm + 1.0) > 1e-12;
    return failed;
}
