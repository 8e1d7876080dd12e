// Custom derivative rules on the tape: a linear solve recorded as one entry whose adjoint is the
// transposed solve, against the same solve differentiated through (Gaussian elimination on the
// tape) and against finite differences.

#include <nabla/forward/custom.hpp>
#include <nabla/nabla.hpp>
#include <nabla/reverse/custom.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace {

using nabla::var;

// Solves A x = b by Gaussian elimination with partial pivoting, for any number type: on doubles
// for the custom rule, on var to differentiate through the elimination. A is n x n, row major.
template <class T>
std::vector<T> eliminate(std::vector<T> A, std::vector<T> b, std::size_t n) {
    for (std::size_t k = 0; k < n; ++k) {
        std::size_t pivot = k;
        for (std::size_t i = k + 1; i < n; ++i)
            if (std::abs(static_cast<double>(A[i * n + k])) >
                std::abs(static_cast<double>(A[pivot * n + k])))
                pivot = i;
        for (std::size_t j = 0; j < n; ++j)
            std::swap(A[k * n + j], A[pivot * n + j]);
        std::swap(b[k], b[pivot]);
        for (std::size_t i = k + 1; i < n; ++i) {
            const T factor = A[i * n + k] / A[k * n + k];
            for (std::size_t j = k; j < n; ++j)
                A[i * n + j] -= factor * A[k * n + j];
            b[i] -= factor * b[k];
        }
    }
    std::vector<T> x(n);
    for (std::size_t k = n; k-- > 0;) {
        T sum = b[k];
        for (std::size_t j = k + 1; j < n; ++j)
            sum -= A[k * n + j] * x[j];
        x[k] = sum / A[k * n + k];
    }
    return x;
}

std::vector<double> transposed(const std::vector<double>& A, std::size_t n) {
    std::vector<double> t(n * n);
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j)
            t[j * n + i] = A[i * n + j];
    return t;
}

// x = A^-1 b as one tape entry: inputs are A (row major) then b.
std::vector<var> solve(const std::vector<var>& A_then_b, std::size_t n) {
    return nabla::custom_vjp(A_then_b, [n](const std::vector<double>& v) {
        const std::vector<double> A(v.begin(), v.begin() + std::ptrdiff_t(n * n));
        const std::vector<double> b(v.begin() + std::ptrdiff_t(n * n), v.end());
        std::vector<double> x = eliminate(A, b, n);
        auto pullback = [A, x, n](const std::vector<double>& w) {
            const std::vector<double> lambda = eliminate(transposed(A, n), w, n);
            std::vector<double> adjoint(n * n + n);
            for (std::size_t i = 0; i < n; ++i) {
                for (std::size_t j = 0; j < n; ++j)
                    adjoint[i * n + j] = -lambda[i] * x[j];
                adjoint[n * n + i] = lambda[i];
            }
            return adjoint;
        };
        return std::pair{x, pullback};
    });
}

// A loss of the solution: a nonlinear function of every x_i.
template <class X>
auto loss(const X& x) {
    using std::sin;
    using T = std::decay_t<decltype(x[0])>;
    T sum = 0.0;
    for (std::size_t i = 0; i < x.size(); ++i)
        sum += sin(x[i]) * double(i + 1) + x[i] * x[i];
    return sum;
}

const std::size_t n = 4;
const std::vector<double> A0{4.0, 1.0, 0.5, 0.2, 1.0, 3.0, 0.3, 0.1,
                             0.5, 0.3, 5.0, 0.7, 0.2, 0.1, 0.7, 2.0};
const std::vector<double> b0{1.0, -2.0, 0.5, 3.0};

std::vector<double> point() {
    std::vector<double> v = A0;
    v.insert(v.end(), b0.begin(), b0.end());
    return v;
}

}  // namespace

TEST_CASE("custom rule: a linear solve as one entry, adjoint by the transposed solve",
          "[reverse][custom]") {
    const std::vector<double> v = point();

    // Through the elimination, recorded operation by operation.
    const std::vector<double> through = nabla::grad(
        [](const auto& p) {
            using T = std::decay_t<decltype(p[0])>;
            const std::vector<T> A(p.begin(), p.begin() + std::ptrdiff_t(n * n));
            const std::vector<T> b(p.begin() + std::ptrdiff_t(n * n), p.end());
            return T(loss(eliminate(A, b, n)));
        },
        v);

    // The custom rule.
    nabla::tape<> t;
    auto recording = t.record();
    std::vector<var> inputs;
    for (double value : v)
        inputs.push_back(t.input(value));
    const std::size_t statements = t.statements(), partials = t.partials();
    const std::vector<var> x = solve(inputs, n);
    CHECK(t.statements() == statements + n);  // the outputs, and no statement inside the solve
    CHECK(t.partials() == partials);
    const var y = loss(x);
    t.gradient(y);
    std::vector<double> custom;
    for (const var& input : inputs)
        custom.push_back(t.adjoint(input));

    double scale = 0.0;
    for (double g : through)
        scale = std::max(scale, std::abs(g));
    for (std::size_t i = 0; i < v.size(); ++i) {
        INFO("input " << i);
        CHECK(std::abs(custom[i] - through[i]) <= 1e-12 * scale);
        // and a central difference
        std::vector<double> up = v, down = v;
        const double h = 1e-6;
        up[i] += h;
        down[i] -= h;
        const auto value_at = [](const std::vector<double>& p) {
            const std::vector<double> A(p.begin(), p.begin() + std::ptrdiff_t(n * n));
            const std::vector<double> b(p.begin() + std::ptrdiff_t(n * n), p.end());
            return loss(eliminate(A, b, n));
        };
        CHECK(custom[i] == Approx((value_at(up) - value_at(down)) / (2 * h)).epsilon(1e-6));
    }

    // The recording is swept again with another seed without recording again.
    t.zero_adjoints();
    t.seed(x[2]);
    t.sweep();
    CHECK(t.adjoint(inputs[n * n + 2]) != 0.0);
}

TEST_CASE("custom rule: misuse and constants", "[reverse][custom]") {
    nabla::tape<> t;
    const auto record_and_sweep = [&] {
        auto recording = t.record();
        std::vector<var> inputs{t.input(1.0), t.input(2.0)};
        const auto y = nabla::custom_vjp(inputs, [](const std::vector<double>& v) {
            auto wrong = [](const std::vector<double>&) { return std::vector<double>{1.0}; };
            return std::pair{std::vector<double>{v[0] * v[1]}, wrong};
        });
        t.gradient(y[0]);
    };
    CHECK_THROWS_WITH(record_and_sweep(),
                      Catch::Contains("pullback returned 1 adjoints for 2 inputs"));

    // Constants in, constants out, no tape needed.
    const std::vector<var> constants{var(3.0), var(4.0)};
    const auto y = nabla::custom_vjp(constants, [](const std::vector<double>& v) {
        auto pullback = [](const std::vector<double>& w) {
            return std::vector<double>{w[0], w[0]};
        };
        return std::pair{std::vector<double>{v[0] + v[1]}, pullback};
    });
    CHECK(y[0].value == 7.0);
    CHECK(!y[0].is_active());
}

TEST_CASE("custom rule written generically: under nabla::grad, and hvp through its pullback",
          "[reverse][custom]") {
    // The rule's forward function and pullback take any number type, so the same rule serves
    // nabla::grad (values are doubles) and forward over reverse (hvp: values and adjoints are
    // dual numbers, and the pullback's own derivative gives the second-order terms). Here the
    // cubes of the inputs, in f(x) = sum_i sin(x_i^3): f_i = 3 x_i^2 cos(x_i^3),
    // f_ii = 6 x_i cos(x_i^3) - 9 x_i^4 sin(x_i^3), no cross terms.
    const auto cubes = [](const auto& x) {
        return nabla::custom_vjp(x, [](const auto& v) {
            using T = typename std::decay_t<decltype(v)>::value_type;
            std::vector<T> y(v.size());
            for (std::size_t i = 0; i < v.size(); ++i)
                y[i] = v[i] * v[i] * v[i];
            auto pullback = [v](const std::vector<T>& w) {
                std::vector<T> adjoint(v.size());
                for (std::size_t i = 0; i < v.size(); ++i)
                    adjoint[i] = w[i] * 3.0 * v[i] * v[i];
                return adjoint;
            };
            return std::pair{y, pullback};
        });
    };
    const auto f = [&cubes](const auto& x) {
        using T = std::decay_t<decltype(x[0])>;
        using std::sin;
        const auto y = cubes(x);
        T sum = 0.0;
        for (const auto& yi : y)
            sum += sin(yi);
        return sum;
    };
    const std::vector<double> x{0.3, -0.7, 1.1, 0.9}, v{1.0, 0.5, -2.0, 0.25};
    const std::vector<double> g = nabla::grad(nabla::mode::reverse, f, x);
    const std::vector<double> hv = nabla::hvp(f, x, v);
    for (std::size_t i = 0; i < x.size(); ++i) {
        INFO("i = " << i);
        const double c = x[i] * x[i] * x[i];
        CHECK(g[i] == Approx(3.0 * x[i] * x[i] * std::cos(c)).epsilon(1e-15));
        const double h = 6.0 * x[i] * std::cos(c) - 9.0 * c * x[i] * std::sin(c);
        CHECK(hv[i] == Approx(h * v[i]).epsilon(1e-14));
    }
}

TEST_CASE("custom rule in forward mode: the solve's pushforward", "[forward][custom]") {
    using D = nabla::dual<double, 3>;
    const std::vector<double> v = point();
    // Three directions: b_0, A_00 and a mix of everything.
    std::vector<D> inputs(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) {
        inputs[i].value = v[i];
        inputs[i].tangent = {i == n * n ? 1.0 : 0.0, i == 0 ? 1.0 : 0.0, 0.1 * double(i % 7)};
    }
    const std::vector<D> x = nabla::custom_jvp(inputs, [](const std::vector<double>& values) {
        const std::vector<double> A(values.begin(), values.begin() + std::ptrdiff_t(n * n));
        const std::vector<double> b(values.begin() + std::ptrdiff_t(n * n), values.end());
        std::vector<double> x = eliminate(A, b, n);
        auto pushforward = [A, x](const std::vector<double>& dv) {
            std::vector<double> rhs(n);  // db - dA x
            for (std::size_t i = 0; i < n; ++i) {
                rhs[i] = dv[n * n + i];
                for (std::size_t j = 0; j < n; ++j)
                    rhs[i] -= dv[i * n + j] * x[j];
            }
            return eliminate(A, rhs, n);
        };
        return std::pair{x, pushforward};
    });
    // Against the elimination evaluated on the same dual numbers.
    const std::vector<D> A(inputs.begin(), inputs.begin() + std::ptrdiff_t(n * n));
    const std::vector<D> b(inputs.begin() + std::ptrdiff_t(n * n), inputs.end());
    const std::vector<D> through = eliminate(A, b, n);
    for (std::size_t i = 0; i < n; ++i) {
        CHECK(x[i].value == Approx(through[i].value).epsilon(1e-14));
        for (std::size_t k = 0; k < 3; ++k)
            CHECK(x[i].tangent[k] == Approx(through[i].tangent[k]).epsilon(1e-12).margin(1e-14));
    }
}
