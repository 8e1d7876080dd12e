#pragma once
// The tapes nabla's reverse-mode transformations (api/reverse.hpp) and checkpointing borrow, for
// every number type they record: recording again on a tape reuses its memory.

#include <cstddef>
#include <memory>
#include <thread>
#include <vector>

#include "../active.hpp"
#include "../tape.hpp"

namespace nabla::detail {

// The thread's tapes for transformations, one per nesting depth: a tape is lent for the duration
// of one transformation and records again, without new memory, the next time. So is a vector of
// active inputs (a gradient of 10^5 inputs spent a tenth of its time making a new one).
template <class R>
class lent_tape {
public:
    lent_tape() : depth_(depth()++) {
        auto& lent = pool();
        if (lent.size() <= depth_)
            lent.resize(depth_ + 1);
        if (!lent[depth_])
            lent[depth_] = std::make_unique<entry>();
    }
    lent_tape(const lent_tape&) = delete;
    lent_tape& operator=(const lent_tape&) = delete;
    ~lent_tape() { --depth(); }
    tape<R>& get() { return pool()[depth_]->t; }
    // The vector of active inputs, of n elements (their values are to be written).
    std::vector<active<R>>& inputs(std::size_t n) {
        std::vector<active<R>>& v = pool()[depth_]->inputs;
        v.resize(n);
        return v;
    }

private:
    struct entry {
        tape<R> t;
        std::vector<active<R>> inputs;
    };
    static std::size_t& depth() {
        static thread_local std::size_t d = 0;
        return d;
    }
    static std::vector<std::unique_ptr<entry>>& pool() {
        static thread_local std::vector<std::unique_ptr<entry>> lent;
        return lent;
    }
    std::size_t depth_;
};

// The tapes of recordings that outlive the transformation that makes them (a vjp's pullback owns
// its recording): each thread keeps the tapes its pullbacks release, up to four, and lends them
// again with their memory. A pullback released on another thread frees its tape.
template <class R>
std::shared_ptr<tape<R>> kept_tape() {
    struct shelf {
        std::thread::id owner = std::this_thread::get_id();
        std::vector<std::unique_ptr<tape<R>>> tapes;
    };
    static thread_local const std::shared_ptr<shelf> mine = std::make_shared<shelf>();
    std::unique_ptr<tape<R>> t;
    if (mine->tapes.empty()) {
        t = std::make_unique<tape<R>>();
    } else {
        t = std::move(mine->tapes.back());
        mine->tapes.pop_back();
    }
    return std::shared_ptr<tape<R>>(t.release(), [home = std::weak_ptr<shelf>(mine)](tape<R>* p) {
        std::unique_ptr<tape<R>> owned(p);
        if (const auto back = home.lock();
            back && back->owner == std::this_thread::get_id() && back->tapes.size() < 4) {
            owned->clear();  // (its variables are stale from now on, as on a new tape)
            back->tapes.push_back(std::move(owned));
        }
    });
}

}  // namespace nabla::detail
