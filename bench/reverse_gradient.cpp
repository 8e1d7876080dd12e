// Reverse-mode gradients of programs with run-time loops, side by side with hand-written
// gradients: extended Rosenbrock (n = 10^3, 10^5), Lennard-Jones energy of N = 256 and
// 1024 particles (all pairs), log-sum-exp of n = 10^5 values. Each call records the tape afresh
// (the tape's memory is kept between calls, as in a real simulation loop) and sweeps it, once on
// a tape used directly, the function called inline, and once through nabla::grad.
// 1000 classic Runge-Kutta steps of the Lotka-Volterra equations w.r.t. their four parameters.
// Each workload prints nabla's time as a ratio to the hand-written gradient's, next to ADOL-C's
// and Sacado's (bench/RESULTS.md).
//
//   build-gcc/bench/reverse_gradient

#include <nabla/api/grad.hpp>
#include <nabla/reverse.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

#include "bench_util.hpp"
#include "peak_memory.hpp"

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

// The largest of x's values as a plain number (log-sum-exp subtracts it; no derivative flows
// through it), with `value` reading a value. One out-of-line helper for every contender, the
// hand-written gradient included: inlined into the function, g++ 12 may keep the running maximum
// in memory for the whole loop (the register allocator spills it around the exp calls of the loop
// after), a chain of stores and reloads that cost nabla 0.4x hand-written time in some builds and
// nothing in others, depending on the code around it.
template <class V, class Value>
[[gnu::noinline]] double largest(const std::vector<V>& x, Value value) {
    double m = -1e300;
    for (const V& v : x)
        m = std::max(m, value(v));
    return m;
}

const auto log_sum_exp = [](const auto& x) {
    using T = std::decay_t<decltype(x[0])>;
    using std::exp, std::log;
    const double m = largest(x, [](const T& v) { return static_cast<double>(v); });
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
    const double m = largest(x, [](double v) { return v; });
    double s = 0.0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        g[i] = std::exp(x[i] - m);
        s += g[i];
    }
    const double inverse = 1.0 / s;
    for (double& v : g)
        v *= inverse;
}

// 1000 steps of RK4 (h = 0.01) for the Lotka-Volterra equations
//   x' = a x - b x y,   y' = c x y - d y,   x(0) = 1, y(0) = 0.5,
// with parameters p = (a, b, c, d); the output is x(10) + y(10). Written with the named active
// type for every stage, as integrator code is (this idiom suits every library here).
const auto lotka_volterra_rk4 = [](const auto& p) {
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

// The same integration with its forward sensitivities S = d(x, y)/dp carried through every stage
// by hand: the exact derivative of the discrete RK4 map.
void lotka_volterra_rk4_by_hand(const std::vector<double>& p, std::vector<double>& g) {
    const double a = p[0], b = p[1], c = p[2], d = p[3], h = 0.01;
    double x = 1.0, y = 0.5;
    double sx[4] = {0, 0, 0, 0}, sy[4] = {0, 0, 0, 0};
    // One stage at (u, v) with sensitivities (su, sv): the slope and its sensitivities.
    const auto stage = [&](double u, double v, const double* su, const double* sv, double& fx,
                           double& fy, double* dfx, double* dfy) {
        fx = a * u - b * u * v;
        fy = c * u * v - d * v;
        const double j11 = a - b * v, j12 = -b * u, j21 = c * v, j22 = c * u - d;
        for (int k = 0; k < 4; ++k) {
            dfx[k] = j11 * su[k] + j12 * sv[k];
            dfy[k] = j21 * su[k] + j22 * sv[k];
        }
        dfx[0] += u;
        dfx[1] -= u * v;
        dfy[2] += u * v;
        dfy[3] -= v;
    };
    for (int step = 0; step < 1000; ++step) {
        double k1x, k1y, k2x, k2y, k3x, k3y, k4x, k4y;
        double d1x[4], d1y[4], d2x[4], d2y[4], d3x[4], d3y[4], d4x[4], d4y[4];
        double tx[4], ty[4];
        stage(x, y, sx, sy, k1x, k1y, d1x, d1y);
        for (int k = 0; k < 4; ++k) {
            tx[k] = sx[k] + 0.5 * h * d1x[k];
            ty[k] = sy[k] + 0.5 * h * d1y[k];
        }
        stage(x + 0.5 * h * k1x, y + 0.5 * h * k1y, tx, ty, k2x, k2y, d2x, d2y);
        for (int k = 0; k < 4; ++k) {
            tx[k] = sx[k] + 0.5 * h * d2x[k];
            ty[k] = sy[k] + 0.5 * h * d2y[k];
        }
        stage(x + 0.5 * h * k2x, y + 0.5 * h * k2y, tx, ty, k3x, k3y, d3x, d3y);
        for (int k = 0; k < 4; ++k) {
            tx[k] = sx[k] + h * d3x[k];
            ty[k] = sy[k] + h * d3y[k];
        }
        stage(x + h * k3x, y + h * k3y, tx, ty, k4x, k4y, d4x, d4y);
        x = x + h / 6.0 * (k1x + 2.0 * k2x + 2.0 * k3x + k4x);
        y = y + h / 6.0 * (k1y + 2.0 * k2y + 2.0 * k3y + k4y);
        for (int k = 0; k < 4; ++k) {
            sx[k] += h / 6.0 * (d1x[k] + 2.0 * d2x[k] + 2.0 * d3x[k] + d4x[k]);
            sy[k] += h / 6.0 * (d1y[k] + 2.0 * d2y[k] + 2.0 * d3y[k] + d4y[k]);
        }
    }
    for (int k = 0; k < 4; ++k)
        g[k] = sx[k] + sy[k];
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
    const double m = largest(x, value);
    V s = 0.0;
    for (const V& v : x)
        s += exp(v - m);
    return log(s) + m;
}
#endif

#if defined(NABLA_BENCH_ADOLC)
// Records the trace with tag `tag` at x; with keep = 1, ADOL-C keeps the values its reverse
// sweep needs (its Taylor stack), so a reverse sweep (fos_reverse) can follow without another
// forward pass, which is how ADOL-C takes a gradient of a function it traces each call.
template <class F>
void adolc_trace(short tag, const F& f, const std::vector<double>& x, int keep = 0) {
    trace_on(tag, keep);
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
        t.inputs(x, active);
        const nabla::var y = f(active);
        t.gradient(y);
        t.adjoints(active, g);
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

// Prints the peak memory of one gradient from a fresh start for each library: a fresh tape,
// trace or recording in a child process (bench/peak_memory.hpp). main() measures every workload
// before it times any, so that no memory freed by an earlier workload is reused unseen.
template <class F, class AdolcF, class SacadoF>
void peak_memory(const char* title,
                 const F& f,
                 [[maybe_unused]] const AdolcF& adolc_f,
                 [[maybe_unused]] const SacadoF& sacado_f,
                 const std::vector<double>& x) {
    const long nabla_peak = nabla_bench::peak_bytes([&] {
        taped fresh;
        std::vector<double> g(x.size());
        fresh.gradient(f, x, g);
    });
    // -1: not measurable here.
    const auto megabytes = [](long bytes) { return bytes < 0 ? -1.0 : double(bytes) / 1e6; };
    // Each figure also goes to the CSV file, when one is asked for (bench_util.hpp).
    const auto record_peak = [&](const char* library, long bytes) {
        if (bytes >= 0)
            nabla_bench::record(title, library, "peak MB", megabytes(bytes));
    };
    std::printf("  %-48s nabla %7.2f MB", title, megabytes(nabla_peak));
    record_peak("nabla", nabla_peak);
#if defined(NABLA_BENCH_ADOLC)
    const long adolc_peak = nabla_bench::peak_bytes([&] {
        const short fresh_tag = 2;  // a tag this process never traces
        std::vector<double> g(x.size());
        adolc_trace(fresh_tag, adolc_f, x, 1);
        double weight = 1.0;
        fos_reverse(fresh_tag, 1, int(x.size()), &weight, g.data());
    });
    std::printf("   ADOL-C (traced) %7.2f MB", megabytes(adolc_peak));
    record_peak("ADOL-C (traced)", adolc_peak);
#endif
#if defined(NABLA_BENCH_SACADO)
    const long sacado_peak = nabla_bench::peak_bytes([&] {
        std::vector<double> g(x.size());
        sacado_gradient(sacado_f, x, g);
    });
    std::printf("   Sacado %7.2f MB", megabytes(sacado_peak));
    record_peak("Sacado", sacado_peak);
#endif
    std::printf("\n");
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
    // The transformation, as a user calls it: a tape lent per thread, the recorded function
    // called out of line, a new gradient vector each call.
    std::vector<double> gg = nabla::grad(nabla::mode::reverse, f, x);
    if (!agree(gh, gg)) {
        std::printf("%s: nabla::grad's gradient differs\n", title);
        return 1;
    }
    std::vector<nabla_bench::contender> c{
        {"hand-written gradient"}, {"nabla tape (var)"}, {"nabla::grad (reverse)"}};
#if defined(NABLA_BENCH_ADOLC)
    c.push_back({"ADOL-C, traced each call"});
    c.push_back({"ADOL-C, trace reused"});
    std::vector<double> ga(x.size());
    const short tag = 1;
    adolc_trace(tag, adolc_f, x, 1);
    double weight = 1.0;
    fos_reverse(tag, 1, int(x.size()), &weight, ga.data());
    const bool swept_agrees = agree(gh, ga);
    gradient(tag, int(x.size()), x.data(), ga.data());
    if (!swept_agrees || !agree(gh, ga)) {
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
        },
        [&](long) {
            gg = nabla::grad(nabla::mode::reverse, f, x);
            nabla_bench::keep(gg[0]);
        }
#if defined(NABLA_BENCH_ADOLC)
        ,
        [&](long) {
            adolc_trace(tag, adolc_f, x, 1);
            double weight = 1.0;
            fos_reverse(tag, 1, int(x.size()), &weight, ga.data());
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
    std::printf("  nabla tape: %zu statements, %zu partials, %.2f MB (%.1f bytes per statement, "
                "%.1f per partial; scratch and adjoints included)\n",
                tape.t.statements(), tape.t.partials(), tape_bytes / 1e6,
                tape_bytes / double(tape.t.statements()), tape_bytes / double(tape.t.partials()));
    nabla_bench::record(title, "nabla tape", "statements", double(tape.t.statements()));
    nabla_bench::record(title, "nabla tape", "partials", double(tape.t.partials()));
    nabla_bench::record(title, "nabla tape", "tape MB", tape_bytes / 1e6);
    nabla_bench::record(title, "nabla tape", "bytes per statement",
                        tape_bytes / double(tape.t.statements()));
    nabla_bench::record(title, "nabla tape", "bytes per partial",
                        tape_bytes / double(tape.t.partials()));
#if defined(NABLA_BENCH_ADOLC)
    // An operation is a byte, a location a 32-bit locint, a value a double; the Taylor stack
    // holds the values the reverse sweep needs back, doubles too.
    const double trace_bytes = double(stats[NUM_OPERATIONS]) + 4.0 * double(stats[NUM_LOCATIONS]) +
                               8.0 * double(stats[NUM_VALUES]);
    std::printf("  ADOL-C trace: %zu operations, %zu locations, %zu values, %.2f MB; Taylor "
                "stack %zu values, %.2f MB\n",
                stats[NUM_OPERATIONS], stats[NUM_LOCATIONS], stats[NUM_VALUES], trace_bytes / 1e6,
                stats[TAY_STACK_SIZE], 8.0 * double(stats[TAY_STACK_SIZE]) / 1e6);
    nabla_bench::record(title, "ADOL-C", "trace MB", trace_bytes / 1e6);
    nabla_bench::record(title, "ADOL-C", "Taylor stack MB",
                        8.0 * double(stats[TAY_STACK_SIZE]) / 1e6);
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
    const auto adolc_rk4 = [](const std::vector<adouble>& p) { return lotka_volterra_rk4(p); };
#else
    const auto adolc_rosenbrock = nullptr;
    const auto adolc_lennard_jones = nullptr;
    const auto adolc_log_sum_exp = nullptr;
    const auto adolc_rk4 = nullptr;
#endif
#if defined(NABLA_BENCH_SACADO)
    const auto sacado_rosenbrock = rosenbrock_typed<rad>;
    const auto sacado_lennard_jones = lennard_jones_typed<rad>;
    const auto sacado_log_sum_exp = [](const std::vector<rad>& x) {
        return log_sum_exp_typed(x, [](const rad& v) { return v.val(); });
    };
    const auto sacado_rk4 = [](const std::vector<rad>& p) { return lotka_volterra_rk4(p); };
#else
    const auto sacado_rosenbrock = nullptr;
    const auto sacado_lennard_jones = nullptr;
    const auto sacado_log_sum_exp = nullptr;
    const auto sacado_rk4 = nullptr;
#endif
    const std::vector<double> rosenbrock_small = points(1000, 1.0),
                              rosenbrock_large = points(100000, 1.0),
                              lennard_jones_small = lattice(256),
                              lennard_jones_large = lattice(1024),
                              log_sum_exp_x = points(100000, 3.0), rk4_p{1.1, 0.4, 0.1, 0.4};
    // Every workload: title, function, hand-written gradient, the peers' functions, input, calls
    // per timing round. Measured for memory first, before any is timed.
    const auto each_workload = [&](const auto& run) {
        int failed = 0;
        failed += run("extended Rosenbrock, n = 1000", rosenbrock, rosenbrock_by_hand,
                      adolc_rosenbrock, sacado_rosenbrock, rosenbrock_small, 2000);
        failed += run("extended Rosenbrock, n = 100000", rosenbrock, rosenbrock_by_hand,
                      adolc_rosenbrock, sacado_rosenbrock, rosenbrock_large, 20);
        failed += run("Lennard-Jones, N = 256", lennard_jones, lennard_jones_by_hand,
                      adolc_lennard_jones, sacado_lennard_jones, lennard_jones_small, 40);
        failed += run("Lennard-Jones, N = 1024", lennard_jones, lennard_jones_by_hand,
                      adolc_lennard_jones, sacado_lennard_jones, lennard_jones_large, 3);
        failed += run("log-sum-exp, n = 100000", log_sum_exp, log_sum_exp_by_hand,
                      adolc_log_sum_exp, sacado_log_sum_exp, log_sum_exp_x, 20);
        failed += run("RK4, Lotka-Volterra, 1000 steps, 4 parameters", lotka_volterra_rk4,
                      lotka_volterra_rk4_by_hand, adolc_rk4, sacado_rk4, rk4_p, 200);
        return failed;
    };
    std::printf("peak memory of one gradient from a fresh start (one child process each)\n");
    each_workload([](const char* title, const auto& f, auto, const auto& adolc_f,
                     const auto& sacado_f, const std::vector<double>& x, long) {
        peak_memory(title, f, adolc_f, sacado_f, x);
        return 0;
    });
    const int failed =
        each_workload([](const char* title, const auto& f, auto hand, const auto& adolc_f,
                         const auto& sacado_f, const std::vector<double>& x,
                         long calls) { return race(title, f, hand, adolc_f, sacado_f, x, calls); });
    return failed;
}
