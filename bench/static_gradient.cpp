// value_and_grad of a static expression, side by side with a hand-written analytic gradient of
// the same function, for the seed function (2 inputs) and a Lennard-Jones pair energy of a
// separation vector (3 inputs), as a ratio to the hand-written code.
//
//   build-gcc/bench/static_gradient

#include <nabla/nabla.hpp>

#include <array>
#include <cmath>
#include <cstdio>
#include <vector>

#include "bench_util.hpp"

namespace {

// Both contenders return the same aggregate, so that the only difference is how it is computed.
using value_and_gradient_2 = nabla::value_and_gradient<double, 2>;
using value_and_gradient_3 = nabla::value_and_gradient<double, 3>;

// Hand-written: f = log(x1) + x1 x2 - sin(x2), df/dx1 = 1/x1 + x2, df/dx2 = x1 - cos(x2).
[[gnu::noinline]] value_and_gradient_2 seed_by_hand(double x1, double x2) {
    return {std::log(x1) + x1 * x2 - std::sin(x2), {1.0 / x1 + x2, x1 - std::cos(x2)}};
}

[[gnu::noinline]] value_and_gradient_2 seed_by_nabla(double x1, double x2) {
    const auto [x, y] = nabla::variables<2>();
    const auto f = log(x) + x * y - sin(y);
    return nabla::value_and_grad(f, x1, x2);
}

// Hand-written Lennard-Jones (epsilon = sigma = 1): E = 4 (s^2 - s) with s = r^-6;
// dE/dq = dE/ds * ds/dr2 * 2q = 4 (2s - 1) * (-3 s / r2) * 2q.
[[gnu::noinline]] value_and_gradient_3 lj_by_hand(double x, double y, double z) {
    const double r2 = x * x + y * y + z * z;
    const double s6 = 1.0 / (r2 * r2 * r2);
    const double energy = 4.0 * (s6 * s6 - s6);
    const double scale = 4.0 * (2.0 * s6 - 1.0) * (-3.0 * s6 / r2) * 2.0;
    return {energy, {scale * x, scale * y, scale * z}};
}

[[gnu::noinline]] value_and_gradient_3 lj_by_nabla(double qx, double qy, double qz) {
    const auto [x, y, z] = nabla::variables<3>();
    const auto r2 = x * x + y * y + z * z;
    const auto s6 = 1.0 / (r2 * r2 * r2);
    const auto energy = 4.0 * (s6 * s6 - s6);
    return nabla::value_and_grad(energy, qx, qy, qz);
}

}  // namespace

int main() {
    constexpr long calls = 1 << 20;
    constexpr int rounds = 15;
    std::vector<double> a(calls), b(calls), c(calls);
    for (long i = 0; i < calls; ++i) {
        a[i] = 1.0 + 0.5 * std::sin(0.001 * i) * std::sin(0.001 * i);
        b[i] = 2.0 + std::cos(0.0007 * i);
        c[i] = 0.3 + 0.1 * std::sin(0.0003 * i);
    }

    // The two must agree before their speed means anything.
    for (long i = 0; i < calls; i += 997) {
        const auto h = seed_by_hand(a[i], b[i]);
        const auto n = seed_by_nabla(a[i], b[i]);
        const auto hl = lj_by_hand(a[i], b[i], c[i]);
        const auto nl = lj_by_nabla(a[i], b[i], c[i]);
        for (int k = 0; k < 3; ++k) {
            const double want = k == 0 ? hl.value : hl.gradient[k - 1];
            const double got = k == 0 ? nl.value : nl.gradient[k - 1];
            if (std::abs(got - want) > 1e-12 * std::abs(want)) {
                std::printf("Lennard-Jones results differ at %ld\n", i);
                return 1;
            }
        }
        if (std::abs(h.value - n.value) > 1e-14 * std::abs(h.value) ||
            std::abs(h.gradient[1] - n.gradient[1]) > 1e-14 * std::abs(h.gradient[1])) {
            std::printf("seed results differ at %ld\n", i);
            return 1;
        }
    }

    std::vector<nabla_bench::contender> seed{{"hand-written gradient"}, {"nabla::value_and_grad"}};
    nabla_bench::race(
        seed, calls, rounds, [&](long i) { nabla_bench::keep_all(seed_by_hand(a[i], b[i])); },
        [&](long i) { nabla_bench::keep_all(seed_by_nabla(a[i], b[i])); });
    nabla_bench::report("seed function f = log(x1) + x1*x2 - sin(x2), value and gradient", seed);

    std::vector<nabla_bench::contender> lj{{"hand-written gradient"}, {"nabla::value_and_grad"}};
    nabla_bench::race(
        lj, calls, rounds, [&](long i) { nabla_bench::keep_all(lj_by_hand(a[i], b[i], c[i])); },
        [&](long i) { nabla_bench::keep_all(lj_by_nabla(a[i], b[i], c[i])); });
    nabla_bench::report("Lennard-Jones pair energy of a separation vector, value and gradient", lj);
    return 0;
}
