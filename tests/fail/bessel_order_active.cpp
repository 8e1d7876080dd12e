#include <nabla/nabla.hpp>
int main() {
    nabla::tape<double> t;
    auto recording = t.record();
    nabla::active<double> x = t.input(1.0);
    nabla::active<double> v = t.input(0.5);
#ifdef NABLA_FAIL_CASE
    nabla::active<double> y = cyl_bessel_k(v, x);  // the order must be a constant
#else
    nabla::active<double> y = cyl_bessel_k(0.5, x) + 0.0 * v;
#endif
    return y.value > 0.4 ? 0 : 1;
}
