// Kepler's problem (eccentricity 0.5) over 1,000 orbits by nabla's Taylor integrator: the energy
// and angular-momentum errors and the distance from the start after whole periods, beside
// Boost.Odeint's runge_kutta_dopri5 and bulirsch_stoer at a tolerance of 1e-12 where Boost is
// installed. Apoapsis passages are found as events.
//
//   kepler_taylor [orbits]

#include <nabla/nabla.hpp>

#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numbers>

#if __has_include(<boost/numeric/odeint.hpp>)
#include <boost/numeric/odeint.hpp>
#define NABLA_EXAMPLE_ODEINT 1
#endif

namespace {

using state = std::array<double, 4>;  // x, y, vx, vy; G M = 1

const auto kepler = [](auto, const auto& s) {
    using std::pow;
    const auto w = pow(s[0] * s[0] + s[1] * s[1], -1.5);
    return std::array{s[2], s[3], -(s[0] * w), -(s[1] * w)};
};

double energy(const state& s) {
    return 0.5 * (s[2] * s[2] + s[3] * s[3]) - 1.0 / std::hypot(s[0], s[1]);
}
double momentum(const state& s) {
    return s[0] * s[3] - s[1] * s[2];
}
double distance(const state& a, const state& b) {
    return std::hypot(a[0] - b[0], a[1] - b[1]);
}

void report(const char* name, const state& start, const state& end, double seconds, long steps) {
    std::printf("  %-34s energy %8.1e  momentum %8.1e  position %8.1e  %7ld steps %8.3f s\n", name,
                std::abs(energy(end) - energy(start)), std::abs(momentum(end) - momentum(start)),
                distance(end, start), steps, seconds);
}

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
    const int orbits = argc > 1 ? std::atoi(argv[1]) : 1000;
    const double e = 0.5;
    const state start{1.0 - e, 0.0, 0.0, std::sqrt((1.0 + e) / (1.0 - e))};
    const double end = orbits * 2 * std::numbers::pi;  // the period of a = 1 is 2 pi
    std::printf("Kepler's problem, e = %g, %d orbits: errors at the end\n", e, orbits);

    auto clock = std::chrono::steady_clock::now();
    nabla::taylor_integrator ode(kepler, 0.0, start, {.tolerance = 1e-15});
    // Apoapsis: the radial velocity x vx + y vy crosses 0 from above.
    ode.add_event([](auto, const auto& s) { return s[0] * s[2] + s[1] * s[3]; },
                  nabla::event_direction::falling);
    const auto result = ode.propagate_until(end);
    const state taylor{ode.state()[0], ode.state()[1], ode.state()[2], ode.state()[3]};
    report("nabla::taylor_integrator, 1e-15", start, taylor, seconds_since(clock),
           static_cast<long>(result.steps));
    // Apoapsis half a period after each periapsis: pi, 3 pi, ...
    double worst = 0.0;
    for (std::size_t i = 0; i < result.events.size(); ++i)
        worst = std::max(
            worst, std::abs(result.events[i].time - (2.0 * double(i) + 1.0) * std::numbers::pi));
    std::printf("  %zu apoapses found as events, their times within %.1e of (2n + 1) pi\n",
                result.events.size(), worst);

#ifdef NABLA_EXAMPLE_ODEINT
    using namespace boost::numeric::odeint;
    const auto rhs = [](const state& s, state& ds, double) {
        const double w = std::pow(s[0] * s[0] + s[1] * s[1], -1.5);
        ds = {s[2], s[3], -s[0] * w, -s[1] * w};
    };
    {
        clock = std::chrono::steady_clock::now();
        state s = start;
        const auto steps = integrate_adaptive(
            make_controlled(1e-12, 1e-12, runge_kutta_dopri5<state>()), rhs, s, 0.0, end, 1e-3);
        report("Odeint runge_kutta_dopri5, 1e-12", start, s, seconds_since(clock),
               static_cast<long>(steps));
    }
    {
        clock = std::chrono::steady_clock::now();
        state s = start;
        bulirsch_stoer<state> stepper(1e-12, 1e-12);
        const auto steps = integrate_adaptive(stepper, rhs, s, 0.0, end, 1e-3);
        report("Odeint bulirsch_stoer, 1e-12", start, s, seconds_since(clock),
               static_cast<long>(steps));
    }
#else
    std::printf("  (Boost.Odeint is not installed: libboost-dev)\n");
#endif
    const bool ok = std::abs(energy(taylor) - energy(start)) < 1e-11 &&
                    distance(taylor, start) < 1e-8 && worst < 1e-9 &&
                    result.events.size() == static_cast<std::size_t>(orbits);
    return ok ? 0 : 1;
}
