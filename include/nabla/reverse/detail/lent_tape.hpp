#pragma once
// The tapes nabla's reverse-mode transformations (api/reverse.hpp) and checkpointing borrow.

#include <cstddef>
#include <memory>
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

}  // namespace nabla::detail
