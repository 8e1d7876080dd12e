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

#if defined(NABLA_BENCH_ADOLC)
#include <adolc/adolc.h>
#endif
#if defined(NABLA_BENCH_SACADO)
#include <Sacado_trad.hpp>
#endif

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

#if defined(NABLA_BENCH_ADOLC) || defined(NABLA_BENCH_SACADO)
// The peers in their own idiom: a named active type everywhere (their temporaries are not meant to
// be held with auto), the same arithmetic as the generic functions above.
template <class V>
V rosenbrock_typed(const std::vector<V>& x) {
    V sum = 0.0;
    for (std::size_t i = 0; i + 1 < x.size(); ++i) {
        V a = x[i + 1] - x[i] * x[i];
        V b = 1.0 - x[i];
        sum += 100.0 * a * a + b * b;
    }
    return sum;
}

template <class V>
V lennard_jones_typed(const std::vector<V>& q) {
    const std::size_t n = q.size() / 3;
    V e = 0.0;
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = i + 1; j < n; ++j) {
            V dx = q[3 * i] - q[3 * j];
            V dy = q[3 * i + 1] - q[3 * j + 1];
            V dz = q[3 * i + 2] - q[3 * j + 2];
            V r2 = dx * dx + dy * dy + dz * dz;
            V s6 = 1.0 / (r2 * r2 * r2);
            e += 4.0 * (s6 * s6 - s6);
        }
    return e;
}

template <class V, class Value>
V log_sum_exp_typed(const std::vector<V>& x, Value value) {
    double m = -1e300;
    for (const V& v : x)
        m = std::max(m, value(v));
    V s = 0.0;
    for (const V& v : x)
        s += exp(v - m);
    return log(s) + m;
}
#endif

#if defined(NABLA_BENCH_ADOLC)
// Records the trace with tag `tag` at x.
template <class F>
void adolc_trace(short tag, const F& f, const std::vector<double>& x) {
    trace_on(tag);
    std::vector<adouble> a(x.size());
    for (std::size_t i = 0; i < x.size(); ++i)
        a[i] <<= x[i];
    adouble y = f(a);
    double value;
    y >>= value;
    trace_off();
}
#endif

#if defined(NABLA_BENCH_SACADO)
// Sacado's reverse mode (Rad): independent variables are made afresh on each call, Gradcomp()
// sweeps and releases the recording.
using rad = Sacado::Rad::ADvar<double>;

template <class F>
void sacado_gradient(const F& f, const std::vector<double>& x, std::vector<double>& g) {
    std::vector<rad> a(x.size());
    for (std::size_t i = 0; i < x.size(); ++i)
        a[i] = x[i];
    rad y = f(a);
    rad::Gradcomp();
    for (std::size_t i = 0; i < x.size(); ++i)
        g[i] = a[i].adj();
}
#endif

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

template <class F, class Hand, class AdolcF, class SacadoF>
int race(const char* title,
         const F& f,
         Hand hand,
         [[maybe_unused]] const AdolcF& adolc_f,
         [[maybe_unused]] const SacadoF& sacado_f,
         const std::vector<double>& x,
         long calls) {
    std::vector<double> gh(x.size()), gn(x.size());
    taped tape;
    hand(x, gh);
    tape.gradient(f, x, gn);
    if (!agree(gh, gn)) {
        std::printf("%s: gradients differ\n", title);
        return 1;
    }
    std::vector<nabla_bench::contender> c{{"hand-written gradient"}, {"nabla tape (var)"}};
#if defined(NABLA_BENCH_ADOLC)
    c.push_back({"ADOL-C, traced each call"});
    c.push_back({"ADOL-C, trace reused"});
    std::vector<double> ga(x.size());
    const short tag = 1;
    adolc_trace(tag, adolc_f, x);
    gradient(tag, int(x.size()), x.data(), ga.data());
    if (!agree(gh, ga)) {
        std::printf("%s: ADOL-C's gradient differs\n", title);
        return 1;
    }
    std::size_t stats[STAT_SIZE];
    tapestats(tag, stats);
#endif
#if defined(NABLA_BENCH_SACADO)
    c.push_back({"Sacado Rad, each call"});
    std::vector<double> gs(x.size());
    sacado_gradient(sacado_f, x, gs);
    if (!agree(gh, gs)) {
        std::printf("%s: Sacado's gradient differs\n", title);
        return 1;
    }
#endif
    nabla_bench::race(
        c, calls, 5,
        [&](long) {
            hand(x, gh);
            nabla_bench::keep(gh[0]);
        },
        [&](long) {
            tape.gradient(f, x, gn);
            nabla_bench::keep(gn[0]);
        }
#if defined(NABLA_BENCH_ADOLC)
        ,
        [&](long) {
            adolc_trace(tag, adolc_f, x);
            gradient(tag, int(x.size()), x.data(), ga.data());
            nabla_bench::keep(ga[0]);
        },
        [&](long) {
            gradient(tag, int(x.size()), x.data(), ga.data());
            nabla_bench::keep(ga[0]);
        }
#endif
#if defined(NABLA_BENCH_SACADO)
        ,
        [&](long) {
            sacado_gradient(sacado_f, x, gs);
            nabla_bench::keep(gs[0]);
        }
#endif
    );
    nabla_bench::report(title, c);
    const double tape_bytes = double(tape.t.bytes_used());
    std::printf("  nabla tape: %zu statements, %zu partials, %.2f MB (%.1f bytes per partial, "
                "scratch and adjoints included)\n",
                tape.t.statements(), tape.t.partials(), tape_bytes / 1e6,
                tape_bytes / double(tape.t.partials()));
#if defined(NABLA_BENCH_ADOLC)
    std::printf("  ADOL-C trace: %zu operations, %zu locations, %zu values\n",
                stats[NUM_OPERATIONS], stats[NUM_LOCATIONS], stats[NUM_VALUES]);
#endif
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
#if defined(NABLA_BENCH_ADOLC)
    const auto adolc_rosenbrock = rosenbrock_typed<adouble>;
    const auto adolc_lennard_jones = lennard_jones_typed<adouble>;
    const auto adolc_log_sum_exp = [](const std::vector<adouble>& x) {
        return log_sum_exp_typed(x, [](const adouble& v) { return v.value(); });
    };
#else
    const auto adolc_rosenbrock = nullptr;
    const auto adolc_lennard_jones = nullptr;
    const auto adolc_log_sum_exp = nullptr;
#endif
#if defined(NABLA_BENCH_SACADO)
    const auto sacado_rosenbrock = rosenbrock_typed<rad>;
    const auto sacado_lennard_jones = lennard_jones_typed<rad>;
    const auto sacado_log_sum_exp = [](const std::vector<rad>& x) {
        return log_sum_exp_typed(x, [](const rad& v) { return v.val(); });
    };
#else
    const auto sacado_rosenbrock = nullptr;
    const auto sacado_lennard_jones = nullptr;
    const auto sacado_log_sum_exp = nullptr;
#endif
    int failed = 0;
    failed += race("extended Rosenbrock, n = 1000", rosenbrock, rosenbrock_by_hand,
                   adolc_rosenbrock, sacado_rosenbrock, points(1000, 1.0), 2000);
    failed += race("extended Rosenbrock, n = 100000", rosenbrock, rosenbrock_by_hand,
                   adolc_rosenbrock, sacado_rosenbrock, points(100000, 1.0), 20);
    failed += race("Lennard-Jones, N = 256", lennard_jones, lennard_jones_by_hand,
                   adolc_lennard_jones, sacado_lennard_jones, lattice(256), 40);
    failed += race("Lennard-Jones, N = 1024", lennard_jones, lennard_jones_by_hand,
                   adolc_lennard_jones, sacado_lennard_jones, lattice(1024), 3);
    failed += race("log-sum-exp, n = 100000", log_sum_exp, log_sum_exp_by_hand, adolc_log_sum_exp,
                   sacado_log_sum_exp, points(100000, 3.0), 20);
    return failed;
}
