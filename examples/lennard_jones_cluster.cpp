// Molecular dynamics of a small Lennard-Jones cluster (reduced units: epsilon = sigma = mass = 1).
// The energy is written once, generically; nabla::grad gives the forces in reverse mode (the
// positions are a std::vector, so the run-time tape records the pair loop, one statement per
// pair). Velocity-Verlet steps print the energy drift; then the cluster is relaxed to a minimum
// and nabla::hessian (forward over reverse) gives the normal modes: six zero frequencies
// (translations and rotations) and the vibrations above them.
//
//   build-gcc/examples/lennard_jones_cluster

#include <nabla/nabla.hpp>
#include <nabla/tensor.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

namespace {

const auto energy = [](const auto& q) {
    using T = std::decay_t<decltype(q[0])>;
    const std::size_t n = q.size() / 3;
    T e = 0.0;
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = i + 1; j < n; ++j) {
            auto dx = q[3 * i] - q[3 * j];
            auto dy = q[3 * i + 1] - q[3 * j + 1];
            auto dz = q[3 * i + 2] - q[3 * j + 2];
            auto r2 = dx * dx + dy * dy + dz * dz;
            auto s6 = 1.0 / (r2 * r2 * r2);
            e += 4.0 * (s6 * s6 - s6);
        }
    return e;
};

// The eigenvalues of a symmetric matrix by cyclic Jacobi rotations (small matrices only).
std::vector<double> eigenvalues(std::vector<double> a, std::size_t n) {
    for (int sweep = 0; sweep < 100; ++sweep) {
        double off = 0.0;
        for (std::size_t p = 0; p < n; ++p)
            for (std::size_t r = p + 1; r < n; ++r)
                off += a[p * n + r] * a[p * n + r];
        if (off < 1e-22)
            break;
        for (std::size_t p = 0; p < n; ++p)
            for (std::size_t r = p + 1; r < n; ++r) {
                if (std::abs(a[p * n + r]) < 1e-300)
                    continue;
                const double theta = (a[r * n + r] - a[p * n + p]) / (2.0 * a[p * n + r]);
                const double t =
                    (theta >= 0 ? 1.0 : -1.0) / (std::abs(theta) + std::sqrt(theta * theta + 1.0));
                const double c = 1.0 / std::sqrt(t * t + 1.0), s = t * c;
                for (std::size_t k = 0; k < n; ++k) {
                    const double akp = a[k * n + p], akr = a[k * n + r];
                    a[k * n + p] = c * akp - s * akr;
                    a[k * n + r] = s * akp + c * akr;
                }
                for (std::size_t k = 0; k < n; ++k) {
                    const double apk = a[p * n + k], ark = a[r * n + k];
                    a[p * n + k] = c * apk - s * ark;
                    a[r * n + k] = s * apk + c * ark;
                }
            }
    }
    std::vector<double> values(n);
    for (std::size_t i = 0; i < n; ++i)
        values[i] = a[i * n + i];
    std::sort(values.begin(), values.end());
    return values;
}

}  // namespace

int main() {
    // Seven atoms: a pentagonal bipyramid near the LJ7 minimum, slightly perturbed.
    const double r = 1.12;
    std::vector<double> q;
    for (int k = 0; k < 5; ++k) {
        const double angle = 2.0 * M_PI * k / 5.0;
        const double ring = r / (2.0 * std::sin(M_PI / 5.0));
        q.insert(q.end(), {ring * std::cos(angle) + 0.02 * k, ring * std::sin(angle), 0.0});
    }
    const double apex = std::sqrt(r * r - std::pow(r / (2.0 * std::sin(M_PI / 5.0)), 2));
    q.insert(q.end(), {0.0, 0.0, apex});
    q.insert(q.end(), {0.0, 0.01, -apex});
    const std::size_t dof = q.size();

    // Velocity Verlet, forces from nabla::grad.
    std::vector<double> v(dof, 0.0);
    const double dt = 0.002;
    std::vector<double> force = nabla::grad(energy, q);
    for (double& f : force)
        f = -f;
    const auto total = [&] {
        double kinetic = 0.0;
        for (double vi : v)
            kinetic += 0.5 * vi * vi;
        return kinetic + energy(q);
    };
    const double e0 = total();
    std::printf("Lennard-Jones cluster of %zu atoms, velocity Verlet, dt = %g\n", dof / 3, dt);
    std::printf("%8s %16s %12s\n", "step", "total energy", "drift");
    double worst = 0.0;
    for (int step = 1; step <= 2000; ++step) {
        for (std::size_t i = 0; i < dof; ++i) {
            v[i] += 0.5 * dt * force[i];
            q[i] += dt * v[i];
        }
        force = nabla::grad(energy, q);
        for (std::size_t i = 0; i < dof; ++i) {
            force[i] = -force[i];
            v[i] += 0.5 * dt * force[i];
        }
        const double drift = total() - e0;
        worst = std::max(worst, std::abs(drift));
        if (step % 400 == 0)
            std::printf("%8d %16.10f %12.3e\n", step, total(), drift);
    }

    // Relax to the minimum by steepest descent (a step below 2 / the largest Hessian eigenvalue,
    // about 430 here, so it is stable), then the Hessian's eigenvalues: squared frequencies.
    for (int it = 0; it < 20000; ++it) {
        const std::vector<double> g = nabla::grad(energy, q);
        double norm = 0.0;
        for (std::size_t i = 0; i < dof; ++i) {
            q[i] -= 0.002 * g[i];
            norm += g[i] * g[i];
        }
        if (std::sqrt(norm) < 1e-10)
            break;
    }
    const auto H = nabla::hessian(energy, q);
    std::vector<double> h(dof * dof);
    for (std::size_t i = 0; i < dof; ++i)
        for (std::size_t j = 0; j < dof; ++j)
            h[i * dof + j] = 0.5 * (H(i, j) + H(j, i));
    const std::vector<double> w2 = eigenvalues(h, dof);
    std::printf("\nminimum energy %.8f (LJ7 pentagonal bipyramid: -16.50538)\n", energy(q));
    std::printf("normal-mode frequencies (sqrt of the Hessian's eigenvalues):\n");
    int zero = 0;
    for (std::size_t k = 0; k < dof; ++k) {
        const bool rigid = std::abs(w2[k]) < 1e-6;
        zero += rigid ? 1 : 0;
        std::printf("  %2zu  %12.6f%s\n", k, std::sqrt(std::max(0.0, w2[k])),
                    rigid ? "  (rigid motion)" : "");
    }
    // The example is a test: the energy is conserved to the scheme's accuracy, the minimum is the
    // known one, and there are exactly six rigid-body modes.
    const bool ok = worst < 1e-4 && std::abs(energy(q) + 16.50538) < 1e-4 && zero == 6;
    std::printf("\nlargest energy drift %.3e; %s\n", worst, ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
