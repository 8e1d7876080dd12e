#include <nabla/nabla.hpp>
int main() {
    nabla::tape<double> t;
    auto recording = t.record();
    nabla::active<double> x = t.input(1.0);
    nabla::active<double> a = t.input(0.5);
#ifdef NABLA_FAIL_CASE
    nabla::active<double> y = assoc_laguerre(2, a, x);  // the parameter must be a constant
#else
    nabla::active<double> y = assoc_laguerre(2, 0.5, x) + 0.0 * a;
#endif
    return y.value < 0.0 ? 0 : 1;
}
