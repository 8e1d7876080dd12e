#pragma once
// nabla/mpi/communicator.hpp: the communicator (the user's, and a duplicate for the adjoint
// messages), and nabla::mpi::error.

// Open MPI's and MPICH's C++ bindings (deprecated, and noisy under -Wextra) are not needed.
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

// clang-format off
#include "../config.hpp"  // first: it checks the language standard
// clang-format on

namespace nabla::mpi {

// What nabla::mpi reports: an MPI call that failed, buffers whose sizes do not fit the operation,
// a sweep that needs a communicator that was freed or an MPI that was finalized.
class error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

namespace detail {

[[noreturn]] inline void fail(const std::string& what) {
    throw error("nabla::mpi: " + what);
}

inline void check(int code, const char* call) {
    if (code == MPI_SUCCESS) [[likely]]
        return;
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(code, text, &length);
    fail(std::string(call) + " failed: " + std::string(text, static_cast<std::size_t>(length)));
}

inline void check_initialized(const char* what) {
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (!initialized || finalized)
        fail(std::string(what) + ": MPI is " + (finalized ? "finalized" : "not initialized") +
             " (call MPI_Init before and MPI_Finalize after every use of nabla::mpi, its sweeps "
             "included)");
}

// The communicator's state, shared by the communicator and the tape entries recorded on it: the
// user's communicator and a duplicate of it that only the adjoint communication uses, so that
// adjoint messages never meet the program's own.
struct comm_state {
    MPI_Comm user = MPI_COMM_NULL;
    MPI_Comm adjoint = MPI_COMM_NULL;
    int rank = 0;
    int size = 1;
    bool freed = false;
    // The largest tag (MPI_TAG_UB), and the count of messages of active variables sent: each such
    // message carries its number, which its adjoint message takes as its tag.
    long long tag_bound = 32767;
    std::atomic<std::uint64_t> messages{0};

    comm_state(const comm_state&) = delete;
    comm_state& operator=(const comm_state&) = delete;
    explicit comm_state(MPI_Comm comm) : user(comm) {
        check_initialized("nabla::mpi::communicator");
        check(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
        check(MPI_Comm_size(comm, &size), "MPI_Comm_size");
        check(MPI_Comm_dup(comm, &adjoint), "MPI_Comm_dup");
        check(MPI_Comm_set_errhandler(adjoint, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
        void* bound = nullptr;
        int found = 0;
        check(MPI_Comm_get_attr(adjoint, MPI_TAG_UB, &bound, &found), "MPI_Comm_get_attr");
        if (found && bound != nullptr)
            tag_bound = *static_cast<int*>(bound);
    }
    ~comm_state() { release(); }
    void release() {
        int finalized = 0;
        MPI_Finalized(&finalized);
        if (!freed && !finalized && adjoint != MPI_COMM_NULL)
            MPI_Comm_free(&adjoint);
        freed = true;
    }
    // The duplicate, for a sweep: an error when it cannot be used any more.
    MPI_Comm for_sweep() const {
        check_initialized("a sweep over an MPI operation");
        if (freed)
            fail("a sweep reached an MPI operation recorded on a communicator that was freed "
                 "since (communicator::free): free a communicator after the last sweep over "
                 "the tapes that recorded on it");
        return adjoint;
    }
};

}  // namespace detail

// A communicator for nabla's operations: it refers to an MPI communicator (which stays the
// caller's) and keeps a duplicate of it for the adjoint communication. Making one is collective,
// as MPI_Comm_dup is. Copies share the duplicate; tape entries keep it alive while they need it.
class communicator {
public:
    explicit communicator(MPI_Comm comm) : state_(std::make_shared<detail::comm_state>(comm)) {}

    int rank() const { return state_->rank; }
    int size() const { return state_->size; }
    MPI_Comm get() const { return state_->user; }

    // Frees the duplicate now (collective): a later sweep over an operation recorded on this
    // communicator is an error. Without free(), the last copy or tape entry frees it.
    void free() { state_->release(); }

    const std::shared_ptr<detail::comm_state>& state() const { return state_; }

private:
    std::shared_ptr<detail::comm_state> state_;
};

// MPI_COMM_WORLD. The first call is collective (every rank makes it).
inline const communicator& world() {
    static const communicator w(MPI_COMM_WORLD);
    return w;
}

}  // namespace nabla::mpi
