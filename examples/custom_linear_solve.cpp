// A linear solve with its own derivative rule. Steady convection-diffusion on n nodes of (0, 1),
// -(k u')' + v u' = s sin(pi x) with u = 0 at both ends, has a conductivity k(x) = exp(p0 + p1 x),
// a velocity v = p2 and a source strength s = p3. Central differences make it A(p) x = b(p), and
// the loss sum_i (x_i - target_i)^2 measures how far the concentrations are from a target
// profile. Its gradient is taken on the tape with the solve as one custom entry
// (nabla::custom_vjp: lambda = A^-T w, adjoint of b = lambda, adjoint of A = -lambda x^T), and
// checked against the same loss differentiated through Gaussian elimination, against central
// differences, and against the forward-mode rule (nabla::custom_jvp: dx = A^-1 (db - dA x)).
//
//   build-gcc/examples/custom_linear_solve

#include <nabla/nabla.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <vector>

namespace {

using nabla::var;
using tangent = nabla::dual<double, 1>;

constexpr std::size_t n = 7;                           // interior nodes
constexpr double h = 1.0 / double(n + 1);              // grid spacing
const std::vector<double> start{0.0, 0.0, 0.5, 1.0};   // p0, p1, v, s
const std::vector<double> truth{0.3, -0.6, 2.0, 1.2};  // makes the target profile

// A (n x n, row major) followed by b: the inputs of the solve, in the layout both rules take.
template <class T>
std::vector<T> assemble(const std::vector<T>& p) {
    using std::exp, std::sin;
    std::vector<T> system(n * n + n, T(0.0));
    for (std::size_t i = 0; i < n; ++i) {
        const double x = double(i + 1) * h;
        const T left = exp(p[0] + p[1] * (x - 0.5 * h)) / (h * h);  // k at the cell faces
        const T right = exp(p[0] + p[1] * (x + 0.5 * h)) / (h * h);
        const T drift = p[2] / (2.0 * h);
        system[i * n + i] = left + right;
        if (i > 0)
            system[i * n + i - 1] = -left - drift;
        if (i + 1 < n)
            system[i * n + i + 1] = -right + drift;
        system[n * n + i] = p[3] * sin(std::numbers::pi * x);
    }
    return system;
}

// Gaussian elimination for any number type: on doubles inside the rules, on var to record every
// elimination step. No pivoting: A and A^T are diagonally dominant while |v| h / 2 < k.
template <class T>
std::vector<T> eliminate(std::vector<T> A, std::vector<T> b) {
    for (std::size_t k = 0; k < n; ++k)
        for (std::size_t i = k + 1; i < n; ++i) {
            const T factor = A[i * n + k] / A[k * n + k];
            for (std::size_t j = k + 1; j < n; ++j)
                A[i * n + j] -= factor * A[k * n + j];
            b[i] -= factor * b[k];
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

template <class T>
std::vector<T> solve_through(const std::vector<T>& system) {
    const auto middle = system.begin() + std::ptrdiff_t(n * n);
    return eliminate(std::vector<T>(system.begin(), middle), std::vector<T>(middle, system.end()));
}

std::vector<double> transposed(const std::vector<double>& A) {
    std::vector<double> t(n * n);
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j)
            t[j * n + i] = A[i * n + j];
    return t;
}

// Reverse mode: the solve is one tape entry. The pullback keeps A and x (a real code would keep
// the factors), and the convection term makes A unsymmetric, so the transpose matters.
std::vector<var> solve_with_rule(const std::vector<var>& system) {
    return nabla::custom_vjp(system, [](const std::vector<double>& values) {
        const std::vector<double> A(values.begin(), values.begin() + std::ptrdiff_t(n * n));
        const std::vector<double> x = solve_through(values);
        auto pullback = [A, x](const std::vector<double>& w) {
            const std::vector<double> lambda = eliminate(transposed(A), w);
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

// Forward mode: differentiating A x = b gives A dx = db - dA x, one more solve per direction.
std::vector<tangent> solve_with_rule(const std::vector<tangent>& system) {
    return nabla::custom_jvp(system, [](const std::vector<double>& values) {
        const std::vector<double> A(values.begin(), values.begin() + std::ptrdiff_t(n * n));
        const std::vector<double> x = solve_through(values);
        auto pushforward = [A, x](const std::vector<double>& d) {
            std::vector<double> rhs(d.begin() + std::ptrdiff_t(n * n), d.end());
            for (std::size_t i = 0; i < n; ++i)
                for (std::size_t j = 0; j < n; ++j)
                    rhs[i] -= d[i * n + j] * x[j];
            return eliminate(A, rhs);
        };
        return std::pair{x, pushforward};
    });
}

template <class T, class Solve>
T loss(const std::vector<T>& p, const std::vector<double>& target, const Solve& solve) {
    const std::vector<T> x = solve(assemble(p));
    T sum = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
        const auto miss = x[i] - target[i];
        sum += miss * miss;
    }
    return sum;
}

struct recorded {
    double value;
    std::vector<double> gradient;
    std::size_t statements;  // on the tape when the loss is recorded
};

// The loss at the start and its gradient in reverse mode, recorded on t.
template <class Solve>
recorded record(nabla::tape<>& t, const std::vector<double>& target, const Solve& solve) {
    auto recording = t.record();
    std::vector<var> p(start.size());
    t.inputs(start, p);
    const var l = loss(p, target, solve);
    recorded result{l.value, std::vector<double>(p.size()), t.statements()};
    t.gradient(l);
    t.adjoints(p, result.gradient);
    return result;
}

// The largest difference relative to the largest reference entry, reported and compared.
bool agrees(const char* what,
            const std::vector<double>& got,
            const std::vector<double>& want,
            double tolerance) {
    double difference = 0.0, scale = 0.0;
    for (std::size_t i = 0; i < want.size(); ++i) {
        difference = std::max(difference, std::abs(got[i] - want[i]));
        scale = std::max(scale, std::abs(want[i]));
    }
    const bool ok = difference <= tolerance * scale;
    std::printf("  %-44s %9.2e  (tolerance %.0e)  %s\n", what, difference / scale, tolerance,
                ok ? "ok" : "FAILED");
    return ok;
}

}  // namespace

int main() {
    const auto with_rule = [](const auto& system) { return solve_with_rule(system); };
    const auto through = [](const auto& system) { return solve_through(system); };
    const std::vector<double> target = solve_through(assemble(truth));

    // The gradient on one tape, recorded afresh for each way of solving.
    nabla::tape<> t;
    const recorded rule = record(t, target, with_rule);
    const recorded elimination = record(t, target, through);

    std::printf("Convection-diffusion on %zu nodes, k = exp(p0 + p1 x), v = p2, source p3\n", n);
    std::printf("loss at p = (%g, %g, %g, %g): %.12e\n", start[0], start[1], start[2], start[3],
                rule.value);
    std::printf("gradient by the custom rule:");
    for (double gi : rule.gradient)
        std::printf(" %.10e", gi);
    std::printf("\n\nchecks (largest difference / largest entry):\n");

    // Central differences of the loss on doubles.
    std::vector<double> g_differences(start.size());
    for (std::size_t i = 0; i < start.size(); ++i) {
        const double step = 1e-6;
        std::vector<double> up = start, down = start;
        up[i] += step;
        down[i] -= step;
        g_differences[i] = (loss(up, target, through) - loss(down, target, through)) / (2 * step);
    }

    // Forward mode along one direction: its tangent is the gradient dotted with the direction.
    const std::vector<double> direction{0.3, -0.7, 0.2, 1.0};
    std::vector<tangent> p(start.size());
    double dotted = 0.0;
    for (std::size_t i = 0; i < start.size(); ++i) {
        p[i] = tangent(start[i], {direction[i]});
        dotted += rule.gradient[i] * direction[i];
    }
    const tangent l = loss(p, target, with_rule);

    bool ok = agrees("loss, rule vs elimination", {rule.value}, {elimination.value}, 1e-12);
    ok = agrees("gradient, rule vs elimination", rule.gradient, elimination.gradient, 1e-10) && ok;
    ok = agrees("gradient, rule vs central differences", rule.gradient, g_differences, 1e-6) && ok;
    ok =
        agrees("custom_jvp tangent vs gradient . direction", {l.tangent[0]}, {dotted}, 1e-10) && ok;

    std::printf("\ntape statements: %zu with the solve as one entry, %zu through the elimination "
                "(%zu saved)\n",
                rule.statements, elimination.statements, elimination.statements - rule.statements);
    if (!ok) {
        std::printf("FAILED: the custom rules disagree with the references above\n");
        return 1;
    }
    std::printf("ok\n");
    return 0;
}
