#pragma once
// The elliptic integrals: complete K(k) and E(k), incomplete F(k, phi) and E(k, phi), and of the
// third kind Pi(nu, k) and Pi(nu, k, phi), with the standard library's names and argument order
// (modulus k, characteristic nu, amplitude phi).
//
// Values from Carlson's symmetric integrals R_F, R_D and R_J (the complete K and E from
// libstdc++). Every derivative, of every order, comes from the same algorithms run on truncated
// Taylor series (partial_of.hpp): the closed forms of DLMF 19.4 divide by k, by 1 - k^2 and by
// k^2 - nu, and cancel near those points (a relative error of about 1e-16 / k^2 near k = 0, and
// a NaN at it for second derivatives), where the series are regular. The derivatives at a point
// are the series' coefficients there; a Hessian's mixed partials are one rule. Edge conventions
// are in docs/conventions.md.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numbers>
#include <optional>
#include <type_traits>

#include "partial_of.hpp"
#include "rule.hpp"
#include "series_number.hpp"

namespace nabla::rules {

namespace detail {

// Whether the duplication has converged. For a plain number, the relative differences within the
// tolerance, where the expansion's error (the differences to the sixth power) is below the last
// place. For a series, every coefficient within 1/64 of it (three more steps): a derivative of
// that error is 6 d^5 d' rather than d^6, and the tolerance of the value would leave 1e-12 in a
// first derivative. Past 60 steps the constant terms alone decide, for series whose higher
// coefficients are very large (the modulus near 1), which every step still divides by 4.
template <class T, class... N>
bool duplication_converged(T tolerance, int step, const N&... differences) {
    if constexpr ((std::is_arithmetic_v<N> && ...))
        return !(std::max({std::abs(differences)...}) > tolerance);
    else if (step >= 60)
        return !(std::max({std::abs(plain(differences))...}) > tolerance / T(64));
    else
        return !(std::max({T(magnitude(differences))...}) > tolerance / T(64));
}

// Carlson's symmetric integrals R_F(x, y, z) and R_D(x, y, z) by the duplication theorem: each
// step maps (x, y, z) to ((x + l) / 4, ...) with l = sqrt(xy) + sqrt(xz) + sqrt(yz), until the
// three are within 0.0025 (R_F) or 0.0015 (R_D) of their mean, then the fifth-order expansion
// about the mean (B. C. Carlson, Numerical Algorithms 10, 1995), good to a few units in the last
// place. A known square root of x (x = cos^2 phi) may be given for the first step: the series of
// sqrt(c^2) would divide by c, which vanishes at phi = pi/2.
template <class N>
N carlson_rf(N x, N y, N z, const N* root_of_x = nullptr) {
    using std::sqrt;
    using T = plain_t<N>;
    for (int step = 0; step < 200; ++step) {
        const N mean = (x + y + z) / T(3);
        const N dx = T(1) - x / mean, dy = T(1) - y / mean, dz = T(1) - z / mean;
        if (duplication_converged(T(0.0025), step, dx, dy, dz)) {
            const N e2 = dx * dy - dz * dz, e3 = dx * dy * dz;
            return (T(1) + e2 * (e2 / T(24) - T(0.1) - T(3) * e3 / T(44)) + e3 / T(14)) /
                   sqrt(mean);
        }
        const N sx = step == 0 && root_of_x != nullptr ? *root_of_x : sqrt(x);
        const N sy = sqrt(y), sz = sqrt(z);
        const N l = sx * (sy + sz) + sy * sz;
        x = (x + l) / T(4);
        y = (y + l) / T(4);
        z = (z + l) / T(4);
    }
    return N(std::numeric_limits<T>::quiet_NaN());
}
template <class N>
N carlson_rd(N x, N y, N z, const N* root_of_x = nullptr) {
    using std::sqrt;
    using T = plain_t<N>;
    N sum = T(0);
    T scale = T(1);
    for (int step = 0; step < 200; ++step) {
        const N mean = (x + y + T(3) * z) / T(5);
        const N dx = T(1) - x / mean, dy = T(1) - y / mean, dz = T(1) - z / mean;
        if (duplication_converged(T(0.0015), step, dx, dy, dz)) {
            const N ea = dx * dy, eb = dz * dz, ec = ea - eb, ed = ea - T(6) * eb;
            const N ee = ed + ec + ec;
            const N series = T(1) +
                             ed * (-T(3) / T(14) + T(9) / T(88) * ed - T(9) / T(52) * dz * ee) +
                             dz * (ee / T(6) + dz * (-T(9) / T(22) * ec + dz * T(3) / T(26) * ea));
            return T(3) * sum + scale * series / (mean * sqrt(mean));
        }
        const N sx = step == 0 && root_of_x != nullptr ? *root_of_x : sqrt(x);
        const N sy = sqrt(y), sz = sqrt(z);
        const N l = sx * (sy + sz) + sy * sz;
        sum = sum + scale / (sz * (z + l));
        scale /= T(4);
        x = (x + l) / T(4);
        y = (y + l) / T(4);
        z = (z + l) / T(4);
    }
    return N(std::numeric_limits<T>::quiet_NaN());
}

// Carlson's R_J(x, y, z, p) for p > 0 by the duplication theorem (p, the fourth, moves with the
// other three), each step adding 4^-m R_C(alpha, beta) with R_C(a, b) = R_F(a, b, b), which has
// no cancellation where a and b are close; then the fifth-order expansion about the mean
// (Carlson 1995, as R_D).
template <class N>
N carlson_rj(N x, N y, N z, N p, const N* root_of_x = nullptr) {
    using std::sqrt;
    using T = plain_t<N>;
    // (Homogeneous of degree -3/2: a large p, such as a characteristic of -1e300, scaled to 1,
    // where p (p + l)^2 would overflow.)
    if (plain(p) > T(1e50)) {
        const N root = sqrt(p);
        const N scaled_root = root_of_x != nullptr ? *root_of_x / root : N(T(0));
        return carlson_rj(x / p, y / p, z / p, N(T(1)),
                          root_of_x != nullptr ? &scaled_root : nullptr) /
               (p * root);
    }
    N sum = T(0);
    T scale = T(1);
    for (int step = 0; step < 200; ++step) {
        const N mean = (x + y + z + T(2) * p) / T(5);
        const N dx = T(1) - x / mean, dy = T(1) - y / mean, dz = T(1) - z / mean;
        const N dp = T(1) - p / mean;
        if (duplication_converged(T(0.0015), step, dx, dy, dz, dp)) {
            const N ea = dx * (dy + dz) + dy * dz, eb = dx * dy * dz, ec = dp * dp;
            const N ed = ea - T(3) * ec, ee = eb + T(2) * dp * (ea - ec);
            const N series = T(1) + ed * (-T(3) / T(14) + T(9) / T(88) * ed - T(9) / T(52) * ee) +
                             eb * (T(1) / T(6) + dp * (-T(6) / T(22) + dp * T(3) / T(26))) +
                             dp * ea * (T(1) / T(3) - dp * T(3) / T(22)) - dp * ec / T(3);
            return T(3) * sum + scale * series / (mean * sqrt(mean));
        }
        const N sx = step == 0 && root_of_x != nullptr ? *root_of_x : sqrt(x);
        const N sy = sqrt(y), sz = sqrt(z);
        const N l = sx * (sy + sz) + sy * sz;
        const N alpha = p * (sx + sy + sz) + sx * sy * sz;
        const N beta = p * (p + l) * (p + l);
        sum = sum + scale * carlson_rf(alpha * alpha, beta, beta, &alpha);
        scale /= T(4);
        x = (x + l) / T(4);
        y = (y + l) / T(4);
        z = (z + l) / T(4);
        p = (p + l) / T(4);
    }
    return N(std::numeric_limits<T>::quiet_NaN());
}

// K(k) = R_F(0, k'^2, 1) and E(k) = K - (k^2 / 3) R_D(0, k'^2, 1), with k'^2 = (1 - k)(1 + k),
// exact where 1 - k^2 would round (one_minus_square).
template <class N>
N complete_elliptic(const N& k, bool second) {
    using T = plain_t<N>;
    const N complement = one_minus_square(k);
    const N first = carlson_rf(N(T(0)), complement, N(T(1)));
    return second ? first - k * k * carlson_rd(N(T(0)), complement, N(T(1))) / T(3) : first;
}

// F(k, phi) (second = false) or E(k, phi) for |k| <= 1 and every real phi: the amplitude reduced
// to |r| <= pi/2, phi = r + n pi, and n half periods added as 2n K(k) or 2n E(k);
//   F = s R_F(c^2, D^2, 1),  E = F - (k^2 / 3) s^3 R_D(c^2, D^2, 1),  D^2 = (1 - k s)(1 + k s).
template <class N>
N incomplete_elliptic(const N& k, const N& phi, bool second) {
    using T = plain_t<N>;
    if (std::isnan(plain(k)) || std::isnan(plain(phi)) || std::abs(plain(k)) > T(1))
        return N(std::numeric_limits<T>::quiet_NaN());
    if (std::isinf(plain(phi)))
        return phi;
    const auto integral = [&k, second](const N& s, const N& c) {
        const N y = one_minus_square(N(k * s));
        const N c2 = c * c;
        const N f = s * carlson_rf(c2, y, N(T(1)), &c);
        return second ? f - k * k * s * s * s * carlson_rd(c2, y, N(T(1)), &c) / T(3) : f;
    };
    const T turns = std::nearbyint(plain(phi) / std::numbers::pi_v<T>);
    const auto [s, c] = sine_cosine(N(phi - turns * std::numbers::pi_v<T>));
    const N part = integral(s, c);
    return turns == T(0) ? part : part + T(2) * turns * integral(N(T(1)), N(T(0)));
}

// Pi(n, k, phi) from 0 to the amplitude with sine s and cosine c (|phi| <= pi/2), where
// 1 - n s^2 >= 0; the pole at 1 - n s^2 = 0 and the modulus 1 at c = 0 give +-inf.
//   Pi = s R_F(c^2, y, 1) + (n / 3) s^3 R_J(c^2, y, 1, p),  y = 1 - k^2 s^2,  p = 1 - n s^2,
// whose two terms cancel for n < 0 (by a factor of about |n|^(1/2): 1e-8 left at n = -1e16).
// Below n = -1 the characteristic moves into (k^2, 1), N = (k^2 - n) / (1 - n), where every
// term is positive (found from DLMF 19.7's change of parameter and checked against mpmath):
//   Pi(n) = w^2 k'^2 Pi(N) + k^2 F / (k^2 - n) + w atan(w (k^2 - n) s c / D),
//   w^2 = -n / ((1 - n) (k^2 - n)),  D = sqrt(y),
// with 1 - N = k'^2 / (1 - n) passed as it is, so that N rounding to 1 loses nothing. Between -1
// and 0 the first form keeps, since w, a square root of -n, has no series at n = 0.
template <class N>
N elliptic_third_part(const N& k, const N& n, const N& s, const N& c) {
    using std::atan;
    using std::sqrt;
    using T = plain_t<N>;
    constexpr T inf = std::numeric_limits<T>::infinity();
    const N m = k * k;
    const N s2 = s * s, y = one_minus_square(N(k * s));
    const bool modulus_one = plain(y) == T(0) && plain(c) == T(0);
    const bool moved = plain(n) < T(-1);
    N p;
    if (moved) {
        if (std::isinf(plain(n)))
            return N(std::copysign(T(0), plain(s)));
    } else {
        p = T(1) - n * s2;
        if (!(plain(p) >= T(0)))
            return N(std::numeric_limits<T>::quiet_NaN());
    }
    if (modulus_one || (!moved && plain(p) == T(0)))
        return N(std::copysign(inf, plain(s)));
    // s R_F, the first kind's part, once for both forms.
    const N c2 = c * c;
    const N first = s * carlson_rf(c2, y, N(T(1)), &c);
    const auto with_characteristic = [&](const N& characteristic, const N& q) {
        if (plain(q) == T(0))
            return N(std::copysign(inf, plain(s)));
        return is_zero(characteristic)
                   ? first
                   : first + characteristic * s * s2 * carlson_rj(c2, y, N(T(1)), q, &c) / T(3);
    };
    if (moved) {
        const N shifted = m - n, rest = T(1) - n;
        const N w2 = -n / rest / shifted, w = sqrt(w2);
        const N modulus_complement = one_minus_square(k);
        const N characteristic = shifted / rest, complement = modulus_complement / rest;
        return w2 * modulus_complement * with_characteristic(characteristic, c2 + s2 * complement) +
               m / shifted * first + w * atan(w * shifted * s * c / sqrt(y));
    }
    return with_characteristic(n, p);
}

// Pi(n, k, phi) for |k| <= 1 and every real phi where 1 - n sin^2 t stays positive from 0 to
// phi (nabla gives no Cauchy principal value): the amplitude reduced as F's, each half period
// adding 2 Pi(n, k), +inf where that diverges (n = 1 or |k| = 1).
template <class N>
N incomplete_elliptic_third(const N& k, const N& n, const N& phi) {
    using T = plain_t<N>;
    if (std::isnan(plain(k)) || std::isnan(plain(n)) || std::isnan(plain(phi)) ||
        std::abs(plain(k)) > T(1))
        return N(std::numeric_limits<T>::quiet_NaN());
    if (std::isinf(plain(phi)))
        return plain(n) > T(1) ? N(std::numeric_limits<T>::quiet_NaN()) : phi;
    const T turns = std::nearbyint(plain(phi) / std::numbers::pi_v<T>);
    const auto [sine, cosine] = sine_cosine(N(phi - turns * std::numbers::pi_v<T>));
    const N part = elliptic_third_part(k, n, sine, cosine);
    return turns == T(0) ? part : part + T(2) * turns * elliptic_third_part(k, n, N(T(1)), N(T(0)));
}

// Where the series of the incomplete integrals exist: inside the modulus 1, or on it within a
// quarter period (D > 0 along the whole path).
template <class A, class B>
bool inside_incomplete(const A& k, const B& phi) {
    return std::abs(k) < A(1) ||
           (std::abs(k) == A(1) && std::abs(phi) < B(std::numbers::pi_v<double> / 2));
}

// (-1)^n * x.
template <class T>
T alternate(std::size_t n, T x) {
    return n % 2 == 0 ? x : -x;
}

}  // namespace detail

// The plain-number functions the rules call (for expressions, dual and Taylor numbers,
// argument-dependent lookup finds nabla's, from the function list).
template <Number X>
requires std::is_arithmetic_v<X>
auto comp_ellint_1(const X& k) {
    // (libstdc++ gives NaN at |k| = 1, where the integral diverges.)
    using T = decltype(std::comp_ellint_1(k));
    if (std::abs(k) > X(1))
        return std::numeric_limits<T>::quiet_NaN();
    return std::abs(k) == X(1) ? std::numeric_limits<T>::infinity() : std::comp_ellint_1(k);
}
template <Number X>
requires std::is_arithmetic_v<X>
auto comp_ellint_2(const X& k) {
    // (libstdc++ throws std::domain_error for |k| > 1.)
    using T = decltype(std::comp_ellint_2(k));
    return std::abs(k) > X(1) ? std::numeric_limits<T>::quiet_NaN() : std::comp_ellint_2(k);
}

// The incomplete elliptic integrals F(k, phi) and E(k, phi) of modulus k and amplitude phi, for
// every real phi, from Carlson's integrals; exactly phi at k = 0; |k| > 1 is NaN (libstdc++
// throws).
template <Number A, Number B>
requires(std::is_arithmetic_v<A>&& std::is_arithmetic_v<B>) auto ellint_1(const A& k,
                                                                          const B& phi) {
    using T = std::common_type_t<detail::real_t<A>, detail::real_t<B>>;
    return T(k) == T(0) ? T(phi) : detail::incomplete_elliptic(T(k), T(phi), false);
}
template <Number A, Number B>
requires(std::is_arithmetic_v<A>&& std::is_arithmetic_v<B>) auto ellint_2(const A& k,
                                                                          const B& phi) {
    using T = std::common_type_t<detail::real_t<A>, detail::real_t<B>>;
    return T(k) == T(0) ? T(phi) : detail::incomplete_elliptic(T(k), T(phi), true);
}

// The complete and incomplete elliptic integrals of the third kind, with the characteristic
// nu as in std::comp_ellint_3 and std::ellint_3:
//   Pi(nu, k, phi) = integral_0^phi dt / ((1 - nu sin^2 t) sqrt(1 - k^2 sin^2 t)),
// from Carlson's R_F and R_J. Pi(0, k, phi) is exactly F(k, phi) (and Pi(0, k) exactly K(k)).
// Outside the domain (|k| > 1, nu > 1 for the complete integral, a pole of the integrand between
// 0 and phi) NaN where libstdc++ throws; +inf where the integral diverges (nu = 1 or |k| = 1
// with a complete quarter period).
template <Number A, Number B>
requires(std::is_arithmetic_v<A>&& std::is_arithmetic_v<B>) auto comp_ellint_3(const A& k,
                                                                               const B& nu) {
    using T = std::common_type_t<detail::real_t<A>, detail::real_t<B>>;
    if (T(nu) == T(0))
        return T(comp_ellint_1(T(k)));
    if (std::isnan(T(k)) || std::isnan(T(nu)) || std::abs(T(k)) > T(1))
        return std::numeric_limits<T>::quiet_NaN();
    return detail::elliptic_third_part(T(k), T(nu), T(1), T(0));
}
template <Number A, Number B, Number C>
requires(std::is_arithmetic_v<A>&& std::is_arithmetic_v<B>&& std::is_arithmetic_v<C>) auto ellint_3(
    const A& k, const B& nu, const C& phi) {
    using T = std::common_type_t<detail::real_t<A>, detail::real_t<B>, detail::real_t<C>>;
    if (T(nu) == T(0))
        return T(ellint_1(T(k), T(phi)));
    return detail::incomplete_elliptic_third(T(k), T(nu), T(phi));
}

// The complete elliptic integrals K(k) and E(k) of modulus k (std::comp_ellint_1 and 2, with
// K(k) = integral_0^(pi/2) dt / sqrt(1 - k^2 sin^2 t)). Their derivatives of every order come
// from the series of R_F and R_D (partial_of.hpp): K'(0) = 0, K''(0) = pi/4, E''(0) = -pi/4. At
// |k| = 1, K is +inf, and every derivative is infinite: K^(n)(+-1) = (+-1)^n inf, E^(n)(+-1) =
// -(+-1)^n inf; |k| > 1 is NaN.
template <bool Second>
struct complete_elliptic_rule : by_algorithm_rule<complete_elliptic_rule<Second>> {
    static constexpr const char* name = Second ? "comp_ellint_2" : "comp_ellint_1";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& k) {
        if constexpr (Second)
            return comp_ellint_2(k);
        else
            return comp_ellint_1(k);
    }
    template <class N>
    static N algorithm(const N& k) {
        return detail::complete_elliptic(k, Second);
    }
    template <class T>
    static bool inside(const T& k) {
        return std::abs(k) < T(1);
    }
    // The first derivatives in closed forms that do not cancel (DLMF 19.25.1): K' = (k / 3)
    // R_D(0, 1, k'^2) and E' = -(k / 3) R_D(0, k'^2, 1), a third of the series' cost.
    template <std::size_t O, class T>
    static std::optional<T> known(const T& k) {
        if (std::abs(k) == T(1)) {
            const T inf = std::numeric_limits<T>::infinity();
            return detail::alternate(k < T(0) ? O : 0, Second ? -inf : inf);
        }
        if (O != 1 || !inside(k))
            return std::nullopt;
        const T complement = detail::one_minus_square(k);
        return Second ? -k / T(3) * detail::carlson_rd(T(0), complement, T(1))
                      : k / T(3) * detail::carlson_rd(T(0), T(1), complement);
    }
};
using comp_ellint_1_rule = complete_elliptic_rule<false>;
using comp_ellint_2_rule = complete_elliptic_rule<true>;

// The incomplete elliptic integrals F(k, phi) and E(k, phi): dF/dphi = 1 / D and dE/dphi = D,
// D = sqrt(1 - k^2 sin^2 phi), in closed form (exact, nothing cancels); every other derivative
// from the series of Carlson's integrals. Both are even in k: the k-derivatives of odd order are
// exactly 0 at k = 0. Where the series do not exist (|k| = 1 beyond a quarter period, where F
// diverges) the first derivatives are DLMF 19.4's closed forms, infinite there, and higher ones
// NaN.
template <bool Second>
struct incomplete_elliptic_rule : by_algorithm_rule<incomplete_elliptic_rule<Second>> {
    static constexpr const char* name = Second ? "ellint_2" : "ellint_1";
    static constexpr std::size_t arity = 2;
    template <class A, class B>
    static constexpr auto value(const A& k, const B& phi) {
        if constexpr (Second)
            return ellint_2(k, phi);
        else
            return ellint_1(k, phi);
    }
    template <class N>
    static N algorithm(const N& k, const N& phi) {
        return detail::incomplete_elliptic(k, phi, Second);
    }
    // dF/dphi = 1 / D, dE/dphi = D: every partial of order >= 1 in phi from these.
    static constexpr std::size_t closed_operand = 1;
    template <class N>
    static N closed_partial(const N& k, const N& phi) {
        using detail::one_minus_square, detail::sine_cosine;
        using std::sqrt;
        const N d = sqrt(one_minus_square(N(k * sine_cosine(phi)[0])));
        return Second ? d : N(detail::plain_t<N>(1)) / d;
    }
    template <class T>
    static bool inside(const T& k, const T& phi) {
        return detail::inside_incomplete(k, phi);
    }
    template <std::size_t OK, std::size_t OPhi, class T>
    static std::optional<T> known(const T& k, const T& phi) {
        if (inside(k, phi) || std::isnan(k) || std::isnan(phi) || std::abs(k) > T(1) ||
            OK + OPhi != 1)
            return std::nullopt;
        const T s = std::sin(phi), c = std::cos(phi), m = k * k, complement = T(1) - m;
        const T d = std::sqrt((T(1) - k * s) * (T(1) + k * s));
        if constexpr (OPhi == 1)
            return Second ? d : T(1) / d;
        const T f = ellint_1(k, phi), e = ellint_2(k, phi);
        if constexpr (Second)
            return (e - f) / k;
        else
            return (e - complement * f - m * s * c / d) / (k * complement);
    }
};
using ellint_1_rule = incomplete_elliptic_rule<false>;
using ellint_2_rule = incomplete_elliptic_rule<true>;

// The elliptic integrals of the third kind, Pi(nu, k) and Pi(nu, k, phi) (nabla's and the
// standard library's argument order: k, nu, phi). dPi/dphi is its closed form below; every other
// derivative comes from the series of Carlson's integrals, regular at nu = 0 and on nu = k^2, where
// DLMF 19.4's closed forms divide 0 by 0. Those closed forms, with k'^2 = 1 - k^2, D = sqrt(1 - k^2
// sin^2 phi) and F, E the integrals of the first and second kind of the same modulus and amplitude,
//   dPi/dk   = k (E - k'^2 Pi - k^2 sin phi cos phi / D) / (k'^2 (k^2 - nu)),
//   dPi/dnu  = (nu E + (k^2 - nu) F + (nu^2 - k^2) Pi - nu^2 D sin phi cos phi / (1 - nu sin^2
//              phi)) / (2 nu (k^2 - nu) (nu - 1)),
//   dPi/dphi = 1 / ((1 - nu sin^2 phi) D),
// (the complete integral's without the sin phi cos phi terms) give the first derivatives where
// Pi has no series (the poles, the modulus 1), and the complete integral's dPi/dk for nu < -1,
// where the series of Pi's moved characteristic cancel (Pi's leading term pi / (2 sqrt(-nu)) is
// the same for every k) and the closed form does not.
template <bool Complete>
struct elliptic_third_rule : by_algorithm_rule<elliptic_third_rule<Complete>> {
    static constexpr const char* name = Complete ? "comp_ellint_3" : "ellint_3";
    static constexpr std::size_t arity = Complete ? 2 : 3;
    template <class... X>
    static constexpr auto value(const X&... x) {
        if constexpr (Complete)
            return comp_ellint_3(x...);
        else
            return ellint_3(x...);
    }
    template <class N>
    static N algorithm(const N& k, const N& nu) requires Complete {
        using T = detail::plain_t<N>;
        using detail::plain;
        if (!(std::abs(plain(k)) <= T(1)) || std::isnan(plain(nu)))
            return N(std::numeric_limits<T>::quiet_NaN());
        return detail::elliptic_third_part(k, nu, N(T(1)), N(T(0)));
    }
    template <class N>
    static N algorithm(const N& k, const N& nu, const N& phi) requires(!Complete) {
        return detail::incomplete_elliptic_third(k, nu, phi);
    }
    // dPi/dphi = 1 / ((1 - nu sin^2 phi) D): every partial of order >= 1 in phi from it.
    static constexpr std::size_t closed_operand = Complete ? 3 : 2;
    template <class N>
    static N closed_partial(const N& k, const N& nu, const N& phi) requires(!Complete) {
        using detail::one_minus_square, detail::sine_cosine;
        using std::sqrt;
        using T = detail::plain_t<N>;
        const N s = sine_cosine(phi)[0];
        return N(T(1)) / ((T(1) - nu * s * s) * sqrt(one_minus_square(N(k * s))));
    }
    template <class T, class... X>
    static bool inside(const T& k, const X&... rest) {
        return std::isfinite(value(k, rest...)) && std::abs(k) <= T(1);
    }
    template <std::size_t... O, class T, class... X>
    static std::optional<T> known(const T& k, const T& nu, const X&... phi) {
        constexpr std::array<std::size_t, arity> orders{O...};
        constexpr bool first = (O + ...) == 1;
        if constexpr (!first) {
            return std::nullopt;
        } else {
            constexpr std::size_t I = orders[0] == 1 ? 0 : (orders[1] == 1 ? 1 : 2);
            const bool inside_here = inside(k, nu, phi...);
            if (inside_here && !(Complete && I == 0 && nu < T(-1)))
                return std::nullopt;
            if (std::isnan(value(k, nu, phi...)))
                return std::numeric_limits<T>::quiet_NaN();
            return closed_form<I>(value(k, nu, phi...), k, nu, phi...);
        }
    }

private:
    template <std::size_t I, class T>
    static T closed_form(const T& y, const T& k, const T& nu) {
        const T k2 = k * k;
        const T complement = T(1) - k2;
        if constexpr (I == 0) {
            return mul_strong_zero(k, (comp_ellint_2(k) - mul_strong_zero(complement, y)) /
                                          (complement * (k2 - nu)));
        } else {
            return (nu * comp_ellint_2(k) + (k2 - nu) * comp_ellint_1(k) + (nu * nu - k2) * y) /
                   (T(2) * nu * (nu - k2) * (T(1) - nu));
        }
    }
    template <std::size_t I, class T>
    static T closed_form(const T& y, const T& k, const T& nu, const T& phi) {
        const T s = std::sin(phi);
        const T s2 = s * s;
        const T k2 = k * k;
        const T d = std::sqrt((T(1) - k * s) * (T(1) + k * s));
        if constexpr (I == 0) {
            const T complement = T(1) - k2;
            return mul_strong_zero(k, (ellint_2(k, phi) - mul_strong_zero(complement, y) -
                                       k2 * s * std::cos(phi) / d) /
                                          (complement * (k2 - nu)));
        } else if constexpr (I == 1) {
            return (nu * ellint_2(k, phi) + (k2 - nu) * ellint_1(k, phi) + (nu * nu - k2) * y -
                    nu * nu * d * s * std::cos(phi) / (T(1) - nu * s2)) /
                   (T(2) * nu * (nu - k2) * (T(1) - nu));
        } else {
            return T(1) / ((T(1) - nu * s2) * d);
        }
    }
};
using comp_ellint_3_rule = elliptic_third_rule<true>;
using ellint_3_rule = elliptic_third_rule<false>;

NABLA_LANE_BY_LANE(comp_ellint_1_rule)
NABLA_LANE_BY_LANE(comp_ellint_2_rule)
NABLA_LANE_BY_LANE(ellint_1_rule)
NABLA_LANE_BY_LANE(ellint_2_rule)
NABLA_LANE_BY_LANE(comp_ellint_3_rule)
NABLA_LANE_BY_LANE(ellint_3_rule)

}  // namespace nabla::rules
