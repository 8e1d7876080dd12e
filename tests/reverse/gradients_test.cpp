// Gradients recorded on the run-time tape against hand-written ones: run-time loops and branches,
// the benchmark workloads entry by entry, Hessian-vector products, one recording swept many
// times, inputs and adjoints of many variables at once, and a gradient inside a function that is
// itself differentiated.

#include <nabla/nabla.hpp>
#include <nabla/tensor.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <vector>

#include "../test_functions.hpp"
#include "workloads.hpp"

namespace {

using nabla::tape;
using nabla::var;
using nabla_test::close_all;
using nabla_test::cluster;
using nabla_test::lennard_jones;
using nabla_test::lennard_jones_gradient;
using nabla_test::rosenbrock;

}  // namespace

TEST_CASE("tape: gradients of run-time loops agree with hand-written ones", "[reverse]") {
    SECTION("Lennard-Jones energies of three clusters of 20 particles") {
        for (unsigned s : {1u, 2u, 3u}) {
            const std::vector<double> q = cluster(20, s);
            const auto [value, g] =
                nabla::value_and_grad(lennard_jones, q);  // reverse: run-time size
            CHECK(value == Approx(lennard_jones(q)).epsilon(1e-14));
            CHECK(close_all(g, lennard_jones_gradient(q), 1e-12));
        }
    }

    SECTION("the extended Rosenbrock function of 100 inputs, and forward mode") {
        std::vector<double> x(100);
        for (std::size_t i = 0; i < x.size(); ++i)
            x[i] = 0.5 + 0.4 * std::sin(0.37 * double(i));
        const std::vector<double> g = nabla::grad(rosenbrock, x);
        std::vector<double> hand(x.size(), 0.0);
        for (std::size_t i = 0; i + 1 < x.size(); ++i) {
            const double a = x[i + 1] - x[i] * x[i];
            hand[i] += -400.0 * x[i] * a - 2.0 * (1.0 - x[i]);
            hand[i + 1] += 200.0 * a;
        }
        CHECK(close_all(g, hand, 1e-13));
        CHECK(close_all(nabla::grad(nabla::mode::forward, rosenbrock, x), g, 1e-13));
    }
}

TEST_CASE("tape: branches and loops on values", "[reverse]") {
    // Piecewise and iterative code: the branch taken at the point is differentiated.
    const auto f = [](const auto& x) {
        using T = std::decay_t<decltype(x[0])>;
        using std::exp, std::sin;
        T s = 0.0;
        for (std::size_t i = 0; i < x.size(); ++i) {
            if (x[i] > 0.0)
                s += x[i] * x[i];
            else
                s -= sin(x[i]);
        }
        T t = 1.0;
        while (t < 10.0)
            t *= exp(x[0] * x[0]) + 1.0;  // stops after a data-dependent number of steps
        return s + t;
    };
    const std::vector<double> x{0.3, -0.7, 1.1};
    const auto reverse = nabla::grad(nabla::mode::reverse, f, x);
    const auto forward = nabla::grad(nabla::mode::forward, f, x);
    CHECK(close_all(reverse, forward, 1e-14));
    CHECK(reverse[1] == Approx(-std::cos(-0.7)).epsilon(1e-15));
}

TEST_CASE("tape: an unused singular branch does not poison the gradient", "[reverse]") {
    tape<> t;
    auto recording = t.record();
    var x = t.input(0.0), y = t.input(3.0);
    var unused = log(x);  // partial +inf, adjoint 0
    (void)unused;
    var f = y * y;
    t.gradient(f);
    CHECK(t.adjoint(x) == 0.0);
    CHECK(t.adjoint(y) == 6.0);
}

TEST_CASE("tape: Lennard-Jones Hessian-vector products agree with its hand-written gradient",
          "[reverse]") {
    // The pair energies refer to r2's partials, here on a tape of dual numbers (their scale is
    // one): Hessian-vector products through them, forward over reverse, against central
    // differences of the hand-written gradient along v (step 1e-5: an error of about 1e-10 of
    // the largest entry).
    const std::vector<double> q = cluster(3, 5);
    const std::size_t n = q.size();
    for (std::size_t k = 0; k < 3; ++k) {
        std::vector<double> v(n);
        for (std::size_t j = 0; j < n; ++j)
            v[j] = std::sin(1.3 * static_cast<double>(j + 7 * k) + 0.2);
        const double h = 1e-5;
        std::vector<double> up = q, down = q;
        for (std::size_t j = 0; j < n; ++j) {
            up[j] += h * v[j];
            down[j] -= h * v[j];
        }
        const std::vector<double> gu = lennard_jones_gradient(up),
                                  gd = lennard_jones_gradient(down);
        std::vector<double> expected(n);
        double scale = 0.0;
        for (std::size_t i = 0; i < n; ++i) {
            expected[i] = (gu[i] - gd[i]) / (2.0 * h);
            scale = std::max(scale, std::abs(expected[i]));
        }
        REQUIRE(scale > 1.0);
        const std::vector<double> hv = nabla::hvp(lennard_jones, q, v);
        for (std::size_t i = 0; i < n; ++i) {
            INFO("direction " << k << ", entry " << i);
            CHECK(hv[i] == Approx(expected[i]).margin(1e-7 * scale));
        }
    }
}

TEST_CASE("tape: Hessian-vector products agree with the forward-over-forward Hessian",
          "[reverse]") {
    const std::vector<double> x{0.3, -0.7, 1.1, 0.4, 0.9};

    SECTION("the product with each unit vector is the Hessian's column") {
        const auto H = nabla::hessian(rosenbrock, x);
        for (std::size_t j = 0; j < x.size(); ++j) {
            std::vector<double> e(x.size(), 0.0);
            e[j] = 1.0;
            const std::vector<double> column = nabla::hvp(rosenbrock, x, e);
            for (std::size_t i = 0; i < x.size(); ++i)
                CHECK(column[i] == Approx(H(i, j)).epsilon(1e-14).margin(1e-14));
        }
    }

    SECTION("a direction of the wrong size is reported") {
        CHECK_THROWS_WITH(nabla::hvp(rosenbrock, x, std::vector<double>{1.0}),
                          Catch::Contains("v has 1 entries, x has 5"));
    }
}

TEST_CASE("tape: one recording, many sweeps (vjp)", "[reverse]") {
    const auto F = [](const auto& x) {
        using T = std::decay_t<decltype(x[0])>;
        using std::sin;
        std::vector<T> y(2);
        y[0] = x[0] * x[1];
        y[1] = sin(x[2]) + x[0];
        return y;
    };
    const std::vector<double> x{1.0, 2.0, 0.5};
    auto [y, pullback] = nabla::vjp(F, x);
    CHECK(y == std::vector<double>{2.0, std::sin(0.5) + 1.0});
    const std::vector<double> row0 = pullback(std::vector<double>{1.0, 0.0});
    const std::vector<double> row1 = pullback(std::vector<double>{0.0, 1.0});
    const std::vector<double> both = pullback(std::vector<double>{2.0, -1.0});
    CHECK(row0 == std::vector<double>{2.0, 1.0, 0.0});
    CHECK(row1 == std::vector<double>{1.0, 0.0, std::cos(0.5)});
    CHECK(both == std::vector<double>{3.0, 2.0, -std::cos(0.5)});
    CHECK_THROWS_WITH(pullback(std::vector<double>{1.0}),
                      Catch::Contains("the cotangent w has 1 entries, F has 2 outputs"));
}

TEST_CASE("tape: inputs and adjoints of many variables at once", "[reverse]") {
    const std::vector<double> q = cluster(12, 3);
    tape<> one_by_one, at_once;
    std::vector<var> a(q.size()), b(q.size());
    std::vector<double> ga(q.size()), gb(q.size(), -1.0);
    {
        auto recording = one_by_one.record();
        for (std::size_t i = 0; i < q.size(); ++i)
            a[i] = one_by_one.input(q[i]);
        one_by_one.gradient(lennard_jones(a));
        for (std::size_t i = 0; i < q.size(); ++i)
            ga[i] = one_by_one.adjoint(a[i]);
    }
    {
        auto recording = at_once.record();
        var before = at_once.input(7.0);  // the inputs need not be the first statements
        at_once.inputs(q, b);
        const var e = lennard_jones(b) + before;
        at_once.gradient(e);
        at_once.adjoints(b, gb);
        CHECK(at_once.adjoint(before) == 1.0);
    }
    for (std::size_t i = 0; i < q.size(); ++i) {
        CHECK(b[i].value == q[i]);
        CHECK(b[i].index() == b[0].index() + i);
        CHECK(gb[i] == ga[i]);  // the same statements, swept in the same order
    }
    CHECK(close_all(gb, lennard_jones_gradient(q), 1e-13));

    // A constant among the variables has adjoint 0.
    std::vector<var> mixed{b[0], var(3.0), b[1]};
    std::vector<double> g(3);
    at_once.adjoints(mixed, g);
    CHECK(g == std::vector<double>{gb[0], 0.0, gb[1]});

    // The adjoints of inputs recorded one after another, as a view of the tape's memory.
    const std::span<const double> view = at_once.adjoints_from(b[0], b.size());
    CHECK(std::vector<double>(view.begin(), view.end()) == gb);
    CHECK(at_once.adjoints_from(b[2], 3).front() == gb[2]);
}

TEST_CASE("tape: a gradient inside a function that is itself differentiated", "[reverse]") {
    SECTION("the inner gradient at a point read from the outer input") {
        // The inner grad records on a tape of its own while the outer recording is open.
        const auto inner = [](const auto& y) { return y[0] * y[0] * y[1]; };
        const auto outer = [&](const auto& x) {
            const std::vector<double> at{static_cast<double>(x[0]), 2.0};
            const std::vector<double> g = nabla::grad(inner, at);  // 2 y0 y1 = 4 x0, a constant
            return x[0] * x[1] * g[0];
        };
        const std::vector<double> x{3.0, 5.0};
        const auto g = nabla::grad(outer, x);
        CHECK(g[0] == 5.0 * 12.0);
        CHECK(g[1] == 3.0 * 12.0);
    }

    SECTION("both in reverse mode, the inner one on more inputs") {
        // Both in reverse mode, the inner one on more inputs: each depth has its own tape and its
        // own vector of active inputs (the outer function reads its inputs after the inner
        // gradient).
        const auto inner_many = [](const auto& y) { return y[0] * y[0] * y[1] + y[2] + y[3]; };
        const auto outer_reverse = [&](const auto& v) {
            const std::vector<double> at{static_cast<double>(v[0]), 2.0, 7.0, 8.0};
            const std::vector<double> h = nabla::grad(nabla::mode::reverse, inner_many, at);
            return v[0] * v[1] * h[0];
        };
        const std::vector<double> x{3.0, 5.0};
        const auto gr = nabla::grad(nabla::mode::reverse, outer_reverse, x);
        CHECK(gr[0] == 5.0 * 12.0);
        CHECK(gr[1] == 3.0 * 12.0);
        // The lent vectors are resized for each call: fewer inputs, then more.
        CHECK(nabla::grad(nabla::mode::reverse, inner_many,
                          std::vector<double>{1.0, 2.0, 0.0, 0.0, 9.0})
                  .size() == 5);
        const auto one =
            nabla::grad(nabla::mode::reverse, outer_reverse, std::vector<double>{2.0, 1.0});
        CHECK(one[0] == 1.0 * 8.0);
        CHECK(one[1] == 2.0 * 8.0);
    }
}

TEST_CASE("tape: log-sum-exp and a 1000-step RK4 integration agree with hand-written gradients "
          "entry by entry",
          "[reverse]") {
    // The benchmark workloads (bench/reverse_gradient.cpp) against their hand-written gradients,
    // each entry to 1e-12 relative: a normwise comparison would miss a wrong small entry (the
    // softmax of log-sum-exp spans many orders of magnitude; RK4's sensitivities to b and c
    // differ in size). The floor only admits entries that are both ~0 (exp underflows to 0).
    const auto check_entries = [](const std::vector<double>& computed,
                                  const std::vector<double>& expected) {
        REQUIRE(computed.size() == expected.size());
        for (std::size_t i = 0; i < expected.size(); ++i) {
            INFO("entry " << i << ": " << computed[i] << " against " << expected[i]);
            CHECK(std::abs(computed[i] - expected[i]) <= 1e-12 * std::abs(expected[i]) + 1e-300);
        }
    };

    SECTION("log-sum-exp of 1000 numbers, one of whose softmax entries is 0") {
        std::vector<double> x(1000);
        for (std::size_t i = 0; i < x.size(); ++i)
            x[i] = 3.0 * std::sin(0.37 * double(i)) - (i % 97 == 0 ? 40.0 : 0.0);
        x[500] = -800.0;  // exp(x - max) is 0: an entry that is exactly 0 either way
        const auto [lse, g] =
            nabla::value_and_grad(nabla::mode::reverse, nabla_test::log_sum_exp, x);
        double sum = 0.0;
        for (double v : x)
            sum += std::exp(v);
        CHECK(lse == Approx(std::log(sum)).epsilon(1e-14));
        const std::vector<double> softmax = nabla_test::log_sum_exp_gradient(x);
        CHECK(softmax[500] == 0.0);
        check_entries(g, softmax);
    }

    SECTION("RK4 of the Lotka-Volterra equations at two parameter sets") {
        for (const std::vector<double>& p :
             {std::vector<double>{1.1, 0.4, 0.1, 0.4}, std::vector<double>{0.7, 0.9, 0.3, 0.2}}) {
            INFO("p = " << p[0] << ", " << p[1] << ", " << p[2] << ", " << p[3]);
            check_entries(nabla::grad(nabla::mode::reverse, nabla_test::lotka_volterra_rk4, p),
                          nabla_test::lotka_volterra_rk4_gradient(p));
        }
    }
}
