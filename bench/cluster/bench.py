#!/usr/bin/env python3
"""The 3-node cluster against one server with the same durability, and
against redis-server with two replicas: a program, not a test.

    python3 bench/cluster/bench.py [--rounds 3] [--num 200000] [--failovers 5]
                                   [--catchup-keys 1000000] [--only throughput]

Each round starts every setup on fresh directories and free ports:

* `cluster`: three `slsm serve --cluster` processes on this machine (the
  README's three commands), redis-benchmark against the leader. A write is
  acknowledged once a majority synced it to its log.
* `single`: one `slsm serve --appendfsync always` (each write synced before
  its reply, the same durability on one machine).
* `redis`: redis-server with two replicas (`replicaof`), AOF on with
  `appendfsync always` on each, redis-benchmark against the master (which
  acknowledges after its own fsync, not its replicas').

and runs `redis-benchmark -t set,get -n NUM -r NUM -d 100 -c 50` at -P 1 and
-P 16 (GET after SET, so it reads keys that exist; in the cluster GET is
linearizable). Rounds alternate setups; the table gives medians, p50/p99,
and ratios cluster/single and cluster/redis.

Then, on the cluster: `--failovers` times, a writer SETs a key every
millisecond through whichever node leads while the leader is SIGKILLed; the
time from the kill to the first acknowledged write is reported (median,
worst), and the killed node is restarted from its disk. Last, a follower is
stopped, its directory wiped, `--catchup-keys` keys written, and the time it
takes to catch up from nothing after restarting (by snapshot) is reported.
"""

import argparse
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "redis"))
import servers  # noqa: E402


def cli(port, *args, timeout=5):
    r = subprocess.run(["redis-cli", "-p", str(port), *map(str, args)],
                       capture_output=True, text=True, timeout=timeout)
    return r.stdout.strip()


def info_field(port, field):
    try:
        for line in cli(port, "info", "replication", timeout=2).splitlines():
            if line.startswith(field + ":"):
                return line.split(":", 1)[1].strip()
    except subprocess.TimeoutExpired:
        pass
    return None


class Cluster:
    """Three `slsm serve --cluster` nodes on loopback, in `root`."""

    def __init__(self, slsm, root):
        self.slsm, self.root = slsm, root
        ports = [servers.free_port() for _ in range(6)]
        self.client = {i: ports[i - 1] for i in (1, 2, 3)}
        self.raft = {i: ports[i + 2] for i in (1, 2, 3)}
        self.members = ",".join(f"{i}=127.0.0.1:{self.raft[i]}/127.0.0.1:{self.client[i]}"
                                for i in (1, 2, 3))
        self.procs = {}
        for i in (1, 2, 3):
            self.start(i)

    def start(self, i):
        cmd = [self.slsm, "serve", "--db", os.path.join(self.root, f"n{i}"),
               "--bind", f"127.0.0.1:{self.client[i]}", "--node-id", str(i),
               "--cluster", self.members]
        self.procs[i] = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        servers.wait_up(self.client[i])

    def leader(self, timeout=20):
        """The node every live node names as leader."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            seen = set()
            for i, p in self.procs.items():
                if p.poll() is None:
                    seen.add(info_field(self.client[i], "raft_leader"))
            if len(seen) == 1:
                leader = seen.pop()
                if leader and leader.isdigit() and int(leader) in self.procs:
                    return int(leader)
            time.sleep(0.05)
        raise SystemExit("the cluster elected no leader")

    def kill(self, i):
        self.procs[i].send_signal(signal.SIGKILL)
        self.procs[i].wait()

    def stop(self):
        for p in self.procs.values():
            if p.poll() is None:
                p.kill()
                p.wait()


def throughput(port, num, pipeline):
    out = {}
    for test in ("set", "get"):
        out[f"{test.upper()} -P {pipeline}"] = servers.redis_benchmark(
            port, "-t", test, "-n", num, "-r", num, "-d", 100, "-c", 50, "-P", pipeline)
    return out


def redis_with_replicas(root):
    """redis-server and two replicas, AOF always: their processes and the
    master's port."""
    ports = [servers.free_port() for _ in range(3)]
    procs = []
    for n, port in enumerate(ports):
        d = os.path.join(root, f"r{n}")
        os.makedirs(d)
        cmd = ["redis-server", "--port", str(port), "--dir", d, "--appendonly", "yes",
               "--appendfsync", "always", "--save", "", "--daemonize", "no",
               "--logfile", "/dev/null"]
        if n > 0:
            cmd += ["--replicaof", "127.0.0.1", str(ports[0])]
        procs.append(subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        servers.wait_up(port)
    deadline = time.time() + 20
    while time.time() < deadline and cli(ports[0], "info", "replication").count("state=online") < 2:
        time.sleep(0.1)
    return procs, ports[0]


def one_round(setup, slsm, num):
    root = tempfile.mkdtemp(prefix=f"bench-cluster-{setup}-")
    procs = []
    try:
        if setup == "cluster":
            c = Cluster(slsm, root)
            procs = list(c.procs.values())
            port = c.client[c.leader()]
        elif setup == "single":
            port = servers.free_port()
            procs.append(subprocess.Popen(
                [slsm, "serve", "--db", os.path.join(root, "db"), "--bind", f"127.0.0.1:{port}",
                 "--appendfsync", "always"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            servers.wait_up(port)
        else:
            procs, port = redis_with_replicas(root)
        row = {}
        for p in (1, 16):
            row.update(throughput(port, num, p))
        return row
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        shutil.rmtree(root, ignore_errors=True)


def write_once(port, key, timeout=0.5):
    """One SET through `port`: True if acknowledged (a -MOVED is followed)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(f"*3\r\n$3\r\nSET\r\n${len(key)}\r\n{key}\r\n$1\r\nv\r\n".encode())
            reply = s.recv(256)
        return reply.startswith(b"+OK"), reply
    except OSError:
        return False, b""


def failover_times(slsm, count):
    root = tempfile.mkdtemp(prefix="bench-cluster-failover-")
    c = Cluster(slsm, root)
    times = []
    try:
        for n in range(count):
            leader = c.leader()
            survivors = [i for i in (1, 2, 3) if i != leader]
            killed_at = time.time()
            c.kill(leader)
            done = False
            while not done and time.time() - killed_at < 30:
                for i in survivors:
                    ok, _ = write_once(c.client[i], f"failover-{n}")
                    if ok:
                        times.append(time.time() - killed_at)
                        done = True
                        break
                time.sleep(0.001)
            if not done:
                times.append(float("inf"))
            c.start(leader)
            c.leader()
            time.sleep(1)
    finally:
        c.stop()
        shutil.rmtree(root, ignore_errors=True)
    return times


def catchup_time(slsm, keys):
    root = tempfile.mkdtemp(prefix="bench-cluster-catchup-")
    c = Cluster(slsm, root)
    try:
        leader = c.leader()
        follower = next(i for i in (1, 2, 3) if i != leader)
        c.kill(follower)
        shutil.rmtree(os.path.join(root, f"n{follower}"))
        subprocess.run(["redis-benchmark", "-p", str(c.client[leader]), "-t", "set", "-n", str(keys),
                        "-r", str(keys), "-d", "100", "-c", "50", "-P", "16", "-q"],
                       capture_output=True, check=True)
        target = int(info_field(c.client[leader], "raft_commit_index"))
        started = time.time()
        c.start(follower)
        while time.time() - started < 600:
            applied = info_field(c.client[follower], "raft_applied_index")
            if applied and applied.isdigit() and int(applied) >= target:
                break
            time.sleep(0.05)
        took = time.time() - started
        size = cli(c.client[follower], "dbsize")
        return took, target, size
    finally:
        c.stop()
        shutil.rmtree(root, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--num", type=int, default=200_000)
    ap.add_argument("--failovers", type=int, default=5)
    ap.add_argument("--catchup-keys", type=int, default=1_000_000)
    ap.add_argument("--only", choices=["throughput", "failover", "catchup"])
    args = ap.parse_args()
    slsm = servers.engines()["slsm"]
    if args.only in (None, "throughput"):
        setups = {"cluster": slsm, "single": slsm, "redis": None}
        rows = servers.alternate(args.rounds, setups, lambda s, b: one_round(s, slsm, args.num))
        print(f"\nredis-benchmark -c 50 -d 100 -n {args.num}, medians of {args.rounds} rounds")
        print("| test | cluster rps (p50 / p99 ms) | single --appendfsync always | "
              "redis + 2 replicas, AOF always | cluster/single | cluster/redis |")
        print("| --- | --- | --- | --- | --- | --- |")
        for test in rows["cluster"][0]:
            med = {s: [statistics.median(r[test][i] for r in rows[s]) for i in range(3)]
                   for s in setups}
            cells = " | ".join(f"{med[s][0]:,.0f} ({med[s][1]:.2f} / {med[s][2]:.2f})" for s in setups)
            print(f"| {test} | {cells} | {med['cluster'][0] / med['single'][0]:.2f}x | "
                  f"{med['cluster'][0] / med['redis'][0]:.2f}x |")
    if args.only in (None, "failover"):
        t = failover_times(slsm, args.failovers)
        print(f"\nleader SIGKILL -> first acknowledged write, {len(t)} kills: "
              f"median {statistics.median(t):.2f} s, worst {max(t):.2f} s "
              f"({', '.join(f'{x:.2f}' for x in t)})")
    if args.only in (None, "catchup"):
        took, index, size = catchup_time(slsm, args.catchup_keys)
        print(f"\nfollower restarted empty after {args.catchup_keys:,} SETs (log index {index}): "
              f"caught up in {took:.1f} s, DBSIZE {size}")


if __name__ == "__main__":
    main()
