// Misuse of the run-time tape, reported as a tape_error that says what happened: the tape's
// limit, variables of a cleared, another or a destroyed tape's recording, a collapsed intermediate
// kept across recordings, recordings nested in each other, and inputs and adjoints of many
// variables given the wrong sizes.

#include <nabla/nabla.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <cstddef>
#include <vector>

namespace {

using nabla::tape;
using nabla::var;

}  // namespace

TEST_CASE("tape: a tape's entry limit is a clear error", "[reverse][errors]") {
    tape<> t(1000);
    {
        auto recording = t.record();
        std::vector<var> x;
        for (int i = 0; i < 999; ++i)
            x.push_back(t.input(1.0));
        CHECK_THROWS_WITH(t.input(1.0), Catch::StartsWith("nabla::tape: this recording needs "
                                                          "more than 1000 statements or partials, "
                                                          "the tape's limit"));
    }
    // The tape is still usable after the error.
    auto recording = t.record();
    var x = t.input(2.0);
    var y = x * x;
    t.gradient(y);
    CHECK(t.adjoint(x) == 4.0);
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

TEST_CASE("tape: a collapsed intermediate kept across recordings", "[reverse][errors]") {
    // A larger intermediate is collapsed once, into the tape's scratch memory of that recording.
    tape<> t;
    var c = 3.0;  // a constant
    auto d = c - 1.0;
    auto constants = d * d + d;  // reads no active variable: no partials

    SECTION("one with partials is reported in the next recording, one of constants only is not") {
        var x, y;
        {
            auto recording = t.record();
            x = t.input(2.0);
            y = t.input(5.0);
            auto u = x - y;
            auto big = u * u + u;  // collapsed on its first use below
            var f = big * x + constants * x;
            t.gradient(f);
            CHECK(t.adjoint(x) == Approx(6.0 + 2.0 * (2.0 * -3.0 + 1.0) + 6.0).epsilon(1e-15));
            // The same intermediate in the next recording: its variables are stale, and so is
            // its collapsed form. Reported, never read from the new recording's scratch memory.
            auto next = t.record();
            var z = t.input(1.0);
            CHECK_THROWS_WITH(var(big * z), Catch::Contains("from another recording"));
            // A function of it alone takes its collapsed form without asking the tape, and with
            // it the stale generation: reported by the statement that uses it.
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
        // And with no recording at all.
        var h = constants * 2.0;
        CHECK(h.value == 12.0);
    }

    SECTION("a function of one with partials, used when no tape records, is reported") {
        // A function of a collapsed intermediate with partials, used when no tape records:
        // reported, as the intermediate itself would be.
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
    }

    SECTION("one collapsed while no tape records has no partials in a later recording") {
        // Collapsed first while no tape records (its form is kept, without partials), then used
        // in a recording: still no partials, the right values and adjoints.
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
}

TEST_CASE("tape: recording a tape again while it records, then ending both", "[reverse][errors]") {
    // The second recording of a tape that records already ends by making the tape active again,
    // and the first by making what was active before it active: no tape. (The tape once kept its
    // predecessor itself, and the second recording made that the tape: it stayed active after
    // both had ended, and when destroyed left a dangling active tape, a use after free.)
    SECTION("a tape recorded again inside its own recording") {
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
    }

    SECTION("a tape resumed inside another tape's nested recordings") {
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
