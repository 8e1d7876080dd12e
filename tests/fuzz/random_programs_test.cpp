// Differential testing across every mode: random programs (tests/fuzz/program.hpp) over every
// function of the rule table, with branches and loops on values, differentiated by forward mode
// (dual numbers in chunks), reverse mode (the tape), forward over forward and forward over
// reverse (Hessians), Jacobians in both modes, Hessian-vector products and Taylor series along a
// direction. The modes must agree with each other to near double precision and with a
// Richardson-extrapolated central difference within its error bound. Some programs ignore some of
// their inputs, and some return a plain number that depends on none: every derivative with
// respect to such an input is then an exact zero in every mode.
//
// Deterministic: program i has seed NABLA_FUZZ_SEED (default 1) + i; NABLA_FUZZ_ITERATIONS
// (default 400) programs per run. A failure prints the program and its seed; run it alone with
//   NABLA_FUZZ_SEED=<seed> NABLA_FUZZ_ITERATIONS=1 build-gcc/tests/fuzz_tests
// (docs/testing.md).

#include <nabla/nabla.hpp>
#include <nabla/tensor.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "checks.hpp"
#include "program.hpp"

namespace {

using nabla_fuzz::program;

using nabla_fuzz::environment;
using nabla_fuzz::estimate;
using nabla_fuzz::near;

struct tally {
    std::size_t programs = 0, instructions = 0, finite_difference_checks = 0;
    std::size_t ignoring = 0, passive = 0;  // programs that ignore inputs, that return a constant
    std::vector<std::size_t> per_op = std::vector<std::size_t>(nabla_fuzz::op_count, 0);
};

// Whether every entry of input i's row and column of a matrix is exactly zero.
template <class Matrix>
bool zero_row_and_column(const Matrix& h, std::size_t i) {
    for (std::size_t k = 0; k < h.shape()[1]; ++k)
        if (!(h(i, k) == 0) || !(h(k, i) == 0))
            return false;
    return true;
}

// How a program's result depends on its inputs.
enum class dependence {
    all,      // every input is read
    some,     // some inputs are never read (program::ignored)
    passive,  // the function returns a plain double computed at the point, whatever its inputs
};

// f is the function under test (a generic callable of a container); fd_function the same function
// of a std::vector<double> that records its branches, for finite differences.
template <class F, class FiniteDifferenceFunction>
void check_program(const program& p,
                   dependence kind,
                   const F& f,
                   const FiniteDifferenceFunction& fd_function,
                   tally& counts) {
    INFO("program: " << p.to_string() << (kind == dependence::passive ? " (passive output)" : ""));
    const std::vector<double>& x = p.point;
    const std::size_t n = x.size();
    ++counts.programs;
    counts.instructions += p.code.size();
    for (const auto& i : p.code)
        ++counts.per_op[static_cast<std::size_t>(i.o)];
    // The inputs the result does not depend on: each of their derivatives is exactly zero.
    std::vector<bool> constant_in(n, kind == dependence::passive);
    for (std::size_t i = 0; i < n && kind == dependence::some; ++i)
        constant_in[i] = p.ignored[i];

    const double value = f(x);
    const std::vector<double> forward = nabla::grad(nabla::mode::forward, f, x);
    const auto [reverse_value, reverse] = nabla::value_and_grad(nabla::mode::reverse, f, x);
    CHECK(near(reverse_value, value, 1e-14));
    for (std::size_t i = 0; i < n; ++i) {
        INFO("d/dx" << i << ": forward " << forward[i] << ", reverse " << reverse[i]);
        CHECK(near(forward[i], reverse[i], 1e-11));
        if (constant_in[i]) {
            CHECK(forward[i] == 0);
            CHECK(reverse[i] == 0);
        }
    }

    const auto hessian_forward = nabla::hessian(nabla::mode::forward, f, x);  // dual<dual>
    const auto hessian_reverse = nabla::hessian(nabla::mode::reverse, f, x);  // dual on the tape
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < n; ++j) {
            INFO("H(" << i << ", " << j << "): forward over forward " << hessian_forward(i, j)
                      << ", forward over reverse " << hessian_reverse(i, j));
            CHECK(near(hessian_forward(i, j), hessian_reverse(i, j), 1e-10));
            CHECK(near(hessian_forward(i, j), hessian_forward(j, i), 1e-10));
        }
        if (constant_in[i]) {
            INFO("the Hessian's row and column of x" << i << ", which f does not depend on");
            CHECK(zero_row_and_column(hessian_forward, i));
            CHECK(zero_row_and_column(hessian_reverse, i));
        }
    }

    // Jacobians of a function with four outputs built on the program: forward mode (columns on
    // dual numbers) against reverse mode (one recording, a sweep per row), and both against the
    // rows the gradient gives by the chain rule: grad f, x0 grad f + f e0, cos(f) grad f + e_last,
    // and 0 for the fourth output, a constant.
    const auto outputs = [&f](const auto& y) {
        using T = std::decay_t<decltype(y[0])>;
        using std::sin;
        const auto fy = f(y);
        return std::vector<T>{T(fy), T(fy * y[0]), T(sin(fy) + y[y.size() - 1]), T(0.5)};
    };
    const auto jacobian_forward = nabla::jacobian(outputs, x);
    const auto jacobian_reverse = nabla::jacobian(nabla::mode::reverse, outputs, x);
    REQUIRE(jacobian_reverse.shape() == jacobian_forward.shape());
    REQUIRE(jacobian_forward.shape()[0] == 4);
    for (std::size_t j = 0; j < n; ++j) {
        const double rows[4] = {forward[j], x[0] * forward[j] + (j == 0 ? value : 0.0),
                                std::cos(value) * forward[j] + (j == n - 1 ? 1.0 : 0.0), 0.0};
        for (std::size_t i = 0; i < 4; ++i) {
            INFO("J(" << i << ", " << j << "): forward " << jacobian_forward(i, j) << ", reverse "
                      << jacobian_reverse(i, j) << ", chain rule " << rows[i]);
            CHECK(near(jacobian_forward(i, j), jacobian_reverse(i, j), 1e-11));
            CHECK(near(jacobian_reverse(i, j), rows[i], 1e-11));
        }
        CHECK(jacobian_forward(3, j) == 0);
        CHECK(jacobian_reverse(3, j) == 0);
        if (constant_in[j]) {
            CHECK(jacobian_forward(0, j) == 0);
            CHECK(jacobian_reverse(0, j) == 0);
        }
    }

    // A direction, Hessian-vector product and Taylor series along it.
    std::vector<double> v(n);
    for (std::size_t i = 0; i < n; ++i)
        v[i] = 0.5 + 0.25 * double(i) - 0.125 * double(p.seed % 3);
    const std::vector<double> hv = nabla::hvp(f, x, v);
    double directional = 0.0, curvature = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
        directional += forward[i] * v[i];
        double row = 0.0;
        for (std::size_t j = 0; j < n; ++j)
            row += hessian_forward(i, j) * v[j];
        curvature += v[i] * row;
        INFO("(H v)" << i << ": hvp " << hv[i] << ", from the Hessian " << row);
        CHECK(near(hv[i], row, 1e-10));
        if (constant_in[i])
            CHECK(hv[i] == 0);
    }
    const auto series = nabla::derivatives<2>(
        [&](auto t) {
            using T = decltype(t);
            std::vector<T> y;
            for (std::size_t i = 0; i < n; ++i)
                y.push_back(x[i] + v[i] * t);
            return f(y);
        },
        0.0);
    INFO("Taylor: " << series[0] << ", " << series[1] << ", " << series[2] << "; expected " << value
                    << ", " << directional << ", " << curvature);
    CHECK(near(series[0], value, 1e-13));
    CHECK(near(series[1], directional, 1e-11));
    CHECK(near(series[2], curvature, 1e-10));
    if (kind == dependence::passive) {
        CHECK(series[1] == 0);
        CHECK(series[2] == 0);
    }

    // Against finite differences, where the program is smooth near the point.
    const estimate fd = nabla_fuzz::finite_differences(fd_function, p.point);
    if (!fd.gradient.empty()) {
        ++counts.finite_difference_checks;
        nabla_fuzz::check_within(fd, reverse);
    }
}

}  // namespace

TEST_CASE("random programs: every mode agrees, and with finite differences", "[fuzz]") {
    const std::uint64_t first = environment("NABLA_FUZZ_SEED", 1);
    const std::uint64_t count = environment("NABLA_FUZZ_ITERATIONS", 400);
    tally counts;
    for (std::uint64_t seed = first; seed < first + count; ++seed) {
        nabla_fuzz::generator g(seed);
        int inputs = 1 + static_cast<int>(seed % 4);
        int length = 3 + static_cast<int>((seed / 4) % 10);
        // One program in six ignores some of its inputs: 2 to 12 of them, so that an ignored input
        // also falls in a second chunk of directions (forward_chunk is 8), with one at least read
        // and one at least ignored. One in six returns a plain number that depends on none.
        dependence kind = dependence::all;
        std::vector<bool> ignored;
        if (seed % 6 == 4) {
            kind = dependence::some;
            std::mt19937_64 draw(seed);
            inputs = 2 + static_cast<int>(draw() % 11);
            length = std::max(length, inputs);
            for (int i = 0; i < inputs; ++i)
                ignored.push_back(draw() % 2 == 0);
            const auto pick = [&] { return draw() % static_cast<std::uint64_t>(inputs); };
            const std::uint64_t read = pick();
            ignored[read] = false;
            if (std::find(ignored.begin(), ignored.end(), true) == ignored.end())
                ignored[(read + 1) % static_cast<std::uint64_t>(inputs)] = true;
        } else if (seed % 6 == 5) {
            kind = dependence::passive;
        }
        const program p = g.make(inputs, length, ignored);
        if (kind == dependence::passive) {
            const double constant = nabla_fuzz::run(p, p.point);
            check_program(
                p, kind, [constant](const auto&) { return constant; },
                [constant](const std::vector<double>&, std::vector<int>*) { return constant; },
                counts);
        } else {
            check_program(
                p, kind, [&p](const auto& y) { return nabla_fuzz::run(p, y); },
                [&p](const std::vector<double>& y, std::vector<int>* branches) {
                    return nabla_fuzz::run(p, y, branches);
                },
                counts);
        }
        counts.ignoring += kind == dependence::some;
        counts.passive += kind == dependence::passive;
    }
    // Every operation of the generator took part (in a run of the default size).
    std::size_t unused = 0;
    for (int o = 0; o < nabla_fuzz::op_count; ++o)
        if (counts.per_op[static_cast<std::size_t>(o)] == 0) {
            ++unused;
            UNSCOPED_INFO("never generated: " << nabla_fuzz::name(static_cast<nabla_fuzz::op>(o)));
        }
    if (count >= 400)
        CHECK(unused == 0);
    // Half the programs at least are smooth enough near their point for finite differences.
    CHECK(counts.finite_difference_checks * 2 >= counts.programs);
    // Programs whose result does not depend on some inputs, or on any, took part.
    if (count >= 400) {
        CHECK(counts.ignoring * 16 >= counts.programs);
        CHECK(counts.passive * 8 >= counts.programs);
    }
    WARN(counts.programs << " programs (" << counts.ignoring << " ignoring inputs, "
                         << counts.passive << " with a constant result), " << counts.instructions
                         << " instructions, " << counts.finite_difference_checks
                         << " checked by finite differences");
}
