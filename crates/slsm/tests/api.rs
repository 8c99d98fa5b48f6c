//! The API a fjall or RocksDB user reaches for: keyspaces, batches across
//! them, snapshots of all of them, iterator seeks, optimistic transactions
//! and checkpoints, each across reopen.

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;

use common::small_options;
use slsm::{Db, Error, Options, WriteBatch};

fn keys_of(it: impl Iterator<Item = slsm::Result<(slsm::Slice, slsm::Slice)>>) -> Vec<Vec<u8>> {
    it.map(|r| r.unwrap().0.to_vec()).collect()
}

#[test]
fn arguments_take_anything_that_is_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    db.put("alpha", "1").unwrap();
    db.put(String::from("k"), vec![1]).unwrap();
    db.put(b"raw", [2u8; 3]).unwrap();
    assert_eq!(&*db.get("alpha").unwrap().unwrap(), b"1");
    assert_eq!(&*db.get(String::from("k")).unwrap().unwrap(), &[1]);
    assert!(db.contains_key("raw").unwrap());
    assert!(!db.contains_key("nope").unwrap());
    db.delete("alpha").unwrap();
    assert!(!db.contains_key("alpha").unwrap());
}

#[test]
fn keyspaces_are_separate_and_survive_reopen() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Db::open(dir.path(), small_options()).unwrap();
        let users = db.keyspace("users").unwrap();
        let posts = db.keyspace("posts").unwrap();
        for i in 0..2000u32 {
            let k = format!("{i:05}");
            db.put(&k, "default").unwrap();
            users.put(&k, "user").unwrap();
            if i % 2 == 0 {
                posts.put(&k, "post").unwrap();
            }
        }
        users.delete_range("00000", "00010").unwrap();
        assert_eq!(users.get("00005").unwrap(), None);
        assert_eq!(&*db.get("00005").unwrap().unwrap(), b"default");
        assert_eq!(posts.iter().count(), 1000);
        assert_eq!(users.iter().count(), 1990);
        assert_eq!(db.iter().count(), 2000);
        db.flush().unwrap();
    }
    let db = Db::open(dir.path(), small_options()).unwrap();
    assert_eq!(db.keyspace_names(), ["default", "users", "posts"]);
    let users = db.keyspace("users").unwrap();
    let posts = db.keyspace("posts").unwrap();
    assert_eq!(&*users.get("01999").unwrap().unwrap(), b"user");
    assert_eq!(posts.get("01999").unwrap(), None);
    let first: Vec<_> = keys_of(posts.range("00010".."00020"));
    assert_eq!(
        first,
        ["00010", "00012", "00014", "00016", "00018"].map(|s| s.as_bytes().to_vec())
    );
    let last = posts.iter().next_back().unwrap().unwrap().0;
    assert_eq!(&*last, b"01998");
    assert_eq!(keys_of(users.prefix("0001")).len(), 10);
    assert_eq!(
        users
            .multi_get(&["00001", "00011", "x"])
            .unwrap()
            .iter()
            .filter(|v| v.is_some())
            .count(),
        1
    );
}

#[test]
fn a_batch_across_keyspaces_is_atomic_and_recovered_whole() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Db::open(dir.path(), Options::default()).unwrap();
        let a = db.keyspace("a").unwrap();
        let b = db.keyspace("b").unwrap();
        let mut batch = WriteBatch::new();
        batch
            .put("x", "0")
            .put_in(&a, "x", "1")
            .put_in(&b, "x", "2");
        batch.delete_in(&a, "gone").delete_range_in(&b, "m", "n");
        db.write(batch).unwrap();
        // A batch with an invalid operation applies nothing anywhere.
        let mut bad = WriteBatch::new();
        bad.put_in(&a, "y", "1").put_in(&b, vec![0u8; 70_000], "v");
        assert!(matches!(db.write(bad), Err(Error::InvalidArgument(_))));
        assert_eq!(a.get("y").unwrap(), None);
        // Dropped at exit without a flush: recovery replays the log.
    }
    let db = Db::open(dir.path(), Options::default()).unwrap();
    let (a, b) = (db.keyspace("a").unwrap(), db.keyspace("b").unwrap());
    assert_eq!(&*db.get("x").unwrap().unwrap(), b"0");
    assert_eq!(&*a.get("x").unwrap().unwrap(), b"1");
    assert_eq!(&*b.get("x").unwrap().unwrap(), b"2");
}

#[test]
fn a_snapshot_sees_every_keyspace_at_one_point() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), small_options()).unwrap();
    let a = db.keyspace("a").unwrap();
    db.put("k", "d1").unwrap();
    a.put("k", "a1").unwrap();
    let snap = db.snapshot();
    db.put("k", "d2").unwrap();
    a.put("k", "a2").unwrap();
    a.put("new", "x").unwrap();
    db.flush().unwrap();
    assert_eq!(&*snap.get("k").unwrap().unwrap(), b"d1");
    assert_eq!(&*snap.get_in(&a, "k").unwrap().unwrap(), b"a1");
    assert!(!snap.contains_key_in(&a, "new").unwrap());
    assert_eq!(keys_of(snap.range_in::<&[u8], _>(&a, ..)), [b"k".to_vec()]);
    assert_eq!(snap.multi_get_in(&a, &["k", "new"]).unwrap()[1], None);
}

#[test]
fn dropping_a_keyspace_removes_it_and_its_files() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), small_options()).unwrap();
    let tmp = db.keyspace("tmp").unwrap();
    for i in 0..3000u32 {
        tmp.put(format!("{i:06}"), vec![7u8; 100]).unwrap();
    }
    db.put("keep", "1").unwrap();
    db.flush().unwrap();
    db.wait_for_compaction().unwrap();
    let before = db.stats().levels.iter().map(|l| l.bytes).sum::<u64>();
    db.drop_keyspace("tmp").unwrap();
    assert!(matches!(tmp.put("a", "b"), Err(Error::InvalidArgument(_))));
    assert!(matches!(tmp.get("a"), Err(Error::InvalidArgument(_))));
    let mut batch = WriteBatch::new();
    batch.put_in(&tmp, "a", "b");
    assert!(db.write(batch).is_err());
    assert_eq!(db.keyspace_names(), ["default"]);
    assert!(db.drop_keyspace("tmp").is_err());
    assert!(db.drop_keyspace("default").is_err());
    db.compact().unwrap();
    let after = db.stats().levels.iter().map(|l| l.bytes).sum::<u64>();
    assert!(after * 10 < before, "{after} of {before} bytes left");
    let again = db.keyspace("tmp").unwrap();
    assert_eq!(
        again.iter().count(),
        0,
        "a new keyspace of the name starts empty"
    );
    assert_eq!(&*db.get("keep").unwrap().unwrap(), b"1");
    again.put("early", "write").unwrap();
    let mut tx = db.transaction();
    tx.put("tx", "write").unwrap();
    drop(db);
    // A handle keeps the database open (like a snapshot): reads through it
    // go on, and writes through it fail with `Closed` once the Db is gone.
    assert!(matches!(again.put("late", "write"), Err(Error::Closed(_))));
    assert!(matches!(tx.commit(), Err(Error::Closed(_))));
    assert_eq!(&*again.get("early").unwrap().unwrap(), b"write");
    let closed = again.put("late", "write").unwrap_err().to_string();
    assert!(closed.contains("is closed"), "{closed}");
    drop((again, tmp));
    let db = Db::open(dir.path(), small_options()).unwrap();
    assert_eq!(db.keyspace_names(), ["default", "tmp"]);
    let tmp = db.keyspace("tmp").unwrap();
    assert_eq!(tmp.get("early").unwrap().as_deref(), Some(&b"write"[..]));
    assert_eq!(tmp.iter().count(), 1, "nothing written after the close");
    assert_eq!(db.get("tx").unwrap(), None);
}

#[test]
fn keyspace_names_are_checked_and_read_only_cannot_create() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Db::open(dir.path(), Options::default()).unwrap();
        for bad in ["", "a/b", "sp ace", &"x".repeat(256)] {
            assert!(
                matches!(db.keyspace(bad), Err(Error::InvalidArgument(_))),
                "{bad:?}"
            );
        }
        db.keyspace("exists").unwrap().put("k", "v").unwrap();
    }
    let db = Db::open_read_only(dir.path(), Options::default()).unwrap();
    assert_eq!(
        &*db.keyspace("exists").unwrap().get("k").unwrap().unwrap(),
        b"v"
    );
    assert!(matches!(db.keyspace("new"), Err(Error::ReadOnly(_))));
}

#[test]
fn iterator_seek_splits_the_range_at_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), small_options()).unwrap();
    let model: BTreeMap<Vec<u8>, Vec<u8>> = (0..500u32)
        .map(|i| (format!("{:04}", i * 2).into_bytes(), vec![i as u8]))
        .collect();
    for (k, v) in &model {
        db.put(k, v).unwrap();
    }
    db.flush().unwrap();
    db.put("0100", "overwritten").unwrap();
    let mut model = model;
    model.insert(b"0100".to_vec(), b"overwritten".to_vec());
    let mut it = db.range("0050".."0900");
    let snapshot_writes = db.put("0102", "after the iterator");
    snapshot_writes.unwrap();
    for target in [
        "0000", "0050", "0099", "0100", "0101", "0500", "0899", "0900", "9999",
    ] {
        let t = target.as_bytes().to_vec();
        let in_range = |k: &Vec<u8>| k.as_slice() >= b"0050" && k.as_slice() < b"0900";
        it.seek(target);
        let up: Vec<_> = model
            .keys()
            .filter(|k| in_range(k) && **k >= t)
            .take(3)
            .cloned()
            .collect();
        let down: Vec<_> = model
            .keys()
            .rev()
            .filter(|k| in_range(k) && **k < t)
            .take(3)
            .cloned()
            .collect();
        assert_eq!(keys_of(it.by_ref().take(3)), up, "seek {target} forward");
        assert_eq!(
            keys_of(it.by_ref().rev().take(3)),
            down,
            "seek {target} backward"
        );
        it.seek_for_prev(target);
        let down: Vec<_> = model
            .keys()
            .rev()
            .filter(|k| in_range(k) && **k <= t)
            .take(3)
            .cloned()
            .collect();
        let up: Vec<_> = model
            .keys()
            .filter(|k| in_range(k) && **k > t)
            .take(3)
            .cloned()
            .collect();
        assert_eq!(
            keys_of(it.by_ref().rev().take(3)),
            down,
            "seek_for_prev {target} backward"
        );
        assert_eq!(
            keys_of(it.by_ref().take(3)),
            up,
            "seek_for_prev {target} forward"
        );
    }
    it.seek("0101");
    assert_eq!(&*it.next().unwrap().unwrap().0, b"0102");
    let v = db
        .iter()
        .find(|r| r.as_ref().unwrap().0.as_ref() == b"0102")
        .unwrap()
        .unwrap()
        .1;
    assert_eq!(&*v, b"after the iterator");
    let ks = db.keyspace("other").unwrap();
    ks.put("b", "1").unwrap();
    let mut it = ks.iter();
    it.seek("a");
    assert_eq!(keys_of(it), [b"b".to_vec()]);
}

#[test]
fn transactions_see_their_own_writes_and_commit_atomically() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    let ks = db.keyspace("ks").unwrap();
    db.put("a", "1").unwrap();
    db.put("c", "3").unwrap();
    let mut tx = db.transaction();
    tx.put("b", "2").unwrap();
    tx.delete("c").unwrap();
    tx.put_in(&ks, "x", "in ks").unwrap();
    assert_eq!(&*tx.get("b").unwrap().unwrap(), b"2");
    assert_eq!(tx.get("c").unwrap(), None);
    assert_eq!(&*tx.get_in(&ks, "x").unwrap().unwrap(), b"in ks");
    assert_eq!(
        keys_of(tx.range::<&str, _>(..)),
        [b"a".to_vec(), b"b".to_vec()]
    );
    assert_eq!(db.get("b").unwrap(), None, "nothing visible before commit");
    tx.commit().unwrap();
    assert_eq!(&*db.get("b").unwrap().unwrap(), b"2");
    assert_eq!(db.get("c").unwrap(), None);
    assert_eq!(&*ks.get("x").unwrap().unwrap(), b"in ks");
    let mut tx = db.transaction();
    tx.put("rolled", "back").unwrap();
    tx.rollback();
    let mut tx = db.transaction();
    tx.put("dropped", "too").unwrap();
    drop(tx);
    assert!(!db.contains_key("rolled").unwrap() && !db.contains_key("dropped").unwrap());
    assert!(db.transaction().put(vec![0u8; 70_000], "v").is_err());
}

/// A range opened in a transaction sees its writes as they were when it
/// opened, from either end, however the transaction writes meanwhile;
/// ranges opened later see the later writes.
#[test]
fn a_transactions_range_reads_its_writes_as_of_its_opening_from_both_ends() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    for k in ["b", "d", "f"] {
        db.put(k, "base").unwrap();
    }
    let mut tx = db.transaction();
    for k in ["a", "c", "e", "g"] {
        tx.put(k, "own").unwrap();
    }
    tx.delete("d").unwrap();
    let mut it = tx.range::<&str, _>("b".."g");
    assert_eq!(it.next().unwrap().unwrap().0.to_vec(), b"b");
    // Written while the range is open: not seen by it.
    tx.put("ca", "later").unwrap();
    tx.delete("e").unwrap();
    assert_eq!(it.next_back().unwrap().unwrap().0.to_vec(), b"f");
    let rest = keys_of(&mut it);
    assert_eq!(rest, [b"c".to_vec(), b"e".to_vec()]);
    assert!(it.next().is_none() && it.next_back().is_none());
    let now = keys_of(tx.range::<&str, _>(..).rev());
    let want: Vec<Vec<u8>> = ["g", "f", "ca", "c", "b", "a"]
        .iter()
        .map(|k| k.as_bytes().to_vec())
        .collect();
    assert_eq!(now, want);
    // Empty and inverted ranges of own writes are empty, not a panic.
    assert!(keys_of(tx.range::<&str, _>("c".."c")).is_empty());
    assert!(keys_of(tx.range::<&str, _>("x".."b")).is_empty());
    tx.commit().unwrap();
    assert_eq!(&*db.get("ca").unwrap().unwrap(), b"later");
    assert_eq!(db.get("e").unwrap(), None);
}

#[test]
fn a_transactions_multi_get_reads_its_own_writes_and_joins_the_conflict_check() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    let ks = db.keyspace("ks").unwrap();
    db.put("a", "1").unwrap();
    db.put("b", "2").unwrap();
    ks.put("x", "9").unwrap();
    let mut tx = db.transaction();
    tx.put("b", "20").unwrap();
    tx.delete("a").unwrap();
    db.put("c", "after the snapshot").unwrap();
    let got = tx.multi_get(&["a", "b", "c", "b", "d"]).unwrap();
    let got: Vec<Option<Vec<u8>>> = got.into_iter().map(|v| v.map(|v| v.to_vec())).collect();
    assert_eq!(
        got,
        [None, Some(b"20".to_vec()), None, Some(b"20".to_vec()), None]
    );
    let in_ks = tx.multi_get_in(&ks, &["x", "a"]).unwrap();
    assert_eq!(in_ks[0].as_deref(), Some(&b"9"[..]));
    assert_eq!(in_ks[1], None, "keyspaces are apart");
    assert!(tx.multi_get(&[vec![0u8; 70_000]]).is_err());
    // `c` was read (absent at the snapshot) and written since: conflict.
    assert!(matches!(tx.commit(), Err(Error::Conflict)));

    // A key answered from the transaction's own write was not read from
    // the database, so a later write to it by others is no conflict; a
    // key read by the batch is.
    let mut tx = db.transaction();
    tx.put("own", "mine").unwrap();
    let got = tx.multi_get(&["own", "read"]).unwrap();
    assert_eq!(got[0].as_deref(), Some(&b"mine"[..]));
    db.put("own", "theirs").unwrap();
    tx.commit().unwrap();
    assert_eq!(&*db.get("own").unwrap().unwrap(), b"mine");
    let mut tx = db.transaction();
    tx.multi_get(&["own", "read"]).unwrap();
    tx.put("out", "1").unwrap();
    db.put("read", "now").unwrap();
    assert!(matches!(tx.commit(), Err(Error::Conflict)));
    assert_eq!(db.get("out").unwrap(), None);
}

#[test]
fn a_transaction_left_open_is_not_a_memory_leak_and_then_conflicts() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    db.put("watched", "1").unwrap();
    let mut idle = db.transaction();
    idle.get("watched").unwrap();
    idle.put("watched", "2").unwrap();
    // Other transactions commit meanwhile, past what the conflict check
    // keeps for the idle one.
    for i in 0..120_000u64 {
        let mut t = db.transaction();
        let key = format!("key-{i:012}");
        t.get(&key).unwrap();
        t.put(&key, "v").unwrap();
        t.commit().unwrap();
    }
    assert!(matches!(idle.commit(), Err(Error::Conflict)));
    assert_eq!(&*db.get("watched").unwrap().unwrap(), b"1");
    // A fresh transaction commits.
    let mut t = db.transaction();
    t.get("watched").unwrap();
    t.put("watched", "3").unwrap();
    t.commit().unwrap();
    assert_eq!(&*db.get("watched").unwrap().unwrap(), b"3");
}

#[test]
fn lost_updates_and_write_skew_are_prevented() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    db.put("counter", "0").unwrap();
    // Lost update: both read, both write; the second must fail.
    let mut t1 = db.transaction();
    let mut t2 = db.transaction();
    t1.get("counter").unwrap();
    t2.get("counter").unwrap();
    t1.put("counter", "1").unwrap();
    t2.put("counter", "1").unwrap();
    t1.commit().unwrap();
    assert!(matches!(t2.commit(), Err(Error::Conflict)));
    // Write skew: two doctors on call, each checks the other is on call and
    // leaves; serializable means at most one succeeds.
    db.put("alice", "on").unwrap();
    db.put("bob", "on").unwrap();
    let mut t1 = db.transaction();
    let mut t2 = db.transaction();
    for t in [&mut t1, &mut t2] {
        assert_eq!(keys_of(t.range("alice".."c")).len(), 2);
    }
    t1.put("alice", "off").unwrap();
    t2.put("bob", "off").unwrap();
    t1.commit().unwrap();
    assert!(matches!(t2.commit(), Err(Error::Conflict)));
    assert_eq!(&*db.get("bob").unwrap().unwrap(), b"on");
    // A phantom: a key inserted into a range a transaction scanned.
    let mut t = db.transaction();
    let _ = keys_of(t.prefix("room-"));
    db.put("room-1", "booked").unwrap();
    t.put("room-2", "booked").unwrap();
    assert!(matches!(t.commit(), Err(Error::Conflict)));
    // A blind write does not conflict.
    let mut t = db.transaction();
    db.put("blind", "1").unwrap();
    t.put("blind", "2").unwrap();
    t.commit().unwrap();
    assert_eq!(&*db.get("blind").unwrap().unwrap(), b"2");
}

fn balance(t: &mut slsm::Transaction, bank: &slsm::Keyspace, account: u32) -> u64 {
    let v = t.get_in(bank, format!("acct{account}")).unwrap().unwrap();
    u64::from_le_bytes(v[..8].try_into().unwrap())
}

/// A bulk load while transactions are open is recorded as a write of its
/// range (with its bytes charged), and forgotten once no open transaction
/// needs it. It used to be recorded without its charge, so forgetting it
/// subtracted past zero: a panic in a debug build, a wrapped byte count in
/// a release build (which could make the tracker forget everything and
/// fail the open transactions that had read anything).
#[test]
fn a_bulk_load_beside_open_transactions_conflicts_and_is_then_forgotten() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), small_options()).unwrap();
    let mut before = db.transaction();
    assert_eq!(before.get("a").unwrap(), None);
    db.ingest([("a", "1"), ("b", "2")]).unwrap();
    let mut after = db.transaction();
    assert_eq!(&*after.get("a").unwrap().unwrap(), b"1");
    let mut later = db.transaction();
    before.put("z", "1").unwrap();
    assert!(
        matches!(before.commit(), Err(Error::Conflict)),
        "read what the load wrote"
    );
    after.put("y", "1").unwrap();
    after.commit().expect("began after the load");
    assert_eq!(later.get("w").unwrap(), None);
    later.put("w", "1").unwrap();
    later.commit().expect("nothing it read was written");
    assert_eq!(&*db.get("y").unwrap().unwrap(), b"1");
    assert_eq!(&*db.get("w").unwrap().unwrap(), b"1");
    assert_eq!(db.get("z").unwrap(), None);
}

#[test]
fn concurrent_bank_transfers_keep_the_total() {
    const ACCOUNTS: u32 = 10;
    let dir = tempfile::tempdir().unwrap();
    let db = Arc::new(Db::open(dir.path(), small_options()).unwrap());
    let bank = db.keyspace("bank").unwrap();
    for a in 0..ACCOUNTS {
        bank.put(format!("acct{a}"), 1000u64.to_le_bytes()).unwrap();
    }
    let threads: Vec<_> = (0..4u32)
        .map(|seed| {
            let (db, bank) = (Arc::clone(&db), bank.clone());
            std::thread::spawn(move || {
                let (mut done, mut conflicts) = (0, 0);
                let mut x = seed + 1;
                while done < 300 {
                    x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                    let (from, to) = (x % ACCOUNTS, (x / 7) % ACCOUNTS);
                    let mut t = db.transaction();
                    let (a, b) = (balance(&mut t, &bank, from), balance(&mut t, &bank, to));
                    let amount = (x as u64 % 50).min(a);
                    if from != to {
                        t.put_in(&bank, format!("acct{from}"), (a - amount).to_le_bytes())
                            .unwrap();
                        t.put_in(&bank, format!("acct{to}"), (b + amount).to_le_bytes())
                            .unwrap();
                    }
                    match t.commit() {
                        Ok(()) => done += 1,
                        Err(Error::Conflict) => conflicts += 1,
                        Err(e) => panic!("{e}"),
                    }
                    // Plain writes elsewhere go on meanwhile.
                    db.put(format!("noise{}", x % 100), "x").unwrap();
                }
                conflicts
            })
        })
        .collect();
    let conflicts: u32 = threads.into_iter().map(|t| t.join().unwrap()).sum();
    let mut t = db.transaction();
    let total: u64 = (0..ACCOUNTS).map(|a| balance(&mut t, &bank, a)).sum();
    assert_eq!(total, 1000 * ACCOUNTS as u64, "{conflicts} conflicts");
}

#[test]
fn a_checkpoint_is_a_consistent_database_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let cp = tempfile::tempdir().unwrap();
    let dest = cp.path().join("copy");
    let db = Arc::new(Db::open(dir.path(), small_options()).unwrap());
    let ks = db.keyspace("ks").unwrap();
    for i in 0..3000u32 {
        db.put(format!("{i:05}"), "v").unwrap();
        ks.put(format!("{i:05}"), "w").unwrap();
    }
    let writer = {
        let db = Arc::clone(&db);
        std::thread::spawn(move || {
            for i in 0..3000u32 {
                // Pairs written atomically: the checkpoint has both or neither.
                let mut b = WriteBatch::new();
                b.put(format!("pair{i:05}a"), "1")
                    .put(format!("pair{i:05}b"), "1");
                db.write(b).unwrap();
            }
        })
    };
    db.checkpoint(&dest).unwrap();
    writer.join().unwrap();
    assert!(
        matches!(db.checkpoint(&dest), Err(Error::InvalidArgument(_))),
        "not empty"
    );
    let copy = Db::open(&dest, small_options()).unwrap();
    assert_eq!(copy.keyspace_names(), ["default", "ks"]);
    assert_eq!(copy.range("0".."1").count(), 3000);
    assert_eq!(copy.keyspace("ks").unwrap().iter().count(), 3000);
    let a = copy
        .prefix("pair")
        .filter(|r| r.as_ref().unwrap().0.ends_with(b"a"))
        .count();
    let b = copy
        .prefix("pair")
        .filter(|r| r.as_ref().unwrap().0.ends_with(b"b"))
        .count();
    assert_eq!(a, b, "half a batch in the checkpoint");
    copy.check().unwrap();
    copy.put("only-in-copy", "1").unwrap();
    assert!(!db.contains_key("only-in-copy").unwrap());
}

#[test]
fn the_options_builder_sets_what_it_names() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options::default()
        .memory_budget(64 << 20)
        .sync_writes(true)
        .block_cache_size(8 << 20);
    let db = Db::open(dir.path(), opts).unwrap();
    assert_eq!(db.options().memory_budget, 64 << 20);
    assert!(db.options().sync_writes);
    assert!(matches!(
        Db::open(
            tempfile::tempdir().unwrap().path(),
            Options::default().level_runs(1)
        ),
        Err(Error::InvalidArgument(_))
    ));
}

/// `os_page_cache` forces the policy either way; by default a small
/// database on a machine with memory to spare keeps its pages. Reads
/// return the same values whichever way the blocks are read.
#[test]
fn the_os_page_cache_policy_follows_the_option() {
    for (option, bypass) in [(Some(false), true), (Some(true), false), (None, false)] {
        let dir = tempfile::tempdir().unwrap();
        let mut opts = Options::default().memory_budget(16 << 20);
        opts.os_page_cache = option;
        let db = Db::open(dir.path(), opts.clone()).unwrap();
        for i in 0..3000u32 {
            db.put(format!("{i:05}"), vec![i as u8; 200]).unwrap();
        }
        db.flush().unwrap();
        // Reopened, so that the flush's warming of the cache is gone and
        // the reads go to the files.
        drop(db);
        let db = Db::open(dir.path(), opts).unwrap();
        for i in (0..3000u32).step_by(7) {
            assert_eq!(
                db.get(format!("{i:05}")).unwrap().unwrap(),
                &vec![i as u8; 200][..]
            );
        }
        let cache = db.stats().memory.cache;
        assert_eq!(cache.bypasses_os_cache, bypass, "{option:?}");
        assert!(cache.misses > 0, "the reads went to the files");
    }
}

#[test]
fn ingest_goes_above_older_range_deletions_that_reach_its_keys() {
    // The deepest level holds keys outside the load's range, a shallower
    // run only a range deletion covering it: the load must be read before
    // that deletion, whatever merges and reopens do next.
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Db::open(dir.path(), small_options()).unwrap();
        db.put("x", "old").unwrap();
        db.put("z", "old").unwrap();
        db.compact().unwrap();
        db.put("b", "deleted").unwrap();
        db.delete_range("a", "k").unwrap();
        db.flush().unwrap();
        db.ingest([("b", "loaded"), ("c", "loaded")]).unwrap();
        assert_eq!(&*db.get("b").unwrap().unwrap(), b"loaded");
        assert_eq!(
            keys_of(db.iter()),
            [b"b".to_vec(), b"c".to_vec(), b"x".to_vec(), b"z".to_vec()]
        );
        let got = db.multi_get(&["b", "c", "x"]).unwrap();
        assert!(got.iter().all(Option::is_some), "{got:?}");
    }
    let db = Db::open(dir.path(), small_options()).unwrap();
    assert_eq!(&*db.get("c").unwrap().unwrap(), b"loaded");
    db.compact().unwrap();
    assert_eq!(&*db.get("b").unwrap().unwrap(), b"loaded");
    assert_eq!(keys_of(db.iter()).len(), 4);
}

#[test]
fn ingest_loads_sorted_runs_atomically_and_overrides_older_values() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Arc::new(Db::open(dir.path(), small_options()).unwrap());
        for i in 0..2000u32 {
            db.put(format!("{i:05}"), "old").unwrap();
        }
        db.flush().unwrap();
        db.put("00001", "in memory").unwrap();
        let before = db.snapshot();
        let writer = {
            let db = Arc::clone(&db);
            std::thread::spawn(move || {
                for i in 0..2000u32 {
                    db.put(format!("w{i:05}"), "x").unwrap();
                }
            })
        };
        let n = db
            .ingest((0..1000u32).map(|i| (format!("{:05}", i * 2), format!("new{i}"))))
            .unwrap();
        writer.join().unwrap();
        assert_eq!(n, 1000);
        assert_eq!(&*db.get("00000").unwrap().unwrap(), b"new0");
        assert_eq!(&*db.get("00001").unwrap().unwrap(), b"in memory");
        assert_eq!(&*db.get("01998").unwrap().unwrap(), b"new999");
        assert_eq!(&*db.get("01999").unwrap().unwrap(), b"old");
        assert_eq!(
            &*before.get("00000").unwrap().unwrap(),
            b"old",
            "snapshots do not see a later load"
        );
        // Out of order, repeated or oversized: an error, nothing applied.
        for bad in [
            vec![
                (b"a".to_vec(), b"1".to_vec()),
                (b"a".to_vec(), b"2".to_vec()),
            ],
            vec![
                (b"b".to_vec(), b"1".to_vec()),
                (b"a".to_vec(), b"2".to_vec()),
            ],
            vec![
                (b"c".to_vec(), b"1".to_vec()),
                (vec![b'd'; 70_000], b"2".to_vec()),
            ],
        ] {
            assert!(matches!(db.ingest(bad), Err(Error::InvalidArgument(_))));
        }
        assert!(!db.contains_key("a").unwrap() && !db.contains_key("c").unwrap());
        let ks = db.keyspace("loaded").unwrap();
        ks.ingest([("k1", "v1"), ("k2", "v2")]).unwrap();
        assert_eq!(keys_of(ks.iter()), [b"k1".to_vec(), b"k2".to_vec()]);
        assert_eq!(db.ingest(Vec::<(Vec<u8>, Vec<u8>)>::new()).unwrap(), 0);
    }
    let db = Db::open(dir.path(), small_options()).unwrap();
    assert_eq!(&*db.get("00000").unwrap().unwrap(), b"new0");
    assert_eq!(&*db.get("00001").unwrap().unwrap(), b"in memory");
    assert_eq!(db.prefix("w").count(), 2000);
    assert_eq!(
        &*db.keyspace("loaded").unwrap().get("k2").unwrap().unwrap(),
        b"v2"
    );
    db.put("00000", "after").unwrap();
    assert_eq!(
        &*db.get("00000").unwrap().unwrap(),
        b"after",
        "later writes win"
    );
    db.check().unwrap();
}

#[test]
fn ttl_values_vanish_for_reads_at_once_and_from_disk_in_merges() {
    use std::time::Duration;
    let dir = tempfile::tempdir().unwrap();
    let ttl = slsm::KeyspaceOptions::default().ttl(Duration::from_millis(300));
    {
        let db = Db::open(dir.path(), small_options()).unwrap();
        let s = db.keyspace_with("sessions", ttl.clone()).unwrap();
        assert_eq!(s.ttl(), Some(Duration::from_millis(300)));
        for i in 0..500u32 {
            s.put(format!("{i:04}"), "alive").unwrap();
        }
        let mut b = WriteBatch::new();
        b.put_in(&s, "batched", "alive");
        db.write(b).unwrap();
        let mut t = db.transaction();
        t.put_in(&s, "tx", "alive").unwrap();
        assert_eq!(&*t.get_in(&s, "tx").unwrap().unwrap(), b"alive");
        t.commit().unwrap();
        s.ingest([("zz-ingested", "alive")]).unwrap();
        assert_eq!(&*s.get("0001").unwrap().unwrap(), b"alive");
        assert_eq!(s.iter().count(), 503);
        assert_eq!(&*s.iter().next_back().unwrap().unwrap().1, b"alive");
        assert_eq!(
            &*db.snapshot().get_in(&s, "batched").unwrap().unwrap(),
            b"alive"
        );
        assert!(matches!(
            db.keyspace_with(
                "sessions",
                slsm::KeyspaceOptions::default().ttl(Duration::from_secs(9))
            ),
            Err(Error::InvalidArgument(_))
        ));
    }
    std::thread::sleep(Duration::from_millis(400));
    let db = Db::open(dir.path(), small_options()).unwrap();
    let s = db.keyspace("sessions").unwrap();
    assert_eq!(
        s.ttl(),
        Some(Duration::from_millis(300)),
        "recorded with the keyspace"
    );
    assert_eq!(s.get("0001").unwrap(), None);
    assert_eq!(
        s.multi_get(&["0002", "tx", "batched"]).unwrap(),
        vec![None, None, None]
    );
    assert_eq!(s.iter().count(), 0);
    assert_eq!(s.iter().rev().count(), 0);
    assert_eq!(db.transaction().get_in(&s, "tx").unwrap(), None);
    s.put("fresh", "v").unwrap();
    db.compact().unwrap();
    let entries: u64 = db.stats().levels.iter().map(|l| l.entries).sum();
    assert_eq!(entries, 1, "merges dropped the expired values");
    assert_eq!(&*s.get("fresh").unwrap().unwrap(), b"v");
}

#[test]
fn compaction_filters_remove_and_rewrite_but_never_under_a_snapshot() {
    use slsm::{FilterDecision, KeyspaceOptions};
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), small_options()).unwrap();
    let filter = |key: &[u8], value: &[u8]| match value {
        b"drop" => FilterDecision::Remove,
        b"old" => FilterDecision::ChangeValue([b"new:", key].concat()),
        _ => FilterDecision::Keep,
    };
    let logs = db
        .keyspace_with("logs", KeyspaceOptions::default().compaction_filter(filter))
        .unwrap();
    logs.put("a", "keep").unwrap();
    logs.put("b", "drop").unwrap();
    logs.put("c", "old").unwrap();
    db.put("b", "drop").unwrap(); // other keyspaces are not filtered
    db.flush().unwrap();
    db.compact().unwrap();
    // An older version below a removed one stays hidden.
    logs.put("d", "v1").unwrap();
    db.flush().unwrap();
    logs.put("d", "drop").unwrap();
    db.flush().unwrap();
    logs.put("e", "drop").unwrap();
    let snap = db.snapshot();
    db.flush().unwrap();
    db.compact().unwrap();
    assert_eq!(&*logs.get("a").unwrap().unwrap(), b"keep");
    assert_eq!(logs.get("b").unwrap(), None);
    assert_eq!(&*logs.get("c").unwrap().unwrap(), b"new:c");
    assert_eq!(logs.get("d").unwrap(), None, "v1 must not resurface");
    assert_eq!(&*db.get("b").unwrap().unwrap(), b"drop");
    assert_eq!(
        &*snap.get_in(&logs, "e").unwrap().unwrap(),
        b"drop",
        "the snapshot sees e"
    );
    drop(snap);
    db.compact().unwrap();
    assert_eq!(logs.get("e").unwrap(), None);
}

/// `Iter::next_with` lends each entry `next` would yield, in the same
/// order: across memory runs and run files, past deletes and range
/// deletes, within bounds, and without the expiry time a TTL keyspace
/// stores in front of its values.
#[test]
fn next_with_lends_what_next_yields() {
    use std::time::Duration;
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), small_options()).unwrap();
    let plain = db.keyspace("plain").unwrap();
    let ttl = slsm::KeyspaceOptions::default().ttl(Duration::from_secs(600));
    let expiring = db.keyspace_with("expiring", ttl).unwrap();
    for ks in [&plain, &expiring] {
        for i in 0..3_000u32 {
            ks.put(format!("k{i:05}"), format!("value {i}")).unwrap();
            if i % 700 == 0 {
                db.flush().unwrap();
            }
        }
        for i in (0..3_000u32).step_by(7) {
            ks.delete(format!("k{i:05}")).unwrap();
        }
        ks.delete_range("k01000", "k01500").unwrap();
    }
    let model: Vec<(Vec<u8>, Vec<u8>)> = (500..2_500u32)
        .filter(|i| i % 7 != 0 && !(1_000..1_500).contains(i))
        .map(|i| {
            (
                format!("k{i:05}").into_bytes(),
                format!("value {i}").into_bytes(),
            )
        })
        .collect();
    for ks in [&plain, &expiring] {
        let copied: Vec<(Vec<u8>, Vec<u8>)> = ks
            .range("k00500".."k02500")
            .map(|r| {
                let (k, v) = r.unwrap();
                (k.to_vec(), v.to_vec())
            })
            .collect();
        let mut it = ks.range("k00500".."k02500");
        let mut lent = Vec::new();
        while let Some(item) = it.next_with(|k, v| (k.to_vec(), v.to_vec())) {
            lent.push(item.unwrap());
        }
        assert_eq!(lent, model);
        assert_eq!(copied, model);
    }
}

/// Rewriting the same keys over and over: once `wait_for_compaction`
/// returns, the merges that bound space amplification have run and the
/// files they replaced are gone from the directory, so the disk holds at
/// most `max_space_amplification` times the live data.
#[test]
fn after_wait_for_compaction_the_directory_holds_the_bounded_space() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), small_options()).unwrap();
    let mut x = 1u64;
    for round in 0..25u32 {
        for i in 0..2000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let value = [round.to_le_bytes().to_vec(), x.to_le_bytes().repeat(12)].concat();
            db.put(format!("{:06}", i * 7 % 2000), value).unwrap();
        }
    }
    db.wait_for_compaction().unwrap();
    let run_bytes = || -> u64 {
        std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".run"))
            .map(|e| e.metadata().unwrap().len())
            .sum()
    };
    let on_disk = run_bytes();
    assert!(db.stats().space_merges > 0);
    db.compact().unwrap();
    let live = run_bytes();
    assert!(
        on_disk <= 2 * live,
        "{on_disk} bytes on disk for {live} live"
    );
    assert_eq!(
        &db.get("000000").unwrap().unwrap()[..4],
        24u32.to_le_bytes()
    );
}

/// A key rewritten thousands of times has as many versions in the memory
/// run; a step either way seeks past them after a few (not one by one), and
/// every snapshot still reads its own version (or its deletion) and the
/// keys around it, with the versions split between a run file and the
/// memory run.
#[test]
fn iterating_past_a_key_with_many_versions() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    db.put("a", "first").unwrap();
    db.put("c", "last").unwrap();
    let mut snapshots = Vec::new();
    for i in 0..5000u32 {
        if i == 3500 {
            db.delete("b").unwrap();
            snapshots.push((db.snapshot(), None));
        }
        db.put("b", i.to_string()).unwrap();
        if i % 1000 == 7 {
            snapshots.push((db.snapshot(), Some(i)));
        }
        if i == 2500 {
            db.flush().unwrap();
        }
    }
    db.put("bb", "between").unwrap();
    fn all<K: AsRef<[u8]>, V: AsRef<[u8]>>(
        it: impl Iterator<Item = slsm::Result<(K, V)>>,
    ) -> Vec<(Vec<u8>, Vec<u8>)> {
        it.map(|r| {
            let (k, v) = r.unwrap();
            (k.as_ref().to_vec(), v.as_ref().to_vec())
        })
        .collect()
    }
    let want = |b: Option<u32>, bb: bool| {
        let mut w = vec![(b"a".to_vec(), b"first".to_vec())];
        if let Some(b) = b {
            w.push((b"b".to_vec(), b.to_string().into_bytes()));
        }
        if bb {
            w.push((b"bb".to_vec(), b"between".to_vec()));
        }
        w.push((b"c".to_vec(), b"last".to_vec()));
        w
    };
    assert_eq!(all(db.iter()), want(Some(4999), true));
    let mut newest_back = all(db.range::<&str, _>(..).rev());
    newest_back.reverse();
    assert_eq!(newest_back, want(Some(4999), true));
    for (snap, i) in &snapshots {
        assert_eq!(
            all(snap.range::<&str, _>(..)),
            want(*i, false),
            "snapshot at {i:?}"
        );
        let mut expect = want(*i, false);
        expect.reverse();
        let back = all(snap.range::<&str, _>(..).rev());
        assert_eq!(back, expect, "descending, snapshot at {i:?}");
    }
}

/// `multi_get_with` reports what `multi_get` returns, values borrowed:
/// every found key once (duplicates each), nothing for absent, deleted or
/// expired keys, from memory runs and run files alike.
#[test]
fn multi_get_with_reports_what_multi_get_returns() {
    use std::time::Duration;
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), small_options()).unwrap();
    for i in 0..3000u32 {
        db.put(format!("{i:05}"), format!("v{i}")).unwrap();
    }
    db.flush().unwrap();
    for i in (0..3000u32).step_by(3) {
        db.delete(format!("{i:05}")).unwrap();
    }
    db.delete_range("02000", "02100").unwrap();
    db.put("00001", "newer").unwrap();
    let keys: Vec<String> = (0..3100u32)
        .step_by(7)
        .map(|i| format!("{i:05}"))
        .chain(["00001".into(), "00001".into(), "nope".into()])
        .collect();
    let expected = db.multi_get(&keys).unwrap();
    let mut got: Vec<Option<Vec<u8>>> = vec![None; keys.len()];
    let mut calls = 0;
    db.multi_get_with(&keys, |i, v| {
        assert!(got[i].is_none(), "key {i} reported twice");
        got[i] = Some(v.to_vec());
        calls += 1;
    })
    .unwrap();
    let expected: Vec<Option<Vec<u8>>> = expected
        .iter()
        .map(|v| v.as_deref().map(<[u8]>::to_vec))
        .collect();
    assert_eq!(got, expected);
    assert_eq!(calls, expected.iter().flatten().count());
    assert!(calls > 100 && calls < keys.len());

    let ttl = slsm::KeyspaceOptions::default().ttl(Duration::from_millis(200));
    let s = db.keyspace_with("sessions", ttl).unwrap();
    s.put("old", "x").unwrap();
    std::thread::sleep(Duration::from_millis(300));
    s.put("new", "y").unwrap();
    let mut seen = Vec::new();
    s.multi_get_with(&["old", "new", "none"], |i, v| seen.push((i, v.to_vec())))
        .unwrap();
    assert_eq!(
        seen,
        vec![(1, b"y".to_vec())],
        "an expired value was reported"
    );
    assert!(db.multi_get_with(&[vec![0u8; 70_000]], |_, _| {}).is_err());
}

/// A memory run orders its nodes by the bytes after the prefix the run
/// before it shared: keys without that prefix (sorting before and after
/// it, or a prefix of it) must still be found, iterated and sought in order.
#[test]
fn keys_outside_the_shared_prefix_of_the_run_before_are_ordered_correctly() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        run_entries: 500,
        memory_runs: 8,
        ..Options::default()
    };
    let db = Db::open(dir.path(), opts).unwrap();
    let mut model = BTreeMap::new();
    let mut put = |k: Vec<u8>, v: Vec<u8>| {
        db.put(&k, &v).unwrap();
        model.insert(k, v);
    };
    // Runs whose keys all start with "user:00000".
    for i in 0..1200u32 {
        put(
            format!("user:{i:010}").into_bytes(),
            i.to_le_bytes().to_vec(),
        );
    }
    // Then keys around and inside that prefix, in a later run.
    for (i, k) in [
        &b"user"[..],
        b"user:",
        b"user:0",
        b"aaa",
        b"user;",
        b"zzz",
        b"user:00000",
        b"user:00000\xff",
    ]
    .iter()
    .enumerate()
    {
        put(k.to_vec(), vec![i as u8]);
    }
    for i in (0..1200u32).step_by(5) {
        put(format!("user:{i:010}x").into_bytes(), b"between".to_vec());
    }
    let keys: Vec<Vec<u8>> = model
        .keys()
        .cloned()
        .chain([b"user:1".to_vec(), b"".to_vec()])
        .collect();
    for k in &keys {
        assert_eq!(
            db.get(k).unwrap().as_deref(),
            model.get(k).map(|v| &v[..]),
            "{k:?}"
        );
    }
    let batch = db.multi_get(&keys).unwrap();
    for (k, got) in keys.iter().zip(batch) {
        assert_eq!(
            got.as_deref(),
            model.get(k).map(|v| &v[..]),
            "{k:?} in a batch"
        );
    }
    let forward: Vec<Vec<u8>> = db.iter().map(|r| r.unwrap().0.to_vec()).collect();
    assert_eq!(forward, model.keys().cloned().collect::<Vec<_>>());
    let backward: Vec<Vec<u8>> = db.iter().rev().map(|r| r.unwrap().0.to_vec()).collect();
    assert_eq!(backward, model.keys().rev().cloned().collect::<Vec<_>>());
    for k in &keys {
        let first = db
            .range::<&[u8], _>(&k[..]..)
            .next()
            .map(|r| r.unwrap().0.to_vec());
        assert_eq!(
            first,
            model.range(k.clone()..).next().map(|(k, _)| k.clone()),
            "seek {k:?}"
        );
    }
}

/// A batch answers every key as a single `get` does, whatever its size:
/// small batches search the memory runs from the top, stepped while the
/// run files are searched, and large ones by finger; keys live in memory
/// runs, in files, in both (the memory run's newer version wins), deleted
/// by a point or a range tombstone in memory over a value in a file.
#[test]
fn batches_answer_as_single_gets_whatever_their_size() {
    for run_size in [8 << 10, 256 << 10] {
        let dir = tempfile::tempdir().unwrap();
        let options = Options {
            run_size,
            ..small_options()
        };
        let db = Db::open(dir.path(), options).unwrap();
        for i in 0..4000u32 {
            db.put(format!("{i:05}"), format!("old{i}")).unwrap();
        }
        db.flush().unwrap();
        for i in (0..4000u32).step_by(5) {
            db.put(format!("{i:05}"), format!("new{i}")).unwrap();
        }
        for i in (1..4000u32).step_by(11) {
            db.delete(format!("{i:05}")).unwrap();
        }
        db.delete_range("01500", "01600").unwrap();
        db.put("01550", "after the range").unwrap();
        let mut state = 7u64;
        let mut next = |n: u32| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) as u32 % n
        };
        // Many rounds: once the blocks are known to be cached, a batch no
        // longer fetches them first (`run::fetch`), a path of its own.
        let sizes = [1usize, 2, 3, 5, 8, 64, 300];
        for size in sizes.into_iter().cycle().take(20 * sizes.len()) {
            let keys: Vec<String> = (0..size).map(|_| format!("{:05}", next(4100))).collect();
            let got = db.multi_get(&keys).unwrap();
            for (k, g) in keys.iter().zip(&got) {
                let want = db.get(k).unwrap();
                assert_eq!(g.as_deref(), want.as_deref(), "key {k}, batch of {size}");
            }
            let mut reported = vec![0; size];
            db.multi_get_with(&keys, |i, _| reported[i] += 1).unwrap();
            let want: Vec<i32> = got.iter().map(|v| i32::from(v.is_some())).collect();
            assert_eq!(reported, want, "batch of {size}");
        }
        assert_eq!(
            db.multi_get(&["01550", "01551", "00005"])
                .unwrap()
                .iter()
                .map(|v| v.as_deref().map(<[u8]>::to_vec))
                .collect::<Vec<_>>(),
            vec![
                Some(b"after the range".to_vec()),
                None,
                Some(b"new5".to_vec())
            ]
        );
    }
}
