// Named intermediates on the run-time tape: auto intermediates collapsed into the statements
// that use them, statements that refer to a collapsed intermediate's partials or copy them, which
// named intermediates a statement merges, and expressions that outlive the variables and the
// function they were built in.

#include <nabla/nabla.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "workloads.hpp"

namespace {

using nabla::tape;
using nabla::var;
using nabla_test::close_all;
using nabla_test::cluster;
using nabla_test::lennard_jones;
using nabla_test::lennard_jones_gradient;

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

TEST_CASE("tape: named intermediates are merged when they are one, not by value or address",
          "[reverse]") {
    tape<> t;
    auto recording = t.record();
    var x = t.input(2.0), y = t.input(3.0);
    // Two small intermediates of one type and one value, reading different variables.
    auto a = x * y;
    auto b = y * x;

    SECTION("two small intermediates of one value, and a copy of one of them") {
        auto c = a;  // a copy of a: another intermediate, the same gradient
        var z = a * a + b + c;
        t.gradient(z);
        CHECK(t.adjoint(x) == 2.0 * 6.0 * 3.0 + 3.0 + 3.0);
        CHECK(t.adjoint(y) == 2.0 * 6.0 * 2.0 + 2.0 + 2.0);
    }

    SECTION("the same local of a helper in two calls is two intermediates") {
        // The same local of a helper (one address) in two calls: two intermediates.
        const auto fourth = [](const var& u) {
            auto square = u * u;
            return square * square;
        };
        var w = fourth(x) + 2.0 * fourth(y);
        t.gradient(w);
        CHECK(t.adjoint(x) == 4.0 * 8.0);
        CHECK(t.adjoint(y) == 2.0 * 4.0 * 27.0);
    }

    SECTION("larger intermediates, collapsed into scratch memory") {
        // Larger intermediates (collapsed into scratch memory), the same checks.
        auto p = a * a + b;
        auto q = b * b + a;
        var v = p * q + p;
        t.gradient(v);
        CHECK(t.adjoint(x) == Approx((q.value + 1.0) * (2.0 * 6.0 * 3.0 + 3.0) +
                                     p.value * (2.0 * 6.0 * 3.0 + 3.0)));
    }
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
