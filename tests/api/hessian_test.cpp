// nabla::hessian and nabla::jacobian (forward over forward, forward mode; reverse mode on the
// tape), returning xt::xtensor<R, 2>.

#include <nabla/tensor.hpp>

#include <catch2/catch.hpp>
#include <xtensor/xarray.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xtensor.hpp>

#include <array>
#include <cmath>
#include <type_traits>
#include <vector>

#include "../test_data.hpp"
#include "../test_functions.hpp"

namespace {

using nabla_test::rosenbrock;
const auto& seed = nabla_test::seed_function;

// The Rosenbrock Hessian, tridiagonal, written out by hand.
double rosenbrock_hessian(const std::vector<double>& x, std::size_t i, std::size_t j) {
    const std::size_t n = x.size();
    if (i == j) {
        double h = 0.0;
        if (i + 1 < n)
            h += 1200.0 * x[i] * x[i] - 400.0 * x[i + 1] + 2.0;
        if (i > 0)
            h += 200.0;
        return h;
    }
    if (j == i + 1)
        return -400.0 * x[i];
    if (i == j + 1)
        return -400.0 * x[j];
    return 0.0;
}

}  // namespace

TEST_CASE("hessian of the seed function, as a callable and as a static expression",
          "[api][hessian]") {
    const auto [x, y] = nabla::variables<2>();
    const auto static_seed = log(x) + x * y - sin(y);
    for (const auto& h : {nabla::hessian(seed, 2.0, 5.0), nabla::hessian(static_seed, 2.0, 5.0)}) {
        static_assert(std::is_same_v<std::remove_cvref_t<decltype(h)>, xt::xtensor<double, 2>>);
        REQUIRE(h.shape()[0] == 2);
        REQUIRE(h.shape()[1] == 2);
        CHECK(nabla_test::close(h(0, 0), nabla_test::reference("seed_d00"), 1e-15));
        CHECK(h(0, 1) == 1.0);
        CHECK(h(1, 0) == 1.0);
        CHECK(nabla_test::close(h(1, 1), nabla_test::reference("seed_d11"), 1e-15));
    }
}

TEST_CASE("hessian of a function of a std::vector, in blocks", "[api][hessian]") {
    for (std::size_t n : {1u, 5u, 8u, 9u, 20u}) {
        INFO("n = " << n);
        std::vector<double> x(n);
        for (std::size_t i = 0; i < n; ++i)
            x[i] = 0.4 + 0.07 * static_cast<double>(i % 5);
        // The default (forward over reverse for a std::vector) and both modes forced.
        for (const auto& h :
             {nabla::hessian(rosenbrock, x), nabla::hessian(nabla::mode::forward, rosenbrock, x),
              nabla::hessian(nabla::mode::reverse, rosenbrock, x)}) {
            REQUIRE(h.shape()[0] == n);
            for (std::size_t i = 0; i < n; ++i)
                for (std::size_t j = 0; j < n; ++j)
                    CHECK(h(i, j) ==
                          Approx(rosenbrock_hessian(x, i, j)).epsilon(1e-14).margin(1e-12));
        }
    }
    const std::array<double, 3> small{0.5, 0.6, 0.7};
    const auto hs = nabla::hessian(rosenbrock, small);
    CHECK(hs(1, 1) == Approx(rosenbrock_hessian({0.5, 0.6, 0.7}, 1, 1)));
}

TEST_CASE("jacobian of a vector function", "[api][jacobian]") {
    const auto field = [](const auto& q) {
        using T = std::decay_t<decltype(q[0])>;
        using std::exp, std::sin;
        std::vector<T> out(q.size() + 1);
        for (std::size_t i = 0; i < q.size(); ++i)
            out[i] = sin(q[i]) * q[(i + 1) % q.size()];
        out[q.size()] = exp(q[0] - q[q.size() - 1]);
        return out;
    };
    for (std::size_t n : {2u, 8u, 11u}) {
        INFO("n = " << n);
        std::vector<double> q(n);
        for (std::size_t i = 0; i < n; ++i)
            q[i] = 0.2 + 0.1 * static_cast<double>(i);
        const auto j = nabla::jacobian(field, q);
        REQUIRE(j.shape()[0] == n + 1);
        REQUIRE(j.shape()[1] == n);
        for (std::size_t i = 0; i < n; ++i) {
            for (std::size_t k = 0; k < n; ++k) {
                double expected = 0.0;
                if (k == i)
                    expected += std::cos(q[i]) * q[(i + 1) % n];
                if (k == (i + 1) % n)
                    expected += std::sin(q[i]);
                CHECK(j(i, k) == Approx(expected).epsilon(1e-15).margin(1e-300));
            }
        }
        const double e = std::exp(q[0] - q[n - 1]);
        CHECK(j(n, 0) == Approx(e));
        CHECK(j(n, n - 1) == Approx(-e));
    }
    const auto polar = [](const auto& p) {
        using std::cos, std::sin;
        return std::array{p[0] * cos(p[1]), p[0] * sin(p[1])};
    };
    const auto jp = nabla::jacobian(polar, std::array{2.0, 0.5});
    CHECK(jp(0, 0) == Approx(std::cos(0.5)));
    CHECK(jp(0, 1) == Approx(-2.0 * std::sin(0.5)));
    CHECK(jp(1, 0) == Approx(std::sin(0.5)));
    CHECK(jp(1, 1) == Approx(2.0 * std::cos(0.5)));
}

TEST_CASE("value_and_jacobian gives F(x) from the evaluations of its Jacobian, in both modes",
          "[api][jacobian]") {
    const auto polar = [](const auto& p) {
        using T = std::decay_t<decltype(p[0])>;
        using std::cos, std::sin;
        return std::array<T, 3>{p[0] * cos(p[1]), p[0] * sin(p[1]), T(2.0)};
    };
    const std::array x{2.0, 0.5};
    const auto check = [&](const auto& result) {
        const std::array<double, 3> value = result.value;  // the input's number type, F's shape
        CHECK(value[0] == 2.0 * std::cos(0.5));
        CHECK(value[1] == 2.0 * std::sin(0.5));
        CHECK(value[2] == 2.0);
        const auto j = nabla::jacobian(polar, x);
        REQUIRE(result.jacobian.shape() == j.shape());
        for (std::size_t i = 0; i < 3; ++i)
            for (std::size_t k = 0; k < 2; ++k)
                CHECK(result.jacobian(i, k) == Approx(j(i, k)).epsilon(1e-15).margin(1e-300));
        CHECK(result.jacobian(2, 0) == 0.0);
    };
    check(nabla::value_and_jacobian(polar, x));
    check(nabla::value_and_jacobian(nabla::mode::forward, polar, x));
    check(nabla::value_and_jacobian(nabla::mode::reverse, polar, x));

    // Run-time sizes over several passes of forward_chunk columns: the value is the first pass's.
    const auto shifted = [](const auto& q) {
        using T = std::decay_t<decltype(q[0])>;
        std::vector<T> out(q.size());
        for (std::size_t i = 0; i < q.size(); ++i)
            out[i] = q[i] * q[(i + 1) % q.size()];
        return out;
    };
    std::vector<double> q(19);
    for (std::size_t i = 0; i < q.size(); ++i)
        q[i] = 0.1 + 0.05 * static_cast<double>(i);
    const auto check_shifted = [&](const auto& result) {
        const std::vector<double>& v = result.value;
        const auto& j = result.jacobian;
        REQUIRE(v.size() == q.size());
        REQUIRE(j.shape()[0] == q.size());
        for (std::size_t i = 0; i < q.size(); ++i) {
            const std::size_t next = (i + 1) % q.size();
            CHECK(v[i] == q[i] * q[next]);
            CHECK(j(i, i) == q[next]);
            CHECK(j(i, next) == q[i]);
        }
    };
    check_shifted(nabla::value_and_jacobian(shifted, q));
    check_shifted(nabla::value_and_jacobian(nabla::mode::reverse, shifted, q));
}

TEST_CASE("jacobian in reverse mode: one recording, one sweep per row",
          "[api][jacobian][reverse]") {
    // Few outputs of many inputs, with branches and a loop whose length depends on the values
    // (the case reverse mode is for): each row against the forward-mode Jacobian, which computes
    // it by another route (dual numbers, columns), and one against the derivative by hand.
    const auto moments = [](const auto& x) {
        using T = std::decay_t<decltype(x[0])>;
        using std::exp, std::log, std::sin;
        T sum = 0.0, squares = 0.0, clipped = 0.0;
        for (std::size_t i = 0; i < x.size(); ++i) {
            sum += x[i];
            squares += x[i] * x[i];
            if (x[i] > 0.0)
                clipped += log(1.0 + x[i]);
            else
                clipped += sin(x[i]) * exp(x[i]);
        }
        T halvings = sum;
        while (halvings > 1.0)
            halvings = 0.5 * halvings;
        return std::vector<T>{sum, squares, clipped, halvings, T(x[0] * x[x.size() - 1])};
    };
    std::vector<double> x(37);
    for (std::size_t i = 0; i < x.size(); ++i)
        x[i] = std::sin(1.3 * static_cast<double>(i) + 0.4);
    const auto forward = nabla::jacobian(moments, x);
    const auto reverse = nabla::jacobian(nabla::mode::reverse, moments, x);
    REQUIRE(reverse.shape() == forward.shape());
    REQUIRE(reverse.shape()[0] == 5);
    for (std::size_t i = 0; i < 5; ++i)
        for (std::size_t k = 0; k < x.size(); ++k) {
            INFO("row " << i << ", column " << k);
            CHECK(reverse(i, k) == Approx(forward(i, k)).epsilon(1e-14).margin(1e-300));
        }
    for (std::size_t k = 0; k < x.size(); ++k) {
        CHECK(reverse(0, k) == 1.0);
        CHECK(reverse(1, k) == 2.0 * x[k]);
    }

    // std::array and xtensor in and out, and an output that is an input or a constant.
    const auto polar = [](const auto& p) {
        using T = std::decay_t<decltype(p[0])>;
        using std::cos, std::sin;
        return std::array<T, 4>{p[0] * cos(p[1]), p[0] * sin(p[1]), p[1], T(2.0)};
    };
    const auto jp = nabla::jacobian(nabla::mode::reverse, polar, std::array{2.0, 0.5});
    REQUIRE(jp.shape()[0] == 4);
    CHECK(jp(0, 0) == Approx(std::cos(0.5)).epsilon(1e-15));
    CHECK(jp(0, 1) == Approx(-2.0 * std::sin(0.5)).epsilon(1e-15));
    CHECK(jp(1, 0) == Approx(std::sin(0.5)).epsilon(1e-15));
    CHECK(jp(1, 1) == Approx(2.0 * std::cos(0.5)).epsilon(1e-15));
    CHECK(jp(2, 0) == 0.0);
    CHECK(jp(2, 1) == 1.0);
    CHECK(jp(3, 0) == 0.0);
    CHECK(jp(3, 1) == 0.0);
    const auto squares = [](const auto& q) {
        using T = std::decay_t<decltype(q(0))>;
        xt::xtensor<T, 1> out = xt::xtensor<T, 1>::from_shape({q.size() - 1});
        for (std::size_t i = 0; i + 1 < q.size(); ++i)
            out(i) = q(i) * q(i + 1);
        return out;
    };
    const xt::xtensor<double, 1> q = {0.1, 0.7, -0.4, 1.3};
    const auto jq = nabla::jacobian(nabla::mode::reverse, squares, q);
    REQUIRE(jq.shape()[0] == 3);
    REQUIRE(jq.shape()[1] == 4);
    for (std::size_t i = 0; i < 3; ++i)
        for (std::size_t k = 0; k < 4; ++k)
            CHECK(jq(i, k) == (k == i ? q(i + 1) : k == i + 1 ? q(i) : 0.0));
}

TEST_CASE("xtensor containers as inputs", "[api][tensor]") {
    // The function receives an xtensor of dual numbers and uses xtensor's own expressions.
    const auto energy = [](const auto& q) {
        using std::sin;
        return xt::sum(q * q + sin(q))();
    };
    xt::xtensor<double, 1> q = {0.1, 0.7, -0.4, 1.3, 0.25, -0.9, 0.6, 0.05, 2.0, -1.1};
    const xt::xtensor<double, 1> g = nabla::grad(energy, q);
    REQUIRE(g.size() == q.size());
    for (std::size_t i = 0; i < q.size(); ++i)
        CHECK(g(i) == Approx(2.0 * q(i) + std::cos(q(i))).epsilon(1e-15));
    // Any shape: the gradient has the input's shape.
    xt::xarray<double> m = {{0.5, 1.0, 1.5}, {2.0, 2.5, 3.0}};
    const auto [value, gm] = nabla::value_and_grad(energy, m);
    CHECK(value == Approx(xt::sum(m * m + xt::sin(m))()));
    REQUIRE(gm.shape() == m.shape());
    CHECK(gm(1, 2) == Approx(2.0 * 3.0 + std::cos(3.0)));
    const auto h = nabla::hessian(energy, q);
    CHECK(h(3, 3) == Approx(2.0 - std::sin(1.3)));
    CHECK(h(3, 4) == 0.0);
    const auto j = nabla::jacobian([](const auto& x) { return xt::eval(x * x); }, q);
    CHECK(j(2, 2) == Approx(-0.8));
    CHECK(j(2, 3) == 0.0);
}
