//! Client-side caching (`CLIENT TRACKING`): what a tracking client is
//! sent, byte for byte as redis-server 7.0 sends it, for each mode —
//! default (a key read, then changed by another client, is invalidated
//! once), RESP2 redirection to a subscribed connection, BCAST with
//! prefixes and NOLOOP, OPTIN with `CLIENT CACHING`, a flush, an expiry,
//! writes pipelined by other clients, a redirect whose target left, and
//! the table's bound; and the options' checks.

use crate::common;
use common::{Raw, Server};

fn push(keys: &[&str]) -> String {
    let mut out = format!(">2\r\n$10\r\ninvalidate\r\n*{}\r\n", keys.len());
    for k in keys {
        out.push_str(&format!("${}\r\n{k}\r\n", k.len()));
    }
    out
}

/// A RESP3 connection with tracking on (`options` after `ON`).
fn tracking(s: &Server, options: &[&str]) -> Raw {
    let mut c = Raw::new(s);
    let hello = c.reply_to(&["HELLO", "3"]);
    assert!(
        hello.starts_with(b"%"),
        "{}",
        String::from_utf8_lossy(&hello)
    );
    let mut on = vec!["CLIENT", "TRACKING", "ON"];
    on.extend_from_slice(options);
    c.send(&[&on]).expect("+OK\r\n");
    c
}

fn client_id(c: &mut Raw) -> String {
    let reply = String::from_utf8(c.reply_to(&["CLIENT", "ID"])).unwrap();
    reply.trim_start_matches(':').trim_end().to_string()
}

#[test]
fn a_key_read_then_changed_by_another_client_is_invalidated_once() {
    let s = Server::start(None);
    let mut other = Raw::new(&s);
    other.send(&[&["SET", "k", "1"]]).expect("+OK\r\n");
    let mut c = tracking(&s, &[]);
    c.send(&[&["GET", "k"]]).expect("$1\r\n1\r\n");
    // Not read: never told.
    other.send(&[&["SET", "unread", "1"]]).expect("+OK\r\n");
    other.send(&[&["SET", "k", "2"]]).expect("+OK\r\n");
    c.expect(&push(&["k"]));
    // Forgotten once told, until read again.
    other.send(&[&["SET", "k", "3"]]).expect("+OK\r\n");
    c.expect_quiet();
    // A collection's change counts too, and the client's own write.
    c.send(&[&["HSET", "h", "f", "v"]]).expect(":1\r\n");
    c.send(&[&["HGET", "h", "f"]]).expect("$1\r\nv\r\n");
    c.send(&[&["HDEL", "h", "f"]]).expect(":1\r\n");
    c.expect(&push(&["h"]));
    c.expect_quiet();
}

#[test]
fn writes_pipelined_by_other_clients_invalidate_too() {
    let s = Server::start(None);
    let mut c = tracking(&s, &[]);
    c.send(&[&["MGET", "a", "b", "n"]])
        .expect("*3\r\n_\r\n_\r\n_\r\n");
    let mut other = Raw::new(&s);
    other
        .send(&[
            &["SET", "a", "1"],
            &["SET", "b", "2"],
            &["INCR", "n"],
            &["INCR", "n"],
        ])
        .expect("+OK\r\n+OK\r\n:1\r\n:2\r\n");
    c.expect(&(push(&["a"]) + &push(&["b"]) + &push(&["n"])));
    c.expect_quiet();
}

#[test]
fn a_resp2_redirect_target_gets_messages_on_the_invalidate_channel() {
    let s = Server::start(None);
    let mut target = Raw::new(&s);
    let id = client_id(&mut target);
    target
        .send(&[&["SUBSCRIBE", "__redis__:invalidate"]])
        .expect("*3\r\n$9\r\nsubscribe\r\n$20\r\n__redis__:invalidate\r\n:1\r\n");
    let mut c = Raw::new(&s);
    c.send(&[&["CLIENT", "TRACKING", "ON", "REDIRECT", &id]])
        .expect("+OK\r\n");
    assert_eq!(
        c.reply_to(&["CLIENT", "GETREDIR"]),
        format!(":{id}\r\n").as_bytes()
    );
    c.send(&[&["GET", "k"]]).expect("$-1\r\n");
    let mut other = Raw::new(&s);
    other.send(&[&["SET", "k", "1"]]).expect("+OK\r\n");
    let message = "*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n";
    target.expect(&format!("{message}*1\r\n$1\r\nk\r\n"));
    // A flush invalidates everything: a null.
    other.send(&[&["FLUSHALL"]]).expect("+OK\r\n");
    target.expect(&format!("{message}$-1\r\n"));
    // The tracking client itself, in RESP2, is sent nothing.
    c.expect_quiet();
}

#[test]
fn bcast_tells_each_prefix_its_changed_keys_and_noloop_leaves_out_its_own() {
    let s = Server::start(None);
    let mut c = tracking(&s, &["BCAST", "PREFIX", "a:", "PREFIX", "b:", "NOLOOP"]);
    let mut other = Raw::new(&s);
    other
        .send(&[&["MSET", "a:2", "x", "c:1", "y", "a:1", "z", "b:1", "w"]])
        .expect("+OK\r\n");
    c.expect(&(push(&["a:1", "a:2"]) + &push(&["b:1"])));
    c.send(&[&["SET", "a:3", "mine"]]).expect("+OK\r\n");
    c.expect_quiet();
    let info = String::from_utf8(c.reply_to(&["CLIENT", "TRACKINGINFO"])).unwrap();
    assert_eq!(
        info,
        "%3\r\n$5\r\nflags\r\n~3\r\n$2\r\non\r\n$5\r\nbcast\r\n$6\r\nnoloop\r\n$8\r\nredirect\r\n:0\r\n$8\r\nprefixes\r\n*2\r\n$2\r\na:\r\n$2\r\nb:\r\n"
    );
    let err = c.reply_to(&["CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "a"]);
    assert_eq!(
        String::from_utf8(err).unwrap(),
        "-ERR Prefix 'a' overlaps with an existing prefix 'a:'. Prefixes for a single client must not overlap.\r\n"
    );
}

#[test]
fn an_expired_key_is_invalidated() {
    let s = Server::start(None);
    let mut c = tracking(&s, &["BCAST"]);
    let mut other = Raw::new(&s);
    other
        .send(&[&["SET", "soon", "v", "PX", "50"]])
        .expect("+OK\r\n");
    c.expect(&push(&["soon"]));
    // The expiry watch tells it once it passes.
    c.expect(&push(&["soon"]));
}

#[test]
fn optin_tracks_only_after_client_caching_yes() {
    let s = Server::start(None);
    let mut c = tracking(&s, &["OPTIN"]);
    c.send(&[&["GET", "k1"]]).expect("_\r\n");
    c.send(&[
        &["CLIENT", "CACHING", "YES"],
        &["GET", "k2"],
        &["GET", "k3"],
    ])
    .expect("+OK\r\n_\r\n_\r\n");
    let mut other = Raw::new(&s);
    other
        .send(&[&["MSET", "k1", "1", "k2", "2", "k3", "3"]])
        .expect("+OK\r\n");
    // CACHING YES held for one command only.
    c.expect(&push(&["k2"]));
    c.expect_quiet();
    let err = c.reply_to(&["CLIENT", "CACHING", "NO"]);
    assert_eq!(
        String::from_utf8(err).unwrap(),
        "-ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.\r\n"
    );
}

#[test]
fn a_redirect_whose_target_left_is_reported_as_broken() {
    let s = Server::start(None);
    let mut target = Raw::new(&s);
    let id = client_id(&mut target);
    let mut c = tracking(&s, &["REDIRECT", &id]);
    c.send(&[&["GET", "k"]]).expect("_\r\n");
    target.send(&[&["QUIT"]]).expect("+OK\r\n");
    drop(target);
    let mut other = Raw::new(&s);
    // The target's connection ends a moment after its QUIT's reply.
    for _ in 0..100 {
        let list = String::from_utf8(other.reply_to(&["CLIENT", "LIST"])).unwrap();
        if !list.contains(&format!("id={id} ")) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    other.send(&[&["SET", "k", "1"]]).expect("+OK\r\n");
    let broken = format!(">2\r\n$21\r\ntracking-redir-broken\r\n:{id}\r\n");
    c.expect(&broken);
    let info = String::from_utf8(c.reply_to(&["CLIENT", "TRACKINGINFO"])).unwrap();
    assert!(info.contains("$15\r\nbroken_redirect\r\n"), "{info}");
    let list = String::from_utf8(c.reply_to(&["CLIENT", "INFO"])).unwrap();
    assert!(
        list.contains("flags=tR ") && list.contains(&format!("redir={id} ")),
        "{list}"
    );
}

#[test]
fn the_table_is_held_to_tracking_table_max_keys() {
    let s = Server::start(None);
    let mut c = tracking(&s, &[]);
    c.send(&[&["MGET", "a", "b", "c"]])
        .expect("*3\r\n_\r\n_\r\n_\r\n");
    let mut admin = Raw::new(&s);
    let info = String::from_utf8(admin.reply_to(&["INFO", "stats"])).unwrap();
    assert!(info.contains("tracking_total_keys:3\r\n"), "{info}");
    admin
        .send(&[&["CONFIG", "SET", "tracking-table-max-keys", "1"]])
        .expect("+OK\r\n");
    // Two keys forgotten, their client told of each.
    let mut got = Vec::new();
    for _ in 0..2 {
        let mut one = vec![0u8; push(&["a"]).len()];
        std::io::Read::read_exact(&mut c.0, &mut one).unwrap();
        got.push(String::from_utf8(one).unwrap());
    }
    got.dedup();
    assert_eq!(got.len(), 2, "{got:?}");
    let info = String::from_utf8(admin.reply_to(&["INFO", "stats"])).unwrap();
    assert!(info.contains("tracking_total_keys:1\r\n"), "{info}");
}

#[test]
fn tracking_options_are_checked_as_redis_checks_them() {
    let s = Server::start(None);
    common::expect_replies(
        &s,
        &[
            (&["CLIENT", "TRACKING", "ON", "PREFIX", "a"], "-ERR PREFIX option requires BCAST mode to be enabled\r\n"),
            (&["CLIENT", "TRACKING", "ON", "BCAST", "OPTIN"], "-ERR OPTIN and OPTOUT are not compatible with BCAST\r\n"),
            (&["CLIENT", "TRACKING", "ON", "OPTIN", "OPTOUT"], "-ERR You can't use both OPTIN and OPTOUT\r\n"),
            (&["CLIENT", "TRACKING", "ON", "REDIRECT", "999999"], "-ERR The client ID you want redirect to does not exist\r\n"),
            (&["CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "ab", "PREFIX", "a"], "-ERR Prefix 'ab' overlaps with another provided prefix 'a'. Prefixes for a single client must not overlap.\r\n"),
            (&["CLIENT", "TRACKING", "ON", "NOSUCH"], "-ERR syntax error\r\n"),
            (&["CLIENT", "GETREDIR"], ":-1\r\n"),
            (&["CLIENT", "TRACKING", "ON", "OPTOUT"], "+OK\r\n"),
            (&["CLIENT", "GETREDIR"], ":0\r\n"),
            (&["CLIENT", "TRACKING", "ON", "BCAST"], "-ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode.\r\n"),
            (&["CLIENT", "TRACKING", "ON", "OPTIN"], "-ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode.\r\n"),
            (&["CLIENT", "CACHING", "NO"], "+OK\r\n"),
            (&["CLIENT", "TRACKINGINFO"], "*6\r\n$5\r\nflags\r\n*3\r\n$2\r\non\r\n$6\r\noptout\r\n$10\r\ncaching-no\r\n$8\r\nredirect\r\n:0\r\n$8\r\nprefixes\r\n*0\r\n"),
            (&["RESET"], "+RESET\r\n"),
            (&["CLIENT", "GETREDIR"], ":-1\r\n"),
        ],
    );
}

#[test]
fn keys_evicted_before_a_command_are_invalidated_before_its_reply() {
    let s = Server::start(None);
    let mut other = Raw::new(&s);
    other
        .send(&[&["SET", "a", "1", "EX", "100"]])
        .expect("+OK\r\n");
    other
        .send(&[&["SET", "b", "1", "EX", "200"]])
        .expect("+OK\r\n");
    let mut c = tracking(&s, &[]);
    c.send(&[&["GET", "a"]]).expect("$1\r\n1\r\n");
    c.send(&[&["GET", "b"]]).expect("$1\r\n1\r\n");
    // One eviction a pass, the nearest expiry first: `a` at the CONFIG
    // SET that puts the bound below what the engine holds.
    for (name, value) in [
        ("maxmemory-policy", "volatile-ttl"),
        ("maxmemory-eviction-tenacity", "0"),
        ("maxmemory", "1"),
    ] {
        other
            .send(&[&["CONFIG", "SET", name, value]])
            .expect("+OK\r\n");
    }
    c.expect(&push(&["a"]));
    // `b` before the tracking client's next command runs: told first.
    c.send(&[&["PING"]])
        .expect(&format!("{}+PONG\r\n", push(&["b"])));
}
