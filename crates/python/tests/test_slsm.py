"""The slsm Python module: mapping semantics against a dict, reopen,
batches, iteration while writing, snapshots, keyspaces, threads, errors,
and a SIGKILL of a writing child process."""

import os
import random
import signal
import subprocess
import sys
import threading
import time

import pytest
from hypothesis import given, settings, strategies as st

import slsm


@pytest.fixture
def path(tmp_path):
    return str(tmp_path / "db")


def test_mapping_protocol(path):
    with slsm.Db(path) as db:
        db[b"a"] = b"1"
        db.put(b"b", b"2")
        assert db[b"a"] == b"1"
        assert b"a" in db and b"zz" not in db
        assert db.get(b"zz") is None
        assert db.get(b"zz", b"dflt") == b"dflt"
        with pytest.raises(KeyError):
            db[b"zz"]
        del db[b"a"]
        with pytest.raises(KeyError):
            del db[b"a"]
        db.delete(b"never-there")  # no error, like rocksdict
        assert list(db) == [b"b"]
        assert not hasattr(db, "__len__"), "len() would need a full scan"


keys = st.binary(min_size=0, max_size=12)
values = st.binary(min_size=0, max_size=64)
ops = st.lists(
    st.one_of(
        st.tuples(st.just("put"), keys, values),
        st.tuples(st.just("del"), keys),
        st.tuples(st.just("range_del"), keys, keys),
        st.tuples(st.just("batch"), st.lists(st.tuples(keys, values), max_size=5)),
        st.tuples(st.just("pop"), keys),
        st.tuples(st.just("setdefault"), keys, values),
        st.tuples(st.just("update"), st.dictionaries(keys, values, max_size=5)),
        st.tuples(st.just("reopen")),
    ),
    max_size=60,
)


@settings(max_examples=40, deadline=None)
@given(ops=ops)
def test_matches_a_dict(tmp_path_factory, ops):
    path = str(tmp_path_factory.mktemp("model") / "db")
    db = slsm.Db(path, run_size=8192, memory_runs=3)
    model = {}
    try:
        for op in ops:
            if op[0] == "put":
                db[op[1]] = op[2]
                model[op[1]] = op[2]
            elif op[0] == "del":
                db.delete(op[1])
                model.pop(op[1], None)
            elif op[0] == "range_del":
                lo, hi = sorted((op[1], op[2]))
                if lo < hi:
                    db.delete_range(lo, hi)
                    for k in [k for k in model if lo <= k < hi]:
                        del model[k]
            elif op[0] == "batch":
                with db.batch() as b:
                    for k, v in op[1]:
                        b.put(k, v)
                        model[k] = v
            elif op[0] == "pop":
                assert db.pop(op[1], None) == model.pop(op[1], None)
            elif op[0] == "setdefault":
                assert db.setdefault(op[1], op[2]) == model.setdefault(op[1], op[2])
            elif op[0] == "update":
                db.update(op[1])
                model.update(op[1])
            else:
                db.close()
                db = slsm.Db(path, run_size=8192, memory_runs=3)
            assert db.multi_get(list(model)[:8]) == [model[k] for k in list(model)[:8]]
            # Any iterable of keys, not only a list.
            assert db.multi_get(k for k in list(model)[:8]) == [model[k] for k in list(model)[:8]]
            # bytearray keys, as a tuple.
            assert db.multi_get(tuple(bytearray(k) for k in list(model)[:8])) == [model[k] for k in list(model)[:8]]
        # Every key ever written (deleted ones too), duplicated, and absent
        # ones: values where the model has them, None elsewhere.
        probe = [op[1] for op in ops if op[0] in ("put", "del", "pop")] * 2 + [b"\xff" * 9]
        assert db.multi_get(probe) == [model.get(k) for k in probe]
        assert list(db.items()) == sorted(model.items())
        assert list(db.keys(reverse=True)) == sorted(model, reverse=True)
        for k, v in model.items():
            assert db[k] == v
    finally:
        db.close()


def test_ranges_prefixes_and_reverse(path):
    with slsm.Db(path) as db:
        for i in range(100):
            db[b"k%03d" % i] = b"v%d" % i
        db[b"other"] = b"x"
        assert [k for k in db.keys(start=b"k010", end=b"k013")] == [b"k010", b"k011", b"k012"]
        assert len(list(db.items(prefix=b"k05"))) == 10
        assert next(db.values(reverse=True)) == b"x"
        with pytest.raises(ValueError):
            db.items(prefix=b"k", start=b"a")


def test_batches_are_atomic_and_discarded_on_exception(path):
    with slsm.Db(path) as db:
        with pytest.raises(RuntimeError):
            with db.batch() as b:
                b.put(b"x", b"1")
                raise RuntimeError("boom")
        assert b"x" not in db
        b = slsm.WriteBatch()
        b.put(b"x", b"1")
        b.put(b"y", b"2")
        b.delete(b"x")
        assert len(b) == 3
        db.write(b)
        assert b"x" not in db and db[b"y"] == b"2"
        bad = slsm.WriteBatch()
        bad.put(b"ok", b"1")
        bad.put(b"k" * 70000, b"v")
        with pytest.raises(slsm.InvalidArgumentError):
            db.write(bad)
        assert b"ok" not in db


def test_iterators_read_a_snapshot_while_writing(path):
    with slsm.Db(path, run_size=8192, memory_runs=3) as db:
        for i in range(2000):
            db[b"%05d" % i] = b"old"
        it = db.items()
        snap = db.snapshot()
        for i in range(2000):
            db[b"%05d" % i] = b"new"
        db[b"99999"] = b"late"
        seen = list(it)
        assert len(seen) == 2000 and all(v == b"old" for _, v in seen)
        with snap:
            assert snap[b"00001"] == b"old"
            assert b"99999" not in snap
            assert snap.multi_get([b"00002", b"99999"]) == [b"old", None]
            assert len(list(snap.keys())) == 2000
        with pytest.raises(slsm.ClosedError):
            snap.get(b"00001")


def test_keyspaces(path):
    with slsm.Db(path) as db:
        users = db.keyspace("users")
        users[b"alice"] = b"1"
        assert b"alice" not in db
        with db.batch() as b:
            b.put(b"count", b"1")
            b.put(b"bob", b"2", keyspace=users)
        assert list(users.keys()) == [b"alice", b"bob"]
        assert db.keyspace_names() == ["default", "users"]
        with db.snapshot() as s:
            assert s.get(b"bob", keyspace=users) == b"2"
    with slsm.Db(path) as db:
        assert db.keyspace("users")[b"bob"] == b"2"
        db.drop_keyspace("users")
        assert db.keyspace_names() == ["default"]


def test_reopen_flush_compact_stats_checkpoint(path, tmp_path):
    with slsm.Db(path) as db:
        for i in range(10000):
            db[b"%06d" % i] = b"x" * 50
        db.flush()
        db.compact()
        s = db.stats()
        assert sum(level["entries"] for level in s["levels"]) == 10000
        assert s["block_cache"]["capacity"] > 0
        db.checkpoint(str(tmp_path / "copy"))
    with slsm.Db(str(tmp_path / "copy")) as copy:
        assert copy[b"009999"] == b"x" * 50
    ro = slsm.Db.open_read_only(path)
    assert ro[b"000001"] == b"x" * 50
    with pytest.raises(slsm.ReadOnlyError, match=r"open it with slsm\.Db\(path\)"):
        ro[b"new"] = b"1"
    ro.close()


def test_errors_are_typed_and_never_crash(path, tmp_path):
    db = slsm.Db(path)
    with pytest.raises(slsm.LockedError):
        slsm.Db(path)
    with pytest.raises(TypeError):
        db["text key"] = b"v"
    with pytest.raises(TypeError):
        db[b"k"] = 5
    with pytest.raises(TypeError):
        db.multi_get(b"one key")  # would iterate as integers
    with pytest.raises(TypeError):
        db.multi_get([b"k", 3])
    with pytest.raises(slsm.InvalidArgumentError):
        db[b"k" * 70000] = b"v"
    with pytest.raises(TypeError):
        slsm.Db(str(tmp_path / "x"), no_such_option=1)
    with pytest.raises(slsm.InvalidArgumentError):
        slsm.Db(str(tmp_path / "y"), memory_runs=1)
    with pytest.raises(slsm.InvalidArgumentError):
        slsm.Db(str(tmp_path / "z"), compression="snappy")
    # An invalid argument is a ValueError too.
    assert issubclass(slsm.InvalidArgumentError, ValueError)
    with pytest.raises(ValueError):
        db[b"k" * 70000] = b"v"
    with pytest.raises(TypeError, match="os_page_cache"):
        slsm.Db(str(tmp_path / "w"), os_page_cache="sometimes")
    with pytest.raises(OverflowError, match="memory_budget"):
        slsm.Db(str(tmp_path / "v"), memory_budget=-1)
    assert issubclass(slsm.CorruptionError, slsm.Error)
    ks = db.keyspace("k")
    it = db.keys()
    db.close()
    db.close()
    for call in (lambda: db[b"k"], lambda: db.put(b"k", b"v"), lambda: ks.get(b"k"), db.flush):
        with pytest.raises(slsm.ClosedError):
            call()
    with pytest.raises(slsm.ClosedError):
        list(it)  # closed with its database, not cut short silently
    (tmp_path / "foreign").mkdir()
    (tmp_path / "foreign" / "thesis.tex").write_text("x")
    with pytest.raises(slsm.NotADatabaseError):
        slsm.Db(str(tmp_path / "foreign"))


def test_close_releases_everything_it_gave_out(path):
    # A snapshot, an iterator half way through its buffered entries, and a
    # keyspace outlive the Db in variables: closing the Db closes them all,
    # releases the directory lock, and every later use raises ClosedError.
    db = slsm.Db(path)
    for i in range(1000):
        db[b"k%04d" % i] = b"v"
    snap = db.snapshot()
    it = db.items()
    assert next(it) == (b"k0000", b"v")
    snap_it = snap.keys()
    ks = db.keyspace("other")
    ks_it = iter(ks)
    dropped = [db.keys() for _ in range(200)]  # tracked, then collected
    del dropped
    db.close()
    again = slsm.Db(path)  # the lock went with the Db, not with `snap`
    assert again[b"k0999"] == b"v"
    for call in (
        lambda: snap.get(b"k0001"),
        lambda: next(it),
        lambda: next(snap_it),
        lambda: next(ks_it),
        lambda: ks.get(b"x"),
        snap.items,
    ):
        with pytest.raises(slsm.ClosedError):
            call()
    snap.close()  # closing twice is harmless
    again.close()


def test_threads_share_a_db(path):
    with slsm.Db(path) as db:
        def worker(t):
            for i in range(3000):
                db[b"t%d-%05d" % (t, i)] = b"v"
                assert db[b"t%d-%05d" % (t, i // 2)] == b"v"
            assert len(db.multi_get([b"t%d-%05d" % (t, i) for i in range(64)])) == 64

        threads = [threading.Thread(target=worker, args=(t,)) for t in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(list(db.keys())) == 12000


def test_transactions_commit_conflict_and_roll_back(path):
    with slsm.Db(path) as db:
        users = db.keyspace("users")
        with db.transaction() as tx:
            assert tx.get(b"a") is None and tx.get(b"a", b"d") == b"d"
            tx[b"a"] = b"1"
            tx.put(b"u", b"admin", keyspace=users)
            assert tx[b"a"] == b"1" and b"a" in tx  # its own writes
            assert b"a" not in db  # nobody else's until the commit
            assert tx.multi_get([b"a", b"b"]) == [b"1", None]
            with pytest.raises(KeyError):
                del tx[b"b"]
        assert db[b"a"] == b"1" and users[b"u"] == b"admin"

        # Something it read written meanwhile: ConflictError, nothing applied.
        tx = db.transaction()
        assert tx[b"a"] == b"1"
        tx[b"a"] = b"from tx"
        tx[b"other"] = b"from tx"
        db[b"a"] = b"2"
        with pytest.raises(slsm.ConflictError):
            tx.commit()
        assert db[b"a"] == b"2" and b"other" not in db
        with pytest.raises(slsm.InvalidArgumentError):
            tx.commit()  # it ended with the conflict
        tx.rollback()  # harmless once ended

        # The end of a with block raises the conflict too.
        with pytest.raises(slsm.ConflictError):
            with db.transaction() as tx:
                tx[b"a"] = str(int(tx[b"a"]) + 1).encode()
                db[b"a"] = b"5"
        assert db[b"a"] == b"5"

        # An exception in the block rolls back.
        with pytest.raises(ValueError):
            with db.transaction() as tx:
                tx[b"x"] = b"1"
                del tx[b"a"]
                raise ValueError("boom")
        assert b"x" not in db and db[b"a"] == b"5"

        # Committed inside the block: the end of the block does nothing more.
        with db.transaction() as tx:
            tx[b"y"] = b"1"
            tx.commit(sync=True)
        assert db[b"y"] == b"1"
        with pytest.raises(TypeError):
            db.transaction().put("str", b"v")

    # Closing the Db ends its open transactions.
    db = slsm.Db(path)
    tx = db.transaction()
    db.close()
    with pytest.raises(slsm.ClosedError):
        tx.get(b"a")
    with pytest.raises(slsm.ClosedError):
        tx.commit()


def test_transactions_from_threads_lose_no_increment(path):
    with slsm.Db(path) as db:
        conflicts = []

        def worker():
            retried = 0
            for _ in range(300):
                while True:
                    try:
                        with db.transaction() as tx:
                            n = int(tx.get(b"n", b"0"))
                            tx[b"n"] = str(n + 1).encode()
                        break
                    except slsm.ConflictError:
                        retried += 1
            conflicts.append(retried)

        threads = [threading.Thread(target=worker) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert db[b"n"] == b"1200", conflicts


CHILD = r"""
import sys, slsm
db = slsm.Db(sys.argv[1])
i = 0
while True:
    db.put(b"%08d" % i, b"v" * 100)
    print(i, flush=True)
    i += 1
"""


CLOSE_WHILE_IN_USE = r"""
import random, sys, threading, time, slsm
path = sys.argv[1]
for round in range(20):
    db = slsm.Db(path)
    for i in range(2000):
        db[b"k%05d" % i] = b"v" * 50
    failures = []

    def worker(kind):
        try:
            for _ in range(200):
                if kind == 0:
                    list(db.items())
                elif kind == 1:
                    with db.snapshot() as s:
                        s.get(b"k00001")
                        list(s.keys())
                elif kind == 2:
                    db.multi_get([b"k%05d" % random.randrange(2000) for _ in range(64)])
                elif kind == 3:
                    db.put(b"x%d" % random.randrange(10**6), b"y")
                else:
                    # A commit racing with the close sees the database
                    # open, or raises ClosedError like every other call.
                    try:
                        with db.transaction() as tx:
                            n = int(tx.get(b"n", b"0"))
                            tx[b"n"] = str(n + 1).encode()
                            if random.random() < 0.3:
                                tx.commit(sync=True)  # a longer commit
                    except slsm.ConflictError:
                        pass
        except slsm.ClosedError:
            pass
        except BaseException as e:
            failures.append(repr(e))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    time.sleep(random.random() * 0.05)
    db.close()
    for t in threads:
        t.join()
    assert not failures, failures
print("ok")
"""


def test_close_while_other_threads_use_the_db(path):
    # close() waits for the calls in flight; a call arriving meanwhile used
    # to wait for the lock while holding the GIL, which the calls in flight
    # needed to finish: a deadlock (hence the subprocess and its timeout).
    done = subprocess.run(
        [sys.executable, "-c", CLOSE_WHILE_IN_USE, path],
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.strip() == b"ok"


def test_close_while_transactions_commit(tmp_path):
    # Transactions committing (some synced, so their commits take a while)
    # while the Db closes: each sees the database open or raises
    # ClosedError. A commit used to run after it had let go of the
    # transaction's handle, so the close did not wait for it and it failed
    # with the engine's InvalidArgumentError instead.
    for round in range(30):
        db = slsm.Db(str(tmp_path / ("db%d" % round)))
        failures = []

        def worker(seed):
            r = random.Random(seed)
            try:
                while True:
                    try:
                        with db.transaction() as tx:
                            tx[b"n%d" % r.randrange(4)] = b"v"
                            if r.random() < 0.3:
                                tx.commit(sync=True)
                    except slsm.ConflictError:
                        pass
            except slsm.ClosedError:
                pass
            except BaseException as e:
                failures.append(repr(e))

        threads = [threading.Thread(target=worker, args=(round * 8 + t,)) for t in range(4)]
        for t in threads:
            t.start()
        time.sleep(random.random() * 0.02)
        db.close()
        for t in threads:
            t.join(10)
        assert not any(t.is_alive() for t in threads)
        assert not failures, failures


def test_sigkill_of_a_writer_loses_no_acknowledged_write(path):
    child = subprocess.Popen([sys.executable, "-c", CHILD, path], stdout=subprocess.PIPE, text=True)
    acked = -1
    assert child.stdout is not None
    for line in child.stdout:
        acked = int(line)
        if acked >= 20000:
            break
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    with slsm.Db(path) as db:
        missing = [i for i in range(acked + 1) if (b"%08d" % i) not in db]
        assert not missing, f"{len(missing)} acknowledged writes lost, first {missing[:5]}"


@pytest.mark.parametrize("keep", [True, False, None])
def test_os_page_cache_option(tmp_path, keep):
    with slsm.Db(str(tmp_path / "db"), os_page_cache=keep, memory_budget=16 << 20) as db:
        for i in range(3000):
            db[b"%05d" % i] = bytes([i % 256]) * 200
        db.flush()
        assert all(db[b"%05d" % i] == bytes([i % 256]) * 200 for i in range(0, 3000, 7))
        assert db.stats()["block_cache"]["bypasses_os_cache"] is (keep is False)


def test_pop_setdefault_update_as_a_dict(path):
    db = slsm.Db(path)
    model = {}
    db.update({b"a": b"1", b"b": b"2"})
    model.update({b"a": b"1", b"b": b"2"})
    db.update([(b"c", b"3"), (b"a", b"9")])
    model.update([(b"c", b"3"), (b"a", b"9")])
    db.update(iter([]))
    assert dict(db.items()) == model
    assert db.pop(b"a") == model.pop(b"a") == b"9"
    assert db.pop(b"a", None) is None and db.pop(b"a", b"d") == b"d"
    with pytest.raises(KeyError):
        db.pop(b"a")
    with pytest.raises(TypeError):
        db.pop(b"a", 1, 2)
    assert db.setdefault(b"b", b"x") == model.setdefault(b"b", b"x") == b"2"
    assert db.setdefault(b"z", b"x") == model.setdefault(b"z", b"x") == b"x"
    assert dict(db.items()) == model
    # As dict.update: a pair of the wrong length is a ValueError.
    for bad, error in (({"s": b"1"}, TypeError), ([(b"k",)], ValueError), ([b"kv"], TypeError),
                       (5, TypeError)):
        with pytest.raises(error):
            db.update(bad)
    assert dict(db.items()) == model, "a refused update writes nothing"
    ks = db.keyspace("other")
    ks.update({b"a": b"k"})
    assert ks.pop(b"a") == b"k" and ks.setdefault(b"q", b"r") == b"r"
    assert b"q" not in db and dict(ks.items()) == {b"q": b"r"}
    db.close()
    with pytest.raises(slsm.ClosedError):
        db.pop(b"b")


def test_pop_and_setdefault_are_atomic_across_threads(path):
    db = slsm.Db(path)
    stop = threading.Event()
    popped, defaults = [], []

    def writer():
        # One key, a new value each time: a value popped twice would be a
        # read and a delete that were not one step.
        for i in range(3000):
            db[b"k"] = b"%d" % i
        stop.set()

    def popper():
        while not stop.is_set() or b"k" in db:
            v = db.pop(b"k", None)
            if v is not None:
                popped.append(v)

    def defaulter(n):
        for i in range(100):
            defaults.append((i, db.setdefault(b"s%03d" % i, b"%d" % n)))

    threads = [threading.Thread(target=writer)]
    threads += [threading.Thread(target=popper) for _ in range(4)]
    threads += [threading.Thread(target=defaulter, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert popped and len(popped) == len(set(popped)), "a value popped twice"
    # Each setdefault saw the one value stored first.
    for i, got in defaults:
        assert got == db[b"s%03d" % i]
    db.close()
