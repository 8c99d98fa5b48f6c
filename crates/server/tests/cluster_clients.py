#!/usr/bin/env python3
"""Cluster-aware clients, unchanged, against a 3-node `slsm serve --cluster`
(issue 69): redis-py's `RedisCluster` (from PyPI), `redis-cli -c` and
`redis-benchmark` (from Debian's redis-tools), pointed at a follower, so
each must learn the topology from `CLUSTER SLOTS`/`NODES` and follow
`-MOVED` to the leader. Then the leader is SIGKILLed and the
same `RedisCluster` object must find the new leader by itself.

    python3 crates/server/tests/cluster_clients.py --slsm target/debug/slsm

Exits non-zero with the first failed check. Needs `redis` importable and
redis-cli / redis-benchmark on PATH; CI installs both.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "bench", "cluster"))
from bench import Cluster  # noqa: E402

import redis  # noqa: E402
from redis.cluster import ClusterNode, RedisCluster  # noqa: E402


def check(cond, what):
    if not cond:
        raise SystemExit(f"FAILED: {what}")
    print(f"ok: {what}")


def retry(f, what, seconds=20):
    """f() until it returns without a connection or cluster error."""
    deadline = time.time() + seconds
    while True:
        try:
            return f()
        except (redis.ConnectionError, redis.TimeoutError, redis.exceptions.ClusterDownError,
                redis.exceptions.ClusterError, redis.exceptions.TryAgainError) as e:
            if time.time() > deadline:
                raise SystemExit(f"FAILED: {what}: {e!r}")
            time.sleep(0.2)


def redis_py(cluster, follower):
    rc = RedisCluster(startup_nodes=[ClusterNode("127.0.0.1", cluster.client[follower])],
                      socket_timeout=5)
    retry(lambda: rc.set("py:a", "1"), "RedisCluster SET through a follower")
    check(rc.get("py:a") == b"1", "RedisCluster GET reads its write")
    check(rc.incr("py:n") == 1 and rc.incr("py:n") == 2, "RedisCluster INCR")
    rc.mset_nonatomic({"py:x": "1", "py:y": "2", "py:z": "3"})
    check(rc.mget_nonatomic(["py:x", "py:y", "py:z"]) == [b"1", b"2", b"3"],
          "RedisCluster MSET/MGET across slots")
    pipe = rc.pipeline()
    for i in range(50):
        pipe.set(f"py:p{i}", i)
    pipe.get("py:p49")
    check(pipe.execute()[-1] == b"49", "RedisCluster pipeline of 51 commands")
    check(rc.eval("return redis.call('INCRBY', KEYS[1], 40)", 1, "py:n") == 42,
          "RedisCluster EVAL")
    masters = [n for n in rc.get_nodes() if n.server_type == "primary"]
    check(len(masters) == 1 and masters[0].port == cluster.client[cluster.leader()],
          "RedisCluster sees one master, the leader")
    return rc


def failover(cluster, rc):
    old = cluster.leader()
    cluster.kill(old)
    started = time.time()
    retry(lambda: rc.set("py:after", "failover"), "RedisCluster SET after the leader died", 30)
    print(f"   first write after the leader's SIGKILL: {time.time() - started:.2f} s")
    check(rc.get("py:n") == b"42", "RedisCluster reads what was acknowledged before the kill")
    new = cluster.leader()
    check(new != old, "another node leads")
    cluster.start(old)


def redis_cli(cluster, follower):
    port = str(cluster.client[follower])
    out = subprocess.run(["redis-cli", "-c", "-p", port, "set", "cli:a", "b"],
                         capture_output=True, text=True, timeout=20).stdout.strip()
    check(out == "OK", f"redis-cli -c SET through a follower ({out!r})")
    out = subprocess.run(["redis-cli", "-c", "-p", port, "get", "cli:a"],
                         capture_output=True, text=True, timeout=20).stdout.strip()
    check(out == "b", f"redis-cli -c GET through a follower ({out!r})")


def redis_benchmark(cluster, follower):
    # redis-benchmark --cluster benchmarks only a cluster of two masters
    # or more: it answers "Invalid cluster: 1 node(s)." to one master with
    # replicas, Redis Cluster's own (redis-benchmark.c, before it sends
    # anything), and one shard is what this cluster is. So its answer is
    # checked to be that, and the benchmark runs against the leader.
    out = subprocess.run(["redis-benchmark", "--cluster", "-p", str(cluster.client[follower]),
                          "-t", "set", "-n", "100", "-q"],
                         capture_output=True, text=True, timeout=60)
    check("Invalid cluster: 1 node(s)" in out.stderr,
          "redis-benchmark --cluster reads one master from CLUSTER NODES")
    out = subprocess.run(["redis-benchmark", "-p", str(cluster.client[cluster.leader()]),
                          "-t", "set,get", "-n", "2000", "-c", "10", "-P", "4", "-q"],
                         capture_output=True, text=True, timeout=120)
    text = out.stdout + out.stderr
    rates = [line.strip() for line in text.replace("\r", "\n").splitlines()
             if "requests per second" in line]
    check(out.returncode == 0 and len(rates) == 2 and "error" not in text.lower(),
          f"redis-benchmark SET and GET against the leader ({rates})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--slsm", required=True)
    args = ap.parse_args()
    root = tempfile.mkdtemp(prefix="slsm-cluster-clients-")
    cluster = Cluster(os.path.abspath(args.slsm), root)
    try:
        leader = cluster.leader()
        follower = next(i for i in cluster.client if i != leader)
        rc = redis_py(cluster, follower)
        redis_cli(cluster, follower)
        redis_benchmark(cluster, follower)
        failover(cluster, rc)
    finally:
        cluster.stop()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
