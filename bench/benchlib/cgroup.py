"""A memory budget for one process: a fresh memory cgroup that caps resident
memory plus page cache, as a container or a small VM would, with its peak
and whether the kernel killed the process for it.

cgroup v2 (memory.max, memory.peak, memory.events) where the memory
controller is on the unified hierarchy, else cgroup v1 (memory.limit_in_bytes,
memory.max_usage_in_bytes, memory.oom_control). Needs root."""

import os
import re
import subprocess
import time
from pathlib import Path

V2_ROOT = Path("/sys/fs/cgroup")
V1_ROOT = Path("/sys/fs/cgroup/memory")


class BudgetError(Exception):
    """The budget cannot be set up on this machine (not root, no cgroups)."""


def parse_size(text):
    """'256M', '1G', '1.5G', '268435456' -> bytes (binary units)."""
    m = re.fullmatch(r"\s*([\d.]+)\s*([KMGT]?)i?B?\s*", str(text), re.IGNORECASE)
    if not m:
        raise ValueError(f"not a size: {text!r} (use e.g. 256M or 1G)")
    scale = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    return int(float(m.group(1)) * scale[m.group(2).upper()])


def flavour():
    """'v2', 'v1' or None: where a memory cgroup can be made."""
    controllers = V2_ROOT / "cgroup.controllers"
    if controllers.exists() and "memory" in controllers.read_text().split():
        return "v2"
    if (V1_ROOT / "memory.limit_in_bytes").exists():
        return "v1"
    return None


def check_usable():
    """Raises BudgetError with a plain explanation if budgets cannot work."""
    if os.geteuid() != 0:
        raise BudgetError(
            "a memory budget needs root: it creates a memory cgroup and drops the "
            "page cache before each phase (run as root, or leave out --budget and "
            "the sets that have one)")
    if flavour() is None:
        raise BudgetError("no memory cgroup controller found under /sys/fs/cgroup "
                          "(neither cgroup v2 with +memory nor cgroup v1's memory)")


def drop_page_cache():
    """Writes dirty pages back and empties the page cache, so the next process
    starts cold and nothing an earlier one read helps it."""
    subprocess.run(["sync"], check=False)
    Path("/proc/sys/vm/drop_caches").write_text("3\n")


class Budget:
    """One cgroup, used for one process, then removed."""

    def __init__(self, limit_bytes, name):
        self.limit = limit_bytes
        self.kind = flavour()
        root = V2_ROOT if self.kind == "v2" else V1_ROOT
        self.path = root / f"{name}-{os.getpid()}-{time.monotonic_ns()}"

    def __enter__(self):
        if self.kind == "v2":
            control = V2_ROOT / "cgroup.subtree_control"
            if "memory" not in control.read_text().split():
                control.write_text("+memory\n")
            self.path.mkdir()
            (self.path / "memory.max").write_text(f"{self.limit}\n")
            swap = self.path / "memory.swap.max"
            if swap.exists():
                swap.write_text("0\n")
        else:
            self.path.mkdir()
            (self.path / "memory.limit_in_bytes").write_text(f"{self.limit}\n")
            memsw = self.path / "memory.memsw.limit_in_bytes"
            if memsw.exists():
                memsw.write_text(f"{self.limit}\n")
        return self

    def enter_from_child(self):
        """Moves the calling process in (use as Popen's preexec_fn)."""
        (self.path / "cgroup.procs").write_text(f"{os.getpid()}\n")

    def peak(self):
        """Highest memory charged (resident + page cache), in bytes."""
        name = "memory.peak" if self.kind == "v2" else "memory.max_usage_in_bytes"
        try:
            return int((self.path / name).read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def oom_kills(self):
        """Processes the kernel killed for exceeding the budget."""
        name = "memory.events" if self.kind == "v2" else "memory.oom_control"
        try:
            for line in (self.path / name).read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        except OSError:
            pass
        return 0

    def __exit__(self, *exc):
        # The process has exited; its page cache is moved to the parent.
        for _ in range(50):
            try:
                self.path.rmdir()
                return False
            except OSError:
                time.sleep(0.1)
        return False
