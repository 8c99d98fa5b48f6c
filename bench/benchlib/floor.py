"""The disk's floor, measured in the same run as the engines: fio's 4 KiB
random reads with direct I/O at queue depth 1 (one read's latency) and 16
(the device's parallelism), on a 1 GiB file beside the databases.

A larger-than-memory read is compared with one read of the disk *now*:
this machine's virtual disk has served the same 4 KiB read in 57 us one
hour and 78 us the next, so a floor measured once and quoted later says
little. None when fio is not installed (the summary then says so)."""

import json
import shutil
import subprocess

SIZE = "1G"
SECONDS = 8


def _fio(path, depth, engine):
    cmd = ["fio", "--name=floor", f"--filename={path}", f"--size={SIZE}", "--rw=randread",
           "--bs=4k", "--direct=1", f"--ioengine={engine}", f"--iodepth={depth}",
           f"--runtime={SECONDS}", "--time_based", "--output-format=json"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return None
    try:
        read = json.loads(r.stdout)["jobs"][0]["read"]
    except (ValueError, KeyError, IndexError):
        return None
    clat = read.get("clat_ns", {})
    return {"iops": read.get("iops"), "mean_us": clat.get("mean", 0) / 1000,
            "p50_us": clat.get("percentile", {}).get("50.000000", 0) / 1000}


def measure(directory):
    """The floor on the file system of `directory`, or None without fio."""
    if shutil.which("fio") is None:
        return None
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "floor.dat"
    qd1 = _fio(path, 1, "psync")
    qd16 = _fio(path, 16, "libaio")
    if not qd1:
        return None
    return {"qd1_mean_us": qd1["mean_us"], "qd1_p50_us": qd1["p50_us"],
            "qd1_iops": qd1["iops"], "qd16_iops": qd16["iops"] if qd16 else None}


def remove(directory):
    """Deletes the floor's test file once a run is done."""
    (directory / "floor.dat").unlink(missing_ok=True)
