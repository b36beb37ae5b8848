// The event trace (pool_options::trace, CREW_TRACE, pool::dump_trace): off by default, the Chrome
// trace-event JSON it writes, its agreement with the pool's counters, bounded rings, dumps while
// the workers run, and bad input.
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "support/pool_sizes.hpp"
#include "support/watchdog.hpp"
#include "json.hpp"

namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
namespace json = crew_trace::json;

// A fresh directory per test, removed afterwards.
class temp_dir {
public:
    temp_dir() {
        static std::atomic<int> serial{0};
        path_ = fs::temp_directory_path() /
                ("crew-trace-test-" + std::to_string(::getpid()) + "-" + std::to_string(serial.fetch_add(1)));
        fs::create_directories(path_);
    }
    ~temp_dir() {
        std::error_code ec;
        fs::remove_all(path_, ec);
    }
    std::string file(const std::string& name) const { return (path_ / name).string(); }

private:
    fs::path path_;
};

std::string read_file(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// What a trace file says, after checking its structure.
struct summary {
    long tasks = 0;           // task slices, complete or open
    std::map<std::string, long> task_names;
    long steals = 0;          // flow arrows (each an "s" on the victim and an "f" on the thief)
    long parks = 0;
    long idle_parks = 0;      // parks in the pool's parking lot (not waits on a join)
    long wake_latencies = 0;  // idle parks with a known wake latency
    long injector_pops = 0;
    long spawns = 0;
    std::set<std::string> thread_names;
    std::vector<double> dropped;
    std::vector<double> retained;
    double ring_events = 0;
};

summary check_trace(const std::string& path, std::size_t workers) {
    const std::string text = read_file(path);
    EXPECT_FALSE(text.empty()) << path;
    json::value root = json::parse(text);
    summary s;
    const json::value& events = root["traceEvents"];
    EXPECT_EQ(events.type, json::value::kind::array);
    std::map<double, int> flow_starts, flow_ends;  // id -> tid
    for (const json::value& e : events.items) {
        const std::string ph = e["ph"].s;
        EXPECT_EQ(e["pid"].n, 1);
        if (ph == "M") {
            if (e["name"].s == "thread_name") s.thread_names.insert(e["args"]["name"].s);
            continue;
        }
        const double tid = e["tid"].n;
        EXPECT_GE(tid, 1);
        EXPECT_LE(tid, static_cast<double>(workers));
        EXPECT_GE(e["ts"].n, 0.0);
        const std::string cat = e["cat"].s;
        if (ph == "X") {
            EXPECT_GE(e["dur"].n, 0.0);
        }
        if ((ph == "X" || ph == "B") && cat == "task") {
            ++s.tasks;
            ++s.task_names[e["name"].s];
        } else if ((ph == "X" || ph == "B") && cat == "park") {
            ++s.parks;
            if (e["args"]["on"].s == "idle") ++s.idle_parks;
            if (ph == "X" && e["args"]["on"].s == "idle" && e["args"]["wake_latency_ns"].n > 0) ++s.wake_latencies;
        } else if (ph == "s") {
            flow_starts[e["id"].n] = static_cast<int>(tid);
        } else if (ph == "f") {
            flow_ends[e["id"].n] = static_cast<int>(tid);
            EXPECT_EQ(e["args"]["victim"].n + 1, flow_starts[e["id"].n]);
            ++s.steals;
        } else if (ph == "i") {
            if (e["name"].s == "spawn") ++s.spawns;
            else if (e["name"].s == "injector pop") ++s.injector_pops;
            else ADD_FAILURE() << "unknown instant " << e["name"].s;
        } else {
            ADD_FAILURE() << "unexpected event phase " << ph;
        }
    }
    EXPECT_EQ(flow_starts.size(), flow_ends.size());
    for (const auto& [id, thief] : flow_ends) {
        EXPECT_TRUE(flow_starts.count(id)) << "flow " << id << " has no start";
        EXPECT_NE(flow_starts[id], thief) << "a worker stole from itself";
    }
    const json::value& other = root["otherData"];
    for (const auto& d : other["dropped_events"].items) s.dropped.push_back(d.n);
    for (const auto& r : other["retained_events"].items) s.retained.push_back(r.n);
    s.ring_events = other["ring_events"].n;
    EXPECT_EQ(other["workers"].n, static_cast<double>(workers));
    EXPECT_EQ(s.dropped.size(), workers);
    EXPECT_EQ(s.thread_names.size(), workers);
    return s;
}

crew::pool_options traced(std::size_t workers, const std::string& path, std::size_t events = std::size_t{1} << 16) {
    crew::pool_options o;
    o.threads = workers;
    o.trace = path;
    o.trace_events = events;
    return o;
}

std::uint64_t total(const crew::pool_metrics& m, std::uint64_t crew::worker_metrics::*field) {
    std::uint64_t sum = 0;
    for (const auto& w : m.workers) sum += w.*field;
    return sum;
}

class trace_suite : public crew_test::pool_test {};

TEST_P(trace_suite, off_by_default) {
    ASSERT_EQ(std::getenv("CREW_TRACE"), nullptr) << "run this test without CREW_TRACE";
    crew::pool& p = pool();
    EXPECT_FALSE(p.tracing());
    EXPECT_THROW(p.dump_trace("unused.json"), crew::usage_error);
    EXPECT_EQ(p.run([] { return 7; }), 7);
}

// Every task the workers ran appears once, with its origin; every steal is an arrow from the
// victim's lane to the thief's, as many as the pool's counters say.
TEST_P(trace_suite, agrees_with_the_counters) {
    crew_test::watchdog dog(60s);
    temp_dir dir;
    const std::string path = dir.file("agree.json");
    crew::pool_metrics m;
    {
        crew::pool p(traced(workers(), path));
        ASSERT_TRUE(p.tracing());
        std::vector<crew::future<int>> futures;
        for (int i = 0; i < 50; ++i) futures.push_back(p.submit([i] { return i; }));
        for (int i = 0; i < 50; ++i) EXPECT_EQ(futures[static_cast<std::size_t>(i)].get(), i);
        const long n = crew_test::scaled(2000);
        std::atomic<long> ran{0};
        p.run([&] {
            crew::task_group g;
            for (long i = 0; i < n; ++i) g.run([&] { ran.fetch_add(1, std::memory_order_relaxed); });
            g.wait();
        });
        EXPECT_EQ(ran.load(), n);
        if (workers() > 1) {
            // A child only a thief can run: its parent spins (without helping) until it ran.
            p.run([&] {
                std::atomic<bool> stolen{false};
                crew::task_group g;
                g.run([&] { stolen.store(true); });
                while (!stolen.load()) std::this_thread::yield();
                g.wait();
            });
        }
        m = p.metrics();
    }
    summary s = check_trace(path, workers());
    for (double d : s.dropped) EXPECT_EQ(d, 0);
    EXPECT_EQ(s.tasks, static_cast<long>(total(m, &crew::worker_metrics::tasks_run)));
    EXPECT_EQ(s.steals, static_cast<long>(total(m, &crew::worker_metrics::steals)));
    EXPECT_EQ(s.injector_pops, static_cast<long>(total(m, &crew::worker_metrics::injector_pops)));
    EXPECT_EQ(s.task_names["stolen task"], s.steals);
    EXPECT_EQ(s.task_names["injected task"], s.injector_pops);
    EXPECT_GE(s.spawns, crew_test::scaled(2000));
    if (workers() > 1) {
        EXPECT_GE(s.steals, 1);
    } else {
        EXPECT_EQ(s.steals, 0);
    }
    // Workers that went idle after the snapshot may park once more before the pool stops.
    EXPECT_GE(s.idle_parks, static_cast<long>(total(m, &crew::worker_metrics::parks)));
    EXPECT_LE(s.idle_parks, static_cast<long>(total(m, &crew::worker_metrics::parks) + workers()));
}

// A worker asleep when outside work arrives records the park and how long the wake took.
TEST_P(trace_suite, records_parks_and_wake_latency) {
    crew_test::watchdog dog(60s);
    temp_dir dir;
    const std::string path = dir.file("park.json");
    crew::pool_metrics m;
    {
        crew::pool p(traced(workers(), path));
        for (int i = 0; i < 3; ++i) {
            std::this_thread::sleep_for(20ms);  // the workers park
            p.run([] {});
        }
        m = p.metrics();
    }
    summary s = check_trace(path, workers());
    EXPECT_GE(s.idle_parks, 1);
    // Parks after the snapshot (as the pool shuts down) are in the trace only.
    EXPECT_GE(s.idle_parks, static_cast<long>(total(m, &crew::worker_metrics::parks)));
    EXPECT_GE(s.wake_latencies, 1);
    EXPECT_EQ(s.task_names["injected task"], 3);
}

// Small rings keep the newest events and count the rest.
TEST_P(trace_suite, full_rings_drop_the_oldest) {
    crew_test::watchdog dog(60s);
    temp_dir dir;
    const std::string path = dir.file("small.json");
    {
        crew::pool p(traced(workers(), path, 17));  // rounded up to 32
        const long n = crew_test::scaled(5000) + 200;
        std::atomic<long> ran{0};
        p.run([&] {
            crew::task_group g;
            for (long i = 0; i < n; ++i) g.run([&] { ran.fetch_add(1, std::memory_order_relaxed); });
            g.wait();
        });
        EXPECT_EQ(ran.load(), n);
    }
    summary s = check_trace(path, workers());
    EXPECT_EQ(s.ring_events, 32);
    double dropped = 0;
    for (std::size_t i = 0; i < workers(); ++i) {
        EXPECT_LE(s.retained[i], 32);
        dropped += s.dropped[i];
    }
    EXPECT_GT(dropped, 0);
}

// dump_trace copies the rings while the workers keep recording: every file is complete JSON.
TEST_P(trace_suite, dumps_while_the_workers_run) {
    crew_test::watchdog dog(60s);
    temp_dir dir;
    crew::pool p(traced(workers(), dir.file("final.json"), 256));
    std::atomic<bool> stop{false};
    std::atomic<long> ran{0};
    crew::task_group outer(p);
    outer.run([&] {
        while (!stop.load(std::memory_order_relaxed)) {
            crew::task_group g;
            for (int i = 0; i < 64; ++i) g.run([&] { ran.fetch_add(1, std::memory_order_relaxed); });
            g.wait();
        }
    });
    while (ran.load() < 1000) std::this_thread::yield();  // the workers are recording
    for (int i = 0; i < 5; ++i) {
        const std::string path = dir.file("dump" + std::to_string(i) + ".json");
        p.dump_trace(path);
        summary s = check_trace(path, workers());
        EXPECT_GE(s.tasks, 1);
    }
    stop.store(true);
    outer.wait();
    EXPECT_GT(ran.load(), 0);
    p.dump_trace();  // to the pool's own path
    check_trace(dir.file("final.json"), workers());
}

CREW_ALL_POOL_SIZES(trace_suite);

TEST(trace, bad_input_throws) {
    temp_dir dir;
    EXPECT_THROW(crew::pool(traced(2, dir.file("a.json"), 0)), std::invalid_argument);
    EXPECT_THROW(crew::pool(traced(2, dir.file("a.json"), 15)), std::invalid_argument);
    EXPECT_THROW(crew::pool(traced(2, dir.file("a.json"), (std::size_t{1} << 24) + 1)), std::invalid_argument);
    crew::pool_options untraced_bad;
    untraced_bad.threads = 1;
    untraced_bad.trace_events = 3;
    EXPECT_THROW(crew::pool{untraced_bad}, std::invalid_argument);  // checked even when off
    EXPECT_THROW(crew::pool(traced(2, dir.file("no-such-dir/a.json"))), std::system_error);
    crew::pool p(traced(2, dir.file("b.json")));
    EXPECT_TRUE(fs::exists(dir.file("b.json")));  // created at once
    EXPECT_THROW(p.dump_trace(dir.file("no-such-dir/b.json")), std::system_error);
    EXPECT_EQ(p.run([] { return 3; }), 3);
}

// CREW_TRACE traces every pool built without pool_options::trace: the first gets the path, the
// next ones a numbered sibling; an explicit option wins.
TEST(trace, environment_variable) {
    temp_dir dir;
    ASSERT_EQ(::setenv("CREW_TRACE", dir.file("env.json").c_str(), 1), 0);
    {
        crew::pool a(2);
        crew::pool b(traced(1, dir.file("explicit.json")));
        crew::pool c(1);
        EXPECT_TRUE(a.tracing());
        EXPECT_TRUE(c.tracing());
        a.run([] {});
        c.run([] {});
    }
    ::unsetenv("CREW_TRACE");
    check_trace(dir.file("env.json"), 2);
    check_trace(dir.file("explicit.json"), 1);
    summary s = check_trace(dir.file("env.1.json"), 1);
    EXPECT_EQ(s.task_names["injected task"], 1);
    crew::pool d(1);
    EXPECT_FALSE(d.tracing());
}

}  // namespace
