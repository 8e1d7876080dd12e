// Taylor-series methods for ODEs: the order-by-order series tape against mpmath and against
// nabla::taylor for every rule, nabla::jet, and nabla::taylor_integrator on problems with known
// solutions (harmonic oscillator, Kepler's return after whole periods, the pendulum's period from
// the complete elliptic integral), with dense output, events, backward steps and its errors.

#include <nabla/nabla.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>
#include <vector>

#include "../rules/function_table.hpp"
#include "taylor_rows.hpp"

namespace {

using nabla_test::order;

// The derivatives 0..order of g at x0, by recording g on a series tape with x the independent
// variable and replaying it one order at a time.
template <class G>
std::array<double, order + 1> tape_derivatives(const G& g, double x0, std::size_t* operations) {
    nabla::series_tape<double> tape(order);
    tape.read_at(order);
    const auto x = tape.time(x0);
    const auto node = tape.node_of(nabla::series_variable<double>(g(x)));
    for (std::size_t k = 1; k <= order; ++k)
        tape.replay(k);
    std::array<double, order + 1> d{};
    double factorial = 1.0;
    for (std::size_t k = 0; k <= order; ++k) {
        if (k > 0)
            factorial *= double(k);
        d[k] = tape.row(node)[k] * factorial;
    }
    if (operations != nullptr)
        *operations = tape.size();
    return d;
}

}  // namespace

TEST_CASE("the series tape gives the derivatives of order 0..8 of every rule, as mpmath does",
          "[forward][taylor_ode][rules]") {
    const auto rows = nabla_test::read_taylor_rows();
    std::size_t functions = 0;
    nabla_test::for_each_rule_function([&]<std::size_t N>(const std::string& name, auto build) {
        std::size_t checked = 0;
        for (const auto& r : rows) {
            if (r.name != name && !(name == "pow_int" && r.name == "pow_int_negative"))
                continue;
            ++checked;
            INFO("row: " << r.text);
            const auto g = nabla_test::composition(r, build);
            std::size_t operations = 0;
            const auto d = tape_derivatives(g, r.x0, &operations);
            const auto by_series = nabla::derivatives<order>(g, r.x0);
            for (std::size_t k = 0; k <= order; ++k) {
                INFO("derivative of order " << k << ": " << d[k] << " against " << r.derivatives[k]
                                            << " (taylor: " << by_series[k] << ")");
                CHECK(nabla_test::close_derivatives(d, r.derivatives, k));
                CHECK(d[k] == Approx(by_series[k]).epsilon(1e-12).margin(1e-12));
            }
            // Partials that never close (lgamma, digamma, polygamma) are recorded only as far
            // as they are read: a few operations per order, not an endless chain (the spherical
            // Bessel functions' reach two neighbouring indices each: about 100 to order 8).
            CHECK(operations < 120);
        }
        INFO("function " << name);
        CHECK(checked >= 1);
        ++functions;
    });
    CHECK(functions == 80);
}

TEST_CASE("a recording replayed at another point gives that point's series, for every rule",
          "[forward][taylor_ode][rules]") {
    // Recorded at x0, replayed at x0 + 0.05: a value frozen at the recording (a branch inside
    // a rule, a constant folded from a value) would show here against nabla::taylor.
    const auto rows = nabla_test::read_taylor_rows();
    std::size_t functions = 0;
    nabla_test::for_each_rule_function([&]<std::size_t N>(const std::string& name, auto build) {
        for (const auto& r : rows) {
            if (r.name != name)
                continue;
            INFO("row: " << r.text);
            const auto g = nabla_test::composition(r, build);
            nabla::series_tape<double> tape(order);
            const auto x = tape.time(r.x0);
            const auto node = tape.node_of(nabla::series_variable<double>(g(x)));
            const double x1 = r.x0 + 0.05;
            tape.row(x.node())[0] = x1;
            for (std::size_t k = 0; k <= order; ++k)
                tape.replay(k);
            const auto expected = nabla::derivatives<order>(g, x1);
            double factorial = 1.0;
            for (std::size_t k = 0; k <= order; ++k) {
                if (k > 0)
                    factorial *= double(k);
                INFO("order " << k);
                CHECK(tape.row(node)[k] * factorial ==
                      Approx(expected[k]).epsilon(1e-11).margin(1e-11));
            }
            ++functions;
            break;
        }
    });
    CHECK(functions >= 40);
}

TEST_CASE("the series tape shares what it records and replays the recurrences exactly",
          "[forward][taylor_ode]") {
    nabla::series_tape<double> tape(6);
    tape.read_at(6);
    const auto x = tape.time(0.3);
    using std::sin, std::cos, std::exp;
    // sin's partial is cos(x), whose partial -sin(x) finds the sin: three operations, and the
    // user's cos(x) is the one already there.
    const auto s = sin(x);
    const std::size_t after_sin = tape.size();
    const auto c = cos(x);
    CHECK(tape.size() == after_sin);
    // The same coefficients as nabla::taylor, to the last bit, for sin, cos, exp and products.
    const auto e = exp(s * c) / (2.0 + x * x);
    for (std::size_t k = 1; k <= 6; ++k)
        tape.replay(k);
    nabla::taylor<double, 6> t(0.3);
    t.c[1] = 1.0;
    const auto expected = exp(sin(t) * cos(t)) / (2.0 + t * t);
    const auto node = tape.node_of(e);
    for (std::size_t k = 0; k <= 6; ++k)
        CHECK(tape.row(node)[k] == expected.c[k]);
}

TEST_CASE("jet maps the series of a vector function's inputs to those of its outputs",
          "[forward][taylor_ode]") {
    const auto f = [](const auto& x) {
        using std::sin, std::exp;
        return std::array{sin(x[0]) * x[1], exp(x[0] - x[1]) + x[2] * x[2]};
    };
    // The curve x(t) = (0.4 + t, 1.1 - 2 t + t^2 / 2, 0.3 t^3).
    const std::array<std::array<double, 5>, 3> xs{
        {{0.4, 1.0, 0.0, 0.0, 0.0}, {1.1, -2.0, 0.5, 0.0, 0.0}, {0.0, 0.0, 0.0, 0.3, 0.0}}};
    const auto ys = nabla::jet(f, xs);
    static_assert(
        std::is_same_v<std::remove_cvref_t<decltype(ys)>, std::array<std::array<double, 5>, 2>>);
    // Against the scalar Taylor mode along the same curve.
    const auto along = [&](std::size_t output) {
        return nabla::derivatives<4>(
            [&](auto t) {
                using std::pow;
                const std::array x{0.4 + t, 1.1 - 2.0 * t + 0.5 * t * t, 0.3 * t * t * t};
                return f(x)[output];
            },
            0.0);
    };
    double factorial[] = {1, 1, 2, 6, 24};
    for (std::size_t i = 0; i < 2; ++i) {
        const auto d = along(i);
        for (std::size_t k = 0; k <= 4; ++k)
            CHECK(ys[i][k] * factorial[k] == Approx(d[k]).epsilon(1e-14).margin(1e-14));
    }
    // Containers of any size: a std::vector in, a std::vector out; one output, one series.
    const std::vector<std::array<double, 3>> v{{2.0, 1.0, 0.0}};
    const auto square = nabla::jet([](const auto& x) { return x[0] * x[0]; }, v);
    CHECK(square == std::array<double, 3>{4.0, 4.0, 1.0});
    const auto both = nabla::jet([](const auto& x) { return std::vector{x[0] + 1.0, -x[0]}; }, v);
    REQUIRE(both.size() == 2);
    CHECK(both[1] == std::array<double, 3>{-2.0, -1.0, -0.0});
}

TEST_CASE("the Taylor integrator follows the harmonic oscillator to its exact solution",
          "[forward][taylor_ode]") {
    const auto oscillator = [](auto, const auto& y) { return std::array{y[1], -y[0]}; };
    nabla::taylor_integrator ode(oscillator, 0.0, std::array{1.0, 0.0});
    CHECK(ode.order() == 19);  // ceil(-ln(1e-15) / 2 + 1)
    const auto result = ode.propagate_until(100.0);
    CHECK(result.reason == decltype(ode)::outcome::time_reached);
    CHECK(ode.time() == 100.0);
    CHECK(result.steps == ode.steps());
    CHECK(std::abs(ode.state()[0] - std::cos(100.0)) < 1e-12);
    CHECK(std::abs(ode.state()[1] + std::sin(100.0)) < 1e-12);
    // Dense output inside the last step.
    ode.step();
    const double middle = ode.time() - 0.37;
    const auto y = ode.dense(middle);
    CHECK(std::abs(y[0] - std::cos(middle)) < 1e-12);
    CHECK(std::abs(y[1] + std::sin(middle)) < 1e-12);
    CHECK_THROWS_AS(ode.dense(ode.time() + 1.0), std::out_of_range);
}

TEST_CASE("the Taylor integrator returns Kepler's orbit to its start after whole periods",
          "[forward][taylor_ode]") {
    const auto kepler = [](auto, const auto& s) {
        using std::pow;
        const auto w = pow(s[0] * s[0] + s[1] * s[1], -1.5);
        return std::array{s[2], s[3], -(s[0] * w), -(s[1] * w)};
    };
    const double e = 0.5;
    const std::array start{1.0 - e, 0.0, 0.0, std::sqrt((1.0 + e) / (1.0 - e))};
    const auto energy = [](const auto& s) {
        return 0.5 * (s[2] * s[2] + s[3] * s[3]) - 1.0 / std::hypot(s[0], s[1]);
    };
    nabla::taylor_integrator ode(kepler, 0.0, start, {.tolerance = 1e-16});
    ode.propagate_until(10 * 2 * std::numbers::pi);
    for (std::size_t i = 0; i < 4; ++i)
        CHECK(std::abs(ode.state()[i] - start[i]) < 2e-12);
    CHECK(std::abs(energy(ode.state()) - energy(start)) < 1e-13);
    // And back: integrating backwards to t = 0 retraces the orbit.
    ode.propagate_until(0.0);
    CHECK(ode.time() == 0.0);
    for (std::size_t i = 0; i < 4; ++i)
        CHECK(std::abs(ode.state()[i] - start[i]) < 4e-12);
}

TEST_CASE("events find the pendulum's quarter period, K(sin(theta0 / 2)), to 1e-13",
          "[forward][taylor_ode]") {
    const auto pendulum = [](auto, const auto& y) {
        using std::sin;
        return std::array{y[1], -sin(y[0])};
    };
    const double theta0 = 1.0;
    const double quarter = std::comp_ellint_1(std::sin(theta0 / 2));
    nabla::taylor_integrator ode(pendulum, 0.0, std::array{theta0, 0.0});
    const auto angle = [](auto, const auto& y) { return y[0]; };
    const auto falling = ode.add_event(angle, nabla::event_direction::falling);
    const auto rising = ode.add_event(angle, nabla::event_direction::rising);
    const auto result = ode.propagate_until(8 * quarter + 0.5);
    // Falling crossings at T/4 and 5T/4, rising ones at 3T/4 and 7T/4.
    REQUIRE(result.events.size() == 4);
    const double expected[] = {1, 3, 5, 7};
    for (std::size_t i = 0; i < 4; ++i) {
        CHECK(result.events[i].event == (i % 2 == 0 ? falling : rising));
        CHECK(std::abs(result.events[i].time - expected[i] * quarter) < 1e-13);
        CHECK(std::abs(result.events[i].state[0]) < 1e-13);
    }
    // A terminal event stops the integration at its root.
    nabla::taylor_integrator stopped(pendulum, 0.0, std::array{theta0, 0.0});
    const auto velocity_zero = stopped.add_event([](auto, const auto& y) { return y[1]; },
                                                 nabla::event_direction::rising, true);
    const auto r = stopped.propagate_until(100.0);
    CHECK(r.reason == decltype(stopped)::outcome::terminal_event);
    CHECK(r.terminal_event == velocity_zero);
    CHECK(std::abs(stopped.time() - 2 * quarter) < 1e-13);  // the far turning point
    CHECK(std::abs(stopped.state()[0] + theta0) < 1e-13);
}

TEST_CASE("a step's series equal the Picard iteration on taylor numbers, whatever computes y'",
          "[forward][taylor_ode]") {
    // Each y' comes from another kind of operation of the replay: two products paired, a square
    // and a unary function paired with their twins, a sum after a product, an input, a constant
    // and one output twice; coefficient k + 1 of y is written where coefficient k of y' is.
    const auto field = [](auto t, const auto& y) {
        using std::cos, std::exp, std::sin;
        using T = std::decay_t<decltype(y[0])>;
        const T shared = y[0] * y[2];
        return std::array<T, 9>{y[1] * y[2],   shared, y[3] * y[3], y[4] * y[4], sin(y[0]),
                                cos(y[1]) + t, y[5],   T(0.5),      shared};
    };
    const std::array start{0.3, -0.2, 0.5, 0.1, -0.4, 0.7, 0.2, 0.0, 0.6};
    nabla::taylor_integrator ode(field, 0.25, start, {.tolerance = 1e-15, .order = 12});
    ode.step();
    // y_{k+1} = f(t, y)_k / (k + 1) on nabla::taylor<double, 12>: O(K^3), another route.
    using number = nabla::taylor<double, 12>;
    std::array<number, 9> y{};
    for (std::size_t i = 0; i < 9; ++i)
        y[i] = number(start[i]);
    number t(0.25);
    t.c[1] = 1.0;
    for (std::size_t k = 0; k < 12; ++k) {
        const auto d = field(t, y);
        for (std::size_t i = 0; i < 9; ++i)
            y[i].c[k + 1] = d[i].c[k] / double(k + 1);
    }
    for (std::size_t i = 0; i < 9; ++i)
        for (std::size_t k = 0; k <= 12; ++k) {
            INFO("component " << i << ", order " << k);
            CHECK(ode.coefficient(i, k) ==
                  Approx(y[i].c[k]).epsilon(1e-13).margin(1e-15 * (1 + std::abs(y[i].c[0]))));
        }
}

TEST_CASE("the Taylor integrator handles time-dependent fields and polynomial solutions",
          "[forward][taylor_ode]") {
    // y' = cos(t): y = sin(t).
    nabla::taylor_integrator forced(
        [](auto t, const auto&) {
            using std::cos;
            return cos(t);
        },
        0.0, std::vector{0.0});
    forced.propagate_until(7.5);
    CHECK(std::abs(forced.state()[0] - std::sin(7.5)) < 1e-13);
    // y' = 1, z' = 2 y: series that end, exact at any step.
    nabla::taylor_integrator polynomial(
        [](auto, const auto& y) {
            return std::array<nabla::series_variable<double>, 2>{1.0, 2.0 * y[0]};
        },
        0.0, std::array{0.0, 0.0});
    polynomial.propagate_until(10.5);
    CHECK(polynomial.state()[0] == Approx(10.5).epsilon(1e-15));
    CHECK(polynomial.state()[1] == Approx(10.5 * 10.5).epsilon(1e-15));
    // A fixed order and a longest step.
    nabla::taylor_integrator fixed([](auto, const auto& y) { return -y[0]; }, 0.0, std::vector{1.0},
                                   {.tolerance = 1e-15, .order = 8, .max_step = 0.01});
    CHECK(fixed.order() == 8);
    fixed.propagate_until(1.0);
    CHECK(fixed.steps() >= 100);
    CHECK(std::abs(fixed.state()[0] - std::exp(-1.0)) < 1e-14);
}

TEST_CASE("the Taylor integrator says what is wrong with its input",
          "[forward][taylor_ode][errors]") {
    const auto branching = [](auto, const auto& y) {
        return std::array{y[0] > 0.0 ? -y[0] : y[0]};
    };
    try {
        nabla::taylor_integrator ode(branching, 0.0, std::array{1.0});
        FAIL("a branch on the state was recorded");
    } catch (const std::invalid_argument& e) {
        CHECK(std::string(e.what()).find("f compares a value of the state") != std::string::npos);
    }
    // Functions with a kink are refused too: a step would cross the kink with the series of one
    // side (the integral of |cos t| over [0, 3 pi] would come out 5.6, not 6).
    const auto kink = [](auto t, const auto&) {
        using std::abs, std::cos;
        return abs(cos(t));
    };
    try {
        nabla::taylor_integrator ode(kink, 0.0, std::array{0.0});
        FAIL("a kink was recorded");
    } catch (const std::invalid_argument& e) {
        CHECK(std::string(e.what()).find("f uses abs, which has a kink") != std::string::npos);
    }
    const auto clipped = [](auto t, const auto&) {
        using std::sin;
        return fmax(sin(t), 0.0);
    };
    CHECK_THROWS_AS(nabla::taylor_integrator(clipped, 0.0, std::array{0.0}), std::invalid_argument);
    // The smooth formula of each side, switched at an event, integrates it exactly.
    nabla::taylor_integrator rising(
        [](auto t, const auto&) {
            using std::cos;
            return cos(t);
        },
        0.0, std::array{0.0});
    rising.propagate_until(std::numbers::pi / 2);
    nabla::taylor_integrator falling(
        [](auto t, const auto&) {
            using std::cos;
            return -cos(t);
        },
        std::numbers::pi / 2, rising.state());
    falling.propagate_until(1.5 * std::numbers::pi);
    CHECK(std::abs(falling.state()[0] - 3.0) < 1e-14);

    const auto two = [](auto, const auto& y) { return std::array{y[0], y[0]}; };
    CHECK_THROWS_WITH(nabla::taylor_integrator(two, 0.0, std::array{1.0}),
                      "nabla::taylor_integrator: f returns 2 derivatives for a state of 1 "
                      "components");
    CHECK_THROWS_AS(nabla::taylor_integrator(two, 0.0, std::array{1.0, 1.0}, {.tolerance = 0.0}),
                    std::invalid_argument);
    CHECK_THROWS_AS(nabla::taylor_integrator(two, 0.0, std::vector<double>{}),
                    std::invalid_argument);
    // A singularity: y' = y^2 from y(0) = 1 blows up at t = 1.
    nabla::taylor_integrator blowup([](auto, const auto& y) { return y[0] * y[0]; }, 0.0,
                                    std::array{1.0});
    CHECK_THROWS_AS(blowup.propagate_until(2.0), std::domain_error);
    CHECK(blowup.time() < 1.0);
    // Division by a series that is zero at the point.
    CHECK_THROWS_AS(nabla::taylor_integrator([](auto, const auto& y) { return 1.0 / y[0]; }, 0.0,
                                             std::array{0.0}),
                    std::domain_error);
    nabla::taylor_integrator fresh([](auto, const auto& y) { return y[0]; }, 0.0, std::array{1.0});
    CHECK_THROWS_AS(fresh.dense(0.0), std::logic_error);
}

TEST_CASE("the Taylor integrator's events keep their direction in time and do not fire twice",
          "[forward][taylor_ode]") {
    const auto oscillator = [](auto, const auto& y) { return std::array{y[1], -y[0]}; };
    const auto position = [](auto, const auto& y) { return y[0]; };
    // y0 = cos t: falls through 0 at pi/2 + 2 pi n, rises at 3 pi/2 + 2 pi n.
    nabla::taylor_integrator ode(oscillator, 0.0, std::array{1.0, 0.0});
    const auto rising = ode.add_event(position, nabla::event_direction::rising, true);
    auto r = ode.propagate_until(20.0);
    REQUIRE(r.reason == decltype(ode)::outcome::terminal_event);
    CHECK(r.terminal_event == rising);
    CHECK(std::abs(ode.time() - 1.5 * std::numbers::pi) < 1e-13);
    // Going on: the next rising crossing, a period later, not the one it stopped at.
    r = ode.propagate_until(20.0);
    REQUIRE(r.reason == decltype(ode)::outcome::terminal_event);
    CHECK(std::abs(ode.time() - 3.5 * std::numbers::pi) < 1e-12);
    // Backwards from there: the crossings met going back in time keep their direction in time,
    // so the first rising one found is at 1.5 pi again, and the falling one at 2.5 pi is not.
    r = ode.propagate_until(0.5);
    REQUIRE(r.reason == decltype(ode)::outcome::terminal_event);
    CHECK(std::abs(ode.time() - 1.5 * std::numbers::pi) < 1e-12);
    // set_state restarts from another point: a bounce reverses the velocity at the event.
    nabla::taylor_integrator ball(
        [](auto, const auto& y) {
            return std::array{y[1], -1.0 + 0.0 * y[1]};
        },
        0.0, std::array{1.0, 0.0});
    ball.add_event(position, nabla::event_direction::falling, true);
    ball.propagate_until(10.0);
    CHECK(std::abs(ball.time() - std::sqrt(2.0)) < 1e-14);  // y = 1 - t^2 / 2
    ball.set_state(ball.time(), std::array{0.0, -ball.state()[1]});
    const auto bounce = ball.propagate_until(10.0);
    CHECK(bounce.reason == decltype(ball)::outcome::terminal_event);
    CHECK(std::abs(ball.time() - 3.0 * std::sqrt(2.0)) < 1e-13);
    CHECK_THROWS_AS(ball.set_state(0.0, std::array{1.0}), std::invalid_argument);
    // step() looks for no events.
    nabla::taylor_integrator plain(oscillator, 0.0, std::array{1.0, 0.0});
    plain.add_event(position, nabla::event_direction::any, true);
    for (int i = 0; i < 10; ++i)
        plain.step();
    CHECK(plain.time() > 5.0);
}

TEST_CASE("the Taylor integrator's step comes from the orders that are not zero",
          "[forward][taylor_ode]") {
    // y' = -4 t^3 y: y = exp(-t^4), a series with three zero orders in every four.
    nabla::taylor_integrator gaps([](auto t, const auto& y) { return -4.0 * t * t * t * y[0]; },
                                  0.0, std::array{1.0});
    gaps.propagate_until(1.5);
    CHECK(std::abs(gaps.state()[0] - std::exp(-std::pow(1.5, 4))) < 1e-14);
    CHECK(gaps.steps() > 2);
    // An order given: the tolerance sets the step.
    const auto decay = [](auto, const auto& y) { return -y[0]; };
    nabla::taylor_integrator loose(decay, 0.0, std::array{1.0}, {.tolerance = 1e-6, .order = 8});
    nabla::taylor_integrator tight(decay, 0.0, std::array{1.0}, {.tolerance = 1e-14, .order = 8});
    loose.propagate_until(5.0);
    tight.propagate_until(5.0);
    CHECK(tight.steps() > 2 * loose.steps());
    CHECK(std::abs(tight.state()[0] - std::exp(-5.0)) < 1e-15);
    CHECK(std::abs(loose.state()[0] - std::exp(-5.0)) < 1e-7);
}

TEST_CASE("the Taylor integrator stops at a NaN and keeps its last good state",
          "[forward][taylor_ode][errors]") {
    // y' = log(y) from y = 0.5: y falls to 0 in finite time, where log and its series end.
    nabla::taylor_integrator nan_state(
        [](auto, const auto& y) {
            using std::log;
            return log(y[0]);
        },
        0.0, std::array{0.5});
    CHECK_THROWS_AS(nan_state.propagate_until(10.0), std::domain_error);
    // The state of the last step that completed: finite, at the singularity within rounding.
    CHECK(std::isfinite(nan_state.state()[0]));
    CHECK(std::abs(nan_state.state()[0]) < 1e-6);
    CHECK(std::isfinite(nan_state.time()));
    CHECK_THROWS_AS(nan_state.dense(nan_state.time()), std::logic_error);
    // A value of the state made a plain number is refused, like a branch.
    const auto frozen = [](auto, const auto& y) { return std::array{-static_cast<double>(y[0])}; };
    CHECK_THROWS_AS(nabla::taylor_integrator(frozen, 0.0, std::array{1.0}), std::invalid_argument);
    CHECK_THROWS_AS(nabla::taylor_integrator(frozen, 0.0, std::array{1.0}, {.max_step = 0.0}),
                    std::invalid_argument);
    // The integrator moves: its recording lives on the heap.
    nabla::taylor_integrator first([](auto, const auto& y) { return -y[0]; }, 0.0, std::array{1.0});
    std::vector<decltype(first)> many;
    many.push_back(std::move(first));
    many.back().propagate_until(1.0);
    CHECK(std::abs(many.back().state()[0] - std::exp(-1.0)) < 1e-15);
}
