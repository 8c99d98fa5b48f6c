//! A server whose open-files limit cannot hold `--maxclients` serves fewer
//! clients, and the engine keeps the descriptors it needs. The server runs
//! in a child process (this test binary again) whose limit is lowered.

mod common;
use common::Server;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

fn lower_open_files_limit(to: u64) {
    let limit = libc::rlimit {
        rlim_cur: to as libc::rlim_t,
        rlim_max: to as libc::rlim_t,
    };
    // SAFETY: setrlimit reads the one `rlimit` the pointer points to.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) }, 0);
}

/// The reply to PING on a new connection (which stays open), or why not.
fn ping(addr: std::net::SocketAddr) -> (Option<TcpStream>, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(b"PING\r\n").unwrap();
    let mut reply = [0u8; 64];
    let n = s.read(&mut reply).unwrap_or(0);
    (Some(s), String::from_utf8_lossy(&reply[..n]).into_owned())
}

/// Set in the child process that runs the server.
const CHILD: &str = "SLSM_FDLIMIT_TEST_SERVER";
const TEST: &str = "clients_past_what_the_limit_leaves_are_refused_and_writes_go_on";

/// The child: a server under a 600-descriptor limit, asked for Redis's
/// default of 10,000 clients, until its standard input closes.
fn serve_under_a_low_limit() {
    lower_open_files_limit(600);
    let s = Server::start_with(|o| o.maxclients = 10_000);
    println!("PORT {}", s.addr.port());
    std::io::stdout().flush().unwrap();
    let mut rest = String::new();
    let _ = std::io::stdin().read_to_string(&mut rest);
}

#[test]
fn clients_past_what_the_limit_leaves_are_refused_and_writes_go_on() {
    if std::env::var_os(CHILD).is_some() {
        return serve_under_a_low_limit();
    }
    // The server in a process of its own, so that the clients' sockets of
    // this one do not count against its limit.
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", TEST, "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let out = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut lines = std::io::BufRead::lines(out);
    let port: u16 = lines
        .by_ref()
        .map(|l| l.unwrap())
        // The harness's "test ... " may precede it on the line.
        .find_map(|l| l.split("PORT ").nth(1).map(|p| p.trim().parse().unwrap()))
        .expect("the server's port");
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let mut conn = redis::Client::open(format!("redis://{addr}/"))
        .unwrap()
        .get_connection()
        .unwrap();
    // The limit leaves 300 clients once the engine's share is kept.
    let max = redis::cmd("CONFIG")
        .arg("GET")
        .arg("maxclients")
        .query::<Vec<String>>(&mut conn)
        .unwrap()
        .remove(1);
    assert_eq!(max, "300");
    let mut held = Vec::new();
    let mut refused = 0;
    for _ in 0..350 {
        let (socket, reply) = ping(addr);
        match reply.as_str() {
            "+PONG\r\n" => held.extend(socket),
            "-ERR max number of clients reached\r\n" => refused += 1,
            other => panic!("unexpected reply {other:?}"),
        }
    }
    // 300 in all, the first connection included.
    assert_eq!((held.len(), refused), (299, 51));
    // The engine still opens what it needs: enough writes for new logs
    // and run files, all readable.
    let value = "v".repeat(1000);
    for i in 0..20_000 {
        let _: () = redis::cmd("SET")
            .arg(i)
            .arg(&value)
            .query(&mut conn)
            .unwrap();
    }
    for i in (0..20_000).step_by(997) {
        let got: String = redis::cmd("GET").arg(i).query(&mut conn).unwrap();
        assert_eq!(got, value);
    }
    drop(child.stdin.take());
    lines.for_each(drop); // the child's harness reports until it exits
    assert!(child.wait().unwrap().success());
}
