#pragma once
// nabla/mpi/nonblocking.hpp: isend, irecv, wait and wait_all.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <utility>
#include <vector>

// clang-format off
#include "../config.hpp"  // first: it checks the language standard
// clang-format on

#include "point_to_point.hpp"

namespace nabla::mpi {

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

    adjoint_transfer() = default;
    adjoint_transfer(const adjoint_transfer&) = delete;
    adjoint_transfer& operator=(const adjoint_transfer&) = delete;
    // A transfer the sweep started and an error stopped before its wait: MPI may still write
    // the buffer (a vector moved keeps its memory), which goes to the abandoned transfers.
    ~adjoint_transfer() {
        int finalized = 1;
        MPI_Finalized(&finalized);
        if (handle == MPI_REQUEST_NULL || finalized)
            return;
        try {
            abandon(handle, std::make_shared<std::vector<T>>(std::move(buffer)));
        } catch (...) {
            MPI_Cancel(&handle);  // (no memory to keep it: the last resort)
            MPI_Request_free(&handle);
        }
    }
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
    const int count =
        detail::count_with_peer<E>(what, detail::peer::destination, destination, i.size(), c);
    auto state = std::make_shared<detail::request_state>();
    if constexpr (detail::Flat<E>) {
        detail::check(MPI_Isend(detail::raw(i.data()), count, detail::datatype<S>(), destination,
                                tag, c.get(), &state->handle),
                      "MPI_Isend");
    } else {
        using T = typename E::value_type;
        detail::inputs_read<T> read = detail::read_inputs<T>(i, 1);
        nabla::tape<T>* t = read.tape;
        const int number = detail::stamp(read, i.size(), c);
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
    const int count = detail::count_with_peer<E>(what, detail::peer::source, source, r.size(), c);
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

}  // namespace nabla::mpi
