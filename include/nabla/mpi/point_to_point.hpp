#pragma once
// nabla/mpi/point_to_point.hpp: send, recv and sendrecv.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <ranges>
#include <span>
#include <string>
#include <utility>
#include <vector>

// clang-format off
#include "../config.hpp"  // first: it checks the language standard
// clang-format on

#include "buffers.hpp"
#include "checking.hpp"
#include "tape_entry.hpp"

namespace nabla::mpi {

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
// message at most the timeout since `start`.
template <class E>
received receive_exactly(E* into,
                         int count,
                         int source,
                         int tag,
                         MPI_Comm comm,
                         const char* what,
                         layout shape = {},
                         bool in_sweep = false,
                         steady_clock::time_point start = steady_clock::now()) {
    using S = typename flat<E>::scalar;
    if (source == MPI_PROC_NULL)
        return from_nowhere();
    MPI_Message message;
    MPI_Status status;
    if (in_sweep && checking_state().on) {
        const bool arrived = within_timeout(
            [&] {
                int found = 0;
                check(MPI_Improbe(source, tag, comm, &found, &message, &status), "MPI_Improbe");
                return found != 0;
            },
            start);
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
// waits for the other), with the received count checked. In a sweep with checking on, the two
// wait at most the timeout together, the send from a copy that a transfer given up on keeps.
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
    const steady_clock::time_point start = steady_clock::now();
    MPI_Request request;
    check(MPI_Isend(sent, send_count, wire_datatype<E>(), destination, send_tag, comm, &request),
          "MPI_Isend");
    received from;
    try {
        from = receive_exactly(receive, receive_count, source, receive_tag, comm, what, shape,
                               in_sweep, start);
    } catch (...) {
        // (The send is completed as without the error, or given up once the time is out.)
        if (timed)
            complete_or_abandon(request, std::move(copy), what, start);
        else
            MPI_Wait(&request, MPI_STATUS_IGNORE);
        throw;
    }
    if (timed)
        sweep_wait(request, std::move(copy), destination, what, start);
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

// Stamps a message of active variables (read with one element to spare) with the next number of
// the communicator, which its adjoint message takes as its tag; the number.
template <class T>
int stamp(inputs_read<T>& read, std::size_t n, const communicator& c) {
    const int number = next_message<T>(*c.state());
    message_number(read.buffer, n) = static_cast<typename flat<T>::scalar>(number);
    return number;
}

// The MPI count of n elements to or from a peer, after the peer's rank is checked.
template <class E>
int count_with_peer(const char* what, peer kind, int rank, std::size_t n, const communicator& c) {
    check_rank(what, kind == peer::source ? "source" : "destination", rank, c.size(), kind);
    return count_of<E>(n, what);
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
    const int count =
        detail::count_with_peer<E>(what, detail::peer::destination, destination, i.size(), c);
    if constexpr (detail::Flat<E>) {
        detail::check(MPI_Send(detail::raw(i.data()), count, detail::datatype<S>(), destination,
                               tag, c.get()),
                      "MPI_Send");
    } else {
        using T = typename E::value_type;
        detail::inputs_read<T> read = detail::read_inputs<T>(i, 1);
        nabla::tape<T>* t = read.tape;
        const int number = detail::stamp(read, i.size(), c);
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
    const int count = detail::count_with_peer<E>(what, detail::peer::source, source, r.size(), c);
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
        const int sent = detail::stamp(read, i.size(), c);
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

}  // namespace nabla::mpi
