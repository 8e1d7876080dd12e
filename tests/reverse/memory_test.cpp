// The run-time tape's memory: reserved once and kept across recordings, and flat over a million
// recordings and sweeps.

#include <nabla/nabla.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <vector>

#include "../test_functions.hpp"
#include <unistd.h>

namespace {

using nabla::tape;
using nabla::var;
using nabla_test::rosenbrock;

}  // namespace

TEST_CASE("tape: memory is kept across recordings", "[reverse]") {
    std::vector<double> x(1000, 0.5);
    tape<> t;
    std::vector<var> active(x.size());
    std::size_t reserved = 0;
    for (int round = 0; round < 5; ++round) {
        auto recording = t.record();
        for (std::size_t i = 0; i < x.size(); ++i)
            active[i] = t.input(x[i]);
        var y = rosenbrock(active);
        t.gradient(y);
        if (round == 0)
            reserved = t.bytes_reserved();
        CHECK(t.bytes_reserved() == reserved);
    }
}

// The resident memory of this process in bytes (Linux: /proc/self/statm), 0 elsewhere.
static std::size_t resident_bytes() {
    std::FILE* statm = std::fopen("/proc/self/statm", "r");
    if (statm == nullptr)
        return 0;
    unsigned long pages = 0, resident = 0;
    const int read = std::fscanf(statm, "%lu %lu", &pages, &resident);
    std::fclose(statm);
    return read == 2 ? resident * static_cast<std::size_t>(sysconf(_SC_PAGESIZE)) : 0;
}

TEST_CASE("tape: a million recordings and sweeps keep memory flat", "[reverse][stability]") {
    // The seed function with named intermediates (small and collapsed), recorded and swept
    // 10^6 times on one tape: the tape reserves its memory once, the process does not grow.
    tape<> t;
    const auto record_and_sweep = [&t](double a, double b) {
        auto recording = t.record();
        var x1 = t.input(a), x2 = t.input(b);
        auto p = x1 * x2;
        auto q = log(x1) + p * p - sin(x2);
        var f = q * q + p;
        t.gradient(f);
        return t.adjoint(x1);
    };
    double checksum = 0.0;
    for (int i = 0; i < 1000; ++i)
        checksum += record_and_sweep(2.0 + 1e-3 * i, 5.0);
    const std::size_t reserved = t.bytes_reserved();
    const std::size_t resident = resident_bytes();
    for (int i = 0; i < 1000000; ++i)
        checksum += record_and_sweep(2.0 + 1e-6 * (i % 1000), 5.0);
    CHECK(std::isfinite(checksum));
    CHECK(t.bytes_reserved() == reserved);
    if (resident != 0)  // far above noise: the tape of one recording is about 1 KB
        CHECK(resident_bytes() < resident + (std::size_t(4) << 20));
}
