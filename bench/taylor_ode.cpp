// nabla::taylor_integrator on the Lorenz system (t = 0..10) and the Kepler problem
// (eccentricity 0.5, 10 orbits), side by side with:
//   - a hand-written Taylor integrator: the same order, step rule and dense polynomial, with the
//     coefficient recurrences of each system written out by hand, O(K^2) per step;
//   - the same integrator on nabla::taylor<double, K> numbers, f re-evaluated at every order
//     (O(K^3) per step), the way a Taylor integrator is written on a Taylor-number type;
//   - Boost.Odeint's runge_kutta_dopri5 (controlled) and bulirsch_stoer at equal error: every
//     integrator swept over tolerances, and at each error level each one's cheapest run that
//     reaches it (a peer is never run past the tolerance where it stops getting more accurate).
// Errors: Kepler's against its exact return to the initial state after 10 periods, Lorenz's
// against nabla's integrator in long double at a tolerance of 1e-19.
//
//   build-gcc/bench/taylor_ode

#include <nabla/forward/taylor_ode.hpp>
#include <nabla/nabla.hpp>

#include <boost/numeric/odeint.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <limits>
#include <numbers>
#include <optional>
#include <vector>

#include "bench_util.hpp"

namespace {

using state3 = std::array<double, 3>;
using state4 = std::array<double, 4>;

const auto lorenz = [](auto, const auto& y) {
    return std::array{10.0 * (y[1] - y[0]), y[0] * (28.0 - y[2]) - y[1],
                      y[0] * y[1] - 8.0 / 3.0 * y[2]};
};

const auto kepler = [](auto, const auto& s) {
    using std::pow;
    const auto w = pow(s[0] * s[0] + s[1] * s[1], -1.5);
    return std::array{s[2], s[3], -(s[0] * w), -(s[1] * w)};
};

constexpr double eccentricity = 0.5;
const state4 kepler_start{1.0 - eccentricity, 0.0, 0.0,
                          std::sqrt((1.0 + eccentricity) / (1.0 - eccentricity))};
constexpr double kepler_end = 10 * 2 * std::numbers::pi;
const state3 lorenz_start{1.0, 1.0, 1.0};
constexpr double lorenz_end = 10.0;

// Jorba and Zou's step, as nabla computes it, from the coefficients of orders K-1 and K.
template <std::size_t K, std::size_t N>
double jorba_zou_step(const std::array<std::array<double, K + 1>, N>& c) {
    double magnitude = 0, before = 0, last = 0;
    for (const auto& ci : c) {
        magnitude = std::max(magnitude, std::abs(ci[0]));
        before = std::max(before, std::abs(ci[K - 1]));
        last = std::max(last, std::abs(ci[K]));
    }
    const double s = std::max(1.0, magnitude);
    const double rho = std::min(std::pow(s / before, 1.0 / (K - 1)), std::pow(s / last, 1.0 / K));
    return rho * std::exp(-0.7 / (K - 1)) / (std::numbers::e * std::numbers::e);
}

template <std::size_t K, std::size_t N>
void advance(std::array<double, N>& state,
             double& t,
             double t_end,
             const std::array<std::array<double, K + 1>, N>& c) {
    double h = jorba_zou_step<K>(c);
    const bool last = t_end - t <= h;
    if (last)
        h = t_end - t;
    for (std::size_t i = 0; i < N; ++i) {
        double sum = c[i][K];
        for (std::size_t k = K; k-- > 0;)
            sum = sum * h + c[i][k];
        state[i] = sum;
    }
    t = last ? t_end : t + h;
}

// Lorenz by hand: x' = 10 (y - x), y' = x (28 - z) - y, z' = x y - 8/3 z.
template <std::size_t K>
[[gnu::noinline]] state3 lorenz_by_hand(state3 s, double t_end) {
    std::array<std::array<double, K + 1>, 3> c{};
    auto& [x, y, z] = c;
    double t = 0;
    while (t < t_end) {
        x[0] = s[0];
        y[0] = s[1];
        z[0] = s[2];
        for (std::size_t k = 0; k < K; ++k) {
            double xz = 0, xy = 0;
            for (std::size_t j = 0; j <= k; ++j) {
                xz += x[j] * z[k - j];
                xy += x[j] * y[k - j];
            }
            const double r = 1.0 / double(k + 1);
            x[k + 1] = 10.0 * (y[k] - x[k]) * r;
            y[k + 1] = ((k == 0 ? 28.0 * x[0] : 28.0 * x[k]) - xz - y[k]) * r;
            z[k + 1] = (xy - 8.0 / 3.0 * z[k]) * r;
        }
        advance<K>(s, t, t_end, c);
    }
    return s;
}

// Kepler by hand: w = (x^2 + y^2)^(-3/2) by the power recurrence, then the products.
template <std::size_t K>
[[gnu::noinline]] state4 kepler_by_hand(state4 s, double t_end) {
    std::array<std::array<double, K + 1>, 4> c{};
    auto& [x, y, u, v] = c;
    std::array<double, K + 1> r2{}, w{};
    double t = 0;
    while (t < t_end) {
        for (std::size_t i = 0; i < 4; ++i)
            c[i][0] = s[i];
        double inverse = 0;
        for (std::size_t k = 0; k < K; ++k) {
            double sum = 0;
            for (std::size_t j = 0; j <= k; ++j)
                sum += x[j] * x[k - j] + y[j] * y[k - j];
            r2[k] = sum;
            if (k == 0) {
                w[0] = std::pow(sum, -1.5);
                inverse = 1.0 / sum;
            } else {
                double p = 0;
                for (std::size_t j = 0; j < k; ++j)
                    p += (-1.5 * double(k - j) - double(j)) * r2[k - j] * w[j];
                w[k] = p / double(k) * inverse;
            }
            double ax = 0, ay = 0;
            for (std::size_t j = 0; j <= k; ++j) {
                ax += x[j] * w[k - j];
                ay += y[j] * w[k - j];
            }
            const double r = 1.0 / double(k + 1);
            x[k + 1] = u[k] * r;
            y[k + 1] = v[k] * r;
            u[k + 1] = -ax * r;
            v[k + 1] = -ay * r;
        }
        advance<K>(s, t, t_end, c);
    }
    return s;
}

// The same integrator on nabla::taylor numbers: f evaluated on the whole series at every order.
template <std::size_t K, std::size_t N, class F>
[[gnu::noinline]] std::array<double, N>
by_taylor_numbers(const F& f, std::array<double, N> s, double t_end) {
    using number = nabla::taylor<double, K>;
    std::array<number, N> y{};
    double t = 0;
    while (t < t_end) {
        for (std::size_t i = 0; i < N; ++i)
            y[i] = number(s[i]);
        for (std::size_t k = 0; k < K; ++k) {
            const auto d = f(number(t), y);
            for (std::size_t i = 0; i < N; ++i)
                y[i].c[k + 1] = d[i].c[k] / double(k + 1);
        }
        std::array<std::array<double, K + 1>, N> c;
        for (std::size_t i = 0; i < N; ++i)
            c[i] = y[i].c;
        advance<K>(s, t, t_end, c);
    }
    return s;
}

template <class T, std::size_t N, class F>
[[gnu::noinline]] std::array<double, N>
by_nabla(const F& f, const std::array<double, N>& s, double t_end, double tolerance, long* steps) {
    nabla::taylor_integrator<T> ode(f, T(0), s, {.tolerance = tolerance});
    const auto r = ode.propagate_until(T(t_end));
    if (steps != nullptr)
        *steps = static_cast<long>(r.steps);
    std::array<double, N> out;
    for (std::size_t i = 0; i < N; ++i)
        out[i] = static_cast<double>(ode.state()[i]);
    return out;
}

// Odeint on plain doubles.
template <std::size_t N, class F>
struct odeint_system {
    F f;
    void operator()(const std::array<double, N>& y, std::array<double, N>& dy, double t) const {
        dy = f(t, y);
    }
};

template <std::size_t N, class F>
[[gnu::noinline]] std::array<double, N>
by_dopri5(const F& f, std::array<double, N> s, double t_end, double tolerance, long* steps) {
    using namespace boost::numeric::odeint;
    auto stepper =
        make_controlled(tolerance, tolerance, runge_kutta_dopri5<std::array<double, N>>());
    const auto n = integrate_adaptive(stepper, odeint_system<N, F>{f}, s, 0.0, t_end, 1e-3);
    if (steps != nullptr)
        *steps = static_cast<long>(n);
    return s;
}

template <std::size_t N, class F>
[[gnu::noinline]] std::array<double, N> by_bulirsch_stoer(
    const F& f, std::array<double, N> s, double t_end, double tolerance, long* steps) {
    using namespace boost::numeric::odeint;
    bulirsch_stoer<std::array<double, N>> stepper(tolerance, tolerance);
    const auto n = integrate_adaptive(stepper, odeint_system<N, F>{f}, s, 0.0, t_end, 1e-3);
    if (steps != nullptr)
        *steps = static_cast<long>(n);
    return s;
}

template <std::size_t N>
double error(const std::array<double, N>& a, const std::array<double, N>& b) {
    double e = 0;
    for (std::size_t i = 0; i < N; ++i)
        e = std::max(e, std::abs(a[i] - b[i]));
    return e;
}

template <std::size_t N>
void keep_state(const std::array<double, N>& s) {
    for (double v : s)
        nabla_bench::keep(v);
}

// One run of a sweep: the tolerance asked for, the error it gave, its steps and its time (the
// best of five calls).
struct sweep_point {
    double tolerance, error;
    long steps;
    double seconds;
};

// The runs of an integrator at tolerances from `loosest` down by `factor` to `tightest`;
// Odeint throws below the tolerances it can keep, which ends its sweep.
template <class Run>
std::vector<sweep_point> sweep(Run run, double loosest, double tightest, double factor) {
    std::vector<sweep_point> points;
    for (double tol = loosest; tol >= tightest * 0.999; tol /= factor) {
        long steps = 0;
        try {
            const double e = run(tol, &steps);
            double best = std::numeric_limits<double>::infinity();
            for (int call = 0; call < 5; ++call) {
                const auto start = std::chrono::steady_clock::now();
                run(tol, nullptr);
                best = std::min(
                    best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
                              .count());
            }
            points.push_back({tol, e, steps, best});
        } catch (const std::exception&) {
            break;
        }
    }
    return points;
}

// The fastest run whose error is at most `target`, or none where no tolerance of the sweep
// reaches it. (The fastest, not the loosest tolerance: a looser tolerance lowers the Taylor
// integrator's order and can take more time in more steps.)
std::optional<sweep_point> cheapest(const std::vector<sweep_point>& points, double target) {
    std::optional<sweep_point> best;
    for (const sweep_point& p : points)
        if (p.error <= target && (!best || p.seconds < best->seconds))
            best = p;
    return best;
}

template <std::size_t K, std::size_t N, class F, class Hand>
int workload(const char* title,
             const F& f,
             const std::array<double, N>& start,
             double t_end,
             const std::array<double, N>& reference,
             Hand hand) {
    constexpr double tolerance = 1e-15;  // order 19 by Jorba and Zou's rule
    static_assert(K == 19);
    long taylor_steps = 0;
    const auto mine = by_nabla<double>(f, start, t_end, tolerance, &taylor_steps);
    const auto handed = hand(start, t_end);
    const auto numbers = by_taylor_numbers<K>(f, start, t_end);
    const double taylor_error = error(mine, reference);
    if (error(mine, handed) > 1e-9 * (1 + error(handed, std::array<double, N>{})) ||
        error(numbers, handed) > 1e-9 * (1 + error(handed, std::array<double, N>{}))) {
        std::printf("%s: nabla and the hand-written integrator disagree\n", title);
        return 1;
    }

    // At nabla's default tolerance: nabla against the same method written by hand.
    std::vector<nabla_bench::contender> contenders{{"hand-written Taylor, O(K^2)"},
                                                   {"nabla::taylor_integrator"},
                                                   {"taylor<double,19> numbers"}};
    nabla_bench::race(
        contenders, 3, 15, [&](long) { keep_state(hand(start, t_end)); },
        [&](long) { keep_state(by_nabla<double>(f, start, t_end, tolerance, nullptr)); },
        [&](long) { keep_state(by_taylor_numbers<K>(f, start, t_end)); });
    nabla_bench::report(title, contenders);
    std::printf("  nabla: error %.2e in %ld steps (order 19, tolerance 1e-15)\n", taylor_error,
                taylor_steps);

    // Against Odeint at equal error: each integrator swept over tolerances (nabla from 1e-4 down
    // by 10^(1/2), its order following the tolerance; Odeint's steppers from 1e-4 down by
    // 10^(1/4) until they throw), and at each error level each one's fastest run that reaches it.
    const auto nabla_run = [&](double tol, long* steps) {
        return error(by_nabla<double>(f, start, t_end, tol, steps), reference);
    };
    const auto dopri_run = [&](double tol, long* steps) {
        return error(by_dopri5(f, start, t_end, tol, steps), reference);
    };
    const auto bs_run = [&](double tol, long* steps) {
        return error(by_bulirsch_stoer(f, start, t_end, tol, steps), reference);
    };
    const auto nabla_points = sweep(nabla_run, 1e-4, 1e-15, std::sqrt(10.0));
    const auto dopri_points = sweep(dopri_run, 1e-4, 1e-17, std::pow(10.0, 0.25));
    const auto bs_points = sweep(bs_run, 1e-4, 1e-17, std::pow(10.0, 0.25));
    const auto floor = [](const std::vector<sweep_point>& points) {
        double e = std::numeric_limits<double>::infinity();
        for (const sweep_point& p : points)
            e = std::min(e, p.error);
        return e;
    };
    std::printf("  smallest errors reached: nabla %.1e, dopri5 %.1e, bulirsch_stoer %.1e\n",
                floor(nabla_points), floor(dopri_points), floor(bs_points));
    for (const double target : {1e-6, 1e-9, 1e-12, taylor_error}) {
        const auto a = cheapest(nabla_points, target);
        const auto b = cheapest(dopri_points, target);
        const auto c = cheapest(bs_points, target);
        if (!a)
            continue;
        std::vector<nabla_bench::contender> level{{"nabla"}, {"dopri5"}, {"bulirsch_stoer"}};
        nabla_bench::race(
            level, 3, 15,
            [&](long) { keep_state(by_nabla<double>(f, start, t_end, a->tolerance, nullptr)); },
            [&](long) {
                if (b)
                    keep_state(by_dopri5(f, start, t_end, b->tolerance, nullptr));
            },
            [&](long) {
                if (c)
                    keep_state(by_bulirsch_stoer(f, start, t_end, c->tolerance, nullptr));
            });
        std::printf("  error <= %.1e: nabla %.1f us (tolerance %.1e, %ld steps, error %.1e)",
                    target, level[0].best_ns / 1e3, a->tolerance, a->steps, a->error);
        const auto peer = [&](const char* name, const std::optional<sweep_point>& p,
                              const nabla_bench::contender& timed) {
            if (p)
                std::printf("; %s %.1f us, %.2fx (tolerance %.1e, %ld steps, error %.1e)", name,
                            timed.best_ns / 1e3, timed.best_ns / level[0].best_ns, p->tolerance,
                            p->steps, p->error);
            else
                std::printf("; %s does not reach it", name);
        };
        peer("dopri5", b, level[1]);
        peer("bulirsch_stoer", c, level[2]);
        std::printf("\n");
    }
    return 0;
}

}  // namespace

int main() {
    // Lorenz's reference: nabla's integrator in long double at a tolerance of 1e-19.
    const auto lorenz_reference =
        by_nabla<long double>(lorenz, lorenz_start, lorenz_end, 1e-19, nullptr);
    int failed = 0;
    failed += workload<19>("Taylor integrator, Lorenz to t = 10 (one integration)", lorenz,
                           lorenz_start, lorenz_end, lorenz_reference,
                           [](const state3& s, double t) { return lorenz_by_hand<19>(s, t); });
    failed += workload<19>("Taylor integrator, Kepler e = 0.5, 10 orbits (one integration)", kepler,
                           kepler_start, kepler_end, kepler_start,
                           [](const state4& s, double t) { return kepler_by_hand<19>(s, t); });
    return failed;
}
