#pragma once
// nabla/mpi.hpp: MPI communication that nabla differentiates. Buffers of plain numbers, of
// forward numbers (dual, taylor: the tangents travel in the same messages as the values) and of
// active variables (nabla::var) go through the same calls; for active variables each call
// records one tape entry whose sweep performs the adjoint communication:
//
//   operation            adjoint in the sweep
//   bcast                reduce (sum) to the root
//   reduce (sum)         bcast from the root
//   allreduce (sum)      allreduce (sum)
//   min, max             the sum of the outputs' adjoints goes to the rank that won
//   prod                 the sum of the outputs' adjoints times the product of the others
//   allgather            reduce_scatter (sum)        reduce_scatter   allgather
//   scatter(v)           gather(v)                   gather(v)        scatter(v)
//   alltoall             alltoall                    send <-> recv, sendrecv <-> sendrecv
//   isend/irecv + wait   irecv/isend at the wait's place, its wait at the start's place
//
// Each adjoint moves as many bytes as its operation (min and max: fewer), so nothing grows with
// the number of ranks. Each rank sweeps its own tape; the adjoint communication happens in the
// reverse order of the recording, which makes the sweep as free of deadlock as the recording
// was (docs/mpi.md). Every rank of a communicator records its operations on it (a tape records on
// each of them, or on none) and sweeps as often as the others.
//
//   nabla::mpi::communicator world = nabla::mpi::world();
//   auto recording = t.record();
//   std::vector<nabla::var> u = ...;                     // this rank's strip of the field
//   nabla::var e = local_energy(u);
//   nabla::var total = nabla::mpi::allreduce(e, nabla::mpi::op::sum, world);
//   t.gradient(total);                                   // every rank's adjoints of its u
//
// Needs <mpi.h> (any MPI 3 implementation); MPI_Init is the caller's, before the first
// communicator is made.
//
// The parts, one concept per header under nabla/mpi/: communicator.hpp, wire.hpp (how elements
// travel), checking.hpp (set_checking), combiners.hpp (the reductions), tape_entry.hpp (what every
// operation on active variables shares), buffers.hpp, reduce.hpp, gather_scatter.hpp,
// point_to_point.hpp, nonblocking.hpp and var_arrays.hpp.

// clang-format off
#include "config.hpp"  // first: it checks the language standard
// clang-format on

#include "mpi/buffers.hpp"
#include "mpi/checking.hpp"
#include "mpi/combiners.hpp"
#include "mpi/communicator.hpp"
#include "mpi/gather_scatter.hpp"
#include "mpi/nonblocking.hpp"
#include "mpi/point_to_point.hpp"
#include "mpi/reduce.hpp"
#include "mpi/tape_entry.hpp"
#include "mpi/var_arrays.hpp"
#include "mpi/wire.hpp"
