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

// Open MPI's and MPICH's C++ bindings (deprecated, and noisy under -Wextra) are not needed.
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <memory>
#include <ranges>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

// clang-format off
#include "config.hpp"  // first: it checks the language standard
// clang-format on

#include "forward/dual.hpp"
#include "forward/taylor.hpp"
#include "reverse/active.hpp"
#include "reverse/detail/access.hpp"
#include "reverse/tape.hpp"
#include "values.hpp"

namespace nabla::mpi {

// What nabla::mpi reports: an MPI call that failed, buffers whose sizes do not fit the operation,
// a sweep that needs a communicator that was freed or an MPI that was finalized.
class error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Checking of collective calls. A collective is made by every rank of a communicator, with the
// same operation, root and reduction and buffers whose sizes fit; MPI itself checks none of it,
// and a mismatch ends in a truncation abort, corrupted memory, silently wrong values or a hang.
// With checking on (the default where NDEBUG is not defined, or as NABLA_MPI_CHECKING says: 0
// or 1), each collective first agrees across the ranks on what they are about to do, in one small
// extra collective (two for gatherv and scatterv, whose root's counts are compared with each
// rank's buffer), and a mismatch is a nabla::mpi::error on every rank with both ranks' values.
// The sweep's adjoint collectives are checked the same way, in the order the ranks sweep them.
// A rank that waits longer than the timeout for the others to join (a rank that does not make
// the call, or that sweeps alone), or in a sweep for a point-to-point peer, is told so by an
// error; MPI's state is unusable after it (end the program with MPI_Abort). Turning checking off
// removes the extra collectives.
#ifndef NABLA_MPI_CHECKING
#ifdef NDEBUG
#define NABLA_MPI_CHECKING 0
#else
#define NABLA_MPI_CHECKING 1
#endif
#endif

namespace detail {
struct checking_settings {
    bool on = NABLA_MPI_CHECKING != 0;
    double timeout_seconds = 300.0;
};
inline checking_settings& checking_state() {
    static checking_settings settings;
    return settings;
}
}  // namespace detail

// Turns the checks on or off (for every thread; set it before the operations, on every rank
// alike), with the longest a rank waits for the others at one check.
inline void set_checking(bool on, double timeout_seconds = 300.0) {
    detail::checking_state() = {on, timeout_seconds};
}
inline bool checking() {
    return detail::checking_state().on;
}

// The reductions. On forward numbers and active variables, min and max pick the number of one
// rank: the lowest rank among equal values, a NaN when one takes part (the lowest rank's), and the
// tangents or the adjoint go with it. On plain numbers they are MPI_MIN and MPI_MAX.
enum class op { sum, prod, min, max };

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

namespace detail {

template <class>
inline constexpr bool always_false = false;

// The MPI datatype of a plain number.
template <class S>
MPI_Datatype datatype() {
    if constexpr (std::is_same_v<S, double>)
        return MPI_DOUBLE;
    else if constexpr (std::is_same_v<S, float>)
        return MPI_FLOAT;
    else if constexpr (std::is_same_v<S, long double>)
        return MPI_LONG_DOUBLE;
    else if constexpr (std::is_same_v<S, int>)
        return MPI_INT;
    else if constexpr (std::is_same_v<S, long>)
        return MPI_LONG;
    else if constexpr (std::is_same_v<S, long long>)
        return MPI_LONG_LONG;
    else if constexpr (std::is_same_v<S, unsigned>)
        return MPI_UNSIGNED;
    else if constexpr (std::is_same_v<S, unsigned long>)
        return MPI_UNSIGNED_LONG;
    else if constexpr (std::is_same_v<S, unsigned long long>)
        return MPI_UNSIGNED_LONG_LONG;
    else if constexpr (std::is_same_v<S, short>)
        return MPI_SHORT;
    else if constexpr (std::is_same_v<S, unsigned short>)
        return MPI_UNSIGNED_SHORT;
    else if constexpr (std::is_same_v<S, signed char>)
        return MPI_SIGNED_CHAR;
    else if constexpr (std::is_same_v<S, unsigned char>)
        return MPI_UNSIGNED_CHAR;
    else if constexpr (std::is_same_v<S, char>)
        return MPI_CHAR;
    else if constexpr (std::is_same_v<S, bool>)
        return MPI_CXX_BOOL;
    else
        static_assert(always_false<S>, "nabla::mpi: no MPI datatype for this number type");
}

// A number that travels as `count` plain numbers of type `scalar`: a plain number, or a forward
// number (dual with a fixed number of directions, taylor) of such numbers.
template <class E>
struct flat {
    static constexpr bool value = false;
};
template <class E>
requires std::is_arithmetic_v<E>
struct flat<E> {
    static constexpr bool value = true;
    using scalar = E;
    static constexpr std::size_t count = 1;
};
template <class T, std::size_t N, bool Strong>
requires(N != nabla::dynamic && flat<T>::value) struct flat<nabla::dual<T, N, Strong>> {
    static constexpr bool value = sizeof(nabla::dual<T, N, Strong>) == (N + 1) * sizeof(T);
    using scalar = typename flat<T>::scalar;
    static constexpr std::size_t count = (N + 1) * flat<T>::count;
};
template <class T, std::size_t K>
requires flat<T>::value struct flat<nabla::taylor<T, K>> {
    static constexpr bool value = sizeof(nabla::taylor<T, K>) == (K + 1) * sizeof(T);
    using scalar = typename flat<T>::scalar;
    static constexpr std::size_t count = (K + 1) * flat<T>::count;
};

template <class E>
concept Flat = flat<E>::value;

// An active variable of plain or forward numbers (a tape of dual numbers: forward over reverse).
template <class E>
concept Active = nabla::detail::is_active_v<E> && Flat<typename E::value_type>;

template <class E>
concept Element = Flat<E> || Active<E>;

template <class R>
using element_t = std::remove_cvref_t<std::ranges::range_value_t<R>>;

// The plain number an element travels as, and how many of them.
template <class E>
struct wire;
template <Flat E>
struct wire<E> {
    using scalar = typename flat<E>::scalar;
    static constexpr std::size_t count = flat<E>::count;
};
template <Active E>
struct wire<E> {
    using scalar = typename flat<typename E::value_type>::scalar;
    static constexpr std::size_t count = flat<typename E::value_type>::count;
};

// The MPI datatype of the plain numbers a value of type T (plain or forward) travels as.
template <class T>
MPI_Datatype wire_datatype() {
    return datatype<typename flat<T>::scalar>();
}

// An MPI count for n elements of E.
template <class E>
int count_of(std::size_t n, const char* what) {
    constexpr std::size_t per = wire<E>::count;
    if (n > static_cast<std::size_t>(INT_MAX) / per)
        fail(std::string(what) + ": " + std::to_string(n) +
             " elements are more than one MPI message can count");
    return static_cast<int>(n * per);
}

inline void expect_size(const char* what, const char* buffer, std::size_t size, std::size_t want) {
    if (size != want)
        fail(std::string(what) + ": " + buffer + " holds " + std::to_string(size) +
             " elements where " + std::to_string(want) + " are needed");
}

// A root must be a rank of the communicator; a peer of a send or receive may also be
// MPI_PROC_NULL, and a source MPI_ANY_SOURCE.
enum class peer { root, destination, source };
inline void check_rank(const char* what, const char* role, int rank, int size, peer kind) {
    if (rank >= 0 && rank < size)
        return;
    if (kind != peer::root && rank == MPI_PROC_NULL)
        return;
    if (kind == peer::source && rank == MPI_ANY_SOURCE)
        return;
    fail(std::string(what) + ": " + role + " " + std::to_string(rank) +
         " is not a rank of a communicator of " + std::to_string(size));
}

// ---------------------------------------------------------------------------------------------
// The checks (set_checking).

// What a rank is about to do in a collective: the operation, its root (-1 for none), its
// reduction (-1 for none), its elements (how many plain numbers of how many bytes, active or
// not) and their count (-1 where the ranks' counts may differ: gatherv, scatterv).
struct call_signature {
    long long operation, root, reduction, element, count;
    long long failed = 0;  // whether the rank's own checks of the call failed
};
enum class collective : long long {
    bcast = 1,
    reduce,
    allreduce,
    allgather,
    reduce_scatter,
    alltoall,
    gatherv,
    scatterv
};
inline const char* name_of(long long operation) {
    constexpr const char* names[] = {"?",         "bcast",     "reduce",
                                     "allreduce", "allgather", "reduce_scatter",
                                     "alltoall",  "gatherv",   "scatterv"};
    return operation >= 1 && operation <= 8 ? names[operation] : names[0];
}
template <class E>
long long element_code() {
    using S = typename wire<E>::scalar;
    constexpr bool is_active = !Flat<E>;
    constexpr long long kind = std::is_floating_point_v<S> ? 0 : std::is_signed_v<S> ? 1 : 2;
    return static_cast<long long>(wire<E>::count) * 10000 + kind * 1000 +
           static_cast<long long>(sizeof(S)) * 10 + (is_active ? 1 : 0);
}
inline std::string describe(std::size_t field, long long v) {
    switch (field) {
    case 0:
        return std::string("calls nabla::mpi::") + name_of(v);
    case 1:
        return v < 0 ? std::string("names no root") : "names root " + std::to_string(v);
    case 2: {
        constexpr const char* ops[] = {"sum", "prod", "min", "max"};
        return v < 0 || v > 3 ? std::string("takes no reduction")
                              : std::string("reduces by ") + ops[v];
    }
    case 3:
        return "passes elements of " + std::to_string(v / 10000) + " " +
               (v / 1000 % 10 == 0   ? "floating-point"
                : v / 1000 % 10 == 1 ? "signed integer"
                                     : "unsigned integer") +
               " number(s) of " + std::to_string(v / 10 % 100) + " bytes" +
               (v % 10 ? ", active" : ", plain");
    case 4:
        return "passes " + std::to_string(v) + " elements";
    default:
        return v ? std::string("fails its own checks of the call (its error says which)")
                 : std::string("passes its own checks of the call");
    }
}

// A check's buffers: each field and its negation sent, the smallest of each received.
using check_buffers = std::array<long long, 24>;

// The thread's buffers for its next check. A check a rank gave up waiting for stays pending in
// MPI, which may still read and write its buffers: they go with it to the abandoned checks.
inline std::unique_ptr<check_buffers>& check_memory() {
    static thread_local std::unique_ptr<check_buffers> buffers;
    if (!buffers)
        buffers = std::make_unique<check_buffers>();
    return buffers;
}
// A check or a sweep's transfer given up on, with the memory MPI may still use.
struct abandoned_check {
    MPI_Request request;
    std::shared_ptr<void> buffers;
};
inline std::vector<abandoned_check>& abandoned_checks() {
    static thread_local std::vector<abandoned_check> checks;
    return checks;
}
// Completes them, once the other ranks have joined (the tests of the timeout use it).
inline void wait_for_abandoned_checks() {
    for (abandoned_check& a : abandoned_checks())
        MPI_Wait(&a.request, MPI_STATUS_IGNORE);
    abandoned_checks().clear();
}

// Calls `done` until it returns true or the timeout has passed; false after the timeout.
template <class Done>
bool within_timeout(Done done) {
    const auto start = std::chrono::steady_clock::now();
    const double timeout = checking_state().timeout_seconds;
    while (!done()) {
        if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >
            timeout)
            return false;
        std::this_thread::yield();
    }
    return true;
}

inline std::string waited() {
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%g", checking_state().timeout_seconds);
    return std::string(": waited ") + seconds + " s for ";
}
inline constexpr const char* after_timeout =
    " (so does a rank still computing or stopped in a debugger: nabla::mpi::set_checking's "
    "timeout). MPI cannot be used after this error: end the program with MPI_Abort";

inline bool test(MPI_Request& request, const char* what) {
    int done = 0;
    check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), what);
    return done != 0;
}

// Waits for a non-blocking check, at most the timeout.
inline void wait_for_check(MPI_Request& request, const char* what) {
    if (within_timeout([&] { return test(request, "MPI_Test (nabla's check)"); }))
        return;
    abandoned_checks().push_back({request, std::move(check_memory())});
    fail(std::string(what) + waited() +
         "the other ranks of the communicator to make the same call (a rank that does not make "
         "it, a collective every rank makes or a sweep every rank that recorded makes as often "
         "as the others, leaves them waiting" +
         after_timeout);
}

// The sweep's point-to-point transfers with checking on: a rank whose peer does not sweep the
// other end of a message (it sweeps alone, or fewer times) is told so after the timeout.
[[noreturn]] inline void sweep_peer_timeout(const char* what, int peer) {
    fail(std::string(what) + waited() + "rank " + std::to_string(peer) +
         " to sweep the other end of the message (the ranks a message went between sweep as "
         "often as each other; a rank that sweeps alone, or not at all, leaves the other waiting" +
         after_timeout);
}

// Completes a sweep's transfer to or from `peer`; with checking on, waits at most the timeout,
// then gives the transfer up with `buffers`, the memory it uses.
inline void
sweep_wait(MPI_Request& request, std::shared_ptr<void> buffers, int peer, const char* what) {
    if (!checking_state().on) {
        check(MPI_Wait(&request, MPI_STATUS_IGNORE), what);
        return;
    }
    if (within_timeout([&] { return test(request, what); }))
        return;
    abandoned_checks().push_back({request, std::move(buffers)});
    sweep_peer_timeout(what, peer);
}

// With checking on: the ranks agree on the call in one MPI_Iallreduce of each field and its
// negation (MPI_MIN gives the smallest and the largest); where they differ, the ranks' fields
// (MPI_Allgather) name the first rank that differs from rank 0, on every rank.
inline void agree(const char* what, MPI_Comm comm, const call_signature& s, bool sweep = false) {
    if (!checking_state().on)
        return;
    const std::string context = sweep ? std::string("the sweep's adjoint of ") + what : what;
    constexpr int n = 6;
    const std::array<long long, n> mine{s.operation, s.root,  s.reduction,
                                        s.element,   s.count, s.failed};
    check_buffers& buffers = *check_memory();
    long long* const both = buffers.data();
    long long* const range = buffers.data() + 2 * n;
    for (int k = 0; k < n; ++k) {
        both[k] = mine[k];
        both[n + k] = -mine[k];
    }
    MPI_Request request;
    check(MPI_Iallreduce(both, range, 2 * n, MPI_LONG_LONG, MPI_MIN, comm, &request),
          "MPI_Iallreduce (nabla's check)");
    wait_for_check(request, context.c_str());
    bool same = true;
    for (int k = 0; k < n; ++k)
        same = same && range[k] == -range[n + k];
    if (same)
        return;
    int size = 0;
    MPI_Comm_size(comm, &size);
    std::vector<long long> all(static_cast<std::size_t>(n * size));
    check(MPI_Allgather(mine.data(), n, MPI_LONG_LONG, all.data(), n, MPI_LONG_LONG, comm),
          "MPI_Allgather (nabla's check)");
    for (std::size_t field = 0; field < n; ++field)
        for (std::size_t rank = 1; rank < static_cast<std::size_t>(size); ++rank)
            if (all[rank * n + field] != all[field])
                fail(context + ": the ranks do not make the same call: rank 0 " +
                     describe(field, all[field]) + ", rank " + std::to_string(rank) + " " +
                     describe(field, all[rank * n + field]) +
                     " (a collective is made by every rank of the communicator, with the same "
                     "operation, root and reduction and buffers whose sizes fit; "
                     "nabla::mpi::set_checking(false) turns this check off)");
}

// A collective being made: its check on entry, and the signature the tape entries it records
// keep, so that their adjoints are checked in the sweep too.
// A rank's own checks of the call (sizes, ranks, the root's counts) run first; with checking on,
// an error there is held until the ranks have agreed, so that every rank learns that one failed
// and none is left waiting in the collective: the failing rank then throws its own error, the
// others the disagreement.
struct collective_call {
    static inline thread_local const collective_call* current = nullptr;
    const char* what;
    call_signature signature;
    const collective_call* previous;
    template <class OwnChecks>
    collective_call(const char* w, MPI_Comm comm, const call_signature& s, OwnChecks own_checks)
        : what(w),
          signature(s),
          previous(current) {
        if (!checking_state().on) {
            own_checks();
        } else {
            std::string own_error;
            try {
                own_checks();
            } catch (const error& e) {
                own_error = e.what();
            }
            signature.failed = own_error.empty() ? 0 : 1;
            try {
                agree(w, comm, signature);
            } catch (const error&) {
                if (!own_error.empty())
                    throw error(own_error);
                throw;
            }
            if (!own_error.empty())
                throw error(own_error);
        }
        current = this;
    }
    collective_call(const collective_call&) = delete;
    collective_call& operator=(const collective_call&) = delete;
    ~collective_call() { current = previous; }
};

// gatherv and scatterv: the root's count for each rank against that rank's buffer (own), after
// agree: gathered on the root, and the root's verdict broadcast.
inline void agree_counts(const char* what,
                         const char* buffer,
                         MPI_Comm comm,
                         int root,
                         long long own,
                         std::span<const int> root_counts) {
    if (!checking_state().on)
        return;
    int rank = 0, size = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    std::vector<long long> owns(rank == root ? static_cast<std::size_t>(size) : 0);
    check(MPI_Gather(&own, 1, MPI_LONG_LONG, owns.data(), 1, MPI_LONG_LONG, root, comm),
          "MPI_Gather (nabla's check)");
    std::array<long long, 3> verdict{-1, 0, 0};  // the first rank that differs, expected, has
    if (rank == root)
        for (std::size_t k = 0; k < owns.size(); ++k)
            if (k < root_counts.size() && owns[k] != root_counts[k]) {
                verdict = {static_cast<long long>(k), root_counts[k], owns[k]};
                break;
            }
    check(MPI_Bcast(verdict.data(), 3, MPI_LONG_LONG, root, comm), "MPI_Bcast (nabla's check)");
    if (verdict[0] >= 0)
        fail(std::string(what) + ": the root (rank " + std::to_string(root) + ")'s counts give " +
             "rank " + std::to_string(verdict[0]) + " " + std::to_string(verdict[1]) +
             " elements, and rank " + std::to_string(verdict[0]) + "'s " + buffer + " holds " +
             std::to_string(verdict[2]) +
             " (nabla::mpi::set_checking(false) turns this check off)");
}

// ---------------------------------------------------------------------------------------------
// User-defined reductions on forward numbers: a + b, a * b (the product rule for the tangents),
// and the operand with the smaller or larger value. Not commutative, so that MPI combines ranks
// in their order and a tie keeps the lower rank's number.

// Whether b, of a higher rank, replaces a as the minimum (maximum): when it is smaller (larger),
// or a NaN where a is not, so that a NaN wins as it does in a sum.
template <op O, class T>
bool takes_over(const T& a, const T& b) {
    using std::isnan;
    if (isnan(a))
        return false;
    if (isnan(b))
        return true;
    return O == op::min ? b < a : a < b;
}

template <class E, op O>
void combine(void* in, void* inout, int* length, MPI_Datatype*) {
    const E* a = static_cast<const E*>(in);
    E* b = static_cast<E*>(inout);
    for (int i = 0; i < *length; ++i) {
        if constexpr (O == op::sum)
            b[i] = a[i] + b[i];
        else if constexpr (O == op::prod)
            b[i] = a[i] * b[i];
        else if (!takes_over<O>(nabla::primal(a[i]), nabla::primal(b[i])))
            b[i] = a[i];
    }
}

// The contiguous datatype of one forward number, made once (after MPI_Init).
template <Flat E>
MPI_Datatype element_datatype() {
    static const MPI_Datatype type = [] {
        MPI_Datatype t;
        check(MPI_Type_contiguous(static_cast<int>(flat<E>::count),
                                  datatype<typename flat<E>::scalar>(), &t),
              "MPI_Type_contiguous");
        check(MPI_Type_commit(&t), "MPI_Type_commit");
        return t;
    }();
    return type;
}

template <class E, op O>
MPI_Op user_op() {
    static const MPI_Op made = [] {
        MPI_Op o;
        check(MPI_Op_create(&combine<E, O>, 0, &o), "MPI_Op_create");
        return o;
    }();
    return made;
}

inline MPI_Op builtin_op(op o) {
    switch (o) {
    case op::sum:
        return MPI_SUM;
    case op::prod:
        return MPI_PROD;
    case op::min:
        return MPI_MIN;
    default:
        return MPI_MAX;
    }
}

// How a reduction of flat elements E goes: datatype, count and operation for n elements. Sums are
// element-wise for every forward number, so they go as plain numbers with MPI_SUM.
template <Flat E>
struct reduction {
    MPI_Datatype type;
    int count;
    MPI_Op operation;
};
template <Flat E>
reduction<E> reduction_of(std::size_t n, op o, const char* what) {
    if constexpr (std::is_arithmetic_v<E>) {
        return {datatype<E>(), count_of<E>(n, what), builtin_op(o)};
    } else {
        if (o == op::sum)
            return {datatype<typename flat<E>::scalar>(), count_of<E>(n, what), MPI_SUM};
        (void)count_of<E>(n, what);
        const int count = static_cast<int>(n);
        switch (o) {
        case op::prod:
            return {element_datatype<E>(), count, user_op<E, op::prod>()};
        case op::min:
            return {element_datatype<E>(), count, user_op<E, op::min>()};
        default:
            return {element_datatype<E>(), count, user_op<E, op::max>()};
        }
    }
}

template <class E>
void* raw(E* p) {
    return static_cast<void*>(p);
}
template <class E>
void* raw(const E* p) {
    return const_cast<void*>(static_cast<const void*>(p));
}

// ---------------------------------------------------------------------------------------------
// Active variables: their values, the tape they are recorded on, and the entries.

using nabla::detail::tape_access;

// Memory for the values and adjoints that cross MPI, kept per thread, value type and slot
// (0: values sent, 1: values received, 2 and 3: adjoints in a sweep), so that a large buffer is
// paged in once rather than at every operation. Its contents are undefined until written.
template <class T>
std::span<T> scratch(std::size_t n, int slot) {
    thread_local std::vector<T> buffers[4];
    std::vector<T>& b = buffers[slot];
    if (b.size() < n)
        b.resize(n);
    return {b.data(), n};
}

// The operands of an entry: their indices on the tape (0 for constants), kept as the first
// index alone when they are one run of consecutive variables (an array's elements, the outputs
// of another operation), so that their adjoints are added by a loop over contiguous memory.
class operand_set {
public:
    operand_set() = default;
    // One pass over the inputs: checks that each is of t's recording or a constant (a stale
    // variable is a tape_error), writes its value into values[k] and its index.
    template <class T>
    operand_set(const nabla::tape<T>& t, std::span<const active<T>> inputs, T* values)
        : size_(inputs.size()) {
        const std::uint32_t generation = t.generation();
        bool run = true;
        for (std::size_t k = 0; k < size_; ++k) {
            const active<T>& x = inputs[k];
            values[k] = x.value;
            nabla::detail::tape_index i = x.index();
            if (x.generation() != generation) [[unlikely]] {
                tape_access::check(t, x.generation(), i);  // throws unless a constant
                i = 0;
            }
            if (k == 0)
                first_ = i;
            if (run && (i == 0 || i != first_ + k)) [[unlikely]] {
                run = false;
                list_.resize(size_);
                for (std::size_t j = 0; j < k; ++j)
                    list_[j] = static_cast<nabla::detail::tape_index>(first_ + j);
            }
            if (!run)
                list_[k] = i;
        }
    }
    std::size_t size() const { return size_; }
    nabla::detail::tape_index operator[](std::size_t k) const {
        return list_.empty() ? static_cast<nabla::detail::tape_index>(first_ + k) : list_[k];
    }
    // adjoints[operand k] += g[k] for every operand that is not a constant.
    template <class T>
    void add(T* adjoints, const T* g) const {
        if (list_.empty()) {
            T* a = adjoints + first_;
            for (std::size_t k = 0; k < size_; ++k)
                a[k] += g[k];
            return;
        }
        for (std::size_t k = 0; k < size_; ++k)
            if (list_[k] != 0)
                adjoints[list_[k]] += g[k];
    }

private:
    std::size_t size_ = 0;
    nabla::detail::tape_index first_ = 0;
    std::vector<nabla::detail::tape_index> list_;  // empty for a run
};

// What an operation reads of its active inputs: the tape that records (null when none does),
// their values (in the thread's scratch memory, slot 0) and, when a tape records, their operand
// set; all in one pass.
template <class T>
struct inputs_read {
    nabla::tape<T>* tape;
    std::span<const T> values;
    operand_set operands;
    T* buffer;  // values' memory, with `spare` more elements after them
};
template <class T>
inputs_read<T> read_inputs(std::span<const active<T>> in, std::size_t spare = 0) {
    nabla::tape<T>* on = nabla::detail::active_tape<T>;
    T* const buffer = scratch<T>(in.size() + spare, 0).data();
    const std::span<T> values(buffer, in.size());
    if (on == nullptr) {
        for (std::size_t k = 0; k < in.size(); ++k) {
            if (in[k].index() != 0)
                nabla::detail::throw_no_tape();
            values[k] = in[k].value;
        }
        return {nullptr, values, {}, buffer};
    }
    return {on, values, operand_set(*on, in, values.data()), buffer};
}

// Writes new variables with the given values into `outputs`: recorded one after another on `t`
// (the index of the first is returned), or constants when no tape records.
template <class T>
nabla::detail::tape_index
new_variables(nabla::tape<T>* t, const T* values, std::span<active<T>> outputs) {
    const std::size_t n = outputs.size();
    if (t == nullptr) {
        for (std::size_t k = 0; k < n; ++k)
            outputs[k] = active<T>(values[k]);
        return 0;
    }
    const nabla::detail::tape_index first = tape_access::add_variables(*t, n);
    const std::uint32_t generation = t->generation();
    for (std::size_t k = 0; k < n; ++k)
        outputs[k] = tape_access::variable(
            values[k], static_cast<nabla::detail::tape_index>(first + k), generation);
    return first;
}

// Adds g[k] into the adjoints of the operands.
template <class T>
void add_adjoints(T* adjoints, const operand_set& operands, const T* g) {
    operands.add(adjoints, g);
}

// Records an entry whose outputs are the n variables from `first` on (none: n = 0, first is
// where the next statement goes) and whose sweep runs pullback(adjoints, adjoint communicator).
template <class T, class Pullback>
void add_entry(nabla::tape<T>& t,
               nabla::detail::tape_index first,
               std::size_t n,
               const communicator& c,
               Pullback pullback) {
    if (n == 0)
        first = static_cast<nabla::detail::tape_index>(t.statements());
    // An entry of a collective checks in the sweep that the ranks sweep the same one.
    const collective_call* call = checking_state().on ? collective_call::current : nullptr;
    const bool checked = call != nullptr;
    const call_signature signature = checked ? call->signature : call_signature{};
    const char* what = checked ? call->what : "";
    tape_access::add_array_operation(
        t, first, static_cast<nabla::detail::tape_index>(n),
        [state = c.state(), pullback = std::move(pullback), checked, signature, what](T* adjoints) {
            if (checked)
                agree(what, state->for_sweep(), signature, true);
            pullback(adjoints, state->for_sweep());
        });
}

// A value with the rank it comes from (MPI_MINLOC's pairs), combined by takes_over's rule.
template <class T>
struct located {
    T value;
    int rank;
};
template <class T>
MPI_Datatype located_datatype() {
    if constexpr (std::is_same_v<T, double>)
        return MPI_DOUBLE_INT;
    else if constexpr (std::is_same_v<T, float>)
        return MPI_FLOAT_INT;
    else
        return MPI_LONG_DOUBLE_INT;
}
template <class T, op O>
void combine_located(void* in, void* inout, int* length, MPI_Datatype*) {
    const located<T>* a = static_cast<const located<T>*>(in);
    located<T>* b = static_cast<located<T>*>(inout);
    // Field by field: MPI's temporary buffers may end at the last pair's int, before the
    // struct's padding.
    for (int i = 0; i < *length; ++i)
        if (!takes_over<O>(a[i].value, b[i].value)) {
            b[i].value = a[i].value;
            b[i].rank = a[i].rank;
        }
}
template <class T, op O>
MPI_Op located_op() {
    static const MPI_Op made = [] {
        MPI_Op o;
        check(MPI_Op_create(&combine_located<T, O>, 0, &o), "MPI_Op_create");
        return o;
    }();
    return made;
}

// A product over the ranks, kept so that the partials, the products of the other ranks' factors,
// come out as a product on one rank would give them, whatever the factors: the product itself
// (as MPI multiplies, in rank order), the product of the finite non-zero factors as a mantissa
// and a binary exponent (so that it never overflows), and the numbers of zero, infinite and NaN
// factors (the infinities' signs go into the mantissa).
template <class T>
struct product {
    T all;
    T mantissa;
    T exponent;
    T zeros;
    T infinities;
    T nans;
};

template <class T>
product<T> factor(T x) {
    using std::frexp, std::isinf, std::isnan;
    if (x == T(0))
        return {x, T(1), T(0), T(1), T(0), T(0)};
    if (isnan(x))
        return {x, T(1), T(0), T(0), T(0), T(1)};
    if (isinf(x))
        return {x, x < T(0) ? T(-1) : T(1), T(0), T(0), T(1), T(0)};
    int e = 0;
    const T m = frexp(x, &e);
    return {x, m, T(e), T(0), T(0), T(0)};
}
template <class T>
void combine_products(void* in, void* inout, int* length, MPI_Datatype*) {
    using std::frexp;
    const product<T>* a = static_cast<const product<T>*>(in);
    product<T>* b = static_cast<product<T>*>(inout);
    for (int i = 0; i < *length; ++i) {
        int e = 0;
        const T m = frexp(a[i].mantissa * b[i].mantissa, &e);
        b[i] = {a[i].all * b[i].all,
                m,
                a[i].exponent + b[i].exponent + T(e),
                a[i].zeros + b[i].zeros,
                a[i].infinities + b[i].infinities,
                a[i].nans + b[i].nans};
    }
}
template <class T>
MPI_Datatype product_datatype() {
    static const MPI_Datatype type = [] {
        MPI_Datatype t;
        check(MPI_Type_contiguous(6, wire_datatype<T>(), &t), "MPI_Type_contiguous");
        check(MPI_Type_commit(&t), "MPI_Type_commit");
        return t;
    }();
    return type;
}
template <class T>
MPI_Op product_op() {
    static const MPI_Op made = [] {
        MPI_Op o;
        check(MPI_Op_create(&combine_products<T>, 0, &o), "MPI_Op_create");
        return o;
    }();
    return made;
}
template <class T>
std::vector<product<T>> factors(std::span<const active<T>> in) {
    std::vector<product<T>> p(in.size());
    for (std::size_t k = 0; k < in.size(); ++k)
        p[k] = factor(in[k].value);
    return p;
}
// d (product over the ranks) / d x: the product of the other ranks' factors, from the product
// `p` of all of them with x's own taken out.
template <class T>
T product_of_others(T x, const product<T>& p) {
    using std::ldexp, std::copysign;
    const product<T> own = factor(x);
    const T zeros = p.zeros - own.zeros;
    const T infinities = p.infinities - own.infinities;
    const T m = p.mantissa / own.mantissa;
    if (p.nans - own.nans > T(0) || (zeros > T(0) && infinities > T(0)))
        return std::numeric_limits<T>::quiet_NaN();
    if (zeros > T(0))
        return copysign(T(0), m);
    if (infinities > T(0))
        return copysign(std::numeric_limits<T>::infinity(), m);
    return ldexp(m, static_cast<int>(p.exponent - own.exponent));
}

}  // namespace detail

// ---------------------------------------------------------------------------------------------
// Buffers: contiguous ranges (std::vector, std::array, std::span) of plain numbers, forward
// numbers or active variables. Sizes are counted in elements.

template <class R>
concept buffer = std::ranges::contiguous_range<R> && std::ranges::sized_range<R> &&
    detail::Element<detail::element_t<R>>;

template <class R>
concept output_buffer =
    buffer<R> && !std::is_const_v<std::remove_reference_t<std::ranges::range_reference_t<R>>>;

namespace detail {

template <class R>
auto as_span(R&& r) {
    return std::span(std::ranges::data(r), std::ranges::size(r));
}
template <class R>
auto as_const_span(const R& r) {
    using E = element_t<R>;
    return std::span<const E>(std::ranges::data(r), std::ranges::size(r));
}

// The input of an operation on plain or forward numbers, as MPI may read it: where it overlaps
// the output (the same vector passed as both), a copy of it, kept in `copy`.
template <class E>
const E* apart(std::span<const E> in, std::span<E> out, std::vector<E>& copy) {
    const auto* in_begin = reinterpret_cast<const unsigned char*>(in.data());
    const auto* out_begin = reinterpret_cast<const unsigned char*>(out.data());
    const bool overlap = !in.empty() && !out.empty() &&
                         std::less<>{}(in_begin, out_begin + out.size_bytes()) &&
                         std::less<>{}(out_begin, in_begin + in.size_bytes());
    if (!overlap)
        return in.data();
    copy.assign(in.begin(), in.end());
    return copy.data();
}

template <class In, class Out>
void same_elements() {
    static_assert(std::is_same_v<element_t<In>, element_t<Out>>,
                  "nabla::mpi: the input and output buffers hold different element types");
}

}  // namespace detail

// ---------------------------------------------------------------------------------------------
// bcast: the root's buffer to every rank. On the other ranks the buffer's variables are new ones;
// the root's stay as they are.

template <output_buffer B>
void bcast(B&& buffer, int root, const communicator& c) {
    using E = detail::element_t<B>;
    using S = typename detail::wire<E>::scalar;
    auto b = detail::as_span(buffer);
    constexpr const char* what = "nabla::mpi::bcast";
    int count = 0;
    const detail::collective_call call(
        what, c.get(),
        {static_cast<long long>(detail::collective::bcast), root, -1, detail::element_code<E>(),
         static_cast<long long>(b.size())},
        [&] {
            detail::check_rank(what, "root", root, c.size(), detail::peer::root);
            count = detail::count_of<E>(b.size(), what);
        });
    if constexpr (detail::Flat<E>) {
        detail::check(MPI_Bcast(detail::raw(b.data()), count, detail::datatype<S>(), root, c.get()),
                      "MPI_Bcast");
    } else {
        using T = typename E::value_type;
        const bool is_root = c.rank() == root;
        auto read = detail::read_inputs<T>(is_root ? std::span<const E>(b) : std::span<const E>());
        nabla::tape<T>* t = read.tape;
        const std::span<T> values = detail::scratch<T>(b.size(), 1);
        if (is_root)
            std::ranges::copy(read.values, values.begin());
        detail::check(MPI_Bcast(values.data(), count, detail::wire_datatype<T>(), root, c.get()),
                      "MPI_Bcast");
        if (is_root) {
            if (t != nullptr)
                detail::add_entry<T>(*t, 0, 0, c,
                                     [operands = std::move(read.operands), root,
                                      count](T* adjoints, MPI_Comm adjoint) {
                                         const std::span<T> sum =
                                             detail::scratch<T>(operands.size(), 2);
                                         std::ranges::fill(sum, T(0));
                                         detail::check(MPI_Reduce(MPI_IN_PLACE, sum.data(), count,
                                                                  detail::wire_datatype<T>(),
                                                                  MPI_SUM, root, adjoint),
                                                       "MPI_Reduce (the adjoint of bcast)");
                                         detail::add_adjoints(adjoints, operands, sum.data());
                                     });
        } else {
            const auto first = detail::new_variables<T>(t, values.data(), b);
            if (t != nullptr)
                detail::add_entry<T>(*t, first, b.size(), c,
                                     [first, root, count](T* adjoints, MPI_Comm adjoint) {
                                         detail::check(MPI_Reduce(adjoints + first, nullptr, count,
                                                                  detail::wire_datatype<T>(),
                                                                  MPI_SUM, root, adjoint),
                                                       "MPI_Reduce (the adjoint of bcast)");
                                     });
        }
    }
}

// One number from the root to every rank.
template <detail::Element E>
E bcast(E x, int root, const communicator& c) {
    bcast(std::span<E>(&x, 1), root, c);
    return x;
}
template <nabla::detail::ActiveExpression X>
auto bcast(const X&, int, const communicator&) {
    static_assert(detail::always_false<X>,
                  "nabla::mpi::bcast(x, root, c): x is an expression of active variables (such "
                  "as x * x), not a variable: name its value first, nabla::var y = x * x; then "
                  "nabla::mpi::bcast(y, root, c)");
    return active<typename nabla::detail::active_value_type<std::remove_cvref_t<X>>::type>{};
}

// ---------------------------------------------------------------------------------------------
// allreduce and reduce: element-wise reductions over the ranks. reduce writes `out` on the root
// only (the other ranks' out is not touched and may be empty).

namespace detail {

template <class T>
void reduce_active(std::span<const active<T>> in,
                   std::span<active<T>> out,
                   op o,
                   int root,
                   const communicator& c,
                   const char* what) {
    const bool all = root < 0;  // allreduce
    const bool has_out = all || c.rank() == root;
    inputs_read<T> read = read_inputs<T>(in);
    nabla::tape<T>* t = read.tape;
    const std::size_t n = in.size();
    const int count = count_of<active<T>>(n, what);
    const MPI_Datatype type = wire_datatype<T>();
    const std::span<T> result = scratch<T>(has_out ? n : 0, 1);
    auto run = [&](const void* send, void* receive, int cnt, MPI_Datatype dt, MPI_Op mo) {
        if (all)
            check(MPI_Allreduce(send, receive, cnt, dt, mo, c.get()), "MPI_Allreduce");
        else
            check(MPI_Reduce(send, receive, cnt, dt, mo, root, c.get()), "MPI_Reduce");
    };
    // What the sweep needs besides the adjoints: who won (min, max), the products (prod).
    std::vector<unsigned char> won;
    std::vector<product<T>> products;
    std::vector<T> own;
    if (o == op::sum) {
        run(read.values.data(), result.data(), count, type, MPI_SUM);
    } else if constexpr (!std::is_floating_point_v<T>) {
        fail(std::string(what) + ": min, max and prod of active variables of forward numbers are "
                                 "not implemented; sum is");
    } else if (o == op::min || o == op::max) {
        std::vector<located<T>> mine(n), best(has_out ? n : 0);
        for (std::size_t k = 0; k < n; ++k)
            mine[k] = {in[k].value, c.rank()};
        run(mine.data(), best.data(), count, located_datatype<T>(),
            o == op::min ? located_op<T, op::min>() : located_op<T, op::max>());
        for (std::size_t k = 0; k < result.size(); ++k)
            result[k] = best[k].value;
        if (t != nullptr) {
            if (all) {
                won.resize(n);
                for (std::size_t k = 0; k < n; ++k)
                    won[k] = best[k].rank == c.rank();
            } else if (c.rank() == root) {
                // The root keeps the winners' ranks for its broadcast in the sweep.
                own.resize(n);
                for (std::size_t k = 0; k < n; ++k)
                    own[k] = static_cast<T>(best[k].rank);
            }
        }
    } else {
        std::vector<product<T>> mine = factors<T>(in);
        products.resize(has_out ? n : 0);
        run(mine.data(), products.data(), count, product_datatype<T>(), product_op<T>());
        for (std::size_t k = 0; k < result.size(); ++k)
            result[k] = products[k].all;
        if (t != nullptr) {
            own.assign(read.values.begin(), read.values.end());
        } else
            products.clear();
    }
    nabla::detail::tape_index first = 0;
    if (has_out)
        first = new_variables<T>(t, result.data(), out);
    if (t == nullptr)
        return;

    operand_set operands = std::move(read.operands);
    const std::size_t outputs = has_out ? n : 0;
    const int rank = c.rank();
    if (o == op::sum) {
        add_entry<T>(*t, first, outputs, c,
                     [operands = std::move(operands), first, count, all, root,
                      rank](T* adjoints, MPI_Comm adjoint) {
                         const std::span<T> w = scratch<T>(operands.size(), 2);
                         if (all) {
                             check(MPI_Allreduce(adjoints + first, w.data(), count,
                                                 wire_datatype<T>(), MPI_SUM, adjoint),
                                   "MPI_Allreduce (the adjoint of allreduce)");
                         } else {
                             if (rank == root)
                                 std::copy_n(adjoints + first, w.size(), w.data());
                             check(MPI_Bcast(w.data(), count, wire_datatype<T>(), root, adjoint),
                                   "MPI_Bcast (the adjoint of reduce)");
                         }
                         add_adjoints(adjoints, operands, w.data());
                     });
    } else if constexpr (!std::is_floating_point_v<T>) {
        return;  // (refused above)
    } else if (o == op::min || o == op::max) {
        add_entry<T>(*t, first, outputs, c,
                     [operands = std::move(operands), won = std::move(won),
                      winners = std::move(own), first, count, all, root,
                      rank](T* adjoints, MPI_Comm adjoint) {
                         const std::size_t n = operands.size();
                         if (all) {
                             const std::span<T> w = scratch<T>(n, 2);
                             check(MPI_Allreduce(adjoints + first, w.data(), count,
                                                 wire_datatype<T>(), MPI_SUM, adjoint),
                                   "MPI_Allreduce (the adjoint of allreduce)");
                             for (std::size_t k = 0; k < n; ++k)
                                 if (won[k] && operands[k] != 0)
                                     adjoints[operands[k]] += w[k];
                             return;
                         }
                         // The root sends each output's adjoint with the rank that won it.
                         std::vector<located<T>> w(n);
                         if (rank == root)
                             for (std::size_t k = 0; k < n; ++k)
                                 w[k] = {adjoints[first + k], static_cast<int>(winners[k])};
                         check(MPI_Bcast(w.data(), count, located_datatype<T>(), root, adjoint),
                               "MPI_Bcast (the adjoint of reduce)");
                         for (std::size_t k = 0; k < n; ++k)
                             if (w[k].rank == rank && operands[k] != 0)
                                 adjoints[operands[k]] += w[k].value;
                     });
    } else {
        add_entry<T>(
            *t, first, outputs, c,
            [operands = std::move(operands), products = std::move(products), x = std::move(own),
             first, count, all, root, rank](T* adjoints, MPI_Comm adjoint) {
                const std::size_t n = operands.size();
                if (all) {
                    const std::span<T> w = scratch<T>(n, 2);
                    check(MPI_Allreduce(adjoints + first, w.data(), count, wire_datatype<T>(),
                                        MPI_SUM, adjoint),
                          "MPI_Allreduce (the adjoint of allreduce)");
                    // (A zero adjoint adds nothing, even where a partial is infinite or NaN, as
                    // in the tape's own sweep.)
                    for (std::size_t k = 0; k < n; ++k)
                        if (operands[k] != 0 && !nabla::detail::exactly_zero(w[k]))
                            adjoints[operands[k]] += w[k] * product_of_others(x[k], products[k]);
                    return;
                }
                // The root sends each output's adjoint in place of the product itself.
                std::vector<product<T>> w(n);
                if (rank == root)
                    for (std::size_t k = 0; k < n; ++k) {
                        w[k] = products[k];
                        w[k].all = adjoints[first + k];
                    }
                check(MPI_Bcast(w.data(), count, product_datatype<T>(), root, adjoint),
                      "MPI_Bcast (the adjoint of reduce)");
                for (std::size_t k = 0; k < n; ++k)
                    if (operands[k] != 0 && !nabla::detail::exactly_zero(w[k].all))
                        adjoints[operands[k]] += w[k].all * product_of_others(x[k], w[k]);
            });
    }
}

}  // namespace detail

template <buffer In, output_buffer Out>
void allreduce(const In& in, Out&& out, op o, const communicator& c) {
    detail::same_elements<In, Out>();
    using E = detail::element_t<In>;
    auto i = detail::as_const_span(in);
    auto r = detail::as_span(out);
    constexpr const char* what = "nabla::mpi::allreduce";
    const detail::collective_call call(
        what, c.get(),
        {static_cast<long long>(detail::collective::allreduce), -1, static_cast<long long>(o),
         detail::element_code<E>(), static_cast<long long>(i.size())},
        [&] { detail::expect_size(what, "out", r.size(), i.size()); });
    if constexpr (detail::Flat<E>) {
        const auto how = detail::reduction_of<E>(i.size(), o, what);
        std::vector<E> copy;  // in and out the same vector: in place
        const E* send = i.data() == r.data() ? nullptr : detail::apart(i, r, copy);
        detail::check(MPI_Allreduce(send == nullptr ? MPI_IN_PLACE : detail::raw(send),
                                    detail::raw(r.data()), how.count, how.type, how.operation,
                                    c.get()),
                      "MPI_Allreduce");
    } else {
        detail::reduce_active<typename E::value_type>(i, r, o, -1, c, what);
    }
}

// One number reduced over the ranks, on every rank.
template <detail::Element E>
E allreduce(const E& x, op o, const communicator& c) {
    E y{};
    allreduce(std::span<const E>(&x, 1), std::span<E>(&y, 1), o, c);
    return y;
}
// An expression of active variables (x * x) is neither a variable nor a buffer: nabla says so
// before the compiler lists every overload.
// (The return type is deduced from the body, so that the static_assert is the first error.)
template <nabla::detail::ActiveExpression X>
auto allreduce(const X&, op, const communicator&) {
    static_assert(detail::always_false<X>,
                  "nabla::mpi::allreduce(x, op, c): x is an expression of active variables "
                  "(such as x * x), not a variable: name its value first, nabla::var y = x * x; "
                  "then nabla::mpi::allreduce(y, op, c)");
    return active<typename nabla::detail::active_value_type<std::remove_cvref_t<X>>::type>{};
}

template <buffer In, output_buffer Out>
void reduce(const In& in, Out&& out, op o, int root, const communicator& c) {
    detail::same_elements<In, Out>();
    using E = detail::element_t<In>;
    auto i = detail::as_const_span(in);
    auto r = detail::as_span(out);
    constexpr const char* what = "nabla::mpi::reduce";
    const detail::collective_call call(
        what, c.get(),
        {static_cast<long long>(detail::collective::reduce), root, static_cast<long long>(o),
         detail::element_code<E>(), static_cast<long long>(i.size())},
        [&] {
            detail::check_rank(what, "root", root, c.size(), detail::peer::root);
            if (c.rank() == root)
                detail::expect_size(what, "out (on the root)", r.size(), i.size());
        });
    if constexpr (detail::Flat<E>) {
        const auto how = detail::reduction_of<E>(i.size(), o, what);
        std::vector<E> copy;
        const bool is_root = c.rank() == root;
        const E* send = !is_root               ? i.data()
                        : i.data() == r.data() ? nullptr
                                               : detail::apart(i, r, copy);
        detail::check(MPI_Reduce(send == nullptr ? MPI_IN_PLACE : detail::raw(send),
                                 is_root ? detail::raw(r.data()) : nullptr, how.count, how.type,
                                 how.operation, root, c.get()),
                      "MPI_Reduce");
    } else {
        detail::reduce_active<typename E::value_type>(i, r, o, root, c, what);
    }
}

// ---------------------------------------------------------------------------------------------
// Gathering and scattering. allgather: every rank's n elements to every rank, in rank order
// (out holds size() * n). reduce_scatter: the element-wise sum over the ranks of size() * n
// elements, block r of it to rank r. gather/scatter: the same with a root; the v variants take
// each rank's count (and optionally where its block starts) at the root.

namespace detail {

// Values into `out` from a plain exchange of values, then the entry whose sweep runs the exchange
// the other way: exchange(send, receive, adjoint communicator) moves values, adjoint(out's
// adjoints, in's adjoints received, adjoint communicator) moves adjoints.
template <class T, class Forward, class Adjoint>
void exchange_active(std::span<const active<T>> in,
                     std::span<active<T>> out,
                     bool has_out,
                     const communicator& c,
                     Forward forward,
                     Adjoint adjoint) {
    inputs_read<T> read = read_inputs<T>(in);
    nabla::tape<T>* t = read.tape;
    const std::span<const T> values = read.values;
    const std::span<T> received = scratch<T>(has_out ? out.size() : 0, 1);
    forward(values.data(), received.data());
    nabla::detail::tape_index first = 0;
    if (has_out)
        first = new_variables<T>(t, received.data(), out);
    if (t == nullptr)
        return;
    add_entry<T>(*t, first, has_out ? out.size() : 0, c,
                 [operands = std::move(read.operands), first,
                  adjoint = std::move(adjoint)](T* adjoints, MPI_Comm comm) {
                     const std::span<T> g = scratch<T>(operands.size(), 2);
                     adjoint(adjoints + first, g.data(), comm);
                     add_adjoints(adjoints, operands, g.data());
                 });
}

inline std::vector<int> packed_displacements(std::span<const int> counts) {
    std::vector<int> d(counts.size());
    long long at = 0;
    for (std::size_t r = 0; r < counts.size(); ++r) {
        if (counts[r] < 0)
            fail("a negative count (" + std::to_string(counts[r]) + ") for rank " +
                 std::to_string(r));
        d[r] = static_cast<int>(at);
        at += counts[r];
        if (at > INT_MAX)
            fail("the counts add up to more than one MPI message can count");
    }
    return d;
}

// The displacements of the v variants' blocks (packed in rank order when none are given), after
// checking on the root that there is a count and a displacement per rank, that every block fits
// in the buffer of `whole` elements, and that the root's own count is its `own` elements.
inline std::vector<int> blocks(const char* what,
                               std::span<const int> counts,
                               std::span<const int> displacements,
                               int ranks,
                               int root,
                               const char* whole_name,
                               std::size_t whole,
                               const char* own_name,
                               std::size_t own) {
    expect_size(what, "counts", counts.size(), static_cast<std::size_t>(ranks));
    std::vector<int> d = displacements.empty()
                             ? packed_displacements(counts)
                             : std::vector<int>(displacements.begin(), displacements.end());
    expect_size(what, "displacements", d.size(), static_cast<std::size_t>(ranks));
    (void)packed_displacements(counts);  // the counts' checks
    for (std::size_t k = 0; k < d.size(); ++k)
        if (d[k] < 0 ||
            static_cast<std::size_t>(d[k]) + static_cast<std::size_t>(counts[k]) > whole)
            fail(std::string(what) + ": rank " + std::to_string(k) + "'s block [" +
                 std::to_string(d[k]) + ", " + std::to_string(d[k] + counts[k]) +
                 ") does not fit in " + whole_name + ", which holds " + std::to_string(whole));
    const int root_count = counts[static_cast<std::size_t>(root)];
    if (static_cast<std::size_t>(root_count) != own)
        fail(std::string(what) + ": the root's count says " + std::to_string(root_count) +
             " elements, its " + own_name + " holds " + std::to_string(own));
    return d;
}

inline std::vector<int> scaled(std::span<const int> v, int by) {
    std::vector<int> s(v.begin(), v.end());
    for (int& x : s)
        x *= by;
    return s;
}

}  // namespace detail

template <buffer In, output_buffer Out>
void allgather(const In& in, Out&& out, const communicator& c) {
    detail::same_elements<In, Out>();
    using E = detail::element_t<In>;
    using S = typename detail::wire<E>::scalar;
    auto i = detail::as_const_span(in);
    auto r = detail::as_span(out);
    constexpr const char* what = "nabla::mpi::allgather";
    const detail::collective_call call(
        what, c.get(),
        {static_cast<long long>(detail::collective::allgather), -1, -1, detail::element_code<E>(),
         static_cast<long long>(i.size())},
        [&] {
            detail::expect_size(what, "out", r.size(),
                                i.size() * static_cast<std::size_t>(c.size()));
        });
    (void)detail::count_of<E>(r.size(), what);
    const int count = detail::count_of<E>(i.size(), what);
    const MPI_Datatype type = detail::datatype<S>();
    auto forward = [count, type, comm = c.get()](const void* send, void* receive) {
        detail::check(MPI_Allgather(send, count, type, receive, count, type, comm),
                      "MPI_Allgather");
    };
    if constexpr (detail::Flat<E>) {
        std::vector<E> copy;
        forward(detail::apart(i, r, copy), r.data());
    } else {
        using T = typename E::value_type;
        detail::exchange_active<T>(
            i, r, true, c, forward, [count, p = c.size()](const T* w, T* g, MPI_Comm comm) {
                // A reduce-scatter as an alltoall and a local sum: the bytes of the allgather,
                // in 1.0 to 1.7 times its time with Open MPI 4.1, where MPI_Reduce_scatter_block
                // took 4 times as long (bench/RESULTS.md).
                using S = typename detail::flat<T>::scalar;
                const auto block = static_cast<std::size_t>(count);
                const std::span<T> all = detail::scratch<T>(
                    block / detail::flat<T>::count * static_cast<std::size_t>(p), 3);
                detail::check(MPI_Alltoall(w, count, detail::wire_datatype<T>(), all.data(), count,
                                           detail::wire_datatype<T>(), comm),
                              "MPI_Alltoall (the adjoint of allgather)");
                const S* blocks = reinterpret_cast<const S*>(all.data());
                S* sum = reinterpret_cast<S*>(g);
                std::copy_n(blocks, block, sum);
                for (int q = 1; q < p; ++q)
                    for (std::size_t k = 0; k < block; ++k)
                        sum[k] += blocks[static_cast<std::size_t>(q) * block + k];
            });
    }
}

template <buffer In, output_buffer Out>
void reduce_scatter(const In& in, Out&& out, const communicator& c) {
    detail::same_elements<In, Out>();
    using E = detail::element_t<In>;
    using S = typename detail::wire<E>::scalar;
    auto i = detail::as_const_span(in);
    auto r = detail::as_span(out);
    constexpr const char* what = "nabla::mpi::reduce_scatter";
    const detail::collective_call call(
        what, c.get(),
        {static_cast<long long>(detail::collective::reduce_scatter), -1, -1,
         detail::element_code<E>(), static_cast<long long>(i.size())},
        [&] {
            detail::expect_size(what, "in", i.size(),
                                r.size() * static_cast<std::size_t>(c.size()));
        });
    (void)detail::count_of<E>(i.size(), what);
    const int count = detail::count_of<E>(r.size(), what);
    const MPI_Datatype type = detail::datatype<S>();
    auto forward = [count, type, comm = c.get()](const void* send, void* receive) {
        detail::check(MPI_Reduce_scatter_block(send, receive, count, type, MPI_SUM, comm),
                      "MPI_Reduce_scatter_block");
    };
    if constexpr (detail::Flat<E>) {
        std::vector<E> copy;
        forward(detail::apart(i, r, copy), r.data());
    } else {
        using T = typename E::value_type;
        detail::exchange_active<T>(
            i, r, true, c, forward, [count](const T* w, T* g, MPI_Comm comm) {
                detail::check(MPI_Allgather(w, count, detail::wire_datatype<T>(), g, count,
                                            detail::wire_datatype<T>(), comm),
                              "MPI_Allgather (the adjoint of reduce_scatter)");
            });
    }
}

template <buffer In, output_buffer Out>
void alltoall(const In& in, Out&& out, const communicator& c) {
    detail::same_elements<In, Out>();
    using E = detail::element_t<In>;
    using S = typename detail::wire<E>::scalar;
    auto i = detail::as_const_span(in);
    auto r = detail::as_span(out);
    constexpr const char* what = "nabla::mpi::alltoall";
    const auto p = static_cast<std::size_t>(c.size());
    const detail::collective_call call(
        what, c.get(),
        {static_cast<long long>(detail::collective::alltoall), -1, -1, detail::element_code<E>(),
         static_cast<long long>(i.size())},
        [&] {
            detail::expect_size(what, "out", r.size(), i.size());
            if (i.size() % p != 0)
                detail::fail(std::string(what) + ": in holds " + std::to_string(i.size()) +
                             " elements, not a multiple of the " + std::to_string(p) + " ranks");
        });
    (void)detail::count_of<E>(i.size(), what);
    const int count = detail::count_of<E>(i.size() / p, what);
    const MPI_Datatype type = detail::datatype<S>();
    auto forward = [count, type, comm = c.get()](const void* send, void* receive) {
        detail::check(MPI_Alltoall(send, count, type, receive, count, type, comm), "MPI_Alltoall");
    };
    if constexpr (detail::Flat<E>) {
        std::vector<E> copy;
        forward(detail::apart(i, r, copy), r.data());
    } else {
        using T = typename E::value_type;
        detail::exchange_active<T>(
            i, r, true, c, forward, [count](const T* w, T* g, MPI_Comm comm) {
                detail::check(MPI_Alltoall(w, count, detail::wire_datatype<T>(), g, count,
                                           detail::wire_datatype<T>(), comm),
                              "MPI_Alltoall (the adjoint of alltoall)");
            });
    }
}

// gatherv: rank r's in (counts[r] elements) to the root's out at displacements[r] (packed in rank
// order without them). counts and displacements are read on the root only.
template <buffer In, output_buffer Out>
void gatherv(const In& in,
             Out&& out,
             std::span<const int> counts,
             std::span<const int> displacements,
             int root,
             const communicator& c) {
    detail::same_elements<In, Out>();
    using E = detail::element_t<In>;
    using S = typename detail::wire<E>::scalar;
    auto i = detail::as_const_span(in);
    auto r = detail::as_span(out);
    constexpr const char* what = "nabla::mpi::gatherv";
    constexpr int per = static_cast<int>(detail::wire<E>::count);
    const bool is_root = c.rank() == root;
    std::vector<int> wire_counts, wire_displacements, d;
    int count = 0;
    const detail::collective_call call(
        what, c.get(),
        {static_cast<long long>(detail::collective::gatherv), root, -1, detail::element_code<E>(),
         -1},
        [&] {
            detail::check_rank(what, "root", root, c.size(), detail::peer::root);
            if (is_root) {
                d = detail::blocks(what, counts, displacements, c.size(), root, "out", r.size(),
                                   "in", i.size());
                (void)detail::count_of<E>(r.size(), what);
                wire_counts = detail::scaled(counts, per);
                wire_displacements = detail::scaled(d, per);
            }
            count = detail::count_of<E>(i.size(), what);
        });
    detail::agree_counts(what, "in", c.get(), root, static_cast<long long>(i.size()), counts);
    const MPI_Datatype type = detail::datatype<S>();
    auto forward = [=, comm = c.get()](const void* send, void* receive) {
        detail::check(MPI_Gatherv(send, count, type, receive, wire_counts.data(),
                                  wire_displacements.data(), type, root, comm),
                      "MPI_Gatherv");
    };
    if constexpr (detail::Flat<E>) {
        std::vector<E> copy;
        forward(is_root ? detail::apart(i, r, copy) : i.data(),
                is_root ? detail::raw(r.data()) : nullptr);
    } else {
        using T = typename E::value_type;
        // The blocks arrive packed in rank order and become variables recorded one after
        // another, so that their adjoints go back packed too; out's elements between the blocks
        // are not touched.
        detail::inputs_read<T> read = detail::read_inputs<T>(i);
        nabla::tape<T>* t = read.tape;
        const std::span<const T> values = read.values;
        // Blocks in elements (packed: where each starts among the new variables), and the same
        // in plain numbers for MPI.
        std::vector<int> packed, packed_counts, packed_displacements;
        std::size_t total = 0;
        if (is_root) {
            packed = detail::packed_displacements(counts);
            total = static_cast<std::size_t>(packed.back() + counts.back());
            packed_counts = wire_counts;
            packed_displacements = detail::scaled(packed, per);
        }
        const std::span<T> got = detail::scratch<T>(total, 1);
        detail::check(MPI_Gatherv(values.data(), count, type, got.data(), packed_counts.data(),
                                  packed_displacements.data(), type, root, c.get()),
                      "MPI_Gatherv");
        if (!is_root) {
            if (t != nullptr)
                detail::add_entry<T>(
                    *t, 0, 0, c,
                    [operands = std::move(read.operands), count, root](T* adjoints,
                                                                       MPI_Comm adjoint) {
                        const std::span<T> g = detail::scratch<T>(operands.size(), 2);
                        detail::check(MPI_Scatterv(nullptr, nullptr, nullptr,
                                                   detail::wire_datatype<T>(), g.data(), count,
                                                   detail::wire_datatype<T>(), root, adjoint),
                                      "MPI_Scatterv (the adjoint of gatherv)");
                        detail::add_adjoints(adjoints, operands, g.data());
                    });
            return;
        }
        std::vector<E> variables(total);
        const auto first = detail::new_variables<T>(t, got.data(), std::span<E>(variables));
        for (std::size_t rank = 0; rank < packed.size(); ++rank)
            std::copy_n(variables.begin() + packed[rank], counts[rank], r.begin() + d[rank]);
        if (t != nullptr)
            detail::add_entry<T>(
                *t, first, total, c,
                [operands = std::move(read.operands), first, count, root,
                 packed_counts = std::move(packed_counts),
                 packed = std::move(packed_displacements)](T* adjoints, MPI_Comm adjoint) {
                    const std::span<T> g = detail::scratch<T>(operands.size(), 2);
                    detail::check(MPI_Scatterv(adjoints + first, packed_counts.data(),
                                               packed.data(), detail::wire_datatype<T>(), g.data(),
                                               count, detail::wire_datatype<T>(), root, adjoint),
                                  "MPI_Scatterv (the adjoint of gatherv)");
                    detail::add_adjoints(adjoints, operands, g.data());
                });
    }
}

template <buffer In, output_buffer Out>
void gatherv(
    const In& in, Out&& out, std::span<const int> counts, int root, const communicator& c) {
    gatherv(in, std::forward<Out>(out), counts, {}, root, c);
}

template <buffer In, output_buffer Out>
void gather(const In& in, Out&& out, int root, const communicator& c) {
    const auto n = static_cast<int>(std::ranges::size(in));
    const std::vector<int> counts(c.rank() == root ? static_cast<std::size_t>(c.size()) : 0, n);
    if (c.rank() == root)
        detail::expect_size("nabla::mpi::gather", "out (on the root)", std::ranges::size(out),
                            std::ranges::size(in) * static_cast<std::size_t>(c.size()));
    gatherv(in, std::forward<Out>(out), counts, {}, root, c);
}

// scatterv: the root's in, block r (counts[r] elements at displacements[r], packed in rank order
// without them) to rank r's out. counts and displacements are read on the root only.
template <buffer In, output_buffer Out>
void scatterv(const In& in,
              std::span<const int> counts,
              std::span<const int> displacements,
              Out&& out,
              int root,
              const communicator& c) {
    detail::same_elements<In, Out>();
    using E = detail::element_t<In>;
    using S = typename detail::wire<E>::scalar;
    auto i = detail::as_const_span(in);
    auto r = detail::as_span(out);
    constexpr const char* what = "nabla::mpi::scatterv";
    constexpr int per = static_cast<int>(detail::wire<E>::count);
    const bool is_root = c.rank() == root;
    std::vector<int> wire_counts, wire_displacements, d, block_counts;
    int count = 0;
    const detail::collective_call call(
        what, c.get(),
        {static_cast<long long>(detail::collective::scatterv), root, -1, detail::element_code<E>(),
         -1},
        [&] {
            detail::check_rank(what, "root", root, c.size(), detail::peer::root);
            if (is_root) {
                d = detail::blocks(what, counts, displacements, c.size(), root, "in", i.size(),
                                   "out", r.size());
                block_counts.assign(counts.begin(), counts.end());
                (void)detail::count_of<E>(i.size(), what);
                wire_counts = detail::scaled(counts, per);
                wire_displacements = detail::scaled(d, per);
            }
            count = detail::count_of<E>(r.size(), what);
        });
    detail::agree_counts(what, "out", c.get(), root, static_cast<long long>(r.size()), counts);
    const MPI_Datatype type = detail::datatype<S>();
    auto forward = [=, comm = c.get()](const void* send, void* receive) {
        detail::check(MPI_Scatterv(send, wire_counts.data(), wire_displacements.data(), type,
                                   receive, count, type, root, comm),
                      "MPI_Scatterv");
    };
    if constexpr (detail::Flat<E>) {
        std::vector<E> copy;
        forward(is_root ? detail::raw(detail::apart(i, r, copy)) : nullptr, r.data());
    } else {
        using T = typename E::value_type;
        // The adjoints come back packed and are added into the root's inputs block by block, so
        // that blocks that overlap (one input sent to several ranks) sum their adjoints; inputs
        // outside every block get none.
        std::vector<int> packed;
        std::size_t total = 0;
        if (is_root) {
            packed = detail::packed_displacements(block_counts);
            total = static_cast<std::size_t>(packed.back() + block_counts.back());
        }
        detail::exchange_active<T>(
            is_root ? i : std::span<const E>(), r, true, c, forward,
            [=, n = i.size(), packed_counts = wire_counts,
             packed_displacements = detail::scaled(packed, per)](const T* w, T* g, MPI_Comm comm) {
                const std::span<T> blocks = detail::scratch<T>(total, 3);
                detail::check(MPI_Gatherv(w, count, detail::wire_datatype<T>(), blocks.data(),
                                          packed_counts.data(), packed_displacements.data(),
                                          detail::wire_datatype<T>(), root, comm),
                              "MPI_Gatherv (the adjoint of scatterv)");
                if (!is_root)
                    return;
                std::fill_n(g, n, T(0));
                for (std::size_t k = 0; k < packed.size(); ++k)
                    for (int j = 0; j < block_counts[k]; ++j)
                        g[d[k] + j] += blocks[static_cast<std::size_t>(packed[k] + j)];
            });
    }
}

template <buffer In, output_buffer Out>
void scatterv(
    const In& in, std::span<const int> counts, Out&& out, int root, const communicator& c) {
    scatterv(in, counts, {}, std::forward<Out>(out), root, c);
}

template <buffer In, output_buffer Out>
void scatter(const In& in, Out&& out, int root, const communicator& c) {
    const auto n = static_cast<int>(std::ranges::size(out));
    const std::vector<int> counts(c.rank() == root ? static_cast<std::size_t>(c.size()) : 0, n);
    if (c.rank() == root)
        detail::expect_size("nabla::mpi::scatter", "in (on the root)", std::ranges::size(in),
                            std::ranges::size(out) * static_cast<std::size_t>(c.size()));
    scatterv(in, counts, {}, std::forward<Out>(out), root, c);
}

// ---------------------------------------------------------------------------------------------
// Point to point. A receive's buffer must hold exactly the elements sent (an error otherwise,
// after the message is taken off the queue; for irecv, a message longer than the buffer is MPI's
// truncation error). A message of active variables carries one number more than its values: its
// number among the messages sent on that communicator, which its adjoint message, on the
// communicator's duplicate, takes as its tag. So adjoint messages pair up with their messages
// whatever order the two sides wait in; and active variables are sent and received as such on
// both sides (or plain numbers on both).

// Who a receive got its message from, and its tag (for MPI_ANY_SOURCE and MPI_ANY_TAG).
struct received {
    int source;
    int tag;
};

namespace detail {

inline received from_nowhere() {
    return {MPI_PROC_NULL, MPI_ANY_TAG};
}

// How a message's plain numbers make the user's elements: `per` numbers an element (a dual number
// travels as its value and tangents), and `extra` numbers nabla adds (a message of active
// variables carries its number for the adjoint's tag), so that a wrong count is reported in the
// elements the user's buffers hold.
struct layout {
    int per = 1;
    int extra = 0;
};

[[noreturn]] inline void
wrong_count(const char* what, int source, int tag, int got, int count, layout shape = {}) {
    const std::string holds =
        got >= shape.extra && (got - shape.extra) % shape.per == 0
            ? std::to_string((got - shape.extra) / shape.per) + " elements"
            : std::to_string(got) + " plain numbers, not a whole number of elements";
    // (A message of active variables carries one number more than one of plain numbers.)
    const bool mixed = got + 1 == count || got == count + 1;
    fail(std::string(what) + ": the message from rank " + std::to_string(source) + " (tag " +
         std::to_string(tag) + ") holds " + holds + " where the buffer takes " +
         std::to_string((count - shape.extra) / shape.per) +
         (mixed ? " (one number apart: one side sends active variables, the other plain numbers?)"
                : "") +
         " (buffers of one size on both sides, of active variables on both sides or on neither)");
}

// Receives exactly `count` plain numbers into `into`; in a sweep with checking on, waits for the
// message at most the timeout.
template <class E>
received receive_exactly(E* into,
                         int count,
                         int source,
                         int tag,
                         MPI_Comm comm,
                         const char* what,
                         layout shape = {},
                         bool in_sweep = false) {
    using S = typename flat<E>::scalar;
    if (source == MPI_PROC_NULL)
        return from_nowhere();
    MPI_Message message;
    MPI_Status status;
    if (in_sweep && checking_state().on) {
        const bool arrived = within_timeout([&] {
            int found = 0;
            check(MPI_Improbe(source, tag, comm, &found, &message, &status), "MPI_Improbe");
            return found != 0;
        });
        if (!arrived)
            sweep_peer_timeout(what, source);
    } else {
        check(MPI_Mprobe(source, tag, comm, &message, &status), "MPI_Mprobe");
    }
    int got = 0;
    check(MPI_Get_count(&status, datatype<S>(), &got), "MPI_Get_count");
    if (got != count) {
        std::vector<S> discard(got > 0 ? static_cast<std::size_t>(got) : 1);
        MPI_Mrecv(discard.data(), got, datatype<S>(), &message, MPI_STATUS_IGNORE);
        wrong_count(what, status.MPI_SOURCE, status.MPI_TAG, got, count, shape);
    }
    check(MPI_Mrecv(into, count, datatype<S>(), &message, &status), "MPI_Mrecv");
    return {status.MPI_SOURCE, status.MPI_TAG};
}

// A send and a receive at once, as MPI_Sendrecv (the send started first, so that neither
// waits for the other), with the received count checked. In a sweep with checking on, each
// waits at most the timeout, the send from a copy that a transfer given up on keeps.
template <class E>
received send_receive(const E* send,
                      int send_count,
                      int destination,
                      int send_tag,
                      E* receive,
                      int receive_count,
                      int source,
                      int receive_tag,
                      MPI_Comm comm,
                      const char* what,
                      layout shape = {},
                      bool in_sweep = false) {
    using S = typename flat<E>::scalar;
    const bool timed = in_sweep && checking_state().on;
    std::shared_ptr<std::vector<S>> copy;
    const void* sent = send;
    if (timed) {
        const S* plain = reinterpret_cast<const S*>(send);
        copy = std::make_shared<std::vector<S>>(plain, plain + send_count);
        sent = copy->data();
    }
    MPI_Request request;
    check(MPI_Isend(sent, send_count, wire_datatype<E>(), destination, send_tag, comm, &request),
          "MPI_Isend");
    received from;
    try {
        from = receive_exactly(receive, receive_count, source, receive_tag, comm, what, shape,
                               in_sweep);
    } catch (...) {
        if (timed)
            abandoned_checks().push_back({request, std::move(copy)});
        else
            MPI_Wait(&request, MPI_STATUS_IGNORE);
        throw;
    }
    if (timed)
        sweep_wait(request, std::move(copy), destination, what);
    else
        check(MPI_Wait(&request, MPI_STATUS_IGNORE), "MPI_Wait");
    return from;
}

// A sweep's blocking send of `count` plain numbers; with checking on, it waits at most the
// timeout, from a copy that a transfer given up on keeps.
template <class T>
void sweep_send(const T* data, int count, int to, int tag, MPI_Comm comm, const char* what) {
    using S = typename flat<T>::scalar;
    const S* plain = reinterpret_cast<const S*>(data);
    if (!checking_state().on) {
        check(MPI_Send(plain, count, datatype<S>(), to, tag, comm), what);
        return;
    }
    auto copy = std::make_shared<std::vector<S>>(plain, plain + count);
    MPI_Request request;
    check(MPI_Isend(copy->data(), count, datatype<S>(), to, tag, comm, &request), what);
    sweep_wait(request, std::move(copy), to, what);
}

// The number a message of active variables of type T carries: below the largest tag, and exact
// in the plain numbers T travels as.
template <class T>
int next_message(comm_state& c) {
    using S = typename flat<T>::scalar;
    long long modulus = c.tag_bound + 1;
    if constexpr (std::numeric_limits<S>::digits < 62)
        modulus = std::min(modulus, 1LL << std::numeric_limits<S>::digits);
    return static_cast<int>(c.messages.fetch_add(1, std::memory_order_relaxed) %
                            static_cast<std::uint64_t>(modulus));
}

// The number after n values in a message of active variables.
template <class T>
typename flat<T>::scalar& message_number(T* message, std::size_t n) {
    return reinterpret_cast<typename flat<T>::scalar*>(message)[n * flat<T>::count];
}

// A message's count in plain numbers with its number.
inline int with_number(int count, const char* what) {
    if (count == INT_MAX)
        fail(std::string(what) + ": too many elements for one MPI message");
    return count + 1;
}

}  // namespace detail

template <buffer In>
void send(const In& in, int destination, int tag, const communicator& c) {
    using E = detail::element_t<In>;
    using S = typename detail::wire<E>::scalar;
    auto i = detail::as_const_span(in);
    constexpr const char* what = "nabla::mpi::send";
    detail::check_rank(what, "destination", destination, c.size(), detail::peer::destination);
    const int count = detail::count_of<E>(i.size(), what);
    if constexpr (detail::Flat<E>) {
        detail::check(MPI_Send(detail::raw(i.data()), count, detail::datatype<S>(), destination,
                               tag, c.get()),
                      "MPI_Send");
    } else {
        using T = typename E::value_type;
        detail::inputs_read<T> read = detail::read_inputs<T>(i, 1);
        nabla::tape<T>* t = read.tape;
        const int number = detail::next_message<T>(*c.state());
        detail::message_number(read.buffer, i.size()) = static_cast<S>(number);
        detail::check(MPI_Send(read.buffer, detail::with_number(count, what), detail::datatype<S>(),
                               destination, tag, c.get()),
                      "MPI_Send");
        if (t == nullptr || destination == MPI_PROC_NULL)
            return;
        detail::add_entry<T>(*t, 0, 0, c,
                             [operands = std::move(read.operands), count, destination,
                              number](T* adjoints, MPI_Comm adjoint) {
                                 const std::span<T> g = detail::scratch<T>(operands.size(), 2);
                                 detail::receive_exactly(g.data(), count, destination, number,
                                                         adjoint, "the adjoint of nabla::mpi::send",
                                                         {}, true);
                                 detail::add_adjoints(adjoints, operands, g.data());
                             });
    }
}

// A receive from MPI_PROC_NULL leaves `out` as it is.
template <output_buffer Out>
received recv(Out&& out, int source, int tag, const communicator& c) {
    using E = detail::element_t<Out>;
    using S = typename detail::wire<E>::scalar;
    auto r = detail::as_span(out);
    constexpr const char* what = "nabla::mpi::recv";
    detail::check_rank(what, "source", source, c.size(), detail::peer::source);
    const int count = detail::count_of<E>(r.size(), what);
    if constexpr (detail::Flat<E>) {
        return detail::receive_exactly(reinterpret_cast<S*>(r.data()), count, source, tag, c.get(),
                                       what, {detail::wire<E>::count, 0});
    } else {
        using T = typename E::value_type;
        if (source == MPI_PROC_NULL)
            return detail::from_nowhere();
        nabla::tape<T>* t = nabla::detail::active_tape<T>;
        const std::span<T> message = detail::scratch<T>(r.size() + 1, 1);
        const received from =
            detail::receive_exactly(message.data(), detail::with_number(count, what), source, tag,
                                    c.get(), what, {detail::wire<E>::count, 1});
        const int number = static_cast<int>(detail::message_number(message.data(), r.size()));
        const auto first = detail::new_variables<T>(t, message.data(), r);
        if (t != nullptr)
            detail::add_entry<T>(
                *t, first, r.size(), c,
                [first, count, to = from.source, number](T* adjoints, MPI_Comm adjoint) {
                    detail::sweep_send(adjoints + first, count, to, number, adjoint,
                                       "the adjoint of nabla::mpi::recv");
                });
        return from;
    }
}

// send and recv at once (MPI_Sendrecv): no deadlock when every rank sends to a neighbour and
// receives from another, as in a halo exchange. A receive from MPI_PROC_NULL leaves `out` as it
// is; a send to it sends nothing.
template <buffer In, output_buffer Out>
received sendrecv(const In& in,
                  int destination,
                  int send_tag,
                  Out&& out,
                  int source,
                  int receive_tag,
                  const communicator& c) {
    detail::same_elements<In, Out>();
    using E = detail::element_t<In>;
    using S = typename detail::wire<E>::scalar;
    auto i = detail::as_const_span(in);
    auto r = detail::as_span(out);
    constexpr const char* what = "nabla::mpi::sendrecv";
    detail::check_rank(what, "destination", destination, c.size(), detail::peer::destination);
    detail::check_rank(what, "source", source, c.size(), detail::peer::source);
    const int send_count = detail::count_of<E>(i.size(), what);
    const int receive_count = detail::count_of<E>(r.size(), what);
    if constexpr (detail::Flat<E>) {
        std::vector<E> copy;
        return detail::send_receive(reinterpret_cast<const S*>(detail::apart(i, r, copy)),
                                    send_count, destination, send_tag,
                                    reinterpret_cast<S*>(r.data()), receive_count, source,
                                    receive_tag, c.get(), what, {detail::wire<E>::count, 0});
    } else {
        using T = typename E::value_type;
        detail::inputs_read<T> read = detail::read_inputs<T>(i, 1);
        nabla::tape<T>* t = read.tape;
        const int sent = detail::next_message<T>(*c.state());
        detail::message_number(read.buffer, i.size()) = static_cast<S>(sent);
        const std::span<T> message = detail::scratch<T>(r.size() + 1, 1);
        const received from = detail::send_receive(
            reinterpret_cast<const S*>(read.buffer), detail::with_number(send_count, what),
            destination, send_tag, reinterpret_cast<S*>(message.data()),
            detail::with_number(receive_count, what), source, receive_tag, c.get(), what,
            {detail::wire<E>::count, 1});
        const bool receives = from.source != MPI_PROC_NULL;
        const int got =
            receives ? static_cast<int>(detail::message_number(message.data(), r.size())) : 0;
        const auto first = receives ? detail::new_variables<T>(t, message.data(), r) : 0;
        if (t == nullptr)
            return from;
        // The adjoint: the received variables' adjoints go back to where they came from, the
        // sent variables' adjoints come from where they went.
        detail::add_entry<T>(
            *t, first, receives ? r.size() : 0, c,
            [operands = std::move(read.operands), first, receives, back_to = from.source, got,
             destination, sent, send_count, receive_count](T* adjoints, MPI_Comm adjoint) {
                const std::span<T> g = detail::scratch<T>(operands.size(), 2);
                if (destination == MPI_PROC_NULL)
                    std::ranges::fill(g, T(0));  // nothing comes back
                detail::send_receive(
                    receives ? adjoints + first : nullptr, receives ? receive_count : 0, back_to,
                    got, g.data(), destination != MPI_PROC_NULL ? send_count : 0, destination, sent,
                    adjoint, "the adjoint of nabla::mpi::sendrecv", {}, true);
                detail::add_adjoints(adjoints, operands, g.data());
            });
        return from;
    }
}

// ---------------------------------------------------------------------------------------------
// Non-blocking point to point: isend and irecv start a transfer, wait (or wait_all) completes
// it. As with MPI, the buffers of plain and forward numbers must stay as they are until the wait;
// active variables are copied at isend, and irecv's buffer receives its new variables at the wait.
// In the sweep, the wait's place starts the adjoint transfer (an irecv for an isend, an isend for
// an irecv) and the start's place waits for it, so the sweep overlaps as the recording did.

namespace detail {

struct request_state {
    MPI_Request handle = MPI_REQUEST_NULL;
    // Run once the transfer is complete: checks the received count, writes and records the
    // received variables, records the wait's entry.
    std::function<void(const MPI_Status&)> complete;
    bool pending = false;
};

// What an isend's or irecv's two tape entries share: the adjoint transfer, its buffer and the
// rank at its other end.
template <class T>
struct adjoint_transfer {
    MPI_Request handle = MPI_REQUEST_NULL;
    std::vector<T> buffer;
    int peer = MPI_PROC_NULL;
};

template <class T>
void wait_for(const std::shared_ptr<adjoint_transfer<T>>& a, const char* what) {
    sweep_wait(a->handle, a, a->peer, what);
}

// The tape an isend or irecv recorded on must still be the one recording at its wait.
template <class T>
void check_same_recording(nabla::tape<T>* t, std::uint32_t generation) {
    if (nabla::detail::active_tape<T> != t || t->generation() != generation)
        fail("nabla::mpi::wait: the isend or irecv of this request was recorded on a tape that "
             "no longer records here; wait for a request while the recording that started it "
             "lasts");
}

// The count of a completed receive of plain numbers S against the one expected.
template <class S>
void check_received(const MPI_Status& status, int expected, layout shape) {
    if (status.MPI_SOURCE == MPI_PROC_NULL)
        return;
    int got = 0;
    check(MPI_Get_count(&status, datatype<S>(), &got), "MPI_Get_count");
    if (got != expected)
        wrong_count("nabla::mpi::irecv", status.MPI_SOURCE, status.MPI_TAG, got, expected, shape);
}

}  // namespace detail

// A transfer started by isend or irecv, completed by wait.
class request {
public:
    request() = default;
    bool pending() const { return state_ != nullptr && state_->pending; }

private:
    explicit request(std::shared_ptr<detail::request_state> s) : state_(std::move(s)) {}
    template <buffer In>
    friend request isend(const In&, int, int, const communicator&);
    template <output_buffer Out>
    friend request irecv(Out&&, int, int, const communicator&);
    friend void wait(request&);
    friend void wait_all(std::span<request>);

    std::shared_ptr<detail::request_state> state_;
};

template <buffer In>
request isend(const In& in, int destination, int tag, const communicator& c) {
    using E = detail::element_t<In>;
    using S = typename detail::wire<E>::scalar;
    auto i = detail::as_const_span(in);
    constexpr const char* what = "nabla::mpi::isend";
    detail::check_rank(what, "destination", destination, c.size(), detail::peer::destination);
    const int count = detail::count_of<E>(i.size(), what);
    auto state = std::make_shared<detail::request_state>();
    if constexpr (detail::Flat<E>) {
        detail::check(MPI_Isend(detail::raw(i.data()), count, detail::datatype<S>(), destination,
                                tag, c.get(), &state->handle),
                      "MPI_Isend");
    } else {
        using T = typename E::value_type;
        detail::inputs_read<T> read = detail::read_inputs<T>(i, 1);
        nabla::tape<T>* t = read.tape;
        const int number = detail::next_message<T>(*c.state());
        detail::message_number(read.buffer, i.size()) = static_cast<S>(number);
        auto values = std::make_shared<std::vector<T>>(read.buffer, read.buffer + i.size() + 1);
        detail::check(MPI_Isend(values->data(), detail::with_number(count, what),
                                detail::datatype<S>(), destination, tag, c.get(), &state->handle),
                      "MPI_Isend");
        if (t == nullptr || destination == MPI_PROC_NULL) {
            state->complete = [values](const MPI_Status&) {};
        } else {
            auto transfer = std::make_shared<detail::adjoint_transfer<T>>();
            transfer->buffer.resize(i.size());
            // The start's place in the sweep: wait for the adjoints and add them.
            detail::add_entry<T>(
                *t, 0, 0, c,
                [operands = std::move(read.operands), transfer](T* adjoints, MPI_Comm) {
                    detail::wait_for(transfer, "the adjoint of nabla::mpi::isend");
                    detail::add_adjoints(adjoints, operands, transfer->buffer.data());
                });
            // The wait's place: start receiving them.
            state->complete = [values, transfer, t, generation = t->generation(), c, count,
                               destination, number](const MPI_Status&) {
                detail::check_same_recording(t, generation);
                detail::add_entry<T>(
                    *t, 0, 0, c, [transfer, count, destination, number](T*, MPI_Comm adjoint) {
                        transfer->peer = destination;
                        detail::check(MPI_Irecv(transfer->buffer.data(), count,
                                                detail::wire_datatype<T>(), destination, number,
                                                adjoint, &transfer->handle),
                                      "MPI_Irecv (the adjoint of isend)");
                    });
            };
        }
    }
    state->pending = true;
    return request(std::move(state));
}

template <output_buffer Out>
request irecv(Out&& out, int source, int tag, const communicator& c) {
    using E = detail::element_t<Out>;
    using S = typename detail::wire<E>::scalar;
    auto r = detail::as_span(out);
    constexpr const char* what = "nabla::mpi::irecv";
    detail::check_rank(what, "source", source, c.size(), detail::peer::source);
    const int count = detail::count_of<E>(r.size(), what);
    auto state = std::make_shared<detail::request_state>();
    if constexpr (detail::Flat<E>) {
        detail::check(MPI_Irecv(detail::raw(r.data()), count, detail::datatype<S>(), source, tag,
                                c.get(), &state->handle),
                      "MPI_Irecv");
        state->complete = [count](const MPI_Status& status) {
            detail::check_received<S>(status, count, {detail::wire<E>::count, 0});
        };
    } else {
        using T = typename E::value_type;
        nabla::tape<T>* t = nabla::detail::active_tape<T>;
        auto values = std::make_shared<std::vector<T>>(r.size() + 1);
        detail::check(MPI_Irecv(values->data(), detail::with_number(count, what),
                                detail::datatype<S>(), source, tag, c.get(), &state->handle),
                      "MPI_Irecv");
        std::shared_ptr<detail::adjoint_transfer<T>> transfer;
        if (t != nullptr) {
            transfer = std::make_shared<detail::adjoint_transfer<T>>();
            // The start's place in the sweep: wait until the adjoints are sent.
            detail::add_entry<T>(*t, 0, 0, c, [transfer](T*, MPI_Comm) {
                detail::wait_for(transfer, "the adjoint of nabla::mpi::irecv");
            });
        }
        state->complete = [values, transfer, t, generation = t != nullptr ? t->generation() : 0u, c,
                           count, r](const MPI_Status& status) {
            detail::check_received<S>(status, count + 1, {detail::wire<E>::count, 1});
            if (status.MPI_SOURCE == MPI_PROC_NULL)
                return;
            if (t != nullptr)
                detail::check_same_recording(t, generation);
            const int number = static_cast<int>(detail::message_number(values->data(), r.size()));
            const auto first = detail::new_variables<T>(t, values->data(), r);
            if (t == nullptr)
                return;
            // The wait's place: send the received variables' adjoints back.
            detail::add_entry<T>(*t, first, r.size(), c,
                                 [transfer, first, n = r.size(), count, to = status.MPI_SOURCE,
                                  number](T* adjoints, MPI_Comm adjoint) {
                                     transfer->buffer.assign(adjoints + first,
                                                             adjoints + first + n);
                                     transfer->peer = to;
                                     detail::check(MPI_Isend(transfer->buffer.data(), count,
                                                             detail::wire_datatype<T>(), to, number,
                                                             adjoint, &transfer->handle),
                                                   "MPI_Isend (the adjoint of irecv)");
                                 });
        };
    }
    state->pending = true;
    return request(std::move(state));
}

// Completes a transfer (nothing for a request that is not pending).
inline void wait(request& q) {
    if (!q.pending())
        return;
    MPI_Status status;
    q.state_->pending = false;
    detail::check(MPI_Wait(&q.state_->handle, &status), "MPI_Wait");
    if (q.state_->complete)
        q.state_->complete(status);
}

// Completes several transfers, in any order MPI finishes them; they are recorded in the order
// of the span.
inline void wait_all(std::span<request> requests) {
    std::vector<MPI_Request> handles;
    std::vector<std::size_t> which;
    for (std::size_t k = 0; k < requests.size(); ++k)
        if (requests[k].pending()) {
            handles.push_back(requests[k].state_->handle);
            which.push_back(k);
            requests[k].state_->pending = false;
        }
    std::vector<MPI_Status> statuses(handles.size());
    detail::check(MPI_Waitall(static_cast<int>(handles.size()), handles.data(), statuses.data()),
                  "MPI_Waitall");
    for (std::size_t j = 0; j < which.size(); ++j) {
        detail::request_state& s = *requests[which[j]].state_;
        s.handle = handles[j];
        if (s.complete)
            s.complete(statuses[j]);
    }
}

// ---------------------------------------------------------------------------------------------
// Arrays on the tape (nabla::var_array and basic_var_array<T>, from <nabla/array.hpp>): each
// operation records one tape entry, as for a buffer of variables, and returns the array it
// receives, whose elements are consecutive variables that array operations take as they are.
// (These are templates over the array type, so that this header needs <nabla/array.hpp> only
// where arrays are used.)

}  // namespace nabla::mpi

namespace nabla {
template <class T>
class basic_var_array;
namespace detail {
struct var_array_access;
}  // namespace detail
}  // namespace nabla

namespace nabla::mpi {

namespace detail {

template <class A>
inline constexpr bool is_var_array = false;
template <class T>
inline constexpr bool is_var_array<nabla::basic_var_array<T>> = true;

template <class T>
std::vector<active<T>> elements_of(const nabla::basic_var_array<T>& x) {
    std::vector<active<T>> e(x.size());
    for (std::size_t k = 0; k < e.size(); ++k)
        e[k] = x[k];
    return e;
}

// The array of the variables e, which an operation recorded one after another (or made constants,
// without a tape): their values are copied, the variables are the same.
template <class T, class Access = nabla::detail::var_array_access>
nabla::basic_var_array<T> array_of(const std::vector<active<T>>& e) {
    const std::size_t n = e.size();
    std::shared_ptr<T[]> values(new T[n > 0 ? n : 1]);
    bool consecutive = true;
    for (std::size_t k = 0; k < n; ++k) {
        values[k] = e[k].value;
        consecutive = consecutive && e[k].index() == e[0].index() + k &&
                      e[k].generation() == e[0].generation();
    }
    if (n == 0 || e[0].index() == 0)
        return Access::template make<T>(std::move(values), n, 0, 0);
    if (!consecutive)
        return nabla::basic_var_array<T>(std::span<const active<T>>(e.data(), n));
    return Access::template make<T>(std::move(values), n, e[0].index(), e[0].generation());
}

}  // namespace detail

template <class T>
nabla::basic_var_array<T>
bcast(const nabla::basic_var_array<T>& x, int root, const communicator& c) {
    std::vector<active<T>> e = detail::elements_of(x);
    bcast(e, root, c);
    return c.rank() == root ? x : detail::array_of(e);
}

template <class T>
nabla::basic_var_array<T>
allreduce(const nabla::basic_var_array<T>& x, op o, const communicator& c) {
    std::vector<active<T>> y(x.size());
    allreduce(detail::elements_of(x), y, o, c);
    return detail::array_of(y);
}

// On the root, the reduction; elsewhere an empty array.
template <class T>
nabla::basic_var_array<T>
reduce(const nabla::basic_var_array<T>& x, op o, int root, const communicator& c) {
    std::vector<active<T>> y(c.rank() == root ? x.size() : 0);
    reduce(detail::elements_of(x), y, o, root, c);
    return detail::array_of(y);
}

template <class T>
nabla::basic_var_array<T> allgather(const nabla::basic_var_array<T>& x, const communicator& c) {
    std::vector<active<T>> y(x.size() * static_cast<std::size_t>(c.size()));
    allgather(detail::elements_of(x), y, c);
    return detail::array_of(y);
}

template <class T>
nabla::basic_var_array<T> reduce_scatter(const nabla::basic_var_array<T>& x,
                                         const communicator& c) {
    std::vector<active<T>> y(x.size() / static_cast<std::size_t>(c.size()));
    reduce_scatter(detail::elements_of(x), y, c);
    return detail::array_of(y);
}

template <class T>
nabla::basic_var_array<T> alltoall(const nabla::basic_var_array<T>& x, const communicator& c) {
    std::vector<active<T>> y(x.size());
    alltoall(detail::elements_of(x), y, c);
    return detail::array_of(y);
}

template <class T>
void send(const nabla::basic_var_array<T>& x, int destination, int tag, const communicator& c) {
    send(detail::elements_of(x), destination, tag, c);
}

// n elements from `source` (constant zeros from MPI_PROC_NULL).
template <class T = double>
nabla::basic_var_array<T> recv_array(std::size_t n, int source, int tag, const communicator& c) {
    std::vector<active<T>> y(n);
    recv(y, source, tag, c);
    return detail::array_of(y);
}

// x to `destination`, and the n elements that come from `source` (constant zeros from
// MPI_PROC_NULL).
template <class T>
nabla::basic_var_array<T> sendrecv(const nabla::basic_var_array<T>& x,
                                   int destination,
                                   int send_tag,
                                   std::size_t n,
                                   int source,
                                   int receive_tag,
                                   const communicator& c) {
    std::vector<active<T>> y(n);
    sendrecv(detail::elements_of(x), destination, send_tag, y, source, receive_tag, c);
    return detail::array_of(y);
}

// ---------------------------------------------------------------------------------------------
// The gradient of a result every rank holds a copy of (the output of allreduce or bcast): seeding
// every copy would differentiate the sum of the copies, size() times the result, so the seed goes
// on the root's copy alone. Every rank calls it, and gets the derivatives of the one result with
// respect to its own variables. (A result that is a sum over the ranks of each rank's own part
// needs no such care: each rank's t.gradient(part) differentiates the sum.)
template <class T>
void replicated_gradient(nabla::tape<T>& t,
                         const active<T>& y,
                         const communicator& c,
                         int root = 0) {
    detail::check_rank("nabla::mpi::replicated_gradient", "root", root, c.size(),
                       detail::peer::root);
    t.zero_adjoints();
    if (c.rank() == root)
        t.seed(y);
    t.sweep();
}

}  // namespace nabla::mpi
