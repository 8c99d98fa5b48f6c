//! The introspection and connection commands under concurrent load: for
//! two seconds, monitors attach and leave (some reading, some not),
//! blocked pops and `WAIT`s are ended by `CLIENT UNBLOCK`, and writers run
//! `INCR`, `GEOADD`, `DUMP`/`RESTORE` and `SLOWLOG GET` with every command
//! logged (threshold 0, length 10). Afterwards every acknowledged `INCR`
//! counted, the slow log holds at most its length, no client is left
//! blocked or connected, and the server still answers.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use redis::{cmd, Commands};

use crate::common;
use common::Server;

const RUN: Duration = Duration::from_secs(2);

fn monitors(addr: std::net::SocketAddr, stop: Arc<AtomicBool>, reads: bool) {
    let mut buf = vec![0u8; 1 << 16];
    while !stop.load(Ordering::Relaxed) {
        let mut m = TcpStream::connect(addr).unwrap();
        m.write_all(b"MONITOR\r\n").unwrap();
        m.set_read_timeout(Some(Duration::from_millis(5))).unwrap();
        let until = Instant::now() + Duration::from_millis(30);
        while reads && Instant::now() < until {
            let _ = m.read(&mut buf);
        }
    }
}

fn unblocker(s: &Server, stop: Arc<AtomicBool>) {
    let mut admin = s.conn();
    let mut round = 0u64;
    while !stop.load(Ordering::Relaxed) {
        let mut c = TcpStream::connect(s.addr).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        c.write_all(b"CLIENT ID\r\n").unwrap();
        let mut id = [0u8; 32];
        let n = c.read(&mut id).unwrap();
        let id: i64 = std::str::from_utf8(&id[1..n - 2]).unwrap().parse().unwrap();
        let request: &[u8] = match round % 3 {
            0 => b"BLPOP nothing 0\r\n",
            1 => b"WAIT 1 0\r\n",
            _ => b"BZPOPMIN nothing-z 0\r\n",
        };
        c.write_all(request).unwrap();
        // Until the request is seen blocked, UNBLOCK answers 0.
        let how = if round.is_multiple_of(2) {
            "TIMEOUT"
        } else {
            "ERROR"
        };
        while cmd("CLIENT")
            .arg("UNBLOCK")
            .arg(id)
            .arg(how)
            .query::<i64>(&mut admin)
            .unwrap()
            == 0
        {
            std::thread::sleep(Duration::from_millis(1));
        }
        let mut reply = [0u8; 64];
        let n = c.read(&mut reply).unwrap();
        let reply = String::from_utf8_lossy(&reply[..n]).into_owned();
        assert!(
            [
                "*-1\r\n",
                ":0\r\n",
                "-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n"
            ]
            .contains(&reply.as_str()),
            "{reply:?}"
        );
        round += 1;
    }
}

fn writer(s: &Server, stop: Arc<AtomicBool>, incrs: Arc<AtomicU64>, n: u64) {
    let mut c = s.conn();
    let mut i = 0u64;
    while !stop.load(Ordering::Relaxed) {
        let _: i64 = c.incr("counter", 1).unwrap();
        incrs.fetch_add(1, Ordering::Relaxed);
        let lon = (i % 360) as f64 - 180.0;
        let _: i64 = cmd("GEOADD")
            .arg("g")
            .arg(lon)
            .arg(10.0)
            .arg(format!("w{n}-{}", i % 50))
            .query(&mut c)
            .unwrap();
        let payload: Vec<u8> = cmd("DUMP").arg("g").query(&mut c).unwrap();
        let _: () = cmd("RESTORE")
            .arg(format!("copy{n}"))
            .arg(0)
            .arg(payload)
            .arg("REPLACE")
            .query(&mut c)
            .unwrap();
        let _: redis::Value = cmd("SLOWLOG").arg("GET").arg(5).query(&mut c).unwrap();
        i += 1;
    }
}

#[test]
fn introspection_commands_hold_under_concurrent_clients() {
    let s = Arc::new(Server::start(None));
    let mut c = s.conn();
    for (name, value) in [("slowlog-log-slower-than", "0"), ("slowlog-max-len", "10")] {
        let _: () = cmd("CONFIG")
            .arg("SET")
            .arg(name)
            .arg(value)
            .query(&mut c)
            .unwrap();
    }
    let stop = Arc::new(AtomicBool::new(false));
    let incrs = Arc::new(AtomicU64::new(0));
    let mut threads = Vec::new();
    for reads in [true, false] {
        let (addr, stop) = (s.addr, Arc::clone(&stop));
        threads.push(std::thread::spawn(move || monitors(addr, stop, reads)));
    }
    {
        let (s, stop) = (Arc::clone(&s), Arc::clone(&stop));
        threads.push(std::thread::spawn(move || unblocker(&s, stop)));
    }
    for n in 0..2 {
        let (s, stop, incrs) = (Arc::clone(&s), Arc::clone(&stop), Arc::clone(&incrs));
        threads.push(std::thread::spawn(move || writer(&s, stop, incrs, n)));
    }
    std::thread::sleep(RUN);
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        t.join().unwrap();
    }
    let counter: u64 = c.get("counter").unwrap();
    assert_eq!(counter, incrs.load(Ordering::Relaxed));
    let len: usize = cmd("SLOWLOG").arg("LEN").query(&mut c).unwrap();
    assert!(len <= 10, "{len}");
    common::wait_blocked(&mut c, 0);
    // The other connections close as their threads end: only this one
    // stays.
    let mut clients = 0;
    for _ in 0..500 {
        let list: String = cmd("CLIENT").arg("LIST").query(&mut c).unwrap();
        clients = list.lines().count();
        if clients == 1 {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(clients, 1);
    let pong: String = cmd("PING").query(&mut c).unwrap();
    assert_eq!(pong, "PONG");
}
