#include "baselines/shared_queue_pool.hpp"

#include <iterator>

namespace crew_bench::baseline {

thread_local shared_queue_pool* shared_queue_pool::current_ = nullptr;
thread_local int shared_queue_pool::help_depth_ = 0;

shared_queue_pool::shared_queue_pool(std::size_t threads) {
    threads_.reserve(threads);
    for (std::size_t i = 0; i < threads; ++i) threads_.emplace_back([this] { worker_loop(); });
}

shared_queue_pool::~shared_queue_pool() {
    {
        std::lock_guard<std::mutex> lk(m_);
        stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
}

void shared_queue_pool::push(task* t) {
    bool wake = false;
    {
        std::lock_guard<std::mutex> lk(m_);
        queue_.push_back(t);
        wake = sleepers_ > 0;
    }
    if (wake) cv_.notify_one();
}

void shared_queue_pool::worker_loop() {
    current_ = this;
    std::unique_lock<std::mutex> lk(m_);
    for (;;) {
        while (queue_.empty() && !stop_) {
            ++sleepers_;
            cv_.wait(lk);
            --sleepers_;
        }
        if (queue_.empty()) return;  // stop_ and nothing left
        task* t = queue_.front();
        queue_.pop_front();
        lk.unlock();
        t->execute(t);
        lk.lock();
    }
}

void shared_queue_pool::help_until(const std::atomic<bool>& flag, const task* own) {
    // acquire: pairs with stack_job's release store of done.
    while (!flag.load(std::memory_order_acquire)) {
        task* t = nullptr;
        {
            std::lock_guard<std::mutex> lk(m_);
            if (help_depth_ < max_help_depth) {
                if (!queue_.empty()) {
                    t = queue_.back();
                    queue_.pop_back();
                }
            } else if (own != nullptr) {
                for (auto it = queue_.rbegin(); it != queue_.rend(); ++it)
                    if (*it == own) {
                        t = *it;
                        queue_.erase(std::next(it).base());
                        break;
                    }
            }
        }
        if (t != nullptr) {
            ++help_depth_;
            t->execute(t);
            --help_depth_;
        } else {
            std::this_thread::yield();
        }
    }
}

}  // namespace crew_bench::baseline
