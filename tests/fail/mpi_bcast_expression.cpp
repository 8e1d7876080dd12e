#include <nabla/mpi.hpp>
#include <nabla/reverse.hpp>

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    nabla::tape<> t;
    auto recording = t.record();
    const nabla::var x = t.input(2.0);
#ifdef NABLA_FAIL_CASE
    // An expression, not a variable.
    const nabla::var y = nabla::mpi::bcast(x + 1.0, 0, nabla::mpi::world());
#else
    const nabla::var shifted = x + 1.0;
    const nabla::var y = nabla::mpi::bcast(shifted, 0, nabla::mpi::world());
#endif
    MPI_Finalize();
    return y.value > 0.0 ? 0 : 1;
}
