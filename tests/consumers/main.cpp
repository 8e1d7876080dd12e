// The program every consumer test builds: nabla used from outside its source tree, the way a
// user would, through one of the three routes (meson subproject, pkg-config, CMake package).
// It exits non-zero if the headers it found do not compute what they should.

#include <nabla/nabla.hpp>
#include <nabla/version.hpp>

#include <cmath>
#include <cstdio>

static_assert(__cplusplus >= 202002L, "nabla needs C++20: the route under test did not enable it");
static_assert(NABLA_VERSION ==
                  NABLA_VERSION_MAJOR * 10000 + NABLA_VERSION_MINOR * 100 + NABLA_VERSION_PATCH,
              "NABLA_VERSION does not match its components");

int main() {
    auto [x, y] = nabla::variables<2>();
    auto f = log(x) + x * y - sin(y);
    double const value = f(2.0, 5.0);

    // log(2) + 2 * 5 - sin(5), computed with mpmath at 30 digits.
    double const expected = 11.652071455223083778;
    bool const ok = std::abs(value - expected) <= 1e-9;

    std::printf("nabla %d.%d.%d: f(2, 5) = %.15f, expected %.15f: %s\n", NABLA_VERSION_MAJOR,
                NABLA_VERSION_MINOR, NABLA_VERSION_PATCH, value, expected, ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
}
