use super::*;
use crate::clients::Clients;

fn v(s: &str) -> Vec<u8> {
    s.as_bytes().to_vec()
}

/// A tracking state with clients 1..=n connected (their outboxes).
fn connected(n: u64) -> (Tracking, Vec<Arc<Client>>, Vec<Arc<Subscriber>>) {
    let tracking = Tracking::default();
    let registry = Clients::default();
    let clients: Vec<Arc<Client>> = (1..=n)
        .map(|id| Arc::clone(&registry.register(id, None, None, -1).client))
        .collect();
    let outboxes = clients
        .iter()
        .map(|c| {
            let outbox = Subscriber::new(Arc::clone(c));
            tracking.connected(c.id, &outbox);
            outbox
        })
        .collect();
    (tracking, clients, outboxes)
}

fn drained(outbox: &Subscriber) -> String {
    let mut out = Vec::new();
    outbox.drain_into(3, &mut out);
    String::from_utf8(out).unwrap()
}

#[test]
fn prefixes_that_overlap_are_refused_with_redis_words() {
    let none: Vec<Vec<u8>> = Vec::new();
    assert_eq!(tables::collision(&none, &[v("a"), v("b")]), None);
    let e = tables::collision(&[v("foo")], &[v("fo")]).unwrap();
    assert!(
        e.starts_with("ERR Prefix 'fo' overlaps with an existing prefix 'foo'"),
        "{e}"
    );
    let e = tables::collision(&none, &[v("foobar"), v("foo")]).unwrap();
    assert!(
        e.starts_with("ERR Prefix 'foobar' overlaps with another provided prefix 'foo'"),
        "{e}"
    );
    // The empty prefix overlaps every other.
    assert!(tables::collision(&[v("")], &[v("x")]).is_some());
}

#[test]
fn keys_are_counted_once_per_client_and_forgotten_when_changed() {
    let (t, clients, outboxes) = connected(2);
    let on = AtomicBool::new(false);
    for client in &clients {
        t.enable(client, Options::default(), &on);
    }
    assert!(on.load(Ordering::SeqCst));
    t.remember(1, [b"a".as_slice(), b"b", b"a"].into_iter());
    t.remember(2, [b"a".as_slice()].into_iter());
    let c = t.counts();
    assert_eq!((c.keys, c.items, c.clients), (2, 3, 2));
    t.changed(&[v("a"), v("a")]);
    assert_eq!(
        drained(&outboxes[0]),
        ">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\na\r\n"
    );
    assert_eq!(
        drained(&outboxes[1]),
        ">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\na\r\n"
    );
    let c = t.counts();
    assert_eq!((c.keys, c.items), (1, 1));
    // A client that stopped tracking is skipped, and `on` follows the count.
    t.disable(1, &on);
    t.disable(2, &on);
    assert!(!on.load(Ordering::SeqCst));
    t.changed(&[v("b")]);
    assert_eq!(drained(&outboxes[0]), "");
}

#[test]
fn the_bound_forgets_keys_and_tells_their_clients() {
    let (t, clients, outboxes) = connected(1);
    let on = AtomicBool::new(false);
    t.enable(&clients[0], Options::default(), &on);
    t.remember(1, [b"a".as_slice(), b"b", b"c"].into_iter());
    t.set_max_keys(1);
    assert_eq!(t.counts().keys, 1);
    assert_eq!(drained(&outboxes[0]).matches("invalidate").count(), 2);
    // Remembering past the bound forgets at once.
    t.remember(1, [b"d".as_slice()].into_iter());
    assert_eq!(t.counts().keys, 1);
    assert_eq!(drained(&outboxes[0]).matches("invalidate").count(), 1);
}

#[test]
fn noloop_leaves_out_the_writers_own_changes_in_both_modes() {
    let (t, clients, outboxes) = connected(2);
    let on = AtomicBool::new(false);
    let all = clients;
    let noloop = Options {
        noloop: true,
        ..Options::default()
    };
    t.enable(&all[0], noloop.clone(), &on);
    let bcast = Options {
        mode: Mode {
            bcast: true,
            ..Mode::default()
        },
        noloop: true,
        ..Options::default()
    };
    t.enable(&all[1], bcast, &on);
    t.remember(1, [b"k".as_slice()].into_iter());
    writing_as(1, || t.changed(&[v("k")]));
    assert_eq!(drained(&outboxes[0]), "");
    assert_eq!(drained(&outboxes[1]).matches("invalidate").count(), 1);
    writing_as(2, || t.changed(&[v("j")]));
    assert_eq!(drained(&outboxes[1]), "");
    assert_eq!(t.counts().prefixes, 1);
}
