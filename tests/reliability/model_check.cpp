// tests/reliability/model_check.cpp -- the driver of crew's Relacy model checks.
//
//   crew_model check <scenario|all> [schedules]   exit 0 iff every execution of the correct code
//                                                  is correct (default 1,000,000 schedules each)
//   crew_model teeth <bug> [schedules]            exit 0 iff some scenario catches the injected
//                                                  bug (default: up to 1,000,000 schedules each)
//   crew_model list                               scenario and bug names
//
// Scenarios and bugs: model_scenarios.hpp and model_teeth.cpp. A failing run prints the head of
// Relacy's report: the failure kind, the schedule number and the interleaving that led to it.
#include <execinfo.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <string>
#include <vector>

#include "reliability/model_fork.hpp"  // includes model_scenarios.hpp
#include "reliability/model_group_fork.hpp"
#include "reliability/model_task_word.hpp"
#include "reliability/model_driver.hpp"
#include "reliability/model_async_notify.hpp"

namespace crew_model {

const scenario correct_scenarios[scenario_count] = {
    deque_scenario<bug::none, mix<2>>("deque_mix_cap2"),
    deque_scenario<bug::none, mix<4>>("deque_mix_cap4"),
    deque_scenario<bug::none, growth<2>>("deque_growth_cap2"),
    deque_scenario<bug::none, growth<4>>("deque_growth_cap4"),
    deque_scenario<bug::none, last_item<2>>("deque_last_item_cap2"),
    deque_scenario<bug::none, last_item<4>>("deque_last_item_cap4"),
    parking_scenario<bug::none>("parking_sleep_wake"),
    parking_deque_scenario<bug::none>("parking_with_deques"),
    group_count_scenario<bug::none>("group_count_producer_waiter"),
    group_count_scenario<bug::none, true>("group_count_nested"),
    group_drain_scenario<bug::none>("group_count_drain"),
    ring_scenario<bug::none, ring_mix<0>>("ring_mix_cap4"),
    ring_scenario<bug::none, ring_mix<0xfffffffeu>>("ring_mix_wrap_cap4"),
    ring_scenario<bug::none, ring_wrap>("ring_wrap_cap4"),
    ring_scenario<bug::none, ring_thief_room>("ring_thief_room_cap4"),
    ring_scenario<bug::none, ring_drain>("ring_drain_cap4"),
    task_state_scenario<bug::none, false>("task_state_wake_run_join"),
    task_state_scenario<bug::none, true>("task_state_cancel_wake_run"),
    task_claim_scenario<bug::none, false>("task_state_inline_claim"),
    task_claim_scenario<bug::none, true>("task_state_inline_claim_cancel"),
    parking_lifo_scenario<bug::none>("parking_with_lifo_slots"),
    remote_list_scenario<bug::none>("frame_remote_list"),
    fork_scenario<bug::none>("fork_request_promote_steal"),
    fork_scenario<bug::none, 62>("fork_count_wraps_read"),
    fork_wake_scenario<bug::none>("fork_wake_request"),
    group_fork_scenario<bug::none>("group_fork_token_steal_wait"),
};

const scenario task_word_scenarios[task_word_scenario_count] = {
    task_word_scenario<bug::none, false>("task_word_wake_stale_wake"),
    task_word_scenario<bug::none, true>("task_word_cancel_wake_drop"),
    late_waker_scenario<bug::none>("task_word_late_waker"),
    deferred_wake_scenario<bug::none>("wait_list_deferred_wake"),
    task_detach_scenario<bug::none>("task_state_detach"),
    task_displace_scenario<bug::none, false>("task_state_displace"),
    task_displace_scenario<bug::none, true>("task_state_displace_cancel"),
    task_take_back_scenario<bug::none, false>("task_state_take_back"),
    task_take_back_scenario<bug::none, true>("task_state_take_back_cancel"),
    wait_block_scenario<bug::none, true>("wait_block_send_cancel_destroy"),
    wait_block_scenario<bug::none, false>("wait_block_close_cancel"),
    oneshot_scenario<bug::none, true, oneshot_rx::await>("oneshot_send_await"),
    oneshot_scenario<bug::none, true, oneshot_rx::cancel>("oneshot_send_cancel"),
    oneshot_scenario<bug::none, false, oneshot_rx::await>("oneshot_drop_await"),
    oneshot_scenario<bug::none, false, oneshot_rx::cancel>("oneshot_drop_cancel"),
    oneshot_scenario<bug::none, true, oneshot_rx::drop>("oneshot_send_receiver_gone"),
};

namespace {

// Watchdog: Relacy runs every simulated thread as a fiber of this one OS thread, so a hang is a
// hang of the main thread; SIGALRM prints what was running and its stack, then exits with 124.
const char* volatile running = "(none)";

void on_alarm(int) {
    const char* name = running;
    (void)!write(2, "\ncrew_model: watchdog expired while running ", 44);
    (void)!write(2, name, std::char_traits<char>::length(name));
    (void)!write(2, "; stack:\n", 9);
    void* frames[64];
    backtrace_symbols_fd(frames, backtrace(frames, 64), 2);
    _exit(124);
}

void arm_watchdog(unsigned long long schedules, int scenarios) {
    void* warm[1];
    (void)backtrace(warm, 1);  // load the unwinder now, not in the signal handler
    std::signal(SIGALRM, &on_alarm);
    // Assumes 20,000 schedules per second, a third of the slowest measured rate (60,000 under
    // load), so only a hang can trip it; and it trips before CTest's 900 s timeout in the fast tier.
    const unsigned long long seconds = 300 + static_cast<unsigned long long>(scenarios) * (schedules / 20000);
    alarm(static_cast<unsigned>(seconds));
}

int check(const std::string& which, unsigned long long schedules) {
    int failures = 0, ran = 0;
    std::vector<scenario> all(std::begin(correct_scenarios), std::end(correct_scenarios));
    all.insert(all.end(), std::begin(task_word_scenarios), std::end(task_word_scenarios));
    all.insert(all.end(), std::begin(driver_scenarios), std::end(driver_scenarios));
    all.insert(all.end(), std::begin(async_notify_scenarios), std::end(async_notify_scenarios));
    for (const scenario& s : all) {
        if (which != "all" && which != s.name) continue;
        ++ran;
        running = s.name;
        outcome o = s.run(schedules, 400);
        std::printf("%-24s %s after %llu schedules\n", s.name, o.passed ? "ok" : "FAILED", o.schedules);
        std::fflush(stdout);
        if (!o.passed) ++failures;
    }
    if (ran == 0) {
        std::fprintf(stderr, "crew_model: no scenario named '%s' (try: crew_model list)\n", which.c_str());
        return 2;
    }
    return failures == 0 ? 0 : 1;
}

int teeth(const std::string& which, unsigned long long schedules) {
    std::vector<bug_entry> all(std::begin(bugs), std::end(bugs));
    all.insert(all.end(), std::begin(task_word_bugs), std::end(task_word_bugs));
    all.insert(all.end(), std::begin(driver_bugs), std::end(driver_bugs));
    all.insert(all.end(), std::begin(async_notify_bugs), std::end(async_notify_bugs));
    for (const bug_entry& b : all) {
        if (which != b.name) continue;
        for (int i = 0; i < b.count; ++i) {
            const scenario& s = b.scenarios[i];
            running = s.name;
            // The head of the report names what Relacy found; the full history is not needed.
            outcome o = s.run(schedules, 3);
            if (!o.passed) {
                std::printf("bug %s: caught by %s at schedule %llu (as required)\n", b.name, s.name, o.schedules);
                return 0;
            }
            std::printf("bug %s: %s passed %llu schedules\n", b.name, s.name, o.schedules);
            std::fflush(stdout);
        }
        std::printf("bug %s: NOT caught by any scenario: the model checker has no teeth here\n", b.name);
        return 1;
    }
    std::fprintf(stderr, "crew_model: no bug named '%s' (try: crew_model list)\n", which.c_str());
    return 2;
}

}  // namespace
}  // namespace crew_model

int main(int argc, char** argv) {
    using namespace crew_model;
    const std::string mode = argc > 1 ? argv[1] : "";
    if (mode == "list") {
        for (const scenario& s : correct_scenarios) std::printf("scenario %s\n", s.name);
        for (const scenario& s : task_word_scenarios) std::printf("scenario %s\n", s.name);
        for (const bug_entry& b : bugs) std::printf("bug %s\n", b.name);
        for (const bug_entry& b : task_word_bugs) std::printf("bug %s\n", b.name);
        for (const scenario& s : driver_scenarios) std::printf("scenario %s\n", s.name);
        for (const bug_entry& b : driver_bugs) std::printf("bug %s\n", b.name);
        for (const scenario& s : async_notify_scenarios) std::printf("scenario %s\n", s.name);
        for (const bug_entry& b : async_notify_bugs) std::printf("bug %s\n", b.name);
        return 0;
    }
    if ((mode != "check" && mode != "teeth") || argc < 3) {
        std::fprintf(stderr,
                     "usage: crew_model check <scenario|all> [schedules]\n"
                     "       crew_model teeth <bug> [schedules]\n"
                     "       crew_model list\n");
        return 2;
    }
    unsigned long long schedules = 1000000ull;
    if (argc > 3) schedules = std::strtoull(argv[3], nullptr, 10);
    if (schedules == 0) {
        std::fprintf(stderr, "crew_model: schedules must be a positive number\n");
        return 2;
    }
    const std::string which = argv[2];
    arm_watchdog(schedules, which == "all" ? scenario_count + task_word_scenario_count : mode == "teeth" ? 5 : 1);
    return mode == "check" ? check(argv[2], schedules) : teeth(argv[2], schedules);
}
