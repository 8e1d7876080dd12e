// nabla::d: exact simplification, symmetry of mixed partials, agreement with the reverse sweep.

#include <nabla/nabla.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <random>
#include <type_traits>

namespace {

const auto [x, y, z] = nabla::variables<3>();

template <class A, class B>
constexpr bool same = std::is_same_v<std::remove_cvref_t<A>, std::remove_cvref_t<B>>;

// Lennard-Jones-like: nodes with one user (pushed through by the reverse sweep) next to nodes
// with several users.
auto pair_energy() {
    const auto r2 = x * x + y * y + z * z;
    const auto s6 = nabla::literal<1>{} / (r2 * r2 * r2);
    return 4.0 * (s6 * s6 - s6) + sin(sin(sin(r2 * x)));
}

// A few expressions mixing every kind of node, with their points of definition.
auto expressions() {
    return std::make_tuple(
        pair_energy(), exp(sin(cos(x * y) + z) * x) / (x * x + y * y + z * z) - x * y * (x * y + z),
        log(x) + x * y - sin(y), exp(sin(x) * y) / (1.0 + x * x) + sqrt(x * y + 2.0) * z,
        pow(x, y) * atan2(y, z) - hypot(x, z) / cosh(y),
        tgamma(x) * erf(y) + lgamma(z) * tanh(x * y * z),
        pow(x, 3) * cbrt(y) + expm1(x / z) - log1p(y * y) * asinh(z),
        fma(x, y, z) * atan(x - z) + min(x, y) * max(y, z) - abs(x - y));
}

}  // namespace

TEST_CASE("d folds structural zeros and ones into the type", "[core][d]") {
    STATIC_REQUIRE(same<decltype(nabla::d(x * y, x)), decltype(y)>);
    STATIC_REQUIRE(same<decltype(nabla::d(3 * x, y)), nabla::literal<0>>);
    STATIC_REQUIRE(same<decltype(nabla::d(x, x)), nabla::literal<1>>);
    STATIC_REQUIRE(same<decltype(nabla::d(x * x, x)), decltype(x + x)>);
    STATIC_REQUIRE(same<decltype(nabla::d(exp(x), x)), decltype(exp(x))>);
    STATIC_REQUIRE(same<decltype(nabla::d(x - y, y)), nabla::literal<-1>>);
    STATIC_REQUIRE(same<decltype(nabla::d(-x, x, x)), nabla::literal<0>>);
    STATIC_REQUIRE(same<decltype(nabla::d(pow(x, nabla::literal<3>{}), x)),
                        decltype(nabla::literal<3>{} * pow(x, nabla::literal<2>{}))>);
    CHECK(nabla::to_string(nabla::d(pow(x, nabla::literal<3>{}), x, x, x)) == "6");
    CHECK(nabla::to_string(nabla::d(sin(x), x, x)) == "-sin(x0)");
    CHECK(nabla::to_string(nabla::d(log(x), x)) == "1/x0");
}

// Runs check(f, a, b, c) for every expression f at ten random points in [0.6, 1.8]^3.
template <class Check>
void at_random_points(unsigned seed, Check check) {
    std::mt19937 random(seed);
    std::uniform_real_distribution<double> coordinate(0.6, 1.8);
    std::apply(
        [&](const auto&... f) {
            const auto each = [&](const auto& e) {
                for (int trial = 0; trial < 10; ++trial) {
                    const double a = coordinate(random), b = coordinate(random),
                                 c = coordinate(random);
                    INFO("f = " << nabla::to_string(e) << " at " << a << ", " << b << ", " << c);
                    check(e, a, b, c);
                }
            };
            (each(f), ...);
        },
        expressions());
}

TEST_CASE("mixed partials agree in either order", "[core][d][property]") {
    at_random_points(20261129, [](const auto& e, double a, double b, double c) {
        const auto tolerance = Approx::custom().epsilon(1e-12).margin(1e-13);
        CHECK(nabla::d(e, x, y)(a, b, c) == tolerance(nabla::d(e, y, x)(a, b, c)));
        CHECK(nabla::d(e, x, z)(a, b, c) == tolerance(nabla::d(e, z, x)(a, b, c)));
        CHECK(nabla::d(e, y, z)(a, b, c) == tolerance(nabla::d(e, z, y)(a, b, c)));
        CHECK(nabla::d(e, x, y, z)(a, b, c) == tolerance(nabla::d(e, z, y, x)(a, b, c)));
    });
}

TEST_CASE("value_and_grad equals the derivatives d(f, xi) evaluated", "[core][d][property]") {
    at_random_points(7, [](const auto& e, double a, double b, double c) {
        const auto tolerance = Approx::custom().epsilon(1e-13).margin(1e-14);
        const auto result = nabla::value_and_grad(e, a, b, c);
        CHECK(result.value == e(a, b, c));
        CHECK(result.gradient[0] == tolerance(nabla::d(e, x)(a, b, c)));
        CHECK(result.gradient[1] == tolerance(nabla::d(e, y)(a, b, c)));
        CHECK(result.gradient[2] == tolerance(nabla::d(e, z)(a, b, c)));
    });
}

TEST_CASE("derivatives of a polynomial are exact at every order", "[core][d]") {
    const auto p = 3.0 * pow(x, 4) - 2.0 * x * x * y + y * y * y;
    CHECK(nabla::d(p, x, x, x, x)(0.7, 1.3) == 72.0);
    CHECK(nabla::d(p, x, x, y)(0.7, 1.3) == -4.0);
    CHECK(nabla::d(p, y, y, y)(0.7, 1.3) == 6.0);
    CHECK(nabla::d(p, x, x, x, x, x)(0.7, 1.3) == 0.0);
}
