// Differential testing of the tape's statement builder (reverse/detail/builder.hpp) on random
// programs made of statement *shapes*: the ways real code writes one statement with `auto`
// intermediates (small ones held by copy, larger ones collapsed into the scratch memory, functions
// of one collapsed intermediate that share its partials, statements that refer to them,
// accumulations, helpers that return expressions of their locals, passive constants, copies of
// variables). The shapes are fixed at compile time; which variables each one reads is drawn at run
// time, so the same variable lands in several places of one statement, two intermediates of one
// type read the same or different variables, and an intermediate is used once or several times:
// every merge the statement builder makes (variables by index, small intermediates by contents and
// origin, collapsed ones by offset) meets the cases where it must merge and where it must not. The
// random programs of random_programs_test.cpp write one operation per statement and never meet
// these.
//
// Each program is differentiated by the tape (nabla::grad and vjp in reverse mode, forward over
// reverse for Hessian-vector products) and by forward mode (dual numbers; forward over forward
// for Hessians), which shares none of the statement builder; both must agree to near double
// precision, and with Richardson-extrapolated central differences within their error bound.
//
// Deterministic: program i has seed NABLA_SHAPES_SEED (default 1) + i; NABLA_SHAPES_ITERATIONS
// (default 300) programs per run (build-gcc/tests/shapes_tests). A failure prints the program and
// its seed (docs/testing.md).

#include <nabla/nabla.hpp>
#include <nabla/tensor.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "checks.hpp"

namespace {

// clang-format off
enum class shape {
    square_plus,          // d = a - b;  d * d + c
    two_named,            // d = a * b; e = a * c;  d * e - d
    twin_named,           // d = a - b; e = a - b (another object, the same contents);  d * e + d
    pair_energy,          // dx, dy, dz; r2 = dx^2 + dy^2 + dz^2 + k; s6 = 1 / r2^3;  4 (s6^2 - s6)
    accumulated_energies, // s = 0; four pair energies of a, b, c, d accumulated: s += s6^2 - s6
    collapsed_and_leaves, // r2 of (a - b), (c - d);  r2 a + sqrt(r2) - c
    two_collapsed,        // u = a b; w = c d; p = u^2 + w + k; q = w^2 + u + k;  p / q + p
    rosenbrock_term,      // s = c; t1 = b - a^2; t2 = 1 - a;  s += 100 t1^2 + t2^2
    helper_locals,        // helper(u, w) returns (u w)^2 + u over its local uw;  helper(a, b) + helper(c, a)
    many_leaves,          // a b c d a b c d a + b: more variables than the builder merges
    large_named,          // big reads twelve variables (collapsed);  big^2 + a
    shared_twice,         // r2; s = 1 / r2; t = sqrt(r2) (both share r2's partials);  s t + s
    accumulate_elsewhere, // s = a b; o = c d; s += o a; s -= k c (s is not the last statement)
    passive_constant,     // kk = k (a passive variable); d = a kk;  d^2 + kk b
    copy_of_variable,     // c2 = a (a copy: the same variable);  c2 a + a
    compound,             // s = a; s *= b; s /= c^2 + k; s -= a
    collapsed_and_named,  // dx = a - b; r2 = dx^2 + k (collapsed);  r2^3 + dx
    branch,               // a > b ? a b : b - c
    chain_of_shares,      // r2; s = 1 / r2^2; s2 = s^2 (a function of s, itself of r2);  s2 - s
    returned_expression,  // an expression returned from a helper whose local r2 it reads
    constant_named,       // t = 1 - a; u = k - b (two intermediates holding constants);  t u + t^2
    custom_rule,          // (y, z) = custom_vjp(u sin u, u^2), u = a - b; s = z; s += y c
    long_sum,             // u = a - b; a b + c d - a c + u^2 ... (24 terms): recorded in pieces
    long_product,         // (1 + e sin a) (1 + e cos b) ... (12 factors): pieces of a product
    right_nested,         // a + (b - (c + (d u + (a - ...)))): pieces of its right operands
    continued_named,      // big (collapsed); s = big + c (continues it);  s k - big + ... + s
};
// clang-format on
inline constexpr int shape_count = static_cast<int>(shape::continued_named) + 1;

const char* name(shape s) {
    // clang-format off
    static const char* const names[] = {
        "square_plus", "two_named", "twin_named", "pair_energy", "accumulated_energies",
        "collapsed_and_leaves", "two_collapsed", "rosenbrock_term", "helper_locals",
        "many_leaves", "large_named", "shared_twice", "accumulate_elsewhere", "passive_constant",
        "copy_of_variable", "compound", "collapsed_and_named", "branch", "chain_of_shares",
        "returned_expression", "constant_named", "custom_rule", "long_sum", "long_product",
        "right_nested", "continued_named"};
    // clang-format on
    return names[static_cast<int>(s)];
}

struct step {
    shape s;
    int a = 0, b = 0, c = 0, d = 0;
    double k = 1.0;  // in [0.5, 2]: keeps every denominator away from 0
};

struct program {
    std::uint64_t seed = 0;
    int inputs = 0;
    std::vector<step> steps;
    std::vector<double> point;

    std::string to_string() const {
        std::ostringstream out;
        nabla_fuzz::describe_point(out, seed, point);
        int n = inputs;
        for (const step& s : steps)
            out << " v" << n++ << " = " << name(s.s) << "(v" << s.a << ", v" << s.b << ", v" << s.c
                << ", v" << s.d << "; " << s.k << ");";
        return out.str();
    }
};

// Returned from a function: an expression that reads the function's local r2 (collapsed on the
// tape), which no longer exists when the caller assigns it.
template <class T>
auto returned(const T& a, const T& b, double k) {
    auto u = a - b;
    auto r2 = u * u + a * a + k;
    return 2.0 * r2 - 1.0 / r2;
}

// Returns an expression that holds a copy of its local uw: called twice from one place, the two
// copies come from one address (the helper's frame) with different contents, and must not be
// merged. (Out of line, so that the address is the same.)
template <class T>
[[gnu::noinline]] auto helper(const T& u, const T& w) {
    auto uw = u * w;
    return uw * uw + u;
}

// One step of each shape: its value from the values a, b, c, d and the constant k (any number
// type). Each shape is a function of its own, out of line: with every shape inlined into one
// function, g++ spent 35 s in its inlining heuristics on the tape of dual numbers alone.
template <class T>
struct operands {
    const T& a;
    const T& b;
    const T& c;
    const T& d;
    double k;
    int* branch_taken;
};

template <class T>
[[gnu::noinline]] T square_plus(const operands<T>& o) {
    auto e = o.a - o.b;
    return e * e + o.c;
}
template <class T>
[[gnu::noinline]] T two_named(const operands<T>& o) {
    auto e = o.a * o.b;
    auto f = o.a * o.c;
    return e * f - e;
}
template <class T>
[[gnu::noinline]] T twin_named(const operands<T>& o) {
    auto e = o.a - o.b;
    auto f = o.a - o.b;
    return e * f + e;
}
template <class T>
[[gnu::noinline]] T pair_energy(const operands<T>& o) {
    auto dx = o.a - o.b;
    auto dy = o.b - o.c;
    auto dz = o.c - o.a;
    auto r2 = dx * dx + dy * dy + dz * dz + o.k;
    auto s6 = 1.0 / (r2 * r2 * r2);
    return 4.0 * (s6 * s6 - s6);
}
template <class T>
[[gnu::noinline]] T accumulated_energies(const operands<T>& o) {
    const T* const operand[4] = {&o.a, &o.b, &o.c, &o.d};
    T sum = 0.0;
    for (int j = 0; j < 4; ++j) {
        const T& u = *operand[j];
        const T& w = *operand[(j + 1) % 4];
        auto dx = u - w;
        auto dy = u + 0.5 * w;
        auto r2 = dx * dx + dy * dy + o.k;
        auto s6 = 1.0 / (r2 * r2 * r2);
        sum += s6 * s6 - s6;
    }
    return sum;
}
template <class T>
[[gnu::noinline]] T collapsed_and_leaves(const operands<T>& o) {
    using std::sqrt;
    auto dx = o.a - o.b;
    auto dy = o.c - o.d;
    auto r2 = dx * dx + dy * dy + o.k;
    return r2 * o.a + sqrt(r2) - o.c;
}
template <class T>
[[gnu::noinline]] T two_collapsed(const operands<T>& o) {
    auto u = o.a * o.b;
    auto w = o.c * o.d;
    auto p = u * u + w + 2.0 * o.k;
    auto q = w * w + u + 2.0 * o.k;
    return p / q + p;
}
template <class T>
[[gnu::noinline]] T rosenbrock_term(const operands<T>& o) {
    T sum = o.c;
    auto t1 = o.b - o.a * o.a;
    auto t2 = 1.0 - o.a;
    sum += 100.0 * t1 * t1 + t2 * t2;
    return sum;
}
template <class T>
[[gnu::noinline]] T helper_locals(const operands<T>& o) {
    return helper(o.a, o.b) + helper(o.c, o.a);
}
template <class T>
[[gnu::noinline]] T many_leaves(const operands<T>& o) {
    const T &a = o.a, &b = o.b, &c = o.c, &d = o.d;
    return a * b * c * d * a * b * c * d * a + b;
}
// Statements longer than a node holds (reverse/detail/record.hpp, within_room): recorded in
// pieces, the first term of each sum after the first piece being the piece before.
template <class T>
[[gnu::noinline]] T long_sum(const operands<T>& o) {
    using std::sin;
    const T &a = o.a, &b = o.b, &c = o.c, &d = o.d;
    const double k = o.k;
    auto u = a - b;
    // (Of degree two at most and scaled to the size of the other shapes' values: composed over
    // ten steps, larger ones made programs too stiff for the finite differences' estimate.)
    return 0.0625 * (a * b + c * d - a * c + u * u + b * d - c + d * a + u * c - k * b +
                     sin(a) * d + a * a - u * d + c * c + b + k - d * b * k + u * c + sin(c) -
                     a * d * k + b * b + c * u - d + a * b * k + u);
}
template <class T>
[[gnu::noinline]] T long_product(const operands<T>& o) {
    using std::cos, std::sin;
    const T &a = o.a, &b = o.b, &c = o.c, &d = o.d;
    // (Factors near 1: a product of twelve sines and cosines of large arguments was too stiff
    // for the finite differences' estimate.)
    const double e = 0.125;
    return (1.0 + e * sin(a)) * (1.0 + e * cos(b)) * (1.0 - e * sin(c)) * (1.0 + e * cos(d)) *
           (1.0 + e * sin(b)) * (1.0 - e * cos(a)) * (1.0 + e * sin(d)) * (1.0 + e * cos(c)) *
           (1.0 - e * sin(a + b)) * (1.0 + e * cos(c - d)) * (1.0 + e * sin(a * o.k)) *
           (1.0 - e * cos(b * d));
}
template <class T>
[[gnu::noinline]] T right_nested(const operands<T>& o) {
    const T &a = o.a, &b = o.b, &c = o.c, &d = o.d;
    auto u = c + d;
    return 0.125 *
           (a +
            (b -
             (c +
              (d * u +
               (a - (b * c +
                     (u - (d + (a * a -
                                (b + (c * a +
                                      (d - (u * a +
                                            (b * d -
                                             (c + (a * b + (d * c - (u + a * d))))))))))))))))));
}

// A sum that continues a collapsed intermediate (its partials extend the intermediate's in
// place), used next to that intermediate, in a short statement and in a long one.
template <class T>
[[gnu::noinline]] T continued_named(const operands<T>& o) {
    const T &a = o.a, &b = o.b, &c = o.c, &d = o.d;
    auto big = a * b + c * d + a * c + b * d + a;
    auto s = big + c;
    auto both = s * o.k - big;
    return 0.125 * (both + big + a * b + c * d + b * c * o.k + d * d + a * c + b + big * o.k + s -
                    d * a + c + big * o.k);
}

template <class T>
[[gnu::noinline]] T large_named(const operands<T>& o) {
    const T &a = o.a, &b = o.b, &c = o.c, &d = o.d;
    auto big = a * b + c * d + a * c + b * d + a + b * c * d;
    return big * big + a;
}
template <class T>
[[gnu::noinline]] T shared_twice(const operands<T>& o) {
    using std::sqrt;
    auto dx = o.a - o.b;
    auto dy = o.c + o.d;
    auto r2 = dx * dx + dy * dy + o.k;
    auto inverse = 1.0 / r2;
    auto root = sqrt(r2);
    return inverse * root + inverse;
}
template <class T>
[[gnu::noinline]] T accumulate_elsewhere(const operands<T>& o) {
    T sum = o.a * o.b;
    T other = o.c * o.d;
    sum += other * o.a;
    sum -= o.k * o.c;
    return sum;
}
template <class T>
[[gnu::noinline]] T passive_constant(const operands<T>& o) {
    const T kk = o.k;
    auto e = o.a * kk;
    return e * e + kk * o.b;
}
template <class T>
[[gnu::noinline]] T copy_of_variable(const operands<T>& o) {
    const T copy = o.a;
    return copy * o.a + o.a;
}
template <class T>
[[gnu::noinline]] T compound(const operands<T>& o) {
    T v = o.a;
    v *= o.b;
    v /= o.c * o.c + o.k;
    v -= o.a;
    return v;
}
template <class T>
[[gnu::noinline]] T collapsed_and_named(const operands<T>& o) {
    auto dx = o.a - o.b;
    auto r2 = dx * dx + o.k;
    return r2 * r2 * r2 + dx;
}
template <class T>
[[gnu::noinline]] T branch(const operands<T>& o) {
    const bool taken = o.a > o.b;
    if (o.branch_taken)
        *o.branch_taken = taken;
    if (taken)
        return o.a * o.b;
    return o.b - o.c;
}
template <class T>
[[gnu::noinline]] T chain_of_shares(const operands<T>& o) {
    auto dx = o.a - o.b;
    auto dy = o.c - o.d;
    auto r2 = dx * dx + dy * dy + o.k;
    auto s2 = 1.0 / (r2 * r2);
    auto s4 = s2 * s2;
    return s4 - s2;
}
template <class T>
[[gnu::noinline]] T returned_expression(const operands<T>& o) {
    const T r = returned(o.a, o.b, o.k);
    return r + o.c;
}

// (Intermediates that hold a constant are compared by their contents alone, constants
// included: with a = b and k != 1, t and u read one variable and must not be merged.)
template <class T>
[[gnu::noinline]] T constant_named(const operands<T>& o) {
    auto t = 1.0 - o.a;
    auto u = o.k - o.b;
    return t * u + t * t;
}

// On the tape, a custom operation with two outputs and its own pullback, and an accumulation onto
// its last output that reads the other (the sweep stops at the custom outputs, runs the
// pullback, and goes on below); elsewhere the same function, written out.
template <class T>
[[gnu::noinline]] T custom_rule(const operands<T>& o) {
    using std::cos, std::sin;
    if constexpr (nabla::detail::is_active_v<T>) {
        using V = typename T::value_type;
        const std::array<T, 2> in{o.a, o.b};
        const std::vector<T> out = nabla::custom_vjp(in, [](const std::vector<V>& v) {
            const V u = v[0] - v[1];
            const V slope = u * cos(u) + sin(u);
            const auto pullback = [slope, u](const std::vector<V>& w) {
                const V g = w[0] * slope + w[1] * 2.0 * u;
                return std::vector<V>{g, -g};
            };
            return std::pair{std::vector<V>{u * sin(u), u * u}, pullback};
        });
        T sum = out[1];  // the statement just recorded: the accumulation below is onto it
        sum += out[0] * o.c;
        return sum;
    } else {
        const T u = o.a - o.b;
        return T(u * sin(u) * o.c + u * u);
    }
}

template <class T>
T run_step(const step& s, const T& a, const T& b, const T& c, const T& d, int* branch_taken) {
    const operands<T> o{a, b, c, d, s.k, branch_taken};
    switch (s.s) {
    case shape::square_plus:
        return square_plus(o);
    case shape::two_named:
        return two_named(o);
    case shape::twin_named:
        return twin_named(o);
    case shape::pair_energy:
        return pair_energy(o);
    case shape::accumulated_energies:
        return accumulated_energies(o);
    case shape::collapsed_and_leaves:
        return collapsed_and_leaves(o);
    case shape::two_collapsed:
        return two_collapsed(o);
    case shape::rosenbrock_term:
        return rosenbrock_term(o);
    case shape::helper_locals:
        return helper_locals(o);
    case shape::many_leaves:
        return many_leaves(o);
    case shape::large_named:
        return large_named(o);
    case shape::long_sum:
        return long_sum(o);
    case shape::long_product:
        return long_product(o);
    case shape::right_nested:
        return right_nested(o);
    case shape::continued_named:
        return continued_named(o);
    case shape::shared_twice:
        return shared_twice(o);
    case shape::accumulate_elsewhere:
        return accumulate_elsewhere(o);
    case shape::passive_constant:
        return passive_constant(o);
    case shape::copy_of_variable:
        return copy_of_variable(o);
    case shape::compound:
        return compound(o);
    case shape::collapsed_and_named:
        return collapsed_and_named(o);
    case shape::branch:
        return branch(o);
    case shape::chain_of_shares:
        return chain_of_shares(o);
    case shape::returned_expression:
        return returned_expression(o);
    case shape::constant_named:
        return constant_named(o);
    case shape::custom_rule:
        return custom_rule(o);
    }
    return a;
}

// Runs the program on inputs x (a container of any number type); the output mixes every value, so
// each takes part. `branches`, when given, records which way each branch went.
template <class X>
auto run(const program& p, const X& x, std::vector<int>* branches = nullptr) {
    using T = std::decay_t<decltype(x[0])>;
    std::vector<T> v;
    v.reserve(static_cast<std::size_t>(p.inputs) + p.steps.size());
    for (int i = 0; i < p.inputs; ++i)
        v.push_back(x[static_cast<std::size_t>(i)]);
    for (const step& s : p.steps) {
        int taken = -1;
        const auto at = [&v](int i) -> const T& { return v[static_cast<std::size_t>(i)]; };
        T r = run_step(s, at(s.a), at(s.b), at(s.c), at(s.d), &taken);
        if (branches && taken >= 0)
            branches->push_back(taken);
        v.push_back(r);
    }
    T out = v.back();
    for (std::size_t k = static_cast<std::size_t>(p.inputs); k + 1 < v.size(); ++k)
        out += 0.25 * v[k];
    return out;
}

// The generator: each step is drawn and run in double at the point, and kept only when its value
// is bounded (and, for a branch, its operands are apart).
class generator {
public:
    explicit generator(std::uint64_t seed) : seed_(seed), random_(seed) {}

    program make(int inputs, int length) {
        program p;
        p.seed = seed_;
        p.inputs = inputs;
        std::uniform_real_distribution<double> coordinate(-1.2, 1.2);
        for (int i = 0; i < inputs; ++i) {
            p.point.push_back(coordinate(random_));
            values_.push_back(p.point.back());
        }
        for (int n = 0; n < length; ++n)
            for (int attempt = 0; attempt < 100; ++attempt) {
                const step s = draw(n < inputs ? n : -1);
                int taken = -1;
                const double value = run_step(s, at(s.a), at(s.b), at(s.c), at(s.d), &taken);
                const bool apart = s.s != shape::branch || std::abs(at(s.a) - at(s.b)) > 0.1;
                if (std::isfinite(value) && std::abs(value) < 50.0 && apart) {
                    p.steps.push_back(s);
                    values_.push_back(value);
                    break;
                }
            }
        return p;
    }

private:
    std::uint64_t seed_;
    std::mt19937_64 random_;
    std::vector<double> values_;

    double at(int i) const { return values_[static_cast<std::size_t>(i)]; }

    // An operand: often one already chosen for this step (one variable in several places),
    // otherwise a recent value more often than an old one.
    int operand(int forced, const std::vector<int>& chosen) {
        if (forced >= 0)
            return forced;
        if (!chosen.empty() && random_() % 3 == 0)
            return chosen[random_() % chosen.size()];
        const int n = static_cast<int>(values_.size());
        std::geometric_distribution<int> back(0.4);
        const int k = n - 1 - back(random_);
        return k < 0 ? static_cast<int>(random_() % static_cast<std::uint64_t>(n)) : k;
    }

    step draw(int forced) {
        step s;
        s.s = static_cast<shape>(random_() % shape_count);
        std::vector<int> chosen;
        s.a = operand(forced, chosen);
        chosen.push_back(s.a);
        s.b = operand(-1, chosen);
        chosen.push_back(s.b);
        s.c = operand(-1, chosen);
        chosen.push_back(s.c);
        s.d = operand(-1, chosen);
        std::uniform_real_distribution<double> k(0.5, 2.0);
        s.k = k(random_);
        return s;
    }
};

using nabla_fuzz::environment;
using nabla_fuzz::estimate;
using nabla_fuzz::near;

struct tally {
    std::size_t programs = 0, finite_difference_checks = 0;
    std::vector<std::size_t> per_shape = std::vector<std::size_t>(shape_count, 0);
};

void check_program(const program& p, tally& counts) {
    INFO("program: " << p.to_string());
    ++counts.programs;
    for (const step& s : p.steps)
        ++counts.per_shape[static_cast<std::size_t>(s.s)];
    const auto f = [&p](const auto& x) { return run(p, x); };
    const std::vector<double>& x = p.point;
    const std::size_t n = x.size();

    const double value = f(x);
    const std::vector<double> forward = nabla::grad(nabla::mode::forward, f, x);
    const auto [reverse_value, reverse] = nabla::value_and_grad(nabla::mode::reverse, f, x);
    CHECK(near(reverse_value, value, 1e-14));
    for (std::size_t i = 0; i < n; ++i) {
        INFO("d/dx" << i << ": forward " << forward[i] << ", reverse " << reverse[i]);
        CHECK(near(forward[i], reverse[i], 1e-11));
    }

    // One recording of (f, x0 f), two sweeps: the pullback along (w0, w1), then along (1, 0).
    const auto two = [&p](const auto& y) {
        using T = std::decay_t<decltype(y[0])>;
        const T fy = run(p, y);
        return std::vector<T>{fy, T(fy * y[0])};
    };
    const auto [outputs, pullback] = nabla::vjp(two, x);
    REQUIRE(outputs.size() == 2);
    CHECK(near(outputs[0], value, 1e-14));
    const std::vector<double> w{0.75, -1.25};
    const std::vector<double> row = pullback(w);
    for (std::size_t i = 0; i < n; ++i) {
        const double expected =
            w[0] * forward[i] + w[1] * (x[0] * forward[i] + (i == 0 ? value : 0.0));
        INFO("(w^T J)" << i << ": pullback " << row[i] << ", from the gradient " << expected);
        CHECK(near(row[i], expected, 1e-11));
    }
    const std::vector<double> first_row = pullback(std::vector<double>{1.0, 0.0});
    for (std::size_t i = 0; i < n; ++i) {
        INFO("(e0^T J)" << i << ": pullback " << first_row[i] << ", gradient " << forward[i]);
        CHECK(near(first_row[i], forward[i], 1e-11));
    }

    // Second derivatives: forward over reverse (the statement builder on dual numbers) against
    // forward over forward.
    const auto hessian = nabla::hessian(nabla::mode::forward, f, x);
    std::vector<double> v(n);
    for (std::size_t i = 0; i < n; ++i)
        v[i] = 0.5 - 0.375 * double(i) + 0.125 * double(p.seed % 5);
    const std::vector<double> hv = nabla::hvp(f, x, v);
    for (std::size_t i = 0; i < n; ++i) {
        // (Relative to the sum of the terms' magnitudes: with entries of 1e9 that cancel to 6e3,
        // the two modes' rounding differs by 1e-10 of the result.)
        double expected = 0.0, magnitude = 1.0;
        for (std::size_t j = 0; j < n; ++j) {
            expected += hessian(i, j) * v[j];
            magnitude += std::abs(hessian(i, j) * v[j]);
        }
        INFO("(H v)" << i << ": hvp " << hv[i] << ", forward over forward " << expected);
        CHECK(std::abs(hv[i] - expected) <= 1e-10 * magnitude);
    }

    // Against central differences, where the program is smooth near the point and its
    // gradient moderate (with entries in the thousands, the extrapolation's error estimate no
    // longer holds).
    double largest = 0.0;
    for (double g : forward)
        largest = std::max(largest, std::abs(g));
    // (Four times the random programs' estimate: these are stiffer, a pair energy near its core,
    // and the difference of the two step sizes is an estimate, not a bound.)
    const estimate fd = largest <= 100.0
                            ? nabla_fuzz::finite_differences(
                                  [&p](const std::vector<double>& y, std::vector<int>* branches) {
                                      return run(p, y, branches);
                                  },
                                  p.point, {.widen = 4.0, .floor = 1e-6, .disagreement = 1e-3})
                            : estimate{};
    if (!fd.gradient.empty()) {
        ++counts.finite_difference_checks;
        nabla_fuzz::check_within(fd, reverse);
    }
}

}  // namespace

TEST_CASE("statement shapes: the tape agrees with forward mode and finite differences",
          "[fuzz][reverse]") {
    const std::uint64_t first = environment("NABLA_SHAPES_SEED", 1);
    const std::uint64_t count = environment("NABLA_SHAPES_ITERATIONS", 300);
    tally counts;
    for (std::uint64_t seed = first; seed < first + count; ++seed) {
        generator g(seed);
        const int inputs = 1 + static_cast<int>(seed % 5);
        const int length = 2 + static_cast<int>((seed / 5) % 9);
        check_program(g.make(inputs, length), counts);
    }
    std::size_t unused = 0;
    for (int s = 0; s < shape_count; ++s)
        if (counts.per_shape[static_cast<std::size_t>(s)] == 0) {
            ++unused;
            UNSCOPED_INFO("never generated: " << name(static_cast<shape>(s)));
        }
    if (count >= 300)
        CHECK(unused == 0);
    CHECK(counts.finite_difference_checks * 2 >= counts.programs);
    WARN(counts.programs << " programs, " << counts.finite_difference_checks
                         << " checked by finite differences");
}
