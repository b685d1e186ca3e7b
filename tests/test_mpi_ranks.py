#!/usr/bin/env python3
"""`mpirun -np 4 cutune tune ...` against the fake GPU worker (tests/fake_gpu_worker.cpp,
evaluations replayed from a time per configuration): the same stored results and winner as
one process; every configuration stored once; every rank's GPU worker takes a share; and a
rank killed mid-run ends the job, after which the same command resumes from the DB and
finishes the space with nothing lost but what was in flight.

Usage: test_mpi_ranks.py CUTUNE FAKE_GPU_WORKER. Exit 77 (CTest SKIP) without mpirun.
"""
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

SKIP = 77


def rows(db):
    with sqlite3.connect(db) as c:
        out = {}
        for key, status, median in c.execute("SELECT config_key, status, median_ms FROM measurements"):
            assert key not in out, f"{key} stored twice in {db}"
            out[key] = (status, round(median, 9))
        ok = c.execute("PRAGMA integrity_check").fetchone()[0]
        assert ok == "ok", f"integrity_check of {db}: {ok}"
        return out


def winner(db):
    with sqlite3.connect(db) as c:
        return c.execute("SELECT config_key FROM winners").fetchall()


def main():
    cutune, fake = sys.argv[1], sys.argv[2]
    mpirun = shutil.which("mpirun")
    if not mpirun:
        print("SKIPPED: no mpirun (scripts/setup.sh installs openmpi-bin)")
        return SKIP
    tmp = tempfile.mkdtemp(prefix="cutune-mpi-")
    env = dict(os.environ, CUTUNE_WORKER=fake, FAKE_GPU_WORKER_SLEEP_MS="5",
               # Open MPI refuses root unless told twice; CI runs as root.
               OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_btl_vader_single_copy_mechanism="none", OMPI_MCA_rmaps_base_oversubscribe="1")
    env.pop("CUTUNE_DB", None)
    tune = [cutune, "tune", "vector_add", "--strategy", "brute_force", "--compile-mode", "thread",
            "--compile-workers", "2", "--cache-dir", os.path.join(tmp, "cubins")]
    launch = [mpirun, "--bind-to", "none", "--oversubscribe", "-np", "4", "-x", "CUTUNE_WORKER", "-x", "FAKE_GPU_WORKER_SLEEP_MS",
              "-x", "FAKE_GPU_WORKER_LOG"]

    # One process, then four ranks: the same results.
    single = os.path.join(tmp, "single.db")
    subprocess.run(tune + ["--db", single], env=env, check=True, stdout=subprocess.DEVNULL)
    ranks = os.path.join(tmp, "ranks.db")
    report = os.path.join(tmp, "ranks.json")
    env["FAKE_GPU_WORKER_LOG"] = os.path.join(tmp, "ranks.log")
    out = subprocess.run(launch + tune + ["--db", ranks, "--report", report], env=env, check=True,
                         capture_output=True, text=True, timeout=600)
    a, b = rows(single), rows(ranks)
    assert len(a) == 59, len(a)
    assert a == b, f"four ranks stored other results than one process: {set(a.items()) ^ set(b.items())}"
    assert winner(single) == winner(ranks), (winner(single), winner(ranks))
    workers = json.load(open(report))["workers"]
    names = [w["name"] for w in workers]
    assert names == ["GPU 0", "rank 1 GPU 0", "rank 2 GPU 0", "rank 3 GPU 0"], names
    assert all(w["evaluations"] > 0 for w in workers), workers
    assert sum(w["evaluations"] for w in workers) == 59, workers
    started = open(env["FAKE_GPU_WORKER_LOG"]).read().split()[1::2]
    assert sorted(started) == sorted(set(started)) and len(started) == 59, "a configuration evaluated twice"

    # A rank killed mid-run: mpirun ends the job; the same command resumes and finishes.
    killed = os.path.join(tmp, "killed.db")
    env["FAKE_GPU_WORKER_SLEEP_MS"] = "150"
    env["FAKE_GPU_WORKER_LOG"] = os.path.join(tmp, "killed.log")
    job, victim = start_and_find_rank(launch + tune + ["--db", killed], env, killed, 1)
    os.kill(victim, signal.SIGKILL)
    try:
        _, err = job.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(job.pid, signal.SIGKILL)
        raise AssertionError("the job went on after a rank was killed, and did not end")
    stored = rows(killed)
    print(f"killed rank 1 (pid {victim}) after {len(stored)} stored; mpirun exit {job.returncode}")
    env["FAKE_GPU_WORKER_SLEEP_MS"] = "5"
    again = subprocess.run(launch + tune + ["--db", killed], env=env, check=True, capture_output=True, text=True,
                           timeout=600)
    assert f"reusing {len(stored)} stored measurements" in again.stdout, again.stdout
    final = rows(killed)
    assert len(final) == 59, len(final)
    for key, value in stored.items():
        assert final[key] == value, f"{key} changed on resume"
    for key, value in final.items():
        if value[0] == "ok":
            assert a[key] == value, (key, a[key], value)
    # A rank that stops answering (SIGSTOP: a hung node): after the evaluation timeout plus
    # --rank-timeout its configurations go to the other ranks and the run completes. MPI's
    # finalisation waits for every rank, so the stopped one is woken once the report is written.
    silent = os.path.join(tmp, "silent.db")
    silent_report = os.path.join(tmp, "silent.json")
    env["FAKE_GPU_WORKER_SLEEP_MS"] = "100"
    env["FAKE_GPU_WORKER_LOG"] = os.path.join(tmp, "silent.log")
    job, stopped = start_and_find_rank(launch + tune + ["--db", silent, "--report", silent_report, "--timeout", "1",
                                                        "--rank-timeout", "2"], env, silent, 2)
    os.kill(stopped, signal.SIGSTOP)
    deadline = time.time() + 300
    while time.time() < deadline and not os.path.exists(silent_report) and job.poll() is None:
        time.sleep(0.5)
    os.kill(stopped, signal.SIGCONT)
    try:
        _, err = job.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(job.pid, signal.SIGKILL)
        raise AssertionError("the job did not end after the silent rank was woken")
    assert job.returncode == 0, (job.returncode, err[-2000:])
    rep = json.load(open(silent_report))
    lost = {w["name"]: w["lost"] for w in rep["workers"]}
    assert lost == {"GPU 0": False, "rank 1 GPU 0": False, "rank 2 GPU 0": True, "rank 3 GPU 0": False}, lost
    silent_rows = rows(silent)
    assert len(silent_rows) == 59, len(silent_rows)
    assert rep["configs_tried"] == 59, rep["configs_tried"]

    print(f"ok: 4 ranks = 1 process ({len(a)} configurations); killed rank resumed: {len(stored)} kept, "
          f"{len(final) - len(stored)} evaluated after")
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


def start_and_find_rank(command, env, db, rank):
    """Starts the job, waits until it has stored 8 results, and returns it with rank `rank`'s pid."""
    job = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           start_new_session=True)
    deadline = time.time() + 120
    while time.time() < deadline:
        time.sleep(0.2)
        if os.path.exists(db) and len(rows_or_empty(db)) >= 8:
            pid = rank_pid(rank)
            if pid:
                return job, pid
    os.killpg(job.pid, signal.SIGKILL)
    raise AssertionError(f"no rank {rank} found after 8 results")


def rows_or_empty(db):
    try:
        with sqlite3.connect(db, timeout=1) as c:
            return c.execute("SELECT config_key FROM measurements").fetchall()
    except sqlite3.Error:
        return []


def rank_pid(rank):
    """The cutune process of MPI rank `rank` (Open MPI puts the rank in its environment)."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = f.read().split(b"\0")
            with open(f"/proc/{pid}/comm") as f:
                comm = f.read().strip()
        except OSError:
            continue
        if comm == "cutune" and f"OMPI_COMM_WORLD_RANK={rank}".encode() in env:
            return int(pid)
    return None


if __name__ == "__main__":
    sys.exit(main())
