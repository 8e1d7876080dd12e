// A 1-D anharmonic oscillator: the Morse potential V(r) = D (1 - exp(-a (r - r0)))^2 of a diatomic
// bond. Prints the potential and the force F = -dV/dr along the bond (forward mode), and the
// Taylor expansion of V around its minimum r0 to order 8 in one evaluation (derivatives<8>):
// the harmonic term, then the anharmonic corrections that a normal-mode analysis drops.

#include <nabla/nabla.hpp>

#include <array>
#include <cmath>
#include <cstdio>

namespace {

constexpr double depth = 4.75;    // D, eV (roughly H2)
constexpr double width = 1.94;    // a, 1/Angstrom
constexpr double minimum = 0.74;  // r0, Angstrom

// Written once, for plain numbers, dual numbers and Taylor series alike.
const auto morse = [](auto r) {
    using std::exp;
    const auto stretch = 1.0 - exp(-width * (r - minimum));
    return depth * stretch * stretch;
};

}  // namespace

int main() {
    std::printf(
        "Morse potential V(r) = D (1 - exp(-a (r - r0)))^2, D = %g eV, a = %g/A, r0 = %g A\n\n",
        depth, width, minimum);
    std::printf("   r (A)      V (eV)    F = -dV/dr (eV/A)\n");
    for (double r = 0.5; r <= 2.01; r += 0.25) {
        const auto [value, gradient] = nabla::value_and_grad(morse, r);
        std::printf("%8.3f %11.5f %14.5f\n", r, value, -gradient[0]);
    }

    // V(r0 + s) = sum_k c_k s^k with c_k = V^(k)(r0) / k!.
    const auto derivatives = nabla::derivatives<8>(morse, minimum);
    std::printf("\nTaylor expansion around r0: V(r0 + s) = sum_k c_k s^k\n");
    std::printf("   k   V^(k)(r0)          c_k = V^(k)(r0)/k!\n");
    std::array<double, 9> coefficient{};
    double factorial = 1.0;
    for (std::size_t k = 0; k <= 8; ++k) {
        if (k > 0)
            factorial *= static_cast<double>(k);
        coefficient[k] = derivatives[k] / factorial;
        std::printf("%4zu %16.8f %16.8f\n", k, derivatives[k], coefficient[k]);
    }

    std::printf("\n   s (A)   V exact     harmonic     order 8\n");
    for (double s = -0.2; s <= 0.201; s += 0.1) {
        double series = 0.0;
        for (std::size_t k = 9; k-- > 0;)
            series = series * s + coefficient[k];
        std::printf("%8.2f %11.6f %11.6f %11.6f\n", s, morse(minimum + s), coefficient[2] * s * s,
                    series);
    }

    // The example is a test too: the force vanishes at the minimum, the curvature is 2 D a^2
    // and the cubic coefficient is -D a^3.
    const bool right = std::abs(derivatives[1]) < 1e-12 &&
                       std::abs(derivatives[2] - 2.0 * depth * width * width) < 1e-10 &&
                       std::abs(coefficient[3] + depth * width * width * width) < 1e-10;
    return right ? 0 : 1;
}
