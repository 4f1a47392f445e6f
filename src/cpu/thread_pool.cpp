#include "thread_pool.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>

#include "../core/errors.h"
#include "../platform/platform.h"

namespace dml {

ThreadPool::ThreadPool(size_t threads) : next_(std::max<size_t>(threads, 1)), end_(next_.size()) {
    for (size_t i = 1; i < next_.size(); ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    wake_.notify_all();
    for (auto& t : workers_) t.join();
}

namespace {
// How long a thread that waits for the others spins (yielding its core to anyone who wants it) before it sleeps:
// 50, 200 and 1000 us measured alike; without the spin a stage's end is a wake-up again (bench/README.md).
constexpr auto kSpin = std::chrono::microseconds(200);
}  // namespace

template <class Done>
void ThreadPool::wait_for(std::unique_lock<std::mutex>& lock, std::condition_variable& cv, Done done) {
    if (done()) return;
    lock.unlock();
    const auto until = std::chrono::steady_clock::now() + kSpin;
    while (!done() && std::chrono::steady_clock::now() < until) std::this_thread::yield();
    lock.lock();
    cv.wait(lock, done);
}

void ThreadPool::begin_stage(size_t s) {
    while (s < stage_count_ && stages_[s].n == 0) ++s;
    stage_ = s;
    if (s == stage_count_) return;
    const Stage& stage = stages_[s];
    n_ = stage.n;
    // A few chunks per thread balances uneven rows without much locking.
    chunk_ = std::max(std::max<size_t>(stage.grain, 1), (n_ + size() * 4 - 1) / (size() * 4));
    dealt_ = 0;
    // ranges of at least `grain` items where there are enough; the threads past them start by helping
    const size_t ranges = std::clamp<size_t>(n_ / std::max<size_t>(stage.grain, 1), 1, size());
    for (size_t t = 0; t < size(); ++t)
        next_[t] = std::min(t, ranges) * n_ / ranges, end_[t] = std::min(t + 1, ranges) * n_ / ranges;
}

void ThreadPool::run_job(std::unique_lock<std::mutex>& lock, size_t self) {
    while (stage_ < stage_count_) {
        if (dealt_ >= n_) {  // the stage's last chunks run on other threads
            const size_t s = stage_;
            wait_for(lock, stage_done_, [&] { return stage_ != s; });
            continue;
        }
        const Stage& stage = stages_[stage_];
        size_t begin, end;
        if (next_[self] < end_[self]) {
            begin = next_[self], end = std::min(end_[self], begin + chunk_);
            next_[self] = end;
        } else {  // the back of the range with the most items left
            size_t r = 0;
            for (size_t t = 1; t < size(); ++t)
                if (end_[t] - next_[t] > end_[r] - next_[r]) r = t;
            end = end_[r], begin = std::max(next_[r], end - std::min(end, chunk_));
            end_[r] = begin;
        }
        dealt_ += end - begin;
        ++running_;
        lock.unlock();
        stage.f(begin, end);
        lock.lock();
        if (--running_ == 0 && dealt_ >= n_) {
            begin_stage(stage_ + 1);
            stage_done_.notify_all();
        }
    }
}

void ThreadPool::worker_loop(size_t self) {
    platform::name_thread("directml cpu");
    const std::vector<int> processors = platform::thread_processors();  // its creator's
    uint64_t seen = 0;
    std::unique_lock lock(mutex_);
    for (;;) {
        if (held_ && generation_ == seen) {  // a plan runs: its next node comes within microseconds
            lock.unlock();
            while (held_ && generation_ == seen) std::this_thread::yield();
            lock.lock();
        }
        wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
        ++active_;
        // Woken onto the caller's processor, this worker would only run while the caller waits: it moves to the
        // other processors its creator ran on. A guest kernel that packs threads onto few virtual processors
        // (the 2-core VM's, booted with sched_vcpu_pack) put it there after every idle spell: softmax [1024, 1000]
        // on two threads, called after a 0.5 s pause, ran 1.4-1.6 ms a call, as on one thread, for as long as it
        // was measured, and 0.7-0.8 ms from the fourth call with the move (bench/README.md, thirtieth session).
        if (const int caller = caller_processor_; caller >= 0 && platform::current_processor() == caller) {
            lock.unlock();
            platform::run_thread_on(processors, caller);
            lock.lock();
        }
        run_job(lock, self);
        if (--active_ == 0) done_.notify_all();
    }
}

void ThreadPool::parallel_stages(const std::vector<Stage>& stages) {
    const bool one_chunk_each =
        std::all_of(stages.begin(), stages.end(), [](const Stage& s) { return s.n <= std::max<size_t>(s.grain, 1); });
    if (workers_.empty() || one_chunk_each) {
        for (const Stage& s : stages)
            if (s.n) s.f(0, s.n);
        return;
    }
    std::lock_guard job_lock(job_mutex_);
    std::unique_lock lock(mutex_);
    stages_ = stages.data();
    stage_count_ = stages.size();
    running_ = 0;
    caller_processor_ = platform::current_processor();
    begin_stage(0);
    ++generation_;
    wake_.notify_all();
    run_job(lock, 0);
    // the workers leave run_job before the stages go out of scope
    wait_for(lock, done_, [&] { return active_ == 0; });
    stages_ = nullptr;
}

void ThreadPool::parallel_for(size_t n, size_t grain, const std::function<void(size_t, size_t)>& f) {
    if (n == 0) return;
    if (workers_.empty() || n <= std::max<size_t>(grain, 1)) {
        f(0, n);
        return;
    }
    parallel_stages({{n, grain, f}});
}

size_t default_thread_count() {
    const char* env = std::getenv("DIRECTML_NUM_THREADS");
    if (env && *env) {
        char* end = nullptr;
        const long n = std::strtol(env, &end, 10);
        if (*end != '\0' || n < 1 || n > 1024)
            throw ValueError(std::string("DIRECTML_NUM_THREADS must be a positive integer, got '") + env + "'");
        return size_t(n);
    }
    return platform::usable_cpu_count();
}

std::shared_ptr<ThreadPool> default_thread_pool() {
    static const std::shared_ptr<ThreadPool> pool = std::make_shared<ThreadPool>(default_thread_count());
    return pool;
}

}  // namespace dml
