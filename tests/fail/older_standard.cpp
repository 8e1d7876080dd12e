// Compiled with -std=c++17 (tests/fail/meson.build): nabla's own message comes first.
#ifdef NABLA_FAIL_CASE
#include <nabla/nabla.hpp>
#endif

int main() {
    return 0;
}
