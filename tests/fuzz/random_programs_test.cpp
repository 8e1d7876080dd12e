// Differential testing across every mode: random programs (tests/fuzz/program.hpp) over every
// function of the rule table, with branches and loops on values, differentiated by forward mode
// (dual numbers in chunks), reverse mode (the tape), forward over forward and forward over
// reverse (Hessians), Jacobians in both modes, Hessian-vector products and Taylor series along a
// direction. The modes must
// agree with each other to near double precision and with a Richardson-extrapolated central
// difference within its error bound.
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
    std::vector<std::size_t> per_op = std::vector<std::size_t>(nabla_fuzz::op_count, 0);
};

void check_program(const program& p, tally& counts) {
    INFO("program: " << p.to_string());
    const auto f = [&p](const auto& x) { return nabla_fuzz::run(p, x); };
    const std::vector<double>& x = p.point;
    const std::size_t n = x.size();
    ++counts.programs;
    counts.instructions += p.code.size();
    for (const auto& i : p.code)
        ++counts.per_op[static_cast<std::size_t>(i.o)];

    const double value = f(x);
    const std::vector<double> forward = nabla::grad(nabla::mode::forward, f, x);
    const auto [reverse_value, reverse] = nabla::value_and_grad(nabla::mode::reverse, f, x);
    CHECK(near(reverse_value, value, 1e-14));
    for (std::size_t i = 0; i < n; ++i) {
        INFO("d/dx" << i << ": forward " << forward[i] << ", reverse " << reverse[i]);
        CHECK(near(forward[i], reverse[i], 1e-11));
    }

    const auto hessian_forward = nabla::hessian(nabla::mode::forward, f, x);  // dual<dual>
    const auto hessian_reverse = nabla::hessian(nabla::mode::reverse, f, x);  // dual on the tape
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) {
            INFO("H(" << i << ", " << j << "): forward over forward " << hessian_forward(i, j)
                      << ", forward over reverse " << hessian_reverse(i, j));
            CHECK(near(hessian_forward(i, j), hessian_reverse(i, j), 1e-10));
            CHECK(near(hessian_forward(i, j), hessian_forward(j, i), 1e-10));
        }

    // Jacobians of a function with three outputs built on the program: forward mode (columns on
    // dual numbers) against reverse mode (one recording, a sweep per row), and both against the
    // rows the gradient gives by the chain rule: grad f, x0 grad f + f e0, cos(f) grad f + e_last.
    const auto outputs = [&p](const auto& y) {
        using T = std::decay_t<decltype(y[0])>;
        using std::sin;
        const T fy = nabla_fuzz::run(p, y);
        return std::vector<T>{fy, T(fy * y[0]), T(sin(fy) + y[y.size() - 1])};
    };
    const auto jacobian_forward = nabla::jacobian(outputs, x);
    const auto jacobian_reverse = nabla::jacobian(nabla::mode::reverse, outputs, x);
    REQUIRE(jacobian_reverse.shape() == jacobian_forward.shape());
    for (std::size_t j = 0; j < n; ++j) {
        const double rows[3] = {forward[j], x[0] * forward[j] + (j == 0 ? value : 0.0),
                                std::cos(value) * forward[j] + (j == n - 1 ? 1.0 : 0.0)};
        for (std::size_t i = 0; i < 3; ++i) {
            INFO("J(" << i << ", " << j << "): forward " << jacobian_forward(i, j) << ", reverse "
                      << jacobian_reverse(i, j) << ", chain rule " << rows[i]);
            CHECK(near(jacobian_forward(i, j), jacobian_reverse(i, j), 1e-11));
            CHECK(near(jacobian_reverse(i, j), rows[i], 1e-11));
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
    }
    const auto series = nabla::derivatives<2>(
        [&](auto t) {
            using T = decltype(t);
            std::vector<T> y;
            for (std::size_t i = 0; i < n; ++i)
                y.push_back(x[i] + v[i] * t);
            return nabla_fuzz::run(p, y);
        },
        0.0);
    INFO("Taylor: " << series[0] << ", " << series[1] << ", " << series[2] << "; expected " << value
                    << ", " << directional << ", " << curvature);
    CHECK(near(series[0], value, 1e-13));
    CHECK(near(series[1], directional, 1e-11));
    CHECK(near(series[2], curvature, 1e-10));

    // Against finite differences, where the program is smooth near the point.
    const estimate fd = nabla_fuzz::finite_differences(
        [&p](const std::vector<double>& y, std::vector<int>* branches) {
            return nabla_fuzz::run(p, y, branches);
        },
        p.point);
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
        const int inputs = 1 + static_cast<int>(seed % 4);
        const int length = 3 + static_cast<int>((seed / 4) % 10);
        check_program(g.make(inputs, length), counts);
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
    WARN(counts.programs << " programs, " << counts.instructions << " instructions, "
                         << counts.finite_difference_checks << " checked by finite differences");
}
