// nabla::value_and_grad and nabla::grad on static expressions: results, shapes, and no heap
// allocation.

#include <nabla/nabla.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <atomic>
#include <cstdlib>
#include <new>
#include <type_traits>

#include "../test_data.hpp"

namespace {
std::atomic<long> allocations{0};
}  // namespace

// Counts every allocation of the test program, to show that evaluation and gradients make none.
void* operator new(std::size_t size) {
    ++allocations;
    if (void* p = std::malloc(size == 0 ? 1 : size))
        return p;
    throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
    std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
    std::free(p);
}

namespace {
const auto [x, y, z] = nabla::variables<3>();

auto lennard_jones() {
    const auto r2 = x * x + y * y + z * z;
    const auto s6 = 1.0 / (r2 * r2 * r2);
    return 4.0 * (s6 * s6 - s6);
}
}  // namespace

TEST_CASE("value_and_grad returns an aggregate with a std::array gradient", "[api][grad]") {
    const auto f = log(x) + x * y - sin(y);
    const auto result = nabla::value_and_grad(f, 2.0, 5.0);
    static_assert(std::is_same_v<decltype(result.gradient), std::array<double, 2>>);
    const auto [value, gradient] = result;
    CHECK(value == Approx(11.652071455223084));
    CHECK(gradient == nabla::grad(f, 2.0, 5.0));
    static_assert(std::is_same_v<decltype(nabla::grad(f, 2.0f, 5.0f)), std::array<float, 2>>);
}

TEST_CASE("Lennard-Jones pair energy: value and gradient against mpmath", "[api][grad]") {
    const auto energy = lennard_jones();
    const auto [value, gradient] = nabla::value_and_grad(energy, 1.1, -0.4, 0.3);
    CHECK(nabla_test::close(value, nabla_test::reference("lj"), 1e-14));
    CHECK(nabla_test::close(gradient[0], nabla_test::reference("lj_d0"), 1e-13));
    CHECK(nabla_test::close(gradient[1], nabla_test::reference("lj_d1"), 1e-13));
    CHECK(nabla_test::close(gradient[2], nabla_test::reference("lj_d2"), 1e-13));
    CHECK(nabla_test::close(nabla::d(energy, x, y)(1.1, -0.4, 0.3), nabla_test::reference("lj_d01"),
                            1e-12));
}

TEST_CASE("evaluation and gradients allocate nothing", "[api][grad]") {
    const auto f = log(x) + x * y - sin(y);
    const auto energy = lennard_jones();
    const auto hessian_entry = nabla::d(energy, x, y);
    double sink = 0.0;
    const long before = allocations.load();
    for (int i = 0; i < 100; ++i) {
        sink += f(2.0, 5.0 + i);
        sink += nabla::grad(f, 2.0, 5.0 + i)[1];
        sink += nabla::value_and_grad(energy, 1.1, -0.4, 0.3 + i).gradient[2];
        sink += hessian_entry(1.1, -0.4, 0.3 + i);
    }
    const long during = allocations.load() - before;
    CHECK(during == 0);
    CHECK(std::isfinite(sink));
}
