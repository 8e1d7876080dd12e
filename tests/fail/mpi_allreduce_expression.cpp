#include <nabla/mpi.hpp>
#include <nabla/reverse.hpp>

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    nabla::tape<> t;
    auto recording = t.record();
    const nabla::var x = t.input(2.0);
#ifdef NABLA_FAIL_CASE
    // An expression, not a variable.
    const nabla::var y = nabla::mpi::allreduce(x * x, nabla::mpi::op::sum, nabla::mpi::world());
#else
    const nabla::var square = x * x;
    const nabla::var y = nabla::mpi::allreduce(square, nabla::mpi::op::sum, nabla::mpi::world());
#endif
    MPI_Finalize();
    return y.value > 0.0 ? 0 : 1;
}
