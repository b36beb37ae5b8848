#include "baselines/stealing_pool.hpp"

namespace crew_bench::baseline {

thread_local stealing_pool::worker* stealing_pool::current_ = nullptr;
thread_local int stealing_pool::help_depth_ = 0;

stealing_pool::stealing_pool(std::size_t threads) {
    for (std::size_t i = 0; i < threads; ++i) {
        workers_.push_back(std::make_unique<worker>());
        workers_.back()->pool = this;
        workers_.back()->index = i;
        workers_.back()->rng = 0x9e3779b97f4a7c15ull * (i + 1);
    }
    for (auto& w : workers_) threads_.emplace_back([this, wp = w.get()] { worker_loop(*wp); });
}

stealing_pool::~stealing_pool() {
    stop_.store(true);
    {
        std::lock_guard<std::mutex> lk(sleep_m_);
        sleep_cv_.notify_all();
    }
    for (auto& t : threads_) t.join();
}

void stealing_pool::wake_one() {
    // seq_cst: pairs with the sleeper's seq_cst increment before it re-checks the queues; either
    // the sleeper sees our task or we see the sleeper.
    if (sleepers_.load() == 0) return;
    std::lock_guard<std::mutex> lk(sleep_m_);
    sleep_cv_.notify_one();
}

void stealing_pool::push_local(worker& w, task* t) {
    {
        std::lock_guard<std::mutex> lk(w.m);
        w.deque.push_back(t);
    }
    wake_one();
}

void stealing_pool::submit(task* t) {
    if (current_ != nullptr && current_->pool == this) {
        push_local(*current_, t);
        return;
    }
    {
        std::lock_guard<std::mutex> lk(inject_m_);
        injected_.push_back(t);
    }
    wake_one();
}

task* stealing_pool::pop_local(worker& w) {
    std::lock_guard<std::mutex> lk(w.m);
    if (w.deque.empty()) return nullptr;
    task* t = w.deque.back();
    w.deque.pop_back();
    return t;
}

task* stealing_pool::take_injected() {
    std::lock_guard<std::mutex> lk(inject_m_);
    if (injected_.empty()) return nullptr;
    task* t = injected_.front();
    injected_.pop_front();
    return t;
}

task* stealing_pool::steal(worker& thief) {
    std::size_t n = workers_.size();
    thief.rng ^= thief.rng << 13;
    thief.rng ^= thief.rng >> 7;
    thief.rng ^= thief.rng << 17;
    std::size_t start = static_cast<std::size_t>(thief.rng % n);
    for (std::size_t k = 0; k < n; ++k) {
        worker& v = *workers_[(start + k) % n];
        if (&v == &thief) continue;
        std::lock_guard<std::mutex> lk(v.m);
        if (v.deque.empty()) continue;
        task* t = v.deque.front();
        v.deque.pop_front();
        return t;
    }
    return nullptr;
}

bool stealing_pool::any_work() {
    {
        std::lock_guard<std::mutex> lk(inject_m_);
        if (!injected_.empty()) return true;
    }
    for (auto& w : workers_) {
        std::lock_guard<std::mutex> lk(w->m);
        if (!w->deque.empty()) return true;
    }
    return false;
}

void stealing_pool::worker_loop(worker& w) {
    current_ = &w;
    int idle_rounds = 0;
    for (;;) {
        task* t = pop_local(w);
        if (t == nullptr) t = take_injected();
        if (t == nullptr) t = steal(w);
        if (t != nullptr) {
            idle_rounds = 0;
            t->execute(t);
            continue;
        }
        if (stop_.load()) return;
        if (++idle_rounds < 64) {
            std::this_thread::yield();
            continue;
        }
        std::unique_lock<std::mutex> lk(sleep_m_);
        sleepers_.fetch_add(1);  // seq_cst: see wake_one
        if (!stop_.load() && !any_work()) sleep_cv_.wait(lk);
        sleepers_.fetch_sub(1);
        idle_rounds = 0;
    }
}

void stealing_pool::help_until(const std::atomic<bool>& flag) {
    worker& w = *current_;
    // acquire: pairs with stack_job's release store of done.
    while (!flag.load(std::memory_order_acquire)) {
        task* t = pop_local(w);
        if (t == nullptr && help_depth_ < max_help_depth) t = steal(w);
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
