"""The README's example: `mypy --strict examples/quickstart.py` passes."""

import tempfile
from typing import Optional

import slsm


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        with slsm.Db(tmp + "/db", memory_budget=64 << 20, compression="lz4") as db:
            db[b"hello"] = b"world"
            assert db[b"hello"] == b"world"
            value: Optional[bytes] = db.get(b"missing")
            assert value is None
            with db.batch() as batch:
                batch.put(b"a", b"1")
                batch.delete(b"hello")
            values = db.multi_get([b"a", b"hello"])
            assert values == [b"1", None]
            db.update({b"b": b"2", b"c": b"3"})
            assert db.setdefault(b"c", b"x") == b"3"
            popped: bytes = db.pop(b"b")
            missing: Optional[bytes] = db.pop(b"b", None)
            assert (popped, missing) == (b"2", None)
            for key, val in db.items(prefix=b"a"):
                print(key, val)
            users = db.keyspace("users")
            users[b"alice"] = b"admin"
            with db.snapshot() as snap:
                assert snap.get(b"alice", keyspace=users) == b"admin"
            with db.transaction() as tx:
                count: bytes = tx.get(b"count", b"0")
                tx[b"count"] = str(int(count) + 1).encode()
            assert db[b"count"] == b"1"
            try:
                db[b"k" * 100_000] = b"v"
            except slsm.InvalidArgumentError as e:
                print("refused:", e)


if __name__ == "__main__":
    main()
