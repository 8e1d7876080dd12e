#include <nabla/nabla.hpp>
int main() {
    nabla::tape<double> td;
    nabla::tape<float> tf;
    auto recording_d = td.record();
    auto recording_f = tf.record();
    nabla::active<double> x = td.input(2.0);
    nabla::active<float> y = tf.input(3.0f);
#ifdef NABLA_FAIL_CASE
    nabla::active<double> z = x * y;  // two value types, two tapes
#else
    nabla::active<double> z = x * static_cast<double>(y);  // y's value, as a constant
#endif
    return z.value == 6.0 ? 0 : 1;
}
