// A wrong-code bug of Debian 12's g++ 12.2 at -O2 and -O3 (its interprocedural scalar
// replacement of aggregates, IPA-SRA), reduced from a program of nested jacobians that returned
// all-zero Christoffel symbols: a variable-template generic lambda that returns a std::array,
// called through `k ? f<true>(x) : f<false>(x)` in a loop, gives different results for k = 0 and
// k = 1. Right at -O1, with -fno-ipa-sra and with clang++. No nabla involved.
//
// Prints "same" where both calls agree, "differ" where the compiler got it wrong.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

struct value_and_slopes {
    std::array<double, 16> value;
    std::array<double, 64> slopes;
};

__attribute__((noinline)) value_and_slopes diagonal(const std::array<double, 4>& x) {
    value_and_slopes r;
    for (int i = 0; i < 16; ++i) {
        r.value[i] = i % 5 == 0 ? x[1] * (i + 1) : 0.0;
        for (int c = 0; c < 4; ++c)
            r.slopes[i * 4 + c] = i % 5 == 0 && c == 1 ? double(i + 1) : 0.0;
    }
    return r;
}

template <bool Variant>
auto symbols = [](const auto& x) {
    std::array<double, 16> g;
    std::array<double, 64> dg;
    auto [value, slopes] = diagonal(x);
    for (int i = 0; i < 16; ++i) {
        g[i] = value[i];
        for (int c = 0; c < 4; ++c)
            dg[i * 4 + c] = slopes[i * 4 + c];
    }
    std::array<double, 64> out;
    for (int a = 0; a < 4; ++a)
        for (int b = 0; b < 4; ++b)
            for (int c = 0; c < 4; ++c) {
                double s = 0.0;
                for (int d = 0; d < 4; ++d)
                    s = s + 0.5 / g[a * 5] * (a == d) *
                                (dg[(d * 4 + c) * 4 + b] + dg[(d * 4 + b) * 4 + c] -
                                 dg[(b * 4 + c) * 4 + d]);
                out[a * 16 + b * 4 + c] = s;
            }
    return out;
};

int main() {
    const std::array<double, 4> x{0.3, 7.0, 1.1, 0.2};
    double first = 0.0;
    for (int k = 0; k < 2; ++k) {
        const auto out = k ? symbols<true>(x) : symbols<false>(x);
        double largest = 0.0;
        for (int i = 0; i < 64; ++i)
            largest = std::max(largest, std::fabs(out[i]));
        std::printf("k = %d: largest %.6g\n", k, largest);
        if (k == 0)
            first = largest;
        else
            std::puts(largest == first ? "same" : "differ");
    }
    return 0;
}
