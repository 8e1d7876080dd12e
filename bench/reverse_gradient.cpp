// Reverse-mode gradients of programs with run-time loops, side by side with hand-written
// gradients (issue 4): extended Rosenbrock (n = 10^3, 10^5), Lennard-Jones energy of N = 256 and
// 1024 particles (all pairs), log-sum-exp of n = 10^5 values. Each call records the tape afresh
// (the tape's memory is kept between calls, as in a real simulation loop) and sweeps it.
// Goals: at most 10x hand on Rosenbrock, 8x on Lennard-Jones, 2x on log-sum-exp (must); 3x
// everywhere (goal).
//
//   build-gcc/bench/reverse_gradient

#include <nabla/reverse.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

#include "bench_util.hpp"

namespace {

// Written once, generically: the same code runs on double (the value only) and on nabla::var.
const auto rosenbrock = [](const auto& x) {
    using T = std::decay_t<decltype(x[0])>;
    T sum = 0.0;
    for (std::size_t i = 0; i + 1 < x.size(); ++i) {
        auto a = x[i + 1] - x[i] * x[i];
        auto b = 1.0 - x[i];
        sum += 100.0 * a * a + b * b;
    }
    return sum;
};

const auto lennard_jones = [](const auto& q) {
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

const auto log_sum_exp = [](const auto& x) {
    using T = std::decay_t<decltype(x[0])>;
    using std::exp, std::log;
    double m = -1e300;
    for (const auto& v : x)
        m = std::max(m, static_cast<double>(v));
    T s = 0.0;
    for (const auto& v : x)
        s += exp(v - m);
    return T(log(s) + m);
};

void rosenbrock_by_hand(const std::vector<double>& x, std::vector<double>& g) {
    const std::size_t n = x.size();
    for (std::size_t i = 0; i < n; ++i)
        g[i] = 0.0;
    for (std::size_t i = 0; i + 1 < n; ++i) {
        const double a = x[i + 1] - x[i] * x[i];
        g[i] += -400.0 * x[i] * a - 2.0 * (1.0 - x[i]);
        g[i + 1] += 200.0 * a;
    }
}

void lennard_jones_by_hand(const std::vector<double>& q, std::vector<double>& g) {
    const std::size_t n = q.size() / 3;
    for (double& v : g)
        v = 0.0;
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = i + 1; j < n; ++j) {
            const double dx = q[3 * i] - q[3 * j], dy = q[3 * i + 1] - q[3 * j + 1],
                         dz = q[3 * i + 2] - q[3 * j + 2];
            const double r2 = dx * dx + dy * dy + dz * dz;
            const double s6 = 1.0 / (r2 * r2 * r2);
            const double f = 4.0 * (2.0 * s6 * s6 - s6) * -6.0 / r2;  // dE/dr2 * 2
            g[3 * i] += f * dx;
            g[3 * j] -= f * dx;
            g[3 * i + 1] += f * dy;
            g[3 * j + 1] -= f * dy;
            g[3 * i + 2] += f * dz;
            g[3 * j + 2] -= f * dz;
        }
}

void log_sum_exp_by_hand(const std::vector<double>& x, std::vector<double>& g) {
    double m = -1e300;
    for (double v : x)
        m = std::max(m, v);
    double s = 0.0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        g[i] = std::exp(x[i] - m);
        s += g[i];
    }
    const double inverse = 1.0 / s;
    for (double& v : g)
        v *= inverse;
}

// The tape and the active copy of the input live across calls, as in a simulation loop.
struct taped {
    nabla::tape<> t;
    std::vector<nabla::var> active;

    template <class F>
    void gradient(const F& f, const std::vector<double>& x, std::vector<double>& g) {
        auto recording = t.record();
        active.resize(x.size());
        for (std::size_t i = 0; i < x.size(); ++i)
            active[i] = t.input(x[i]);
        const nabla::var y = f(active);
        t.gradient(y);
        for (std::size_t i = 0; i < x.size(); ++i)
            g[i] = t.adjoint(active[i]);
    }
};

bool agree(const std::vector<double>& a, const std::vector<double>& b) {
    double scale = 0.0;
    for (double v : a)
        scale = std::max(scale, std::abs(v));
    for (std::size_t i = 0; i < a.size(); ++i)
        if (std::abs(a[i] - b[i]) > 1e-12 * scale + 1e-300)
            return false;
    return true;
}

template <class F, class Hand>
int race(const char* title, const F& f, Hand hand, const std::vector<double>& x, long calls) {
    std::vector<double> gh(x.size()), gn(x.size());
    taped tape;
    hand(x, gh);
    tape.gradient(f, x, gn);
    if (!agree(gh, gn)) {
        std::printf("%s: gradients differ\n", title);
        return 1;
    }
    std::vector<nabla_bench::contender> c{{"hand-written gradient"}, {"nabla tape (var)"}};
    nabla_bench::race(
        c, calls, 5,
        [&](long) {
            hand(x, gh);
            nabla_bench::keep(gh[0]);
        },
        [&](long) {
            tape.gradient(f, x, gn);
            nabla_bench::keep(gn[0]);
        });
    nabla_bench::report(title, c);
    std::printf("  tape: %zu statements, %zu partials, %.1f bytes per partial with the statement "
                "ends, %.2f MB reserved\n",
                tape.t.statements(), tape.t.partials(),
                double(tape.t.bytes_used() - tape.t.statements() * sizeof(double)) /
                    double(tape.t.partials()),
                tape.t.bytes_reserved() / 1e6);
    return 0;
}

std::vector<double> points(std::size_t n, double scale) {
    std::vector<double> x(n);
    for (std::size_t i = 0; i < n; ++i)
        x[i] = scale * (0.5 + 0.4 * std::sin(0.37 * double(i)));
    return x;
}

// A jittered cubic lattice with spacing 1.1 (no two particles close).
std::vector<double> lattice(std::size_t particles) {
    std::size_t side = 1;
    while (side * side * side < particles)
        ++side;
    std::vector<double> q;
    for (std::size_t p = 0; p < particles; ++p) {
        const std::size_t i = p % side, j = (p / side) % side, k = p / (side * side);
        q.push_back(1.1 * double(i) + 0.05 * std::sin(double(p)));
        q.push_back(1.1 * double(j) + 0.05 * std::cos(double(p)));
        q.push_back(1.1 * double(k) + 0.05 * std::sin(2.0 * double(p)));
    }
    return q;
}

}  // namespace

int main() {
    int failed = 0;
    failed += race("extended Rosenbrock, n = 1000", rosenbrock, rosenbrock_by_hand,
                   points(1000, 1.0), 2000);
    failed += race("extended Rosenbrock, n = 100000", rosenbrock, rosenbrock_by_hand,
                   points(100000, 1.0), 20);
    failed +=
        race("Lennard-Jones, N = 256", lennard_jones, lennard_jones_by_hand, lattice(256), 40);
    failed +=
        race("Lennard-Jones, N = 1024", lennard_jones, lennard_jones_by_hand, lattice(1024), 3);
    failed +=
        race("log-sum-exp, n = 100000", log_sum_exp, log_sum_exp_by_hand, points(100000, 3.0), 20);
    return failed;
}
