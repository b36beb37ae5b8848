// The timer and TCP shapes of crew-bench (bench/problems/net.cpp and timers.cpp), on Tokio's
// time and net drivers. Each returns the check value and the figures crew-bench reports beside the
// rep's wall time:
//   timer_sleep_<d>   n sleeps of <d> one after the other; overshoot (woken - asked) p50/p99
//   timer_spread_10k  n concurrent sleeps until start + 1 ms; spread = last - first firing;
//                     p50/p99 of the overshoot
//   tcp_echo_*        <conns> connections, n requests in all, 64-byte messages; client and
//                     server in this runtime; latency of a round trip p50/p99
use std::io::ErrorKind::WouldBlock;
use std::time::{Duration, Instant};

use tokio::net::{TcpListener, TcpStream};
use tokio::runtime::Runtime;

pub const MESSAGE: usize = 64;

pub struct Figures {
    pub check: u64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub spread_ns: u64,
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    sorted[((sorted.len() - 1) as f64 * p) as usize]
}

fn figures(check: u64, mut v: Vec<u64>, spread_ns: u64) -> Figures {
    v.sort_unstable();
    Figures { check, p50_ns: percentile(&v, 0.50), p99_ns: percentile(&v, 0.99), spread_ns }
}

pub fn sleep_duration(problem: &str) -> Option<Duration> {
    match problem {
        "timer_sleep_100us" => Some(Duration::from_micros(100)),
        "timer_sleep_1ms" => Some(Duration::from_millis(1)),
        "timer_sleep_10ms" => Some(Duration::from_millis(10)),
        _ => None,
    }
}

pub fn timer_sleep(rt: &Runtime, d: Duration, n: u64) -> Figures {
    let over = rt
        .block_on(rt.spawn(async move {
            let mut over = Vec::with_capacity(n as usize);
            for _ in 0..n {
                let t0 = Instant::now();
                tokio::time::sleep(d).await;
                over.push(t0.elapsed().saturating_sub(d).as_nanos() as u64);
            }
            over
        }))
        .expect("task panicked");
    figures(n, over, 0)
}

pub fn timer_spread(rt: &Runtime, n: u64) -> Figures {
    let fired = rt
        .block_on(rt.spawn(async move {
            let start = Instant::now();
            let deadline = tokio::time::Instant::from_std(start + Duration::from_millis(1));
            let mut handles = Vec::with_capacity(n as usize);
            for _ in 0..n {
                handles.push(tokio::spawn(async move {
                    tokio::time::sleep_until(deadline).await;
                    start.elapsed().as_nanos() as u64
                }));
            }
            let mut fired = Vec::with_capacity(n as usize);
            for h in handles {
                fired.push(h.await.unwrap());
            }
            fired
        }))
        .expect("task panicked");
    let first = *fired.iter().min().unwrap_or(&0);
    let last = *fired.iter().max().unwrap_or(&0);
    let over = fired.iter().map(|f| f.saturating_sub(1_000_000)).collect();
    figures(n, over, last - first)
}

async fn write_all(s: &TcpStream, mut data: &[u8]) -> std::io::Result<()> {
    while !data.is_empty() {
        s.writable().await?;
        match s.try_write(data) {
            Ok(k) => data = &data[k..],
            Err(e) if e.kind() == WouldBlock => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

// Reads up to buf.len() bytes once some are there; 0 at end of stream.
async fn read_some(s: &TcpStream, buf: &mut [u8]) -> std::io::Result<usize> {
    loop {
        s.readable().await?;
        match s.try_read(buf) {
            Ok(k) => return Ok(k),
            Err(e) if e.kind() == WouldBlock => continue,
            Err(e) => return Err(e),
        }
    }
}

async fn echo(s: TcpStream) {
    let mut buf = [0u8; 4096];
    loop {
        match read_some(&s, &mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(k) => {
                if write_all(&s, &buf[..k]).await.is_err() {
                    return;
                }
            }
        }
    }
}

// One client connection: `rounds` round trips of MESSAGE bytes; latencies in ns (checks each echo).
async fn client(addr: std::net::SocketAddr, id: u64, rounds: u64) -> Vec<u64> {
    let s = TcpStream::connect(addr).await.expect("connect");
    s.set_nodelay(true).expect("nodelay");
    let mut lat = Vec::with_capacity(rounds as usize);
    let mut msg = [0u8; MESSAGE];
    let mut back = [0u8; MESSAGE];
    for r in 0..rounds {
        for (i, b) in msg.iter_mut().enumerate() {
            *b = (id * 31 + r + i as u64) as u8;
        }
        let t0 = Instant::now();
        write_all(&s, &msg).await.expect("write");
        let mut have = 0;
        while have < MESSAGE {
            let k = read_some(&s, &mut back[have..]).await.expect("read");
            assert!(k > 0, "end of stream before the echo");
            have += k;
        }
        lat.push(t0.elapsed().as_nanos() as u64);
        assert!(msg == back, "echo mismatch");
    }
    lat
}

pub fn tcp_echo(rt: &Runtime, n: u64, conns: u64) -> Figures {
    let lat = rt
        .block_on(rt.spawn(async move {
            let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
            let addr = listener.local_addr().expect("local_addr");
            let server = tokio::spawn(async move {
                let mut handles = Vec::with_capacity(conns as usize);
                for _ in 0..conns {
                    let (s, _) = listener.accept().await.expect("accept");
                    s.set_nodelay(true).expect("nodelay");
                    handles.push(tokio::spawn(echo(s)));
                }
                for h in handles {
                    h.await.unwrap();
                }
            });
            let mut clients = Vec::with_capacity(conns as usize);
            for c in 0..conns {
                let rounds = n / conns + u64::from(c < n % conns);
                clients.push(tokio::spawn(client(addr, c, rounds)));
            }
            let mut lat = Vec::with_capacity(n as usize);
            for h in clients {
                lat.extend(h.await.unwrap());
            }
            server.await.unwrap();
            lat
        }))
        .expect("task panicked");
    figures(lat.len() as u64, lat, 0)
}

pub fn run(rt: &Runtime, problem: &str, n: u64, iters: u64) -> Option<Figures> {
    if let Some(d) = sleep_duration(problem) {
        return Some(timer_sleep(rt, d, n));
    }
    match problem {
        "timer_spread_10k" => Some(timer_spread(rt, n)),
        "tcp_echo_pingpong" | "tcp_echo_throughput" => Some(tcp_echo(rt, n, iters)),
        _ => None,
    }
}
