// The run-time tape (reverse mode): every rule against mpmath (gradients, and Hessians forward
// over reverse), statements and their partials, auto intermediates, control flow, reuse of a
// recording, misuse reported as errors, threads and nested recordings.

#include <nabla/nabla.hpp>
#include <nabla/tensor.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <utility>
#include <vector>

#include "../rules/function_table.hpp"
#include "../test_data.hpp"
#include "workloads.hpp"
#include <unistd.h>

namespace {

using nabla::tape;
using nabla::var;
using nabla_test::close_all;
using nabla_test::cluster;
using nabla_test::lennard_jones;
using nabla_test::lennard_jones_gradient;

template <std::size_t N, class Build>
void check_rule(const std::string& name, Build build) {
    std::size_t checked = 0;
    for (const auto& r : nabla_test::rows()) {
        if (r.name != name)
            continue;
        ++checked;
        INFO("row: " << r.text);
        tape<> t;
        auto recording = t.record();
        std::array<var, 3> x{};
        for (std::size_t i = 0; i < N; ++i)
            x[i] = t.input(r.point[i]);
        const var y = build(r.parameters, x[0], x[1], x[2]);
        CHECK(nabla_test::close(y.value, r.value, r.tolerance_value));
        t.gradient(y);
        for (std::size_t i = 0; i < N; ++i) {
            INFO("gradient entry " << i);
            CHECK(nabla_test::close(t.adjoint(x[i]), r.gradient[i], r.tolerance_gradient));
        }
        // Forward over reverse: direction e_j gives the Hessian's column j, compared relative to
        // the Hessian's largest entry (as the dual-number tests do).
        double scale = 0.0;
        for (double h : r.hessian_upper)
            scale = std::max(scale, std::abs(h));
        for (std::size_t j = 0; j < N; ++j) {
            using D = nabla::dual<double, 1>;
            tape<D> td;
            auto inner = td.record();
            std::array<nabla::active<D>, 3> xd{};
            for (std::size_t i = 0; i < N; ++i)
                xd[i] = td.input(D(r.point[i], {i == j ? 1.0 : 0.0}));
            const nabla::active<D> yd = build(r.parameters, xd[0], xd[1], xd[2]);
            td.gradient(yd);
            for (std::size_t i = 0; i < N; ++i) {
                const std::size_t lo = std::min(i, j), hi = std::max(i, j);
                const std::size_t h = lo * N - lo * (lo - 1) / 2 + (hi - lo);
                INFO("Hessian entry " << i << ", " << j);
                const double expected = r.hessian_upper[h];
                const double computed = td.adjoint(xd[i]).tangent[0];
                if ((name == "atan" && std::abs(r.point[0]) >= 1e100) ||
                    (name == "tanh" && std::abs(r.point[0]) >= 300.0))
                    CHECK(computed == 0.0);  // quotient-rule underflow, docs/conventions.md
                else if (!std::isfinite(expected) || scale == 0.0)
                    CHECK(nabla_test::close(computed, expected, r.tolerance_hessian));
                else
                    CHECK(std::abs(computed - expected) <=
                          r.tolerance_hessian * std::max(std::abs(expected), scale));
            }
        }
    }
    INFO("function " << name);
    CHECK(checked >= 5);
}

const auto seed = [](auto x1, auto x2) {
    using std::log, std::sin;
    return log(x1) + x1 * x2 - sin(x2);
};

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

}  // namespace

TEST_CASE("tape: every rule's gradient and Hessian against mpmath", "[reverse][rules]") {
    nabla_test::for_each_rule_function([]<std::size_t N>(const char* name, auto build) {
        SECTION(name) {
            check_rule<N>(name, build);
        }
    });
}

TEST_CASE("tape: the seed function is one statement with its partials", "[reverse]") {
    tape<> t;
    auto recording = t.record();
    var x1 = t.input(2.0), x2 = t.input(5.0);
    const std::size_t before = t.statements();
    var f = seed(x1, x2);
    CHECK(t.statements() == before + 1);
    CHECK(t.partials() == 2);  // x1 in log and in the product, x2 in the product and in sin
    t.gradient(f);
    CHECK(f.value == Approx(11.652071).epsilon(1e-7));
    CHECK(t.adjoint(x1) == Approx(5.5).epsilon(1e-15));
    CHECK(t.adjoint(x2) == Approx(2.0 - std::cos(5.0)).epsilon(1e-15));

    const auto [value, gradient] = nabla::value_and_grad(nabla::mode::reverse, seed, 2.0, 5.0);
    CHECK(value == f.value);
    CHECK(gradient[0] == t.adjoint(x1));
    CHECK(gradient[1] == t.adjoint(x2));
}

TEST_CASE("tape: a statement keeps one pair per variable it reads", "[reverse]") {
    tape<> t;
    auto recording = t.record();
    var x = t.input(2.0), y = t.input(3.0);
    std::size_t pairs = t.partials();
    // Which pairs a statement adds, and the gradient of its value.
    const auto added = [&](const var& f) {
        const std::size_t n = t.partials() - pairs;
        pairs = t.partials();
        t.gradient(f);
        return n;
    };

    var f = x * x + x * y - sin(x);  // x three times, y once
    CHECK(added(f) == 2);
    CHECK(t.adjoint(x) == Approx(2.0 * 2.0 + 3.0 - std::cos(2.0)).epsilon(1e-15));
    CHECK(t.adjoint(y) == 2.0);

    // Extended Rosenbrock's term with named intermediates: x and y once each.
    auto a = y - x * x;
    auto b = 1.0 - x;
    var r = 100.0 * a * a + b * b;
    CHECK(added(r) == 2);
    CHECK(t.adjoint(x) == Approx(-400.0 * 2.0 * a.value - 2.0 * b.value).epsilon(1e-15));
    CHECK(t.adjoint(y) == Approx(200.0 * a.value).epsilon(1e-15));

    // Two intermediates of one type and one value at x = 0 that differ only in a constant: each
    // keeps its own partial (merging them would give 2 + 2). The second's variable comes as it
    // is, unmerged (below).
    var zero = t.input(0.0);
    auto twice = 2.0 * zero;
    auto thrice = 3.0 * zero;
    var g = twice + thrice;
    CHECK(added(g) == 2);
    CHECK(t.adjoint(zero) == 5.0);

    // Two intermediates of one type, used in turn: the second's variables come as they are,
    // unmerged, and the gradient is the same.
    auto d = x - y;
    auto e = y - x;
    var h = d * d + e * e + d * e;  // (x - y)^2 + (y - x)^2 - (x - y)^2 = (x - y)^2
    CHECK(added(h) == 4);
    CHECK(t.adjoint(x) == Approx(2.0 * (2.0 - 3.0)).epsilon(1e-15));
    CHECK(t.adjoint(y) == Approx(-2.0 * (2.0 - 3.0)).epsilon(1e-15));

    // Two intermediates written alike stay two (a statement merges the uses of one named
    // intermediate, not every two that are alike): a pair per use, the same gradient.
    auto p = x * y;
    auto q = x * y;
    var k = p * q;
    CHECK(added(k) == 4);
    CHECK(t.adjoint(x) == 2.0 * 2.0 * 9.0);
    CHECK(t.adjoint(y) == 2.0 * 3.0 * 4.0);
    var k2 = p * p;
    CHECK(added(k2) == 2);
    CHECK(t.adjoint(x) == 2.0 * 2.0 * 9.0);
    CHECK(t.adjoint(y) == 2.0 * 3.0 * 4.0);
    // Two that hold a constant are compared by their contents: alike, merged.
    auto u = 2.0 * y;
    auto w = 2.0 * y;
    var k3 = x * u + w;
    CHECK(added(k3) == 2);
    CHECK(t.adjoint(x) == 6.0);
    CHECK(t.adjoint(y) == 2.0 * 2.0 + 2.0);

    // Constants among the variables are never written.
    var c = 7.0;
    var m = c * x + c * c + x * c;
    CHECK(added(m) == 1);
    CHECK(t.adjoint(x) == 14.0);

    // More than eight variables: not merged (one pair per use), the same gradient.
    var n = x * x * x * x * x + y * y * y * y * y;
    CHECK(added(n) == 10);
    CHECK(t.adjoint(x) == Approx(5.0 * 16.0).epsilon(1e-15));
    CHECK(t.adjoint(y) == Approx(5.0 * 81.0).epsilon(1e-15));

    // An accumulation that reads its sum again: the sum's partial 1 is the accumulation bit, its
    // other use a pair.
    var s = x * y;
    pairs = t.partials();
    s += s * x;  // s (1 + x)
    CHECK(added(s) == 2);
    CHECK(t.adjoint(x) == Approx(3.0 * 3.0 + 6.0).epsilon(1e-15));
    CHECK(t.adjoint(y) == Approx(2.0 * 3.0).epsilon(1e-15));

    // A variable of a cleared recording is still reported.
    tape<> other;
    var stale;
    {
        auto inner = other.record();
        stale = other.input(1.0);
    }
    other.clear();
    CHECK_THROWS_AS(var(x * x + stale), nabla::tape_error);
}

TEST_CASE("tape: a passive variable read as it comes adds to no adjoint", "[reverse]") {
    // d2 is the second named intermediate of its type, so its variables are written as they come:
    // the constant c too, with index 0, the passive slot. No adjoint sees it, in any sweep.
    tape<> t;
    auto recording = t.record();
    var x = t.input(2.0), y = t.input(-3.0);
    var c = 7.0;
    auto d1 = x - c;
    auto d2 = c - y;
    var f = d1 * d1 + d2 * d2 + d1 * d2;
    var g = f * x;
    const double u = 2.0 - 7.0, w = 7.0 + 3.0, fv = u * u + w * w + u * w;
    for (int sweep = 0; sweep < 3; ++sweep) {
        t.gradient(g);
        CHECK(t.adjoint(x) == Approx(fv + 2.0 * (2.0 * u + w)).epsilon(1e-15));
        CHECK(t.adjoint(y) == Approx(-2.0 * (2.0 * w + u)).epsilon(1e-15));
        CHECK(t.adjoint(c) == 0.0);
    }
}

TEST_CASE("tape: auto intermediates record one statement per pair energy", "[reverse]") {
    const std::vector<double> q = cluster(2, 7);
    tape<> t;
    auto recording = t.record();
    std::vector<var> active;
    for (double v : q)
        active.push_back(t.input(v));
    const std::size_t inputs = t.statements();
    const var e = lennard_jones(active);
    // One statement: the pair energy accumulated into e (the named dx, r2, s6 are collapsed into
    // its partials, not recorded).
    CHECK(t.statements() == inputs + 1);
    // s6 = 1 / r2^3 is a function of r2 alone: the statement has the six partials of r2 (dx, dy,
    // dz against both particles), scaled (e starts as a constant: no partial).
    CHECK(t.partials() == 6);
    t.gradient(e);
    std::vector<double> g;
    for (const var& v : active)
        g.push_back(t.adjoint(v));
    CHECK(close_all(g, lennard_jones_gradient(q), 1e-13));
}

TEST_CASE("tape: a statement that is a function of one collapsed intermediate refers to its "
          "partials",
          "[reverse]") {
    // r2 is collapsed (it reads named intermediates); e1, e2 and e3 are functions of r2 alone,
    // so each refers to r2's six partials in the scratch memory, times its own scale, instead
    // of copying them. Every value is checked against the closed form.
    const std::array<double, 6> q{0.3, -1.2, 0.7, 1.9, 0.4, -0.5};
    tape<> t;
    auto recording = t.record();
    std::array<var, 6> x{};
    for (std::size_t i = 0; i < 6; ++i)
        x[i] = t.input(q[i]);
    auto dx = x[0] - x[3];
    auto dy = x[1] - x[4];
    auto dz = x[2] - x[5];
    auto r2 = dx * dx + dy * dy + dz * dz;
    const std::size_t statements = t.statements();
    const std::size_t pairs = t.partials();
    const std::size_t bytes = t.bytes_used();
    var e1 = 1.0 / (r2 * r2);
    var e2 = sqrt(r2) * 3.0;
    var e3 = 2.0 * r2 - r2 * r2;  // r2 twice: merged, then referred to
    CHECK(t.statements() == statements + 3);
    CHECK(t.partials() == pairs + 18);  // six each, counted for each statement
    // The three statements hold two pairs each on the tape, and r2's six partials are in the
    // scratch memory once: less than r2's copy for one statement.
    const std::size_t pair = sizeof(std::uint32_t) + sizeof(double);
    CHECK(t.bytes_used() - bytes <= 6 * pair + 6 * pair + 3 * sizeof(std::uint32_t));
    var f = e1 + e2 * e3;  // a statement of variables: its own pairs
    const double ux = q[0] - q[3], uy = q[1] - q[4], uz = q[2] - q[5];
    const double s = ux * ux + uy * uy + uz * uz;
    const double v1 = 1.0 / (s * s), v2 = 3.0 * std::sqrt(s), v3 = 2.0 * s - s * s;
    CHECK(f.value == Approx(v1 + v2 * v3).epsilon(1e-15));
    // d/ds of each, then ds/dq = 2 (u, -u).
    const double d1 = -2.0 / (s * s * s), d2 = 1.5 / std::sqrt(s), d3 = 2.0 - 2.0 * s;
    const std::array<double, 3> u{ux, uy, uz};
    const auto expect = [&](double dds, std::size_t i) {
        return (i < 3 ? 2.0 : -2.0) * u[i % 3] * dds;
    };
    // One recording, several sweeps: each intermediate's gradient, then f's.
    const std::array<std::pair<const var*, double>, 4> outputs{
        {{&e1, d1}, {&e2, d2}, {&e3, d3}, {&f, d1 + d2 * v3 + v2 * d3}}};
    for (std::size_t k = 0; k < outputs.size(); ++k) {
        t.gradient(*outputs[k].first);
        for (std::size_t i = 0; i < 6; ++i) {
            INFO("output " << k << ", input " << i);
            CHECK(t.adjoint(x[i]) == Approx(expect(outputs[k].second, i)).epsilon(1e-14));
        }
    }
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

TEST_CASE("tape: a function of one collapsed intermediate with few partials, or next to another "
          "pair, is copied",
          "[reverse]") {
    tape<> t;
    auto recording = t.record();
    var a = t.input(1.5), b = t.input(-0.5);
    auto d = a - b;
    auto r = d * d + d;  // collapsed (it reads a named intermediate): two partials
    const std::size_t pairs = t.partials();
    var e = exp(r);  // two partials: copied, as a reference would be no smaller
    CHECK(t.partials() == pairs + 2);
    // s is not the statement recorded last, so it keeps a pair of its own, and r's partials
    // next to it are copied.
    var s = t.input(0.25);
    var other = t.input(4.0);
    auto c = other - a;
    auto w = c * c + c * c * c + b * c;  // collapsed: three partials (other, a, b)
    const std::size_t before = t.partials();
    s = s + 2.0 * w;
    CHECK(t.partials() == before + 4);
    var f = s * e;
    t.gradient(f);
    const double dv = 1.5 + 0.5, rv = dv * dv + dv, cv = 4.0 - 1.5;
    const double wv = cv * cv + cv * cv * cv + -0.5 * cv;
    const double sv = 0.25 + 2.0 * wv, ev = std::exp(rv);
    const double dwdc = 2.0 * cv + 3.0 * cv * cv + -0.5;
    // f = s e: df/ds = e, df/de = s; de/da = e (2 d + 1), de/db = -e (2 d + 1);
    // ds/dother = 2 dw/dc, ds/da = -2 dw/dc, ds/db = 2 c.
    CHECK(t.adjoint(a) == Approx(sv * ev * (2.0 * dv + 1.0) - ev * 2.0 * dwdc).epsilon(1e-14));
    CHECK(t.adjoint(b) == Approx(-sv * ev * (2.0 * dv + 1.0) + ev * 2.0 * cv).epsilon(1e-14));
    CHECK(t.adjoint(other) == Approx(ev * 2.0 * dwdc).epsilon(1e-14));
}

TEST_CASE("tape: gradients of run-time loops agree with hand-written ones", "[reverse]") {
    for (unsigned s : {1u, 2u, 3u}) {
        const std::vector<double> q = cluster(20, s);
        const auto [value, g] = nabla::value_and_grad(lennard_jones, q);  // reverse: run-time size
        CHECK(value == Approx(lennard_jones(q)).epsilon(1e-14));
        CHECK(close_all(g, lennard_jones_gradient(q), 1e-12));
    }
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

TEST_CASE("tape: expressions outlive the variables they were built from", "[reverse]") {
    // A helper that returns an expression reading its own locals: nodes hold copies.
    const auto energy_term = [](const var& a, const var& b) {
        var d = a - b;             // a local variable
        auto squared = d * d;      // a local named expression
        return squared * 0.5 + d;  // an expression reading both
    };
    tape<> t;
    auto recording = t.record();
    var x = t.input(3.0), y = t.input(1.0);
    var e = energy_term(x, y);  // d = 2: e = 2 + 2
    t.gradient(e);
    CHECK(e.value == 4.0);
    CHECK(t.adjoint(x) == 3.0);  // d + 1
    CHECK(t.adjoint(y) == -3.0);

    // Aliasing: the right-hand side reads the old a before a takes its new index.
    var a = t.input(2.0);
    const var a0 = a;
    a = a * a + a;
    t.gradient(a);
    CHECK(a.value == 6.0);
    CHECK(t.adjoint(a0) == 5.0);
}

TEST_CASE("tape: named intermediates are merged when they are one, not by value or address",
          "[reverse]") {
    tape<> t;
    auto recording = t.record();
    var x = t.input(2.0), y = t.input(3.0);
    // Two small intermediates of one type and one value, reading different variables.
    auto a = x * y;
    auto b = y * x;
    auto c = a;  // a copy of a: another intermediate, the same gradient
    var z = a * a + b + c;
    t.gradient(z);
    CHECK(t.adjoint(x) == 2.0 * 6.0 * 3.0 + 3.0 + 3.0);
    CHECK(t.adjoint(y) == 2.0 * 6.0 * 2.0 + 2.0 + 2.0);
    // The same local of a helper (one address) in two calls: two intermediates.
    const auto fourth = [](const var& u) {
        auto square = u * u;
        return square * square;
    };
    var w = fourth(x) + 2.0 * fourth(y);
    t.gradient(w);
    CHECK(t.adjoint(x) == 4.0 * 8.0);
    CHECK(t.adjoint(y) == 2.0 * 4.0 * 27.0);
    // Larger intermediates (collapsed into scratch memory), the same checks.
    auto p = a * a + b;
    auto q = b * b + a;
    var v = p * q + p;
    t.gradient(v);
    CHECK(t.adjoint(x) ==
          Approx((q.value + 1.0) * (2.0 * 6.0 * 3.0 + 3.0) + p.value * (2.0 * 6.0 * 3.0 + 3.0)));
}

TEST_CASE("tape: an intermediate of constants only is not merged with the next one "
          "(regression: both began at one scratch offset)",
          "[reverse]") {
    tape<> t;
    auto recording = t.record();
    var x = t.input(2.0), y = t.input(3.0);
    var c = 5.0;  // a constant
    auto c2 = c * c;
    auto p = c2 * c2 + c2;  // collapsed, no partials
    var w = p * 2.0;        // collapses p first
    (void)w;
    auto q0 = x * y;
    auto q = q0 * q0 + q0;  // its partials begin where p's would have
    var z = p * 1.0 + 3.0 * q;
    t.gradient(z);
    CHECK(t.adjoint(x) == 3.0 * (2.0 * 6.0 + 1.0) * 3.0);
    CHECK(t.adjoint(y) == 3.0 * (2.0 * 6.0 + 1.0) * 2.0);
}

TEST_CASE("tape: a tape's entry limit is a clear error", "[reverse][errors]") {
    tape<> t(1000);
    {
        auto recording = t.record();
        std::vector<var> x;
        for (int i = 0; i < 999; ++i)
            x.push_back(t.input(1.0));
        CHECK_THROWS_WITH(t.input(1.0), Catch::Contains("the tape's limit"));
    }
    // The tape is still usable after the error.
    auto recording = t.record();
    var x = t.input(2.0);
    var y = x * x;
    t.gradient(y);
    CHECK(t.adjoint(x) == 4.0);
}

TEST_CASE("tape: an accumulation keeps its partial 1 as a bit, not a pair", "[reverse]") {
    tape<> t;
    auto recording = t.record();
    std::vector<var> x;
    for (double v : {1.5, -2.0, 0.5, 3.0})
        x.push_back(t.input(v));
    var s = x[0] * x[1];  // 2 pairs
    const std::size_t pairs = t.partials();
    s += x[2] * x[3];     // s is the statement just recorded: 2 pairs, no pair for s
    s -= sin(x[0]);       // 1
    s = x[1] * x[2] + s;  // the accumulated variable second: 2
    var copy = s;
    copy += 2.0;            // a copy of the last statement, and a constant: no pair at all
    s = copy - 1.0 * x[3];  // 1
    CHECK(t.partials() == pairs + 6);
    // With two variables, the first is the one that may accumulate: x[0] is not the statement
    // just recorded, so both have a pair.
    var other = x[0] + s;
    CHECK(t.partials() == pairs + 8);
    var f = other * other;
    t.gradient(f);
    // f = (x0 + x0 x1 + x2 x3 - sin x0 + x1 x2 + 2 - x3)^2
    const double u = 1.5 + 1.5 * -2.0 + 0.5 * 3.0 - std::sin(1.5) + -2.0 * 0.5 + 2.0 - 3.0;
    CHECK(f.value == Approx(u * u).epsilon(1e-15));
    CHECK(t.adjoint(x[0]) == Approx(2 * u * (1.0 - 2.0 - std::cos(1.5))).epsilon(1e-15));
    CHECK(t.adjoint(x[1]) == Approx(2 * u * (1.5 + 0.5)).epsilon(1e-15));
    CHECK(t.adjoint(x[2]) == Approx(2 * u * (3.0 - 2.0)).epsilon(1e-15));
    CHECK(t.adjoint(x[3]) == Approx(2 * u * (0.5 - 1.0)).epsilon(1e-15));
}

TEST_CASE("tape: an accumulated sum that the statement also reads is merged into its pair "
          "(regression: s - s lost s's adjoint to the precision of a large one)",
          "[reverse]") {
    tape<> t;
    auto recording = t.record();
    const var x = t.input(0.7);
    var s = x * 3.0;
    const std::size_t pairs = t.partials();
    // s is the statement just recorded, read again on the right: one pair (s, 1 - 1 = 0), no
    // accumulation bit; the sweep used to add z's adjoint 1e8 to s's 1.1 and take it away.
    var z = s - s;
    CHECK(t.partials() == pairs + 1);
    var out = z * 1e8 + s * 1.1;
    t.gradient(out);
    CHECK(t.adjoint(z) == 1e8);
    CHECK(t.adjoint(s) == 1.1);  // exactly: 1.1000000089406967 before
    CHECK(t.adjoint(x) == 1.1 * 3.0);
    // s += s * 2: one pair (s, 1 + 2).
    var w = x * 1.5;
    const std::size_t before = t.partials();
    w += w * 2.0;
    CHECK(t.partials() == before + 1);
    t.gradient(w);
    CHECK(t.adjoint(x) == 3.0 * 1.5);
    // A sum that does not accumulate keeps its own pair next to the other use (as an operation
    // by operation tape does): the same gradient, two pairs.
    var a = x * 2.0;
    var b = x * 5.0;
    const std::size_t later = t.partials();
    var c = a + a * b;
    CHECK(t.partials() == later + 3);
    t.gradient(c);
    CHECK(t.adjoint(x) == Approx(2.0 + 20.0 * 0.7).epsilon(1e-15));  // c = 2 x + 10 x^2
}

TEST_CASE("tape: an accumulation before the tape's first partial", "[reverse]") {
    // The sweep skips the leading statements without operands; an accumulation onto an input
    // before any partial is recorded keeps its pair, so it is not taken for one of them.
    tape<> t;
    auto recording = t.record();
    const var input = t.input(1.0);
    var s = input;
    s += 2.0;
    CHECK(t.partials() == 1);
    var y = t.input(5.0);
    var f = s * y;
    t.gradient(f);
    CHECK(t.adjoint(y) == 3.0);
    CHECK(t.adjoint(input) == 5.0);
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

TEST_CASE("tape: inputs and adjoints of many variables report misuse", "[reverse][errors]") {
    tape<> t(100);
    std::vector<double> values(5, 1.0), adjoints(4);
    std::vector<var> x(4);
    {
        auto recording = t.record();
        CHECK_THROWS_WITH(t.inputs(values, x), Catch::Contains("5 values for 4 variables"));
        values.resize(4);
        t.inputs(values, x);
        CHECK_THROWS_WITH(t.adjoints(x, adjoints), Catch::Contains("adjoints() before a sweep"));
        var y = x[0] * x[1] + x[2] * x[3];
        t.gradient(y);
        adjoints.resize(3);
        CHECK_THROWS_WITH(t.adjoints(x, adjoints), Catch::Contains("3 values for 4 variables"));
        adjoints.resize(4);
        t.adjoints(x, adjoints);
        CHECK(adjoints == std::vector<double>{1.0, 1.0, 1.0, 1.0});
        // More variables than the tape has from `first` on; a constant as `first`.
        CHECK(t.adjoints_from(x[0], t.statements() - x[0].index()).size() ==
              t.statements() - x[0].index());
        CHECK_THROWS_WITH(t.adjoints_from(x[0], t.statements() - x[0].index() + 1),
                          Catch::Contains("are not all on this tape"));
        CHECK_THROWS_WITH(t.adjoints_from(var(1.0), 1),
                          Catch::Contains("are not all on this tape"));

        // Past the tape's limit: an error, and nothing recorded.
        const std::size_t statements = t.statements();
        std::vector<double> many(100, 2.0);
        std::vector<var> vars(100);
        CHECK_THROWS_WITH(t.inputs(many, vars), Catch::Contains("the tape's limit"));
        CHECK(t.statements() == statements);
    }
    // Variables of a cleared recording.
    auto recording = t.record();
    var z = t.input(1.0);
    t.gradient(z);
    CHECK_THROWS_WITH(t.adjoints(x, adjoints), Catch::Contains("from another recording"));
    CHECK_THROWS_WITH(t.adjoints_from(x[0], 1), Catch::Contains("from another recording"));
    var w = t.input(2.0);
    t.zero_adjoints();
    CHECK(t.adjoints_from(w, 1).front() == 0.0);
    (void)t.input(3.0);  // recorded after the sweep's setup
    CHECK_THROWS_WITH(t.adjoints_from(w, 1), Catch::Contains("adjoints_from() before a sweep"));
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

TEST_CASE("tape: Hessian-vector products agree with the forward-over-forward Hessian",
          "[reverse]") {
    const std::vector<double> x{0.3, -0.7, 1.1, 0.4, 0.9};
    const auto H = nabla::hessian(rosenbrock, x);
    for (std::size_t j = 0; j < x.size(); ++j) {
        std::vector<double> e(x.size(), 0.0);
        e[j] = 1.0;
        const std::vector<double> column = nabla::hvp(rosenbrock, x, e);
        for (std::size_t i = 0; i < x.size(); ++i)
            CHECK(column[i] == Approx(H(i, j)).epsilon(1e-14).margin(1e-14));
    }
    CHECK_THROWS_WITH(nabla::hvp(rosenbrock, x, std::vector<double>{1.0}),
                      Catch::Contains("v has 1 entries, x has 5"));
}

TEST_CASE("tape: memory is kept across recordings", "[reverse]") {
    std::vector<double> x(1000, 0.5);
    tape<> t;
    std::vector<var> active(x.size());
    std::size_t reserved = 0;
    for (int round = 0; round < 5; ++round) {
        auto recording = t.record();
        for (std::size_t i = 0; i < x.size(); ++i)
            active[i] = t.input(x[i]);
        var y = rosenbrock(active);
        t.gradient(y);
        if (round == 0)
            reserved = t.bytes_reserved();
        CHECK(t.bytes_reserved() == reserved);
    }
}

// The resident memory of this process in bytes (Linux: /proc/self/statm), 0 elsewhere.
static std::size_t resident_bytes() {
    std::FILE* statm = std::fopen("/proc/self/statm", "r");
    if (statm == nullptr)
        return 0;
    unsigned long pages = 0, resident = 0;
    const int read = std::fscanf(statm, "%lu %lu", &pages, &resident);
    std::fclose(statm);
    return read == 2 ? resident * static_cast<std::size_t>(sysconf(_SC_PAGESIZE)) : 0;
}

TEST_CASE("tape: a million recordings and sweeps keep memory flat", "[reverse][stability]") {
    // The seed function with named intermediates (small and collapsed), recorded and swept
    // 10^6 times on one tape: the tape reserves its memory once, the process does not grow.
    tape<> t;
    const auto record_and_sweep = [&t](double a, double b) {
        auto recording = t.record();
        var x1 = t.input(a), x2 = t.input(b);
        auto p = x1 * x2;
        auto q = log(x1) + p * p - sin(x2);
        var f = q * q + p;
        t.gradient(f);
        return t.adjoint(x1);
    };
    double checksum = 0.0;
    for (int i = 0; i < 1000; ++i)
        checksum += record_and_sweep(2.0 + 1e-3 * i, 5.0);
    const std::size_t reserved = t.bytes_reserved();
    const std::size_t resident = resident_bytes();
    for (int i = 0; i < 1000000; ++i)
        checksum += record_and_sweep(2.0 + 1e-6 * (i % 1000), 5.0);
    CHECK(std::isfinite(checksum));
    CHECK(t.bytes_reserved() == reserved);
    if (resident != 0)  // far above noise: the tape of one recording is about 1 KB
        CHECK(resident_bytes() < resident + (std::size_t(4) << 20));
}

TEST_CASE("tape: misuse is reported", "[reverse][errors]") {
    tape<> t;
    var stale;
    {
        auto recording = t.record();
        stale = t.input(1.0);
    }
    {
        auto recording = t.record();  // clears: stale's recording is gone
        var x = t.input(2.0);
        CHECK_THROWS_AS(var(stale * x), nabla::tape_error);
        CHECK_THROWS_WITH(t.adjoint(stale), Catch::Contains("from another recording"));

        tape<> other;
        var foreign;
        {
            auto inner = other.record();
            foreign = other.input(3.0);
        }
        CHECK_THROWS_WITH(var(x + foreign), Catch::Contains("do not mix variables of two tapes"));
        CHECK_THROWS_WITH(t.adjoint(x), Catch::Contains("adjoint() before a sweep"));
    }
    // No recording: an active variable cannot be used.
    CHECK_THROWS_WITH(var(stale + 1.0), Catch::Contains("no tape records"));
    // Constants compute without a tape.
    var a = 2.0, b = 3.0;
    var c = a * b + 1.0;
    CHECK(c.value == 7.0);
    CHECK(!c.is_active());
}

TEST_CASE("tape: a collapsed intermediate kept across recordings", "[reverse][errors]") {
    // A larger intermediate is collapsed once, into the tape's scratch memory of that recording.
    tape<> t;
    var x, y;
    var c = 3.0;  // a constant
    auto d = c - 1.0;
    auto constants = d * d + d;  // reads no active variable: no partials
    {
        auto recording = t.record();
        x = t.input(2.0);
        y = t.input(5.0);
        auto u = x - y;
        auto big = u * u + u;  // collapsed on its first use below
        var f = big * x + constants * x;
        t.gradient(f);
        CHECK(t.adjoint(x) == Approx(6.0 + 2.0 * (2.0 * -3.0 + 1.0) + 6.0).epsilon(1e-15));
        // The same intermediate in the next recording: its variables are stale, and so is its
        // collapsed form. Reported, never read from the new recording's scratch memory.
        auto next = t.record();
        var z = t.input(1.0);
        CHECK_THROWS_WITH(var(big * z), Catch::Contains("from another recording"));
        // A function of it alone takes its collapsed form without asking the tape, and with it
        // the stale generation: reported by the statement that uses it.
        auto inverse = 1.0 / (big * big);
        CHECK_THROWS_WITH(var(inverse * z), Catch::Contains("from another recording"));
        CHECK_THROWS_WITH(var(2.0 * inverse), Catch::Contains("from another recording"));
        // An intermediate of constants only stays right in any recording, and so does a
        // function of it alone.
        var g = constants * z;
        auto inverse_constants = 1.0 / (constants * constants);
        var g2 = inverse_constants * z;
        t.gradient(g);
        CHECK(g.value == 6.0);
        CHECK(t.adjoint(z) == 6.0);
        t.gradient(g2);
        CHECK(g2.value == 1.0 / 36.0);
        CHECK(t.adjoint(z) == 1.0 / 36.0);
    }
    // A function of a collapsed intermediate with partials, used when no tape records: reported,
    // as the intermediate itself would be.
    const auto made_in_a_recording = [](tape<>& other) {
        auto recording = other.record();
        var a = other.input(2.0);
        auto u = a - 1.0;
        auto b = u * u + u;
        const var used = b * a;  // collapses b
        CHECK(used.value == 4.0);
        return 3.0 / (b * b * b);
    };
    tape<> other;
    auto late = made_in_a_recording(other);
    CHECK_THROWS_WITH(var(late + 1.0), Catch::Contains("no tape records"));
    // And with no recording at all.
    var h = constants * 2.0;
    CHECK(h.value == 12.0);

    // Collapsed first while no tape records (its form is kept, without partials), then used in a
    // recording: still no partials, the right values and adjoints.
    var k = 4.0;
    auto m = k - 1.0;
    auto offline = m * m + m;  // 12, collapsed on its first use, just below
    var before = offline * 2.0;
    CHECK(before.value == 24.0);
    auto recording = t.record();
    var z = t.input(1.5);
    const std::size_t pairs = t.partials();
    var g = offline * z + offline * offline;
    CHECK(t.partials() == pairs + 1);  // z only
    t.gradient(g);
    CHECK(g.value == 12.0 * 1.5 + 144.0);
    CHECK(t.adjoint(z) == 12.0);
}

TEST_CASE("tape: recording a tape again while it records, then ending both", "[reverse][errors]") {
    // The second recording of a tape that records already ends by making the tape active again,
    // and the first by making what was active before it active: no tape. (The tape once kept its
    // predecessor itself, and the second recording made that the tape: it stayed active after
    // both had ended, and when destroyed left a dangling active tape, a use after free.)
    var x;
    {
        tape<> t;
        auto first = t.record();
        {
            auto again = t.record();
            x = t.input(2.0);
            var y = x * x;
            CHECK(y.value == 4.0);
        }
        var z = x * 3.0;  // t records still
        t.gradient(z);
        CHECK(t.adjoint(x) == 3.0);
    }
    CHECK_THROWS_WITH(var(x + 1.0), Catch::Contains("no tape records"));
    tape<> outer, inner;
    auto recording = outer.record();
    {
        auto one = inner.record();
        {
            auto two = inner.resume();
            {
                auto back = outer.resume();  // outer inside inner inside inner
            }
            var w = inner.input(1.0);
            CHECK(inner.statements() == 2);
            CHECK(w.value == 1.0);
        }
    }
    var v = outer.input(5.0);  // outer records again
    CHECK(outer.statements() == 2);
    CHECK(v.value == 5.0);
}

TEST_CASE("tape: a gradient inside a function that is itself differentiated", "[reverse]") {
    // The inner grad records on a tape of its own while the outer recording is open.
    const auto inner = [](const auto& y) { return y[0] * y[0] * y[1]; };
    const auto outer = [&](const auto& x) {
        const std::vector<double> at{static_cast<double>(x[0]), 2.0};
        const std::vector<double> g = nabla::grad(inner, at);  // 2 y0 y1 = 4 x0, a constant here
        return x[0] * x[1] * g[0];
    };
    const std::vector<double> x{3.0, 5.0};
    const auto g = nabla::grad(outer, x);
    CHECK(g[0] == 5.0 * 12.0);
    CHECK(g[1] == 3.0 * 12.0);

    // Both in reverse mode, the inner one on more inputs: each depth has its own tape and its own
    // vector of active inputs (the outer function reads its inputs after the inner gradient).
    const auto inner_many = [](const auto& y) { return y[0] * y[0] * y[1] + y[2] + y[3]; };
    const auto outer_reverse = [&](const auto& v) {
        const std::vector<double> at{static_cast<double>(v[0]), 2.0, 7.0, 8.0};
        const std::vector<double> h = nabla::grad(nabla::mode::reverse, inner_many, at);
        return v[0] * v[1] * h[0];
    };
    const auto gr = nabla::grad(nabla::mode::reverse, outer_reverse, x);
    CHECK(gr[0] == 5.0 * 12.0);
    CHECK(gr[1] == 3.0 * 12.0);
    // The lent vectors are resized for each call: fewer inputs, then more.
    CHECK(
        nabla::grad(nabla::mode::reverse, inner_many, std::vector<double>{1.0, 2.0, 0.0, 0.0, 9.0})
            .size() == 5);
    const auto one =
        nabla::grad(nabla::mode::reverse, outer_reverse, std::vector<double>{2.0, 1.0});
    CHECK(one[0] == 1.0 * 8.0);
    CHECK(one[1] == 2.0 * 8.0);
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
    std::vector<double> x(1000);
    for (std::size_t i = 0; i < x.size(); ++i)
        x[i] = 3.0 * std::sin(0.37 * double(i)) - (i % 97 == 0 ? 40.0 : 0.0);
    x[500] = -800.0;  // exp(x - max) is 0: an entry that is exactly 0 either way
    const auto [lse, g] = nabla::value_and_grad(nabla::mode::reverse, nabla_test::log_sum_exp, x);
    double sum = 0.0;
    for (double v : x)
        sum += std::exp(v);
    CHECK(lse == Approx(std::log(sum)).epsilon(1e-14));
    const std::vector<double> softmax = nabla_test::log_sum_exp_gradient(x);
    CHECK(softmax[500] == 0.0);
    check_entries(g, softmax);

    for (const std::vector<double>& p :
         {std::vector<double>{1.1, 0.4, 0.1, 0.4}, std::vector<double>{0.7, 0.9, 0.3, 0.2}}) {
        INFO("p = " << p[0] << ", " << p[1] << ", " << p[2] << ", " << p[3]);
        check_entries(nabla::grad(nabla::mode::reverse, nabla_test::lotka_volterra_rk4, p),
                      nabla_test::lotka_volterra_rk4_gradient(p));
    }
}

namespace {

// 1 / r^6 of the distance between two particles, returned as an expression that reads the
// function's locals: r2 is a larger intermediate (it reads named ones), collapsed on its first
// use. With `distance`, r2 is used (and collapsed) here already, by a statement of its own.
auto inverse_sixth_power(const std::array<var, 6>& q, var* distance = nullptr) {
    auto dx = q[0] - q[3];
    auto dy = q[1] - q[4];
    auto dz = q[2] - q[5];
    auto r2 = dx * dx + dy * dy + dz * dz;
    if (distance != nullptr)
        *distance = sqrt(r2);
    return 1.0 / (r2 * r2 * r2);
}

}  // namespace

TEST_CASE("tape: an expression returned from a function may refer to its collapsed local "
          "intermediate",
          "[reverse]") {
    // The returned expression holds copies of dx, dy, dz and r2; the function's own objects are
    // gone when it is recorded. Recorded after other statements (r2's partials are not the last
    // thing in the scratch memory), collapsed before the return or not: the closed form's value
    // and gradient, s = |u|^2, e = 4 (s^-6 - s^-3), de/dq = 2 (u, -u) de/ds.
    const std::array<double, 6> q{0.3, -1.2, 0.7, 1.9, 0.4, -0.5};
    const double ux = q[0] - q[3], uy = q[1] - q[4], uz = q[2] - q[5];
    const std::array<double, 3> u{ux, uy, uz};
    const double s = ux * ux + uy * uy + uz * uz, s6 = 1.0 / (s * s * s);
    const double energy = 4.0 * (s6 * s6 - s6);
    const double de_ds = 4.0 * (2.0 * s6 - 1.0) * -3.0 * s6 / s;
    for (const bool collapsed_inside : {false, true}) {
        INFO("r2 collapsed inside the function: " << collapsed_inside);
        tape<> t;
        auto recording = t.record();
        std::array<var, 6> x{};
        for (std::size_t i = 0; i < 6; ++i)
            x[i] = t.input(q[i]);
        var distance;
        auto inverse_r6 = inverse_sixth_power(x, collapsed_inside ? &distance : nullptr);
        var unrelated = x[0] * x[1] + sin(x[2]);  // recorded in between
        auto other = x[5] - x[4];
        auto larger = other * other + other;  // another collapsed intermediate, in between
        var unrelated_too = larger * x[3];
        var e = 4.0 * (inverse_r6 * inverse_r6 - inverse_r6);
        CHECK(e.value == Approx(energy).epsilon(1e-15));
        t.gradient(e);
        for (std::size_t i = 0; i < 6; ++i) {
            INFO("input " << i);
            CHECK(t.adjoint(x[i]) ==
                  Approx((i < 3 ? 2.0 : -2.0) * u[i % 3] * de_ds).epsilon(1e-14));
        }
        if (collapsed_inside) {
            t.gradient(distance);
            CHECK(distance.value == Approx(std::sqrt(s)).epsilon(1e-15));
            CHECK(t.adjoint(x[1]) == Approx(uy / std::sqrt(s)).epsilon(1e-15));
        }
        t.gradient(unrelated_too);  // and the statements in between are unharmed
        CHECK(t.adjoint(x[3]) == Approx(larger.value).epsilon(1e-15));
        CHECK(unrelated.value == Approx(0.3 * -1.2 + std::sin(0.7)).epsilon(1e-15));
    }
}

TEST_CASE("tape: a variable of a destroyed tape is reported, not read", "[reverse][errors]") {
    // A variable is a handle (value, index, generation); the tape it was recorded on is gone, and
    // another records now (it may even sit where the first one did). Every use goes through the
    // tape recording now, whose generation differs: a tape_error that says what happened, and the
    // tape stays usable. (Nothing here reads the destroyed tape: AddressSanitizer-clean.)
    var orphan;
    {
        tape<> first;
        auto recording = first.record();
        orphan = first.input(2.0);
        var y = orphan * orphan;
        first.gradient(y);
        CHECK(first.adjoint(orphan) == 4.0);
    }
    CHECK(orphan.value == 2.0);
    tape<> t;
    auto recording = t.record();
    var x = t.input(3.0);
    var f = x * x;
    t.gradient(f);
    CHECK_THROWS_WITH(t.adjoint(orphan), Catch::Contains("cleared or destroyed"));
    const auto stale = Catch::Contains("from another recording");
    CHECK_THROWS_AS(t.adjoint(orphan), nabla::tape_error);
    std::array<var, 2> both{x, orphan};
    std::array<double, 2> adjoints{};
    CHECK_THROWS_WITH(t.adjoints(both, adjoints), stale);
    t.zero_adjoints();
    CHECK_THROWS_WITH(t.seed(orphan), stale);
    // In expressions: first or second, inside a small and a larger named intermediate, as the
    // term of an accumulation, and as the accumulated sum.
    var s = x * x;
    const std::size_t statements = t.statements(), pairs = t.partials();
    CHECK_THROWS_WITH(var(orphan * x), stale);
    CHECK_THROWS_WITH(var(x + orphan), stale);
    CHECK_THROWS_AS(var(sin(orphan)), nabla::tape_error);
    auto d = x - orphan;
    CHECK_THROWS_WITH(var(d * d), stale);
    auto r = d * d + d;
    CHECK_THROWS_WITH(var(x * r), stale);
    CHECK_THROWS_WITH(s += orphan * 2.0, stale);
    var sum = orphan;
    CHECK_THROWS_WITH(sum += x, stale);
    // Nothing of them was recorded, and the next statement has only its own pairs.
    CHECK(t.statements() == statements);
    CHECK(t.partials() == pairs);
    var g = x * f + s;  // x^3 + x^2
    t.gradient(g);
    CHECK(g.value == 36.0);
    CHECK(t.adjoint(x) == 33.0);
}
