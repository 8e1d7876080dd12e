#pragma once
// What the programs extracted from the documentation (extract_snippets.py) check with: each block
// runs inside doc_check::run, which reports it and counts a failure (an exception, a failed
// DOC_CHECK, a main that does not return 0) without stopping the others.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>
#include <type_traits>

#define DOC_CHECK(...)                                                                             \
    (static_cast<bool>(__VA_ARGS__) ? void(0) : ::doc_check::fail(#__VA_ARGS__, __LINE__))

namespace doc_check {

[[noreturn]] inline void fail(const char* condition, int line) {
    throw std::runtime_error("DOC_CHECK(" + std::string(condition) + ") failed (line " +
                             std::to_string(line) + " of the generated program)");
}

// Whether a equals b, a figure the text states with its last digit rounded: within half a unit
// of that digit, given as the step (11.652: 0.001).
inline bool rounds_to(double a, double b, double step) {
    return std::abs(a - b) <= 0.5 * step * (1.0 + 1e-9);
}

// A block's main, with or without argc and argv.
template <class F>
int call_main(F main, int argc, char** argv) {
    if constexpr (std::is_invocable_v<F>)
        return main();
    else
        return main(argc, argv);
}

inline void returns_zero(int status) {
    if (status != 0)
        throw std::runtime_error("main returned " + std::to_string(status));
}

template <class F>
int run(const char* where, F f) {
    try {
        f();
        std::printf("ok      %s\n", where);
        return 0;
    } catch (const std::exception& e) {
        std::printf("FAILED  %s: %s\n", where, e.what());
        return 1;
    }
}

}  // namespace doc_check
