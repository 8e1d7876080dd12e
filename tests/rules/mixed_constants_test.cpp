// Every function of several operands takes plain numbers beside nabla's numbers in every
// position and every mode: static graphs, dual numbers, Taylor numbers, the tape, the Taylor
// integrator's series tape, and second order by nested dual numbers and forward over reverse.
// For each choice of operands held constant (a compile-time mask), the derivative along the
// direction that moves the other operands together, and the second derivative along it, equal
// those of the function with every operand a number (a dual of one direction per operand, and
// the forward-over-forward Hessian).

#include <nabla/nabla.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <string>
#include <tuple>
#include <utility>

namespace {

// The operand i: moving with the direction (x + t) where the mask has bit i, else the constant x.
template <std::size_t Mask, std::size_t I, class V>
auto operand(const V& moving, double constant) {
    if constexpr ((Mask >> I) & 1U)
        return moving;
    else
        return constant;
}

template <std::size_t N, class F>
struct reference {
    double value;
    std::array<double, N> gradient;
    std::array<std::array<double, N>, N> hessian;
};

template <std::size_t N, class F>
reference<N, F> all_numbers(const F& f, const std::array<double, N>& x) {
    reference<N, F> r{};
    using D = nabla::dual<double, N>;
    const auto seeded = [&]<std::size_t... I>(std::index_sequence<I...>) {
        const auto unit = [](std::size_t i) {
            typename D::tangent_type t{};
            t[i] = 1.0;
            return t;
        };
        return f(D(x[I], unit(I))...);
    }
    (std::make_index_sequence<N>{});
    r.value = seeded.value;
    for (std::size_t i = 0; i < N; ++i)
        r.gradient[i] = seeded.tangent[i];
    const auto h = [&]<std::size_t... I>(std::index_sequence<I...>) {
        return nabla::hessian(f, x[I]...);
    }
    (std::make_index_sequence<N>{});
    for (std::size_t i = 0; i < N; ++i)
        for (std::size_t j = 0; j < N; ++j)
            r.hessian[i][j] = h(i, j);
    return r;
}

bool same(double a, double b) {
    return a == b || std::abs(a - b) <= 1e-13 * std::max(std::abs(a), std::abs(b));
}

// One mask: every mode against the reference.
template <std::size_t Mask, std::size_t N, class F>
void check_mask(const std::string& name,
                const F& f,
                const std::array<double, N>& x,
                const reference<N, F>& r) {
    double slope = 0.0, curvature = 0.0;
    for (std::size_t i = 0; i < N; ++i) {
        if (!((Mask >> i) & 1U))
            continue;
        slope += r.gradient[i];
        for (std::size_t j = 0; j < N; ++j)
            if ((Mask >> j) & 1U)
                curvature += r.hessian[i][j];
    }
    INFO(name << " with operands " << Mask << " (bits) varying: slope " << slope << ", curvature "
              << curvature);
    const auto apply = [&](const auto& moving_of) {
        return [&]<std::size_t... I>(std::index_sequence<I...>) {
            return f(operand<Mask, I>(moving_of(I), x[I])...);
        }
        (std::make_index_sequence<N>{});
    };

    // Static graphs: one placeholder for each moving operand, the derivative summed over them.
    {
        const auto p = nabla::variables<N>();
        const auto e = [&]<std::size_t... I>(std::index_sequence<I...>) {
            return f(operand<Mask, I>(std::get<I>(p), x[I])...);
        }
        (std::make_index_sequence<N>{});
        const auto at = [&](const auto& g) {
            return [&]<std::size_t... I>(std::index_sequence<I...>) {
                return static_cast<double>(g(x[I]...));
            }
            (std::make_index_sequence<N>{});
        };
        CHECK(same(at(e), r.value));
        double s = 0.0;
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            ((s += ((Mask >> I) & 1U) ? at(nabla::d(e, std::get<I>(p))) : 0.0), ...);
        }
        (std::make_index_sequence<N>{});
        CHECK(same(s, slope));
    }
    // Dual numbers, one direction.
    {
        using D = nabla::dual<double, 1>;
        const auto y = apply([&](std::size_t i) { return D(x[i], {1.0}); });
        CHECK(same(y.value, r.value));
        CHECK(same(y.tangent[0], slope));
    }
    // Nested dual numbers: the second derivative along the direction.
    {
        using D1 = nabla::dual<double, 1>;
        using D2 = nabla::dual<D1, 1>;
        const auto y = apply([&](std::size_t i) { return D2(D1(x[i], {1.0}), {D1(1.0)}); });
        CHECK(same(y.tangent[0].tangent[0], curvature));
    }
    // Taylor numbers of order 2.
    {
        const auto y = apply([&](std::size_t i) {
            nabla::taylor<double, 2> s(x[i]);
            s.c[1] = 1.0;
            return s;
        });
        CHECK(same(y.c[0], r.value));
        CHECK(same(y.c[1], slope));
        CHECK(same(2.0 * y.c[2], curvature));
    }
    // The tape.
    {
        nabla::tape<> tape;
        auto recording = tape.record();
        std::array<nabla::var, N> inputs;
        for (std::size_t i = 0; i < N; ++i)
            inputs[i] = tape.input(x[i]);
        const nabla::var y = apply([&](std::size_t i) { return inputs[i]; });
        tape.gradient(y);
        double s = 0.0;
        for (std::size_t i = 0; i < N; ++i)
            if ((Mask >> i) & 1U)
                s += tape.adjoint(inputs[i]);
        CHECK(same(y.value, r.value));
        CHECK(same(s, slope));
    }
    // Forward over reverse: a tape of dual numbers.
    {
        const auto g = [&](const auto& v) {
            return [&]<std::size_t... I>(std::index_sequence<I...>) {
                return f(operand<Mask, I>(v[I], x[I])...);
            }
            (std::make_index_sequence<N>{});
        };
        const auto h = nabla::hessian(nabla::mode::reverse, g, x);
        double c = 0.0;
        for (std::size_t i = 0; i < N; ++i)
            for (std::size_t j = 0; j < N; ++j)
                if (((Mask >> i) & 1U) && ((Mask >> j) & 1U))
                    c += h(i, j);
        CHECK(same(c, curvature));
    }
    // The Taylor integrator's series tape: the operands x + t, coefficients 1 and 2.
    {
        nabla::series_tape<double> tape(2);
        tape.read_at(2);
        const auto t = tape.time(0.0);
        const auto y = apply([&](std::size_t i) { return x[i] + t; });
        const auto node = tape.node_of(nabla::series_variable<double>(y));
        tape.replay(1);
        tape.replay(2);
        CHECK(same(tape.row(node)[0], r.value));
        CHECK(same(tape.row(node)[1], slope));
        CHECK(same(2.0 * tape.row(node)[2], curvature));
    }
}

template <std::size_t N, class F>
void check_matrix(const std::string& name, const F& f, const std::array<double, N>& x) {
    const auto r = all_numbers<N>(f, x);
    [&]<std::size_t... Mask>(std::index_sequence<Mask...>) {
        // Every mask but the one with no operand moving.
        (check_mask<Mask + 1>(name, f, x, r), ...);
    }
    (std::make_index_sequence<(std::size_t(1) << N) - 1>{});
}

}  // namespace

TEST_CASE("functions of two operands take constants in either position in every mode",
          "[rules][mixed]") {
#define NABLA_MIXED_BINARY(function, rule)                                                         \
    check_matrix<2>(                                                                               \
        #function, [](const auto& a, const auto& b) { return function(a, b); },                    \
        std::string(#function) == "fmod" ? std::array{2.3, 0.7} : std::array{0.3, 0.7});
    NABLA_BINARY_FUNCTIONS(NABLA_MIXED_BINARY)
#undef NABLA_MIXED_BINARY
    check_matrix<2>(
        "pow", [](const auto& a, const auto& b) { return pow(a, b); }, std::array{0.3, 0.7});
    check_matrix<2>(
        "+", [](const auto& a, const auto& b) { return a + b; }, std::array{0.3, 0.7});
    check_matrix<2>(
        "-", [](const auto& a, const auto& b) { return a - b; }, std::array{0.3, 0.7});
    check_matrix<2>(
        "*", [](const auto& a, const auto& b) { return a * b; }, std::array{0.3, 0.7});
    check_matrix<2>(
        "/", [](const auto& a, const auto& b) { return a / b; }, std::array{0.3, 0.7});
}

TEST_CASE("functions of three operands take constants in every position in every mode",
          "[rules][mixed]") {
    check_matrix<3>(
        "fma", [](const auto& a, const auto& b, const auto& c) { return fma(a, b, c); },
        std::array{0.3, 0.7, 0.5});
    check_matrix<3>(
        "hypot", [](const auto& a, const auto& b, const auto& c) { return hypot(a, b, c); },
        std::array{0.3, 0.7, 0.5});
    check_matrix<3>(
        "ellint_3",
        [](const auto& k, const auto& nu, const auto& phi) { return ellint_3(k, nu, phi); },
        std::array{0.3, 0.7, 0.5});
    // hypot of three with two constants beside a number, as a user writes it.
    const auto h = [](auto a) { return hypot(a, 2.0, 2.0); };
    CHECK(nabla::grad(h, 1.0)[0] == Approx(1.0 / 3.0).epsilon(1e-15));
    CHECK(nabla::derivatives<2>(h, 1.0)[2] == Approx(8.0 / 27.0).epsilon(1e-15));
}
