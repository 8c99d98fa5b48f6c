use super::*;
use crate::clients::Clients;

fn client(clients: &Clients, id: u64) -> Arc<Client> {
    Arc::clone(&clients.register(id, None, None, -1).client)
}

fn message(payload: &[u8]) -> Message {
    Message {
        kind: "message",
        pattern: None,
        channel: b"c".as_slice().into(),
        payload: payload.into(),
    }
}

fn drained(sub: &Subscriber, proto: u8) -> Vec<u8> {
    let mut out = Vec::new();
    sub.drain_into(proto, &mut out);
    out
}

#[test]
fn a_message_reaches_the_channels_subscribers_then_the_matching_patterns() {
    let clients = Clients::default();
    let registry = PubSub::default();
    let (a, b) = (
        Subscriber::new(client(&clients, 1)),
        Subscriber::new(client(&clients, 2)),
    );
    registry.add(Space::Channels, b"news", &a);
    registry.add(Space::Patterns, b"n*", &a);
    registry.add(Space::Patterns, b"x*", &b);
    registry.add(Space::Shards, b"news", &b);
    assert_eq!(registry.publish(false, b"news", b"hi"), 2);
    assert_eq!(
        drained(&a, 2),
        b"*3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$2\r\nhi\r\n*4\r\n$8\r\npmessage\r\n$2\r\nn*\r\n$4\r\nnews\r\n$2\r\nhi\r\n"
    );
    assert!(
        drained(&b, 2).is_empty(),
        "a shard channel is another namespace"
    );
    assert_eq!(registry.publish(true, b"news", b"s"), 1);
    assert_eq!(
        drained(&b, 3),
        b">3\r\n$8\r\nsmessage\r\n$4\r\nnews\r\n$1\r\ns\r\n"
    );
    // Leaving removes the channel once nobody listens.
    registry.remove(Space::Channels, b"news", &a);
    assert_eq!(registry.count(Space::Channels, b"news"), 0);
    assert!(registry.active(Space::Channels, None).is_empty());
    assert_eq!(
        registry.active(Space::Shards, Some(b"n?ws")),
        vec![b"news".to_vec()]
    );
    assert_eq!(registry.names(Space::Patterns), 2);
    assert_eq!(registry.publish(false, b"news", b"again"), 1);
}

#[test]
fn a_subscriber_past_the_hard_limit_is_disconnected_and_holds_nothing() {
    let clients = Clients::default();
    let sub = Subscriber::new(client(&clients, 1));
    let payload = vec![b'x'; 1 << 20];
    for _ in 0..31 {
        sub.deliver(message(&payload));
    }
    assert!(!sub.client.is_killed(), "31 MiB is within the limit");
    sub.deliver(message(&payload));
    assert!(sub.client.is_killed());
    assert_eq!(sub.outbox().bytes, 0);
    sub.deliver(message(b"late"));
    assert!(drained(&sub, 2).is_empty());
}

#[test]
fn a_subscriber_over_the_soft_limit_for_a_minute_is_disconnected() {
    let clients = Clients::default();
    let sub = Subscriber::new(client(&clients, 1));
    let payload = vec![b'x'; 9 << 20];
    let t0 = Instant::now();
    sub.deliver_at(message(&payload), t0);
    sub.deliver_at(message(b"a"), t0 + Duration::from_secs(59));
    assert!(!sub.client.is_killed());
    // Reading its messages resets the clock.
    assert!(!drained(&sub, 2).is_empty());
    sub.deliver_at(message(&payload), t0 + Duration::from_secs(60));
    sub.deliver_at(message(b"b"), t0 + Duration::from_secs(100));
    assert!(!sub.client.is_killed());
    sub.deliver_at(message(b"c"), t0 + Duration::from_secs(120));
    assert!(sub.client.is_killed());
}
