#pragma once
// The workloads the reverse-mode tests share: the Lennard-Jones energy written once with auto
// intermediates (one tape statement per pair), its hand-written gradient, a jittered cluster of
// particles, and a normwise comparison of gradients.

#include <algorithm>
#include <cmath>
#include <random>
#include <type_traits>
#include <vector>

namespace nabla_test {

inline const auto lennard_jones = [](const auto& q) {
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

inline std::vector<double> lennard_jones_gradient(const std::vector<double>& q) {
    std::vector<double> g(q.size(), 0.0);
    const std::size_t n = q.size() / 3;
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = i + 1; j < n; ++j) {
            double d[3], r2 = 0.0;
            for (int k = 0; k < 3; ++k) {
                d[k] = q[3 * i + k] - q[3 * j + k];
                r2 += d[k] * d[k];
            }
            const double s6 = 1.0 / (r2 * r2 * r2);
            const double f = 4.0 * (2.0 * s6 * s6 - s6) * -6.0 / r2;
            for (int k = 0; k < 3; ++k) {
                g[3 * i + k] += f * d[k];
                g[3 * j + k] -= f * d[k];
            }
        }
    return g;
}

inline std::vector<double> cluster(std::size_t particles, unsigned seed_value) {
    std::mt19937 random(seed_value);
    std::uniform_real_distribution<double> jitter(-0.05, 0.05);
    std::vector<double> q;
    for (std::size_t p = 0; p < particles; ++p) {
        q.push_back(1.1 * double(p % 3) + jitter(random));
        q.push_back(1.1 * double((p / 3) % 3) + jitter(random));
        q.push_back(1.1 * double(p / 9) + jitter(random));
    }
    return q;
}

inline bool
close_all(const std::vector<double>& a, const std::vector<double>& b, double tolerance) {
    double scale = 0.0;
    for (double v : b)
        scale = std::max(scale, std::abs(v));
    for (std::size_t i = 0; i < a.size(); ++i)
        if (std::abs(a[i] - b[i]) > tolerance * scale)
            return false;
    return a.size() == b.size();
}

}  // namespace nabla_test
