#include <nabla/nabla.hpp>

int main() {
    const auto f = [](auto x) {
        const auto shift = [&](auto y) { return x + y; };
#ifdef NABLA_FAIL_CASE
        return x * nabla::grad(shift, 3.0)[0];  // y's level is x's: their tangents would mix
#else
        return x * nabla::grad(shift, decltype(x)(3.0))[0];
#endif
    };
    return nabla::grad(f, 3.0)[0] == 1.0 ? 0 : 1;
}
