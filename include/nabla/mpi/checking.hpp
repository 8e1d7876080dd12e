#pragma once
// nabla/mpi/checking.hpp: the checks (set_checking): the ranks agree on each collective call, and
// a rank that waits longer than the timeout for the others, at a check or at a point-to-point
// transfer of the sweep, is told so.

#include <array>
#include <chrono>
#include <concepts>
#include <cstddef>
#include <cstdio>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

// clang-format off
#include "../config.hpp"  // first: it checks the language standard
// clang-format on

#include "combiners.hpp"
#include "wire.hpp"

namespace nabla::mpi {

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

namespace detail {

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
// The signature of a collective on `count` elements of type E (-1 where the ranks' counts may
// differ), with its root and its reduction where it has them.
template <class E>
call_signature signature(collective operation, std::integral auto count, int root = -1) {
    return {static_cast<long long>(operation), root, -1, element_code<E>(),
            static_cast<long long>(count)};
}
template <class E>
call_signature signature(collective operation, std::integral auto count, int root, op reduction) {
    call_signature s = signature<E>(operation, count, root);
    s.reduction = static_cast<long long>(reduction);
    return s;
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
// A check or a sweep's transfer given up on, with the memory MPI may still use. Kept for the
// process, not the thread: the thread that gave it up may end while MPI still writes there.
struct abandoned_check {
    MPI_Request request;
    std::shared_ptr<void> buffers;
};
struct abandoned_list {
    std::mutex lock;
    std::vector<abandoned_check> checks;
};
inline abandoned_list& abandoned() {
    static abandoned_list list;
    return list;
}
inline void abandon(MPI_Request& request, std::shared_ptr<void> buffers) {
    abandoned_list& a = abandoned();
    const std::lock_guard<std::mutex> hold(a.lock);
    a.checks.push_back({request, std::move(buffers)});
    request = MPI_REQUEST_NULL;  // the list's now
}
// Completes them, once the other ranks have joined (the tests of the timeout use it).
inline void wait_for_abandoned_checks() {
    std::vector<abandoned_check> checks;
    {
        abandoned_list& a = abandoned();
        const std::lock_guard<std::mutex> hold(a.lock);
        checks.swap(a.checks);
    }
    for (abandoned_check& c : checks)
        MPI_Wait(&c.request, MPI_STATUS_IGNORE);
}

using steady_clock = std::chrono::steady_clock;

// Calls `done` until it returns true or the timeout since `start` has passed; false after it.
template <class Done>
bool within_timeout(Done done, steady_clock::time_point start = steady_clock::now()) {
    const double timeout = checking_state().timeout_seconds;
    while (!done()) {
        if (std::chrono::duration<double>(steady_clock::now() - start).count() > timeout)
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
    "; so does a rank still computing or stopped in a debugger: nabla::mpi::set_checking's "
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
    abandon(request, std::move(check_memory()));
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

// With checking on: completes a sweep's transfer before the timeout since `start`, or gives it
// up with `buffers`, the memory it uses; whether it completed.
inline bool complete_or_abandon(MPI_Request& request,
                                std::shared_ptr<void> buffers,
                                const char* what,
                                steady_clock::time_point start) {
    if (within_timeout([&] { return test(request, what); }, start))
        return true;
    abandon(request, std::move(buffers));
    return false;
}

// Completes a sweep's transfer to or from `peer`; with checking on, waits at most the timeout
// since `start`, then gives the transfer up and says so.
inline void sweep_wait(MPI_Request& request,
                       std::shared_ptr<void> buffers,
                       int peer,
                       const char* what,
                       steady_clock::time_point start = steady_clock::now()) {
    if (!checking_state().on)
        check(MPI_Wait(&request, MPI_STATUS_IGNORE), what);
    else if (!complete_or_abandon(request, std::move(buffers), what, start))
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

}  // namespace detail

}  // namespace nabla::mpi
