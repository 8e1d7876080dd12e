// nabla::value_and_grad and nabla::grad on static expressions: results, shapes, and no heap
// allocation; and the transformations that record, whose second call allocates nothing for
// every number type they record (their tapes' memory is kept).

#include <nabla/nabla.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <atomic>
#include <cstdlib>
#include <new>
#include <type_traits>

#include "../test_data.hpp"
#include "../test_functions.hpp"

namespace {
std::atomic<long> allocations{0};
}  // namespace

// Counts every allocation of the test program, to show that evaluation and gradients make none.
// (Out of line: inlined, g++ -O3 takes the free() of memory from this operator new for a
// mismatched deallocation, -Wmismatched-new-delete.)
[[gnu::noinline]] void* operator new(std::size_t size) {
    ++allocations;
    if (void* p = std::malloc(size == 0 ? 1 : size))
        return p;
    throw std::bad_alloc();
}
[[gnu::noinline]] void operator delete(void* p) noexcept {
    std::free(p);
}
[[gnu::noinline]] void operator delete(void* p, std::size_t) noexcept {
    std::free(p);
}
// (The over-aligned forms too: the tape's columns of dual and Taylor numbers come from them.)
[[gnu::noinline]] void* operator new(std::size_t size, std::align_val_t alignment) {
    ++allocations;
    const auto a = static_cast<std::size_t>(alignment);
    if (void* p = std::aligned_alloc(a, (size + a - 1) / a * a))
        return p;
    throw std::bad_alloc();
}
[[gnu::noinline]] void operator delete(void* p, std::align_val_t) noexcept {
    std::free(p);
}
[[gnu::noinline]] void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
    std::free(p);
}
// (And the nothrow forms, which Catch uses: left to the library, their memory would come back
// through the delete above, a pairing valgrind reports as mismatched.)
[[gnu::noinline]] void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
    ++allocations;
    return std::malloc(size == 0 ? 1 : size);
}
[[gnu::noinline]] void operator delete(void* p, const std::nothrow_t&) noexcept {
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

namespace {

// The Christoffel symbols by a Jacobian in reverse mode: taken inside a forward Jacobian, the
// tape records dual numbers.
const nabla_test::christoffel<nabla::mode::reverse_t> christoffel{};

// Allocations made by the second of two calls of f.
template <class F>
long second_call_allocations(const F& f) {
    f();
    const long before = allocations.load();
    f();
    return allocations.load() - before;
}

}  // namespace

TEST_CASE("transformations that record allocate nothing the second time, for every number type",
          "[api][grad][reverse]") {
    const std::array<double, 4> q{0.0, 10.0, 1.1, 0.3};
    double sink = 0.0;
    // A tape of dual numbers (the Christoffel symbols' Jacobian inside a forward Jacobian).
    CHECK(second_call_allocations([&] { sink += nabla::jacobian(christoffel, q)(1, 1); }) == 0);
    // Dual numbers, nested dual numbers and Taylor numbers on the tape of grad.
    const auto f = [](const auto& v) {
        using std::exp, std::sin;
        return exp(sin(v[0]) * v[1]) + v[2] * v[3] * v[0];
    };
    using D = nabla::dual<double, 2>;
    using DD = nabla::dual<D, 1>;
    using TT = nabla::taylor<double, 3>;
    const std::array<D, 4> xd{D(0.5, {1.0, 0.0}), D(1.5), D(-0.5, {0.0, 1.0}), D(2.0)};
    const std::array<DD, 4> xdd{DD(D(0.5, {1.0, 0.0}), {D(1.0)}), DD(D(1.5)), DD(D(-0.5)),
                                DD(D(2.0))};
    const std::array<TT, 4> xt = [] {
        std::array<TT, 4> a{TT(0.5), TT(1.5), TT(-0.5), TT(2.0)};
        a[0].c[1] = 1.0;
        return a;
    }();
    CHECK(second_call_allocations(
              [&] { sink += nabla::grad(nabla::mode::reverse, f, xd)[0].value; }) == 0);
    CHECK(second_call_allocations(
              [&] { sink += nabla::grad(nabla::mode::reverse, f, xdd)[0].value.value; }) == 0);
    CHECK(second_call_allocations(
              [&] { sink += nabla::grad(nabla::mode::reverse, f, xt)[0].c[1]; }) == 0);
    // Forward over reverse: hvp and hessian record dual numbers.
    const std::array<double, 4> x{0.5, 1.5, -0.5, 2.0}, v{1.0, 0.0, 0.5, 0.0};
    CHECK(second_call_allocations([&] { sink += nabla::hvp(f, x, v)[0]; }) == 0);
    // vjp keeps its recording in the pullback: the tape comes back with its memory; the
    // pullback's own handle on it is the one allocation.
    const auto g = [](const auto& v) {
        using std::sin;
        using T = std::remove_cvref_t<decltype(v[0])>;
        return std::array<T, 2>{v[0] * v[1], sin(v[2]) + v[3]};
    };
    CHECK(second_call_allocations([&] {
              auto [y, pullback] = nabla::vjp(g, xd);
              sink += pullback(std::array{D(1.0), D(0.0)})[1].value + y[0].value;
          }) <= 1);
    CHECK(std::isfinite(sink));
}
