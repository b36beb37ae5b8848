// crew-tokio-peer: Tokio's rt_multi_threaded benchmark shapes, re-implemented exactly as crew's
// and Asio's versions in crew-bench (bench/problems/async.cpp, bench/peers/asio/asio_peer.cpp).
//
//   crew-tokio-peer <problem> <threads> <reps> <n> <iters>
//
// The timer_* and tcp_echo_* problems (src/io.rs) print the same line with "p50_ns", "p99_ns" and
// "spread_ns" added; for tcp_echo_* <iters> is the number of connections and a rep runs the shape
// once (n requests in all).
//
// builds one multi-threaded runtime with <threads> workers, then runs <reps> timed reps; each rep
// runs the shape <iters> times back to back and prints one JSON line:
//   {"peer":"tokio","problem":"spawn_await","threads":2,"rep":0,"n":10000,"iters":10,"ns":123,"check":100000}
// "ns" is the wall time of the whole rep, "check" the sum of the iterations' answers (crew-bench
// verifies it). Every shape except spawn_many_remote_idle starts inside a task on a worker
// (rt.spawn), as crew's pool.block_on does; the runtime's own block_on thread is not a worker.
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Instant;

use tokio::runtime::Runtime;

mod io;
use tokio::sync::{mpsc, oneshot};

const YIELDS_PER_TASK: u64 = 1000;
const FORK_JOIN_TASKS: u64 = 100;

fn in_task<F>(rt: &Runtime, f: F) -> u64
where
    F: Future<Output = u64> + Send + 'static,
{
    rt.block_on(rt.spawn(f)).expect("task panicked")
}

// n tasks spawned from a task, each bumps a counter; all awaited.
fn spawn_many_local(rt: &Runtime, n: u64) -> u64 {
    in_task(rt, async move {
        let counter = Arc::new(AtomicU64::new(0));
        let mut handles = Vec::with_capacity(n as usize);
        for _ in 0..n {
            let c = counter.clone();
            handles.push(tokio::spawn(async move {
                c.fetch_add(1, Relaxed);
            }));
        }
        for h in handles {
            h.await.unwrap();
        }
        counter.load(Relaxed)
    })
}

// n tasks spawned from this (non-worker) thread onto the idle runtime; all awaited.
fn spawn_many_remote_idle(rt: &Runtime, n: u64) -> u64 {
    let counter = Arc::new(AtomicU64::new(0));
    let mut handles = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let c = counter.clone();
        handles.push(rt.spawn(async move {
            c.fetch_add(1, Relaxed);
        }));
    }
    rt.block_on(async move {
        for h in handles {
            h.await.unwrap();
        }
    });
    counter.load(Relaxed)
}

// n tasks, each yields 1,000 times.
fn yield_many(rt: &Runtime, n: u64) -> u64 {
    in_task(rt, async move {
        let mut handles = Vec::with_capacity(n as usize);
        for _ in 0..n {
            handles.push(tokio::spawn(async move {
                for _ in 0..YIELDS_PER_TASK {
                    tokio::task::yield_now().await;
                }
                YIELDS_PER_TASK
            }));
        }
        let mut sum = 0;
        for h in handles {
            sum += h.await.unwrap();
        }
        sum
    })
}

// n concurrent rounds; each round is a task that spawns a partner, sends it a ping and waits for
// its pong (oneshot channels both ways), then awaits the partner's handle.
fn ping_pong(rt: &Runtime, n: u64) -> u64 {
    in_task(rt, async move {
        let mut handles = Vec::with_capacity(n as usize);
        for _ in 0..n {
            handles.push(tokio::spawn(async move {
                let (ping_tx, ping_rx) = oneshot::channel::<u64>();
                let (pong_tx, pong_rx) = oneshot::channel::<u64>();
                let partner = tokio::spawn(async move {
                    let v = ping_rx.await.unwrap();
                    pong_tx.send(v).unwrap();
                });
                ping_tx.send(1).unwrap();
                let v = pong_rx.await.unwrap();
                partner.await.unwrap();
                v
            }));
        }
        let mut sum = 0;
        for h in handles {
            sum += h.await.unwrap();
        }
        sum
    })
}

// A chain n deep: each task spawns the next (detached); the last reports through a oneshot.
fn chain(done: oneshot::Sender<u64>, left: u64, depth: u64) {
    if left == 0 {
        let _ = done.send(depth);
    } else {
        tokio::spawn(async move { chain(done, left - 1, depth) });
    }
}

fn chained_spawn(rt: &Runtime, n: u64) -> u64 {
    in_task(rt, async move {
        let (tx, rx) = oneshot::channel();
        chain(tx, n, n);
        rx.await.unwrap()
    })
}

// n times: spawn one empty task and await it.
fn spawn_await(rt: &Runtime, n: u64) -> u64 {
    in_task(rt, async move {
        let mut sum = 0;
        for _ in 0..n {
            sum += tokio::spawn(async { 1u64 }).await.unwrap();
        }
        sum
    })
}

// n round trips between this task and an echo task over two capacity-1 channels.
fn channel_round_trip(rt: &Runtime, n: u64) -> u64 {
    in_task(rt, async move {
        let (to_echo, mut echo_in) = mpsc::channel::<u64>(1);
        let (echo_out, mut from_echo) = mpsc::channel::<u64>(1);
        let echo = tokio::spawn(async move {
            while let Some(v) = echo_in.recv().await {
                echo_out.send(v).await.unwrap();
            }
        });
        let mut sum = 0;
        for _ in 0..n {
            to_echo.send(1).await.unwrap();
            sum += from_echo.recv().await.unwrap();
        }
        drop(to_echo);
        echo.await.unwrap();
        sum
    })
}

// skynet over tasks: every node is a spawned task; an inner node spawns 10 children and awaits
// them all (Tokio has no join_all without the futures crate: awaiting the 10 handles is the same).
fn skynet(num: u64, size: u64) -> Pin<Box<dyn Future<Output = u64> + Send>> {
    Box::pin(async move {
        if size == 1 {
            return num;
        }
        let sub = size / 10;
        let mut handles = Vec::with_capacity(10);
        for i in 0..10 {
            handles.push(tokio::spawn(skynet(num + i * sub, sub)));
        }
        let mut sum = 0;
        for h in handles {
            sum += h.await.unwrap();
        }
        sum
    })
}

fn coro_skynet(rt: &Runtime, n: u64) -> u64 {
    in_task(rt, skynet(0, n))
}

fn fib(n: u64) -> u64 {
    if n < 2 {
        n
    } else {
        fib(n - 1) + fib(n - 2)
    }
}

// 100 concurrent tasks each computing fib(n). Tokio has no fork-join inside a task (spawn_blocking
// is a different thing), so each task runs fib serially: this row is the "no nested parallelism"
// reference, not a like-for-like fork-join.
fn fork_join_in_tasks(rt: &Runtime, n: u64) -> u64 {
    in_task(rt, async move {
        let mut handles = Vec::with_capacity(FORK_JOIN_TASKS as usize);
        for _ in 0..FORK_JOIN_TASKS {
            handles.push(tokio::spawn(async move { fib(std::hint::black_box(n)) }));
        }
        let mut sum = 0;
        for h in handles {
            sum += h.await.unwrap();
        }
        sum
    })
}

fn shape(name: &str) -> Option<fn(&Runtime, u64) -> u64> {
    Some(match name {
        "spawn_many_local" => spawn_many_local,
        "spawn_many_remote_idle" => spawn_many_remote_idle,
        "yield_many" => yield_many,
        "ping_pong" => ping_pong,
        "chained_spawn" => chained_spawn,
        "spawn_await" => spawn_await,
        "channel_round_trip" => channel_round_trip,
        "coro_skynet" => coro_skynet,
        "fork_join_in_tasks" => fork_join_in_tasks,
        _ => return None,
    })
}

fn usage() -> ! {
    eprintln!("usage: crew-tokio-peer <problem> <threads> <reps> <n> <iters>");
    std::process::exit(2);
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 6 {
        usage();
    }
    let problem = args[1].as_str();
    let io_problem = problem.starts_with("timer_") || problem.starts_with("tcp_echo_");
    let run = shape(problem);
    if run.is_none() && !io_problem {
        usage();
    }
    let num = |s: &str| -> u64 {
        match s.parse::<u64>() {
            Ok(v) if v > 0 => v,
            _ => usage(),
        }
    };
    let (threads, reps, n, iters) = (num(&args[2]), num(&args[3]), num(&args[4]), num(&args[5]));
    // The time and I/O drivers only for the problems that use them (the async_* rows measure the
    // scheduler as before).
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.worker_threads(threads as usize);
    if io_problem {
        builder.enable_all();
    }
    let rt = builder.build().expect("cannot build the Tokio runtime");
    if io_problem {
        for rep in 0..reps {
            let t0 = Instant::now();
            let f = io::run(&rt, problem, n, iters).unwrap_or_else(|| usage());
            let ns = t0.elapsed().as_nanos();
            println!(
                "{{\"peer\":\"tokio\",\"problem\":\"{}\",\"threads\":{},\"rep\":{},\"n\":{},\"iters\":{},\"ns\":{},\"check\":{},\"p50_ns\":{},\"p99_ns\":{},\"spread_ns\":{}}}",
                problem, threads, rep, n, iters, ns, f.check, f.p50_ns, f.p99_ns, f.spread_ns
            );
        }
        return;
    }
    let run = run.unwrap_or_else(|| usage());
    for rep in 0..reps {
        let t0 = Instant::now();
        let mut check = 0u64;
        for _ in 0..iters {
            check = check.wrapping_add(run(&rt, n));
        }
        let ns = t0.elapsed().as_nanos();
        println!(
            "{{\"peer\":\"tokio\",\"problem\":\"{}\",\"threads\":{},\"rep\":{},\"n\":{},\"iters\":{},\"ns\":{},\"check\":{}}}",
            problem, threads, rep, n, iters, ns, check
        );
    }
}
