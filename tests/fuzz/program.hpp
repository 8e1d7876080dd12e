#pragma once
// Random programs for differential testing (tests/fuzz/): straight-line code over every function
// of the rule table, with run-time branches and loops on values, generated from a seed and run by
// one interpreter on any number type (double, dual numbers, nested duals, Taylor series, active
// variables of the tape, active dual numbers), so that every mode differentiates the same program.
//
// Arguments are kept inside each function's domain, away from its singularities, kinks and
// jumps, and values stay bounded: the generator runs the program in double as it writes it, at
// the point it will be differentiated at, and only keeps an instruction whose operands are at
// least a margin away from every edge (so that a finite-difference estimate near the point sees
// the same smooth function).

#include <nabla/nabla.hpp>

#include <cmath>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "checks.hpp"

namespace nabla_fuzz {

// clang-format off
enum class op {
    neg, exp, exp2, expm1, log, log2, log10, log1p, sqrt, cbrt, sin, cos, tan, asin, acos, atan,
    sinh, cosh, tanh, asinh, acosh, atanh, erf, erfc, tgamma, lgamma, digamma, trigamma, abs,
    sign, floor, ceil, round, trunc, add, sub, mul, div, pow, powi, atan2, hypot, min, max, fmin,
    fmax, fma, hypot3, ldexp, riemann_zeta, sin_pi, cos_pi, sqrt1pm1, expint, lambert_w0, lambert_wm1, comp_ellint_1,
    comp_ellint_2, powm1, beta, hermite, sph_bessel, sph_neumann, sinc, ellint_1, ellint_2,
    fmod, cyl_bessel_j, cyl_neumann, cyl_bessel_i, cyl_bessel_k, gegenbauer, assoc_laguerre,
    legendre, laguerre, assoc_legendre, sph_legendre, comp_ellint_3, ellint_3, add_constant,
    times_constant,
    constant_over, branch, loop, accumulate
};
// clang-format on
inline constexpr int op_count = static_cast<int>(op::accumulate) + 1;

inline const char* name(op o) {
    // clang-format off
    static const char* const names[] = {
        "neg", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "cbrt", "sin",
        "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
        "erf", "erfc", "tgamma", "lgamma", "digamma", "trigamma", "abs", "sign", "floor", "ceil",
        "round", "trunc", "add", "sub", "mul", "div", "pow", "powi", "atan2", "hypot", "min",
        "max", "fmin", "fmax", "fma", "hypot3", "ldexp", "riemann_zeta", "sin_pi", "cos_pi", "sqrt1pm1", "expint", "lambert_w0",
        "lambert_wm1", "comp_ellint_1", "comp_ellint_2", "powm1", "beta", "hermite", "sph_bessel",
        "sph_neumann", "sinc", "ellint_1", "ellint_2", "fmod", "cyl_bessel_j", "cyl_neumann",
        "cyl_bessel_i", "cyl_bessel_k", "gegenbauer", "assoc_laguerre", "legendre", "laguerre",
        "assoc_legendre", "sph_legendre", "comp_ellint_3", "ellint_3", "add_constant", "times_constant", "constant_over",
        "branch", "loop", "accumulate"};
    // clang-format on
    return names[static_cast<int>(o)];
}

// One instruction: value[k] = o(value[a], value[b], value[c]) with a constant where o takes one.
struct instruction {
    op o;
    int a = 0, b = 0, c = 0;
    double constant = 0.0;
    int power = 0;
};

struct program {
    std::uint64_t seed = 0;
    int inputs = 0;
    std::vector<instruction> code;
    std::vector<double> point;  // where it is differentiated
    std::vector<bool> ignored;  // inputs that no instruction reads

    std::string to_string() const {
        std::ostringstream out;
        describe_point(out, seed, point);
        for (std::size_t i = 0; i < ignored.size(); ++i)
            if (ignored[i])
                out << " (v" << i << " ignored)";
        int k = inputs;
        for (const instruction& i : code)
            out << " v" << k++ << " = " << name(i.o) << "(v" << i.a << ", v" << i.b << ", v" << i.c
                << "; " << i.constant << ", " << i.power << ");";
        return out.str();
    }
};

// Runs the program on inputs x (a container of any number type); the last value is the output.
// `branches`, when given, records which way each branch and loop test went.
template <class X>
auto run(const program& p, const X& x, std::vector<int>* branches = nullptr) {
    using T = std::decay_t<decltype(x[0])>;
    using nabla::digamma, nabla::polygamma, nabla::sign, std::ceil, std::trunc, nabla::sin_pi,
        nabla::cos_pi, nabla::sqrt1pm1, nabla::expint, nabla::lambert_w0, nabla::lambert_wm1,
        nabla::comp_ellint_1, nabla::comp_ellint_2, nabla::powm1, nabla::beta, nabla::hermite,
        nabla::sph_bessel, nabla::sph_neumann, nabla::sinc, nabla::ellint_1, nabla::ellint_2,
        nabla::fmod, nabla::cyl_bessel_j, nabla::cyl_neumann, nabla::cyl_bessel_i,
        nabla::cyl_bessel_k, nabla::riemann_zeta, nabla::gegenbauer, nabla::assoc_laguerre,
        nabla::legendre, nabla::laguerre, nabla::assoc_legendre, nabla::sph_legendre,
        nabla::comp_ellint_3, nabla::ellint_3;
    using std::abs, std::acos, std::acosh, std::asin, std::asinh, std::atan, std::atan2, std::atanh,
        std::cbrt, std::cos, std::cosh, std::erf, std::erfc, std::exp, std::exp2, std::expm1,
        std::floor, std::fma, std::ldexp, std::fmax, std::fmin, std::hypot, std::lgamma, std::log,
        std::log10, std::log1p, std::log2, std::max, std::min, std::pow, std::round, std::sin,
        std::sinh, std::sqrt, std::tan, std::tanh, std::tgamma;
    std::vector<T> v;
    v.reserve(static_cast<std::size_t>(p.inputs) + p.code.size());
    for (int i = 0; i < p.inputs; ++i)
        v.push_back(x[static_cast<std::size_t>(i)]);
    for (const instruction& i : p.code) {
        const T& a = v[static_cast<std::size_t>(i.a)];
        const T& b = v[static_cast<std::size_t>(i.b)];
        const T& c = v[static_cast<std::size_t>(i.c)];
        const double k = i.constant;
        T r;
        switch (i.o) {
        case op::neg:
            r = -a;
            break;
        case op::exp:
            r = exp(a);
            break;
        case op::exp2:
            r = exp2(a);
            break;
        case op::expm1:
            r = expm1(a);
            break;
        case op::log:
            r = log(a);
            break;
        case op::log2:
            r = log2(a);
            break;
        case op::log10:
            r = log10(a);
            break;
        case op::log1p:
            r = log1p(a);
            break;
        case op::sqrt:
            r = sqrt(a);
            break;
        case op::cbrt:
            r = cbrt(a);
            break;
        case op::sin:
            r = sin(a);
            break;
        case op::cos:
            r = cos(a);
            break;
        case op::tan:
            r = tan(a);
            break;
        case op::asin:
            r = asin(a);
            break;
        case op::acos:
            r = acos(a);
            break;
        case op::atan:
            r = atan(a);
            break;
        case op::sinh:
            r = sinh(a);
            break;
        case op::cosh:
            r = cosh(a);
            break;
        case op::tanh:
            r = tanh(a);
            break;
        case op::asinh:
            r = asinh(a);
            break;
        case op::acosh:
            r = acosh(a);
            break;
        case op::atanh:
            r = atanh(a);
            break;
        case op::erf:
            r = erf(a);
            break;
        case op::erfc:
            r = erfc(a);
            break;
        case op::tgamma:
            r = tgamma(a);
            break;
        case op::lgamma:
            r = lgamma(a);
            break;
        case op::digamma:
            r = digamma(a);
            break;
        case op::trigamma:
            r = polygamma(1, a);
            break;
        case op::sin_pi:
            r = sin_pi(a);
            break;
        case op::cos_pi:
            r = cos_pi(a);
            break;
        case op::sqrt1pm1:
            r = sqrt1pm1(a);
            break;
        case op::expint:
            r = expint(a);
            break;
        case op::lambert_w0:
            r = lambert_w0(a);
            break;
        case op::lambert_wm1:
            r = lambert_wm1(a);
            break;
        case op::comp_ellint_1:
            r = comp_ellint_1(a);
            break;
        case op::comp_ellint_2:
            r = comp_ellint_2(a);
            break;
        case op::powm1:
            r = powm1(a, b);
            break;
        case op::beta:
            r = beta(a, b);
            break;
        case op::hermite:
            r = hermite(3, a);
            break;
        case op::sph_bessel:
            r = sph_bessel(2, a);
            break;
        case op::sph_neumann:
            r = sph_neumann(1, a);
            break;
        case op::sinc:
            r = sinc(a);
            break;
        case op::cyl_bessel_j:
            r = cyl_bessel_j(2.5, a);
            break;
        case op::cyl_neumann:
            r = cyl_neumann(0.75, a);
            break;
        case op::cyl_bessel_i:
            r = cyl_bessel_i(-1.5, a);
            break;
        case op::cyl_bessel_k:
            r = cyl_bessel_k(1.0, a);
            break;
        case op::gegenbauer:
            r = gegenbauer(4, 1.5, a);
            break;
        case op::assoc_laguerre:
            r = assoc_laguerre(3, 0.5, a);
            break;
        case op::legendre:
            r = legendre(5, a);
            break;
        case op::laguerre:
            r = laguerre(4, a);
            break;
        case op::assoc_legendre:
            r = assoc_legendre(4, 2, a);
            break;
        case op::sph_legendre:
            r = sph_legendre(3, 1, a);
            break;
        case op::ellint_1:
            r = ellint_1(a, b);
            break;
        case op::ellint_2:
            r = ellint_2(a, b);
            break;
        case op::comp_ellint_3:
            r = comp_ellint_3(a, b);
            break;
        case op::fmod:
            r = fmod(a, b);
            break;

        case op::abs:
            r = abs(a);
            break;
        // The jumps alone have derivative 0: each is combined with its argument.
        case op::sign:
            r = sign(a) * a;
            break;
        case op::floor:
            r = floor(a) + a;
            break;
        case op::ceil:
            r = ceil(a) - a;
            break;
        case op::round:
            r = round(a) * a;
            break;
        case op::trunc:
            r = trunc(a) * a;
            break;
        case op::add:
            r = a + b;
            break;
        case op::sub:
            r = a - b;
            break;
        case op::mul:
            r = a * b;
            break;
        case op::div:
            r = a / b;
            break;
        case op::pow:
            r = pow(a, b);
            break;
        case op::powi:
            r = pow(a, i.power);
            break;
        case op::atan2:
            r = atan2(a, b);
            break;
        case op::hypot:
            r = hypot(a, b);
            break;
        case op::min:
            r = min(a, b);
            break;
        case op::max:
            r = max(a, b);
            break;
        case op::fmin:
            r = fmin(a, b);
            break;
        case op::fmax:
            r = fmax(a, b);
            break;
        case op::fma:
            r = fma(a, b, c);
            break;
        case op::hypot3:
            r = hypot(a, b, c);
            break;
        case op::ellint_3:
            r = ellint_3(a, b, c);
            break;
        case op::ldexp:
            r = ldexp(a, -3);
            break;
        case op::riemann_zeta:
            r = riemann_zeta(a);
            break;
        case op::add_constant:
            r = a + k;
            break;
        case op::times_constant:
            r = k * a;
            break;
        case op::constant_over:
            r = k / a;
            break;
        case op::branch: {
            // if (a > k) b * c else b + sin(c): a branch on a value.
            const bool taken = a > k;
            if (branches)
                branches->push_back(taken);
            if (taken)
                r = b * c;
            else
                r = b + sin(c);
            break;
        }
        case op::loop: {
            // t = a; while (t < k) t = 1.25 t + 0.125 tanh(b): a data-dependent trip count.
            T t = a;
            int steps = 0;
            while (t < k && steps < 24) {
                t = 1.25 * t + 0.125 * tanh(b);
                ++steps;
            }
            if (branches)
                branches->push_back(steps);
            r = t;
            break;
        }
        case op::accumulate: {
            // s = b c; s += a; s -= k c; s = c + s; s += k: on the tape each step after the
            // first accumulates onto the statement just recorded (its partial 1 kept as a bit).
            T s = b * c;
            s += a;
            s -= k * c;
            s = c + s;
            s += k;
            r = s;
            break;
        }
        }
        v.push_back(r);
    }
    return v.back();
}

// The generator. Each instruction is drawn, run in double at the point, and kept only when its
// operands are a margin away from the edges of its function and its value is bounded.
class generator {
public:
    explicit generator(std::uint64_t seed) : seed_(seed), random_(seed) {}

    // A program of `length` instructions over `inputs` inputs, of which those marked in
    // `ignored` (at least one must stay unmarked) are never read: the program's derivatives with
    // respect to them are exact zeros.
    program make(int inputs, int length, std::vector<bool> ignored = {}) {
        program p;
        p.seed = seed_;
        p.inputs = inputs;
        ignored.resize(static_cast<std::size_t>(inputs), false);
        p.ignored = ignored;
        std::vector<int> read;
        std::uniform_real_distribution<double> coordinate(-1.5, 1.5);
        for (int i = 0; i < inputs; ++i) {
            p.point.push_back(coordinate(random_));
            values_.push_back(p.point.back());
            readable_.push_back(!ignored[static_cast<std::size_t>(i)]);
            if (readable_.back())
                read.push_back(i);
        }
        // Every input that is not ignored is read at least once: the first instructions read
        // them in turn.
        const int first_reads = static_cast<int>(read.size());
        for (int n = 0; n < length; ++n) {
            for (int attempt = 0; attempt < 200; ++attempt) {
                instruction i = draw(n < first_reads ? read[static_cast<std::size_t>(n)] : -1);
                double value;
                if (accept(i, value)) {
                    p.code.push_back(i);
                    values_.push_back(value);
                    readable_.push_back(true);
                    break;
                }
            }
        }
        // The output mixes the last value with the others, so every value takes part:
        // out = last + 0.25 v_k + 0.25 v_k+1 + ...
        const int last = static_cast<int>(values_.size()) - 1;
        int out = last;
        for (int k = inputs; k < last; ++k) {
            push(p, {op::times_constant, k, 0, 0, 0.25});
            push(p, {op::add, out, static_cast<int>(values_.size()) - 1});
            out = static_cast<int>(values_.size()) - 1;
        }
        return p;
    }

private:
    std::uint64_t seed_;
    std::mt19937_64 random_;
    std::vector<double> values_;
    std::vector<bool> readable_;  // per value: false for an ignored input

    void push(program& p, const instruction& i) {
        double value = 0.0;
        accept(i, value);
        p.code.push_back(i);
        values_.push_back(value);
        readable_.push_back(true);
    }

    int operand(int forced) {
        if (forced >= 0)
            return forced;
        // Recent values more often than old ones; an ignored input is drawn again.
        const int n = static_cast<int>(values_.size());
        std::geometric_distribution<int> back(0.35);
        for (;;) {
            int k = n - 1 - back(random_);
            if (k < 0)
                k = static_cast<int>(random_() % static_cast<std::uint64_t>(n));
            if (readable_[static_cast<std::size_t>(k)])
                return k;
        }
    }

    instruction draw(int forced) {
        instruction i;
        i.o = static_cast<op>(random_() % op_count);
        i.a = operand(forced);
        i.b = operand(-1);
        i.c = operand(-1);
        std::uniform_real_distribution<double> constant(-2.0, 2.0);
        i.constant = constant(random_);
        i.power = static_cast<int>(random_() % 6) - 2;
        if (i.o == op::loop)
            i.constant = 1.0 + std::abs(i.constant);  // the bound the loop grows towards
        return i;
    }

    static bool away(double x, double edge, double margin = 0.1) {
        return std::abs(x - edge) > margin;
    }
    static bool away_from_integers(double x, double offset) {
        const double f = x + offset - std::floor(x + offset);
        return f > 0.1 && f < 0.9;
    }

    bool accept(const instruction& i, double& r) {
        const double a = values_[static_cast<std::size_t>(i.a)];
        const double b = values_[static_cast<std::size_t>(i.b)];
        const double c = values_[static_cast<std::size_t>(i.c)];
        const double k = i.constant;
        bool ok = true;
        switch (i.o) {
        case op::exp:
        case op::exp2:
        case op::expm1:
        case op::sinh:
        case op::cosh:
            ok = std::abs(a) < 4.0;
            break;
        case op::log:
        case op::log2:
        case op::log10:
        case op::sqrt:
            ok = a > 0.25;
            break;
        case op::log1p:
            ok = a > -0.75;
            break;
        case op::cbrt:
            ok = std::abs(a) > 0.25;
            break;
        case op::tan:
            ok = std::abs(std::cos(a)) > 0.3;
            break;
        case op::asin:
        case op::acos:
        case op::atanh:
            ok = std::abs(a) < 0.8;
            break;
        case op::acosh:
            ok = a > 1.25;
            break;
        case op::tgamma:
            ok = a > 0.3 && a < 4.0;
            break;
        case op::lgamma:
        case op::digamma:
        case op::trigamma:
            ok = a > 0.3 && a < 8.0;
            break;
        case op::abs:
        case op::sign:
            ok = away(a, 0.0);
            break;
        case op::sqrt1pm1:
            ok = a > -0.75;
            break;
        case op::expint:
            ok = std::abs(a) > 0.25 && std::abs(a) < 4.0;
            break;
        case op::lambert_w0:
            ok = a > -0.3;  // away from the branch point -1/e
            break;
        case op::lambert_wm1:
            ok = a > -0.3 && a < -0.02;
            break;
        case op::comp_ellint_1:
        case op::comp_ellint_2:
            // (Away from k = 0, where the closed forms of the second derivatives divide 0 by 0.)
            ok = std::abs(a) < 0.9 && std::abs(a) > 0.05;
            break;
        case op::powm1:
            ok = a > 0.3 && std::abs(b) < 3.0;
            break;
        case op::beta:
            ok = a > 0.3 && b > 0.3 && a < 6.0 && b < 6.0;
            break;
        case op::hermite:
            ok = std::abs(a) < 3.0;
            break;
        case op::sph_bessel:
            ok = std::abs(a) < 20.0;
            break;
        case op::sph_neumann:
            ok = std::abs(a) > 0.3 && std::abs(a) < 20.0;
            break;
        case op::sinc:
            ok = std::abs(a) < 20.0;
            break;
        case op::cyl_bessel_j:
        case op::cyl_neumann:
            // (Real orders: x > 0 only.)
            ok = a > 0.3 && a < 20.0;
            break;
        case op::cyl_bessel_i:
        case op::cyl_bessel_k:
            ok = a > 0.3 && a < 8.0;
            break;
        case op::gegenbauer:
        case op::legendre:
            // (Where the polynomials stay below about 20.)
            ok = std::abs(a) < 1.2;
            break;
        case op::assoc_laguerre:
        case op::laguerre:
            ok = std::abs(a) < 3.0;
            break;
        case op::assoc_legendre:
            // (Inside (-1, 1), where (1 - x^2)^(m/2) is real.)
            ok = std::abs(a) < 0.95;
            break;
        case op::sph_legendre:
            ok = std::abs(a) < 10.0;
            break;
        case op::ellint_1:
        case op::ellint_2:
            // (Away from k = 0, as the complete integrals.)
            ok = std::abs(a) < 0.9 && std::abs(a) > 0.05 && std::abs(b) < 4.0;
            break;
        case op::comp_ellint_3:
        case op::ellint_3:
            // (Away from k = 0 as the other kinds, and from the removable singularities of the
            // closed-form derivatives at nu = 0 and nu = k^2.)
            ok = std::abs(a) < 0.9 && std::abs(a) > 0.05 && b > -3.0 && b < 0.8 &&
                 std::abs(b) > 0.1 && std::abs(b - a * a) > 0.1 && std::abs(c) < 4.0;
            break;
        case op::fmod:
            // (Away from the jumps, where a / b is an integer.)
            ok = std::abs(b) > 0.3 && std::abs(a / b - std::round(a / b)) > 0.05;
            break;

        case op::floor:
        case op::ceil:
        case op::trunc:
            ok = away_from_integers(a, 0.0);
            break;
        case op::round:
            ok = away_from_integers(a, 0.5);
            break;
        case op::div:
            ok = std::abs(b) > 0.3;
            break;
        case op::pow:
            ok = a > 0.3 && std::abs(b) < 3.0;
            break;
        case op::powi:
            ok = i.power >= 0 || std::abs(a) > 0.3;
            break;
        case op::atan2:
            ok = a * a + b * b > 0.09 && (b > 0.0 || std::abs(a) > 0.2);
            break;
        case op::hypot:
            ok = a * a + b * b > 0.09;
            break;
        case op::hypot3:
            ok = a * a + b * b + c * c > 0.09;
            break;
        case op::riemann_zeta:
            ok = std::abs(a - 1.0) > 0.3 && a > -6.0 && a < 10.0;  // away from the pole at 1
            break;
        case op::min:
        case op::max:
        case op::fmin:
        case op::fmax:
            ok = away(a, b);
            break;
        case op::constant_over:
            ok = std::abs(a) > 0.3;
            break;
        case op::branch:
            ok = away(a, k);
            break;
        case op::loop: {
            // Every test of the loop a margin away from the bound, and a few steps at most.
            double t = a;
            int steps = 0;
            ok = away(t, k) && a > 0.1;
            while (ok && t < k && steps < 24) {
                t = 1.25 * t + 0.125 * std::tanh(b);
                ++steps;
                ok = away(t, k, 0.05);
            }
            ok = ok && steps < 24;
            break;
        }
        default:
            break;
        }
        if (!ok)
            return false;
        program one;
        one.inputs = 3;
        std::vector<double> operands{a, b, c};
        instruction shifted = i;
        shifted.a = 0;
        shifted.b = 1;
        shifted.c = 2;
        one.code.push_back(shifted);
        r = run(one, operands);
        return std::isfinite(r) && std::abs(r) < 100.0;
    }
};

}  // namespace nabla_fuzz
