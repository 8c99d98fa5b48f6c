//! A script running past `busy-reply-threshold` (`lua-time-limit`) makes
//! the server answer other clients `BUSY`, as Redis does, but for the
//! commands Redis lets through (`SCRIPT KILL` among them); an `EXEC`
//! arriving then discards its transaction.

use std::time::{Duration, Instant};

use redis::cmd;

use crate::common;
use common::{error_of, Raw, Server};

fn wait_busy(c: &mut redis::Connection) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match cmd("PING").query::<String>(c) {
            Err(e) if e.to_string().contains("BUSY") => return e.to_string(),
            _ => assert!(Instant::now() < deadline, "never busy"),
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_script_past_the_threshold_makes_others_busy_until_killed() {
    let s = Server::start(None);
    let mut c = s.conn();
    let _: String = cmd("CONFIG")
        .arg(&["SET", "lua-time-limit", "10"])
        .query(&mut c)
        .unwrap();
    assert_eq!(
        cmd("CONFIG")
            .arg(&["GET", "busy-reply-threshold"])
            .query::<Vec<String>>(&mut c)
            .unwrap()[1],
        "10"
    );
    let mut tx = s.conn();
    let _: String = cmd("SET").arg("xx").arg("1").query(&mut tx).unwrap();
    let _: String = cmd("MULTI").query(&mut tx).unwrap();
    let _: String = cmd("INCR").arg("xx").query(&mut tx).unwrap();
    let mut runner = Raw::new(&s);
    runner.send(&[&["EVAL", "while true do end", "0"]]);
    let e = wait_busy(&mut c);
    assert!(
        e.contains("You can only call SCRIPT KILL or SHUTDOWN NOSAVE"),
        "{e}"
    );
    let e = error_of(&mut c, &["SET", "a", "b"]);
    assert!(e.contains("BUSY"), "{e}");
    let e = error_of(&mut tx, &["EXEC"]);
    assert!(e.contains("Transaction discarded because of: BUSY"), "{e}");
    let killed: String = cmd("SCRIPT").arg("KILL").query(&mut c).unwrap();
    assert_eq!(killed, "OK");
    let deadline = Instant::now() + Duration::from_secs(10);
    while cmd("PING").query::<String>(&mut c).is_err() {
        assert!(Instant::now() < deadline, "still busy after SCRIPT KILL");
        std::thread::sleep(Duration::from_millis(10));
    }
    let xx: String = cmd("GET").arg("xx").query(&mut c).unwrap();
    assert_eq!(xx, "1", "the aborted transaction did not run");
    // The transaction's connection left MULTI.
    let pong: String = cmd("PING").arg("asdf").query(&mut tx).unwrap();
    assert_eq!(pong, "asdf");
}

#[test]
fn below_the_threshold_others_are_served_beside_a_script() {
    let s = Server::start(None);
    let mut c = s.conn();
    let mut runner = Raw::new(&s);
    runner.send(&[&["EVAL", "local t = redis.call('time')[1] + 0 while redis.call('time')[1] + 0 < t + 1 do end return 1", "0"]]);
    std::thread::sleep(Duration::from_millis(200));
    let pong: String = cmd("PING").query(&mut c).unwrap();
    assert_eq!(pong, "PONG");
    runner.expect(":1\r\n");
}

/// A killed script stops even when it calls `pcall` in a loop: from the
/// kill on, no `pcall` or `xpcall` of it catches an error.
#[test]
fn a_killed_script_cannot_catch_its_kill() {
    let s = Server::start(None);
    let mut c = s.conn();
    for script in [
        "while true do pcall(redis.call, 'ping') end",
        "while true do pcall(function() for i = 1, 1e12 do end end) end",
        "while true do xpcall(function() for i = 1, 1e12 do end end, function(e) return e end) end",
    ] {
        let mut runner = Raw::new(&s);
        runner.send(&[&["EVAL", script, "0"]]);
        let deadline = Instant::now() + Duration::from_secs(10);
        while cmd("SCRIPT").arg("KILL").query::<String>(&mut c).is_err() {
            assert!(Instant::now() < deadline, "the script never ran");
            std::thread::sleep(Duration::from_millis(10));
        }
        let mut reply = String::new();
        let mut r = std::io::BufReader::new(&runner.0);
        std::io::BufRead::read_line(&mut r, &mut reply).unwrap();
        assert!(reply.contains("Script killed by user"), "{script}: {reply}");
    }
    let pong: String = cmd("PING").query(&mut c).unwrap();
    assert_eq!(pong, "PONG");
}
