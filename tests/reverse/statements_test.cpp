// What one statement of the run-time tape records: a pair per variable it reads (uses merged),
// passive variables and constants never written, an accumulation's partial 1 kept as a bit, a
// sum the statement reads again merged into its pair, and a long statement recorded in pieces.

#include <nabla/nabla.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstddef>
#include <vector>

namespace {

using nabla::tape;
using nabla::var;

const auto seed = [](auto x1, auto x2) {
    using std::log, std::sin;
    return log(x1) + x1 * x2 - sin(x2);
};

// A variable of a recording that has ended and been cleared: stale.
var stale_variable() {
    tape<> other;
    var stale;
    {
        auto inner = other.record();
        stale = other.input(1.0);
    }
    other.clear();
    return stale;
}

}  // namespace

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

    SECTION("a variable read several times has one pair") {
        var f = x * x + x * y - sin(x);  // x three times, y once
        CHECK(added(f) == 2);
        CHECK(t.adjoint(x) == Approx(2.0 * 2.0 + 3.0 - std::cos(2.0)).epsilon(1e-15));
        CHECK(t.adjoint(y) == 2.0);
    }

    SECTION("Rosenbrock's term with named intermediates reads each variable once") {
        // Extended Rosenbrock's term with named intermediates: x and y once each.
        auto a = y - x * x;
        auto b = 1.0 - x;
        var r = 100.0 * a * a + b * b;
        CHECK(added(r) == 2);
        CHECK(t.adjoint(x) == Approx(-400.0 * 2.0 * a.value - 2.0 * b.value).epsilon(1e-15));
        CHECK(t.adjoint(y) == Approx(200.0 * a.value).epsilon(1e-15));
    }

    SECTION("two intermediates of one type and one value that differ in a constant keep their "
            "own partials") {
        // Two intermediates of one type and one value at x = 0 that differ only in a constant:
        // each keeps its own partial (merging them would give 2 + 2). The second's variable comes
        // as it is, unmerged (below).
        var zero = t.input(0.0);
        auto twice = 2.0 * zero;
        auto thrice = 3.0 * zero;
        var g = twice + thrice;
        CHECK(added(g) == 2);
        CHECK(t.adjoint(zero) == 5.0);
    }

    SECTION("the second intermediate of a type has its variables unmerged, the same gradient") {
        // Two intermediates of one type, used in turn: the second's variables come as they are,
        // unmerged, and the gradient is the same.
        auto d = x - y;
        auto e = y - x;
        var h = d * d + e * e + d * e;  // (x - y)^2 + (y - x)^2 - (x - y)^2 = (x - y)^2
        CHECK(added(h) == 4);
        CHECK(t.adjoint(x) == Approx(2.0 * (2.0 - 3.0)).epsilon(1e-15));
        CHECK(t.adjoint(y) == Approx(-2.0 * (2.0 - 3.0)).epsilon(1e-15));
    }

    SECTION("two intermediates written alike stay two, one used twice is merged") {
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
    }

    SECTION("two intermediates that hold a constant are compared by their contents") {
        // Two that hold a constant are compared by their contents: alike, merged.
        auto u = 2.0 * y;
        auto w = 2.0 * y;
        var k3 = x * u + w;
        CHECK(added(k3) == 2);
        CHECK(t.adjoint(x) == 6.0);
        CHECK(t.adjoint(y) == 2.0 * 2.0 + 2.0);
    }

    SECTION("constants among the variables are never written") {
        var c = 7.0;
        var m = c * x + c * c + x * c;
        CHECK(added(m) == 1);
        CHECK(t.adjoint(x) == 14.0);
    }

    SECTION("more than eight variables are not merged, the same gradient") {
        // More than eight variables: not merged (one pair per use), the same gradient.
        var n = x * x * x * x * x + y * y * y * y * y;
        CHECK(added(n) == 10);
        CHECK(t.adjoint(x) == Approx(5.0 * 16.0).epsilon(1e-15));
        CHECK(t.adjoint(y) == Approx(5.0 * 81.0).epsilon(1e-15));
    }

    SECTION("an accumulation that reads its sum again has the accumulation bit and one pair") {
        // An accumulation that reads its sum again: the sum's partial 1 is the accumulation bit,
        // its other use a pair.
        var s = x * y;
        pairs = t.partials();
        s += s * x;  // s (1 + x)
        CHECK(added(s) == 2);
        CHECK(t.adjoint(x) == Approx(3.0 * 3.0 + 6.0).epsilon(1e-15));
        CHECK(t.adjoint(y) == Approx(2.0 * 3.0).epsilon(1e-15));
    }

    SECTION("a variable of a cleared recording is reported") {
        const var stale = stale_variable();
        CHECK_THROWS_AS(var(x * x + stale), nabla::tape_error);
    }
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

    SECTION("s - s: one pair of partial 0, no accumulation bit") {
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
    }

    SECTION("s += s * 2: one pair of partial 3") {
        var w = x * 1.5;
        const std::size_t before = t.partials();
        w += w * 2.0;
        CHECK(t.partials() == before + 1);
        t.gradient(w);
        CHECK(t.adjoint(x) == 3.0 * 1.5);
    }

    SECTION("a sum that does not accumulate keeps its own pair next to the other use") {
        // A sum that does not accumulate keeps its own pair next to the other use (as an
        // operation by operation tape does): the same gradient, two pairs.
        var a = x * 2.0;
        var b = x * 5.0;
        const std::size_t later = t.partials();
        var c = a + a * b;
        CHECK(t.partials() == later + 3);
        t.gradient(c);
        CHECK(t.adjoint(x) == Approx(2.0 + 20.0 * 0.7).epsilon(1e-15));  // c = 2 x + 10 x^2
    }
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

TEST_CASE("an integer constant in a statement is a number of the tape's type (regression: x / 8 "
          "had derivative 0, from 1 / 8 in integer arithmetic)",
          "[reverse]") {
    nabla::tape<> tape;
    auto recording = tape.record();
    const nabla::var x = tape.input(0.3);
    const nabla::var quotients = x / 8 + x * x / 2u + 1 / (x / 4L);
    const nabla::var powers = pow(x, 3) + polygamma(1, x);
    tape.gradient(quotients);
    CHECK(tape.adjoint(x) == Approx(1.0 / 8 + 0.3 - 4.0 / (0.3 * 0.3)).epsilon(1e-15));
    tape.zero_adjoints();
    tape.gradient(powers);
    // (Integers stay integers where a rule reads them as such: a power's exponent, an order.)
    CHECK(tape.adjoint(x) ==
          Approx(3 * 0.3 * 0.3 + nabla::rules::polygamma(2, 0.3)).epsilon(1e-15));
}

TEST_CASE("tape: a statement longer than a node holds is recorded in pieces, one statement with "
          "the whole gradient",
          "[reverse]") {
    // A node holds at most 32 subexpressions (reverse/detail/record.hpp, within_room): longer
    // statements are recorded in pieces collapsed on the way. The value is still added left to
    // right, as on doubles; the statement is still one.
    tape<> t;
    auto recording = t.record();
    var x = t.input(1.5), y = t.input(-2.5);
    const auto sum = [](const auto& x, const auto& y) {
        // 32 terms, 64 leaves: f = 21 x y + 11 (x - y).
        return x * y + x - y + y * x + x * y + x - y + y * x + x * y + x - y + y * x + x * y + x -
               y + y * x + x * y + x - y + y * x + x * y + x - y + y * x + x * y + x - y + y * x +
               x * y + x - y + y * x + x * y + x - y + y * x + x * y + x - y + y * x + x * y + x -
               y;
    };

    SECTION("a sum of 64 leaves") {
        const std::size_t before = t.statements();
        var f = sum(x, y);
        CHECK(t.statements() == before + 1);
        CHECK(f.value == sum(1.5, -2.5));
        t.gradient(f);
        CHECK(t.adjoint(x) == 21.0 * -2.5 + 11.0);
        CHECK(t.adjoint(y) == 21.0 * 1.5 - 11.0);
        var twice = sum(x, y) - sum(y, x) + sum(x, x);  // 192 leaves
        t.gradient(twice);
        CHECK(twice.value == sum(1.5, -2.5) - sum(-2.5, 1.5) + sum(1.5, 1.5));
        // twice = 22 (x - y) + 21 x^2
        CHECK(t.adjoint(x) == Approx(42.0 * 1.5 + 22.0).epsilon(1e-15));
        CHECK(t.adjoint(y) == Approx(-22.0).epsilon(1e-15));
    }

    SECTION("named intermediates, passive variables and constants across pieces") {
        var c = 7.0;
        auto u = x - y;                                            // held by copy
        auto big = x * y + x * x + y * y + x * c + y + x * y * x;  // collapsed
        var f = u * u + c * x + big + u * c + 3.0 * y + u * x + big * u + c + x * x * x - u +
                big * y + c * c * y + u * u * u + x * y * c - big + y * y + u + 2.0 + x * c -
                big * big + u * y * x;
        const double xv = 1.5, yv = -2.5, cv = 7.0, uv = xv - yv;
        const double bv = xv * yv + xv * xv + yv * yv + xv * cv + yv + xv * yv * xv;
        const double value = uv * uv + cv * xv + bv + uv * cv + 3.0 * yv + uv * xv + bv * uv + cv +
                             xv * xv * xv - uv + bv * yv + cv * cv * yv + uv * uv * uv +
                             xv * yv * cv - bv + yv * yv + uv + 2.0 + xv * cv - bv * bv +
                             uv * yv * xv;
        CHECK(f.value == value);
        t.gradient(f);
        // df = fu du + fb db + f_x dx + f_y dy (the partials in u, big, x and y apart).
        const double fu = 2 * uv + cv + xv + bv - 1 + 3 * uv * uv + 1 + yv * xv;
        const double fb = 1 + uv + yv - 1 - 2 * bv;
        const double fx = cv + uv + 3 * xv * xv + yv * cv + cv + uv * yv;
        const double fy = 3.0 + bv + cv * cv + xv * cv + 2 * yv + uv * xv;
        const double bx = yv + 2 * xv + cv + 2 * xv * yv, by = xv + 2 * yv + 1 + xv * xv;
        CHECK(t.adjoint(x) == Approx(fu + fb * bx + fx).epsilon(1e-14));
        CHECK(t.adjoint(y) == Approx(-fu + fb * by + fy).epsilon(1e-14));
    }

    SECTION("a sum that continues a collapsed intermediate, next to that intermediate") {
        // (Regression: the two were merged by where their partials begin.)
        // s's partials extend big's in place: they begin where big's do, and are more.
        const auto f = [](const auto& x) {
            auto big = x[0] * x[1] + x[0] * x[2] + x[1] * x[2] + x[0] * x[0] + x[1];
            auto s = big + x[0];
            auto product = s * big;
            auto sum = big + x[0] * x[1] + x[2] * x[0] + x[1] * x[2] + x[0] * x[0] + big;
            return product + sum;
        };
        const std::vector<double> point{1.5, -2.5, 0.7};
        const auto reverse = nabla::grad(nabla::mode::reverse, f, point);
        const auto forward = nabla::grad(nabla::mode::forward, f, point);
        for (std::size_t i = 0; i < 3; ++i)
            CHECK(reverse[i] == Approx(forward[i]).epsilon(1e-14));
    }

    SECTION("the pieces of a long sum of larger terms are written once") {
        // 64 terms of three factors: each piece is extended in place, so the scratch memory holds
        // each partial about once (a piece copied into the next would make it grow as the square
        // of the length).
        const auto cube_sum = [](const auto& x, const auto& y) {
            return x * y * x + y * y * x - x * x * y + y * x * x + x * y * y + x * x * x -
                   y * y * y + x * y * x + y * y * x - x * x * y + y * x * x + x * y * y +
                   x * x * x - y * y * y + x * y * x + y * y * x - x * x * y + y * x * x +
                   x * y * y + x * x * x - y * y * y + x * y * x + y * y * x - x * x * y +
                   y * x * x + x * y * y + x * x * x - y * y * y + x * y * x + y * y * x -
                   x * x * y + y * x * x + x * y * y + x * x * x - y * y * y + x * y * x +
                   y * y * x - x * x * y + y * x * x + x * y * y + x * x * x - y * y * y +
                   x * y * x + y * y * x - x * x * y + y * x * x + x * y * y + x * x * x -
                   y * y * y + x * y * x + y * y * x - x * x * y + y * x * x + x * y * y +
                   x * x * x - y * y * y + x * y * x + y * y * x - x * x * y + y * x * x;
        };
        const std::size_t before = t.bytes_used();
        var f = cube_sum(x, y);
        constexpr std::size_t leaves = 64 * 3, pair = sizeof(nabla::detail::tape_index) + 8;
        CHECK(t.bytes_used() - before < 3 * leaves * pair);
        CHECK(f.value == cube_sum(1.5, -2.5));
        t.gradient(f);
        const std::vector<double> point{1.5, -2.5};
        const auto forward = nabla::grad(
            nabla::mode::forward, [&](const auto& p) { return cube_sum(p[0], p[1]); }, point);
        CHECK(t.adjoint(x) == Approx(forward[0]).epsilon(1e-14));
        CHECK(t.adjoint(y) == Approx(forward[1]).epsilon(1e-14));
    }

    SECTION("a product of 40 leaves and a sum nested to the right") {
        var p = x * y * x * y * x * y * x * y * x * y * x * y * x * y * x * y * x * y * x * y * x *
                y * x * y * x * y * x * y * x * y * x * y * x * y * x * y * x * y * x * y;
        const double pv = std::pow(1.5 * -2.5, 20);
        CHECK(p.value == Approx(pv).epsilon(1e-15));
        t.gradient(p);
        CHECK(t.adjoint(x) == Approx(20.0 * pv / 1.5).epsilon(1e-14));
        CHECK(t.adjoint(y) == Approx(20.0 * pv / -2.5).epsilon(1e-14));
        var r =
            x +
            (y -
             (x * y +
              (y * y -
               (x + (y * x -
                     (x * x +
                      (y - (x * y * y +
                            (x - (y + (x * y - (y * y * x +
                                                (x - (y * y + (x * x - (y + (x * y)))))))))))))))));
        // r = -2 x^2 + 2 x y^2 + 4 x - 2 y^2
        t.gradient(r);
        CHECK(t.adjoint(x) == Approx(10.5).epsilon(1e-14));
        CHECK(t.adjoint(y) == Approx(-5.0).epsilon(1e-14));
    }

    SECTION("a variable of another recording in a piece is reported") {
        const var stale = stale_variable();
        // Reported as the piece that reads it is built, before the statement is assigned.
        const auto build = [&] {
            auto e = sum(x, y) + sum(stale, y);
            return e.value;
        };
        CHECK_THROWS_AS(build(), nabla::tape_error);
    }
}

TEST_CASE("tape: a long statement with no tape recording is computed on passive variables, and "
          "an active one is reported",
          "[reverse]") {
    const auto sum = [](const auto& x, const auto& y) {
        return x * y + x - y + y * x + x * y + x - y + y * x + x * y + x - y + y * x + x * y + x -
               y + y * x + x * y + x - y + y * x + x * y + x - y + y * x + x * y + x - y + y * x +
               x * y + x - y + y * x + x * y + x - y + y * x + x * y + x - y + y * x + x * y + x -
               y;
    };
    var a = 1.5, b = -2.5;
    var f = sum(a, b);
    CHECK(f.value == sum(1.5, -2.5));
    CHECK_FALSE(f.is_active());
    tape<> t;
    var x;
    {
        auto recording = t.record();
        x = t.input(1.5);
    }
    CHECK_THROWS_AS(var(sum(x, b)), nabla::tape_error);
}
