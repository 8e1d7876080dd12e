#pragma once
// The workloads the reverse-mode tests share: the Lennard-Jones energy written once with auto
// intermediates (one tape statement per pair), log-sum-exp, a 1000-step RK4 integration of the
// Lotka-Volterra equations, the hand-written gradient of each, a jittered cluster of particles,
// and a normwise comparison of gradients.

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
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

// log(sum_i exp(x_i)), with the largest x_i subtracted as a plain number (the value of the
// maximum, not a function of x: the result is the same, and so is its gradient).
inline const auto log_sum_exp = [](const auto& x) {
    using T = std::decay_t<decltype(x[0])>;
    using std::exp, std::log;
    double m = -std::numeric_limits<double>::infinity();
    for (const auto& v : x)
        m = std::max(m, static_cast<double>(v));
    T s = 0.0;
    for (const auto& v : x)
        s += exp(v - m);
    return T(log(s) + m);
};

// d/dx_i log-sum-exp = exp(x_i - m) / sum_k exp(x_k - m), the softmax.
inline std::vector<double> log_sum_exp_gradient(const std::vector<double>& x) {
    double m = -std::numeric_limits<double>::infinity();
    for (double v : x)
        m = std::max(m, v);
    std::vector<double> g(x.size());
    double s = 0.0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        g[i] = std::exp(x[i] - m);
        s += g[i];
    }
    for (double& v : g)
        v /= s;
    return g;
}

// 1000 steps of RK4 (h = 0.01) for the Lotka-Volterra equations
//   x' = a x - b x y,   y' = c x y - d y,   x(0) = 1, y(0) = 0.5,
// with p = (a, b, c, d); the result is x + y at t = 10 (bench/reverse_gradient.cpp times it).
inline const auto lotka_volterra_rk4 = [](const auto& p) {
    using T = std::decay_t<decltype(p[0])>;
    const double h = 0.01;
    T x = 1.0, y = 0.5;
    for (int step = 0; step < 1000; ++step) {
        T k1x = p[0] * x - p[1] * x * y;
        T k1y = p[2] * x * y - p[3] * y;
        T x2 = x + 0.5 * h * k1x, y2 = y + 0.5 * h * k1y;
        T k2x = p[0] * x2 - p[1] * x2 * y2;
        T k2y = p[2] * x2 * y2 - p[3] * y2;
        T x3 = x + 0.5 * h * k2x, y3 = y + 0.5 * h * k2y;
        T k3x = p[0] * x3 - p[1] * x3 * y3;
        T k3y = p[2] * x3 * y3 - p[3] * y3;
        T x4 = x + h * k3x, y4 = y + h * k3y;
        T k4x = p[0] * x4 - p[1] * x4 * y4;
        T k4y = p[2] * x4 * y4 - p[3] * y4;
        x = x + h / 6.0 * (k1x + 2.0 * k2x + 2.0 * k3x + k4x);
        y = y + h / 6.0 * (k1y + 2.0 * k2y + 2.0 * k3y + k4y);
    }
    T out = x + y;
    return out;
};

// The gradient of lotka_volterra_rk4 with respect to p: the sensitivities s = d(x, y)/dp carried
// forward through every stage, the exact derivative of the discrete map (not of the ODE). A stage
// at (u, v) with sensitivities (su, sv) has the slope f = (a u - b u v, c u v - d v) and
//   df/dp_j = (a - b v) su_j - b u sv_j + (u, -u v, 0, 0)_j      (x component)
//             c v su_j + (c u - d) sv_j + (0, 0, u v, -v)_j       (y component).
inline std::vector<double> lotka_volterra_rk4_gradient(const std::vector<double>& p) {
    using sensitivity = std::array<double, 4>;
    const double a = p[0], b = p[1], c = p[2], d = p[3], h = 0.01;
    struct slope {
        double fx, fy;
        sensitivity sx, sy;
    };
    const auto stage = [&](double u, double v, const sensitivity& su, const sensitivity& sv) {
        slope k{a * u - b * u * v, c * u * v - d * v, {}, {}};
        const sensitivity own_x{u, -u * v, 0.0, 0.0}, own_y{0.0, 0.0, u * v, -v};
        for (std::size_t j = 0; j < 4; ++j) {
            k.sx[j] = (a - b * v) * su[j] - b * u * sv[j] + own_x[j];
            k.sy[j] = c * v * su[j] + (c * u - d) * sv[j] + own_y[j];
        }
        return k;
    };
    // (u, v) + w k, with its sensitivities.
    const auto advance = [](double u, double v, const sensitivity& su, const sensitivity& sv,
                            double w, const slope& k, double& u2, double& v2, sensitivity& su2,
                            sensitivity& sv2) {
        u2 = u + w * k.fx;
        v2 = v + w * k.fy;
        for (std::size_t j = 0; j < 4; ++j) {
            su2[j] = su[j] + w * k.sx[j];
            sv2[j] = sv[j] + w * k.sy[j];
        }
    };
    double x = 1.0, y = 0.5;
    sensitivity sx{}, sy{};
    for (int step = 0; step < 1000; ++step) {
        double x2, y2, x3, y3, x4, y4;
        sensitivity sx2, sy2, sx3, sy3, sx4, sy4;
        const slope k1 = stage(x, y, sx, sy);
        advance(x, y, sx, sy, 0.5 * h, k1, x2, y2, sx2, sy2);
        const slope k2 = stage(x2, y2, sx2, sy2);
        advance(x, y, sx, sy, 0.5 * h, k2, x3, y3, sx3, sy3);
        const slope k3 = stage(x3, y3, sx3, sy3);
        advance(x, y, sx, sy, h, k3, x4, y4, sx4, sy4);
        const slope k4 = stage(x4, y4, sx4, sy4);
        for (std::size_t j = 0; j < 4; ++j) {
            sx[j] += h / 6.0 * (k1.sx[j] + 2.0 * k2.sx[j] + 2.0 * k3.sx[j] + k4.sx[j]);
            sy[j] += h / 6.0 * (k1.sy[j] + 2.0 * k2.sy[j] + 2.0 * k3.sy[j] + k4.sy[j]);
        }
        x += h / 6.0 * (k1.fx + 2.0 * k2.fx + 2.0 * k3.fx + k4.fx);
        y += h / 6.0 * (k1.fy + 2.0 * k2.fy + 2.0 * k3.fy + k4.fy);
    }
    return {sx[0] + sy[0], sx[1] + sy[1], sx[2] + sy[2], sx[3] + sy[3]};
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
