"""``hw explore --cluster``: a real local Dask cluster (a scheduler and two workers, separate processes).

The sweep is the Yosys-free estimate (every point generated, scanned and its declared figures taken,
about a second each) over small pam-mpu widths, so the cluster machinery, not synthesis, is what runs.
Checked: the same CSV as the in-process sweep (the per-point ``seconds`` column aside); a worker killed
mid-sweep costs nothing but its tasks, which rerun on the other; a worker whose Yosys is missing is
named in a warning and gets none of ``hw report``'s batches; a second run reuses the cached rows.
"""

from __future__ import annotations

import csv
import io
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("distributed")

from modforge.hw import cluster, explore, synth  # noqa: E402

WIDTHS = [16, 24, 32]


def _strip(text: str) -> list[dict[str, str]]:
    """CSV rows without the per-point seconds (which differ between runs)."""
    return [{k: v for k, v in r.items() if k != "seconds"} for r in csv.DictReader(io.StringIO(text))]


def _csv(rows: list[dict]) -> list[dict[str, str]]:
    return _strip(explore.csv_text(rows))


class LocalCluster:
    """``dask scheduler`` and ``dask worker`` processes; the second worker may get its own environment."""

    def __init__(self, tmp: Path, second_env: dict[str, str] | None = None):
        self.tmp = tmp
        self.file = tmp / "scheduler.json"
        env = dict(os.environ)
        self.procs: list[subprocess.Popen] = []
        # All three start at once (a worker waits for the scheduler file); connect() waits for them, so the
        # in-process reference sweep runs while they boot.
        self.scheduler = self._start(["scheduler", "--port", "0", "--no-dashboard", "--scheduler-file", str(self.file)],
                                     env, "scheduler")
        self.workers = [self._start(self._worker_args(), env, "worker0"),
                        self._start(self._worker_args(), {**env, **(second_env or {})}, "worker1")]
        self.client = None

    def connect(self) -> None:
        deadline = time.time() + 60
        while not self.file.exists() and time.time() < deadline:
            time.sleep(0.2)
        assert self.file.exists(), "the scheduler did not start"
        from distributed import Client

        self.client = Client(scheduler_file=str(self.file), timeout=30)
        self.client.wait_for_workers(2, timeout=60)
        self.address = self.client.scheduler.address

    def _worker_args(self) -> list[str]:
        return ["worker", "--scheduler-file", str(self.file), "--nthreads", "1", "--no-nanny", "--no-dashboard"]

    def _start(self, args: list[str], env: dict[str, str], name: str) -> subprocess.Popen:
        log = open(self.tmp / f"{name}.log", "w")
        proc = subprocess.Popen([sys.executable, "-m", "dask", *args], env=env, stdout=log, stderr=subprocess.STDOUT)
        self.procs.append(proc)
        return proc

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
        for proc in reversed(self.procs):
            if proc.poll() is None:
                proc.kill()             # nothing of theirs to keep; a polite stop takes seconds each
        for proc in self.procs:
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()


@pytest.fixture
def local_cluster(tmp_path, monkeypatch):
    monkeypatch.setenv("MODFORGE_HW_CACHE", str(tmp_path / "cache"))
    c = LocalCluster(tmp_path, {"MODFORGE_YOSYS": str(tmp_path / "no-such-yosys")})
    yield c
    c.close()


def test_cluster_sweep_equals_in_process_survives_a_lost_worker_and_resumes(local_cluster, tmp_path, monkeypatch):
    points = explore.grid(["pam-mpu"], WIDTHS, [16])
    local = explore.sweep(points, jobs=1, method="estimate")
    local_cluster.connect()
    # Before the sweep: the worker without Yosys is told apart, and left out of a synthesis sweep only.
    problems = local_cluster.client.run(synth.worker_problem)
    good, bad = cluster.usable_workers(problems, "yosys")
    assert len(good) == 1 and len(bad) == 1
    (worker, why), = bad.items()
    assert worker.startswith("tcp://") and "MODFORGE_YOSYS" in why and "does not exist" in why
    assert cluster.usable_workers(problems, "estimate")[0] == sorted(problems)
    # hw report's batches (map_batches) go to the worker that has Yosys only, and the other is named.
    seen, told = [], []
    cluster.map_batches(local_cluster.address, synth.worker_problem, list(range(6)), seen.append, synth.worker_problem,
                        told.append)
    assert len(seen) == 6 and all("yosys" not in missing for missing in seen), seen
    assert any(worker in w and "cannot run the hardware flow" in w for w in told), told

    warnings: list[str] = []

    # Kill the first worker as soon as it is working on a point: its tasks must rerun on the other.
    killed: dict[str, object] = {}

    pids = local_cluster.client.run(os.getpid)          # worker address -> its process

    def progress(row):
        if not killed:
            busy = {addr: tasks for addr, tasks in local_cluster.client.processing().items() if tasks}
            if not busy:
                return
            victim = sorted(busy)[0]
            proc = next(p for p in local_cluster.workers if p.pid == pids[victim])
            proc.kill()
            proc.wait(timeout=10)
            killed.update(worker=victim, tasks=len(busy[victim]))

    rows = explore.sweep(points, method="estimate", cluster=local_cluster.address, cache=True, warn=warnings.append,
                         progress=progress)
    assert killed.get("tasks", 0) >= 1, "no worker was busy after the first row: nothing was lost"
    assert all(r["status"] == "ok" for r in rows), rows
    assert _csv(rows) == _csv(local)
    # The worker without Yosys was named (the estimate does not need Yosys, so it still took points).
    assert any("no-such-yosys" in w and "tcp://" in w for w in warnings), warnings

    # The CLI, a second time: every row from the cache, the CSV the same, nothing asked of the cluster.
    from click.testing import CliRunner

    from modforge.cli.main import cli

    res = CliRunner().invoke(cli, ["hw", "explore", "--archs", "pam-mpu", "--bits", ",".join(map(str, WIDTHS)),
                                   "--word-bits", "16", "--method", "estimate", "--cluster", local_cluster.address,
                                   "-o", str(tmp_path / "out"), "--json"])
    assert res.exit_code == 0, res.output
    import json

    doc = json.loads(res.stdout)
    assert doc["cached_points"] == len(WIDTHS) and doc["cluster"] == local_cluster.address
    assert _strip((tmp_path / "out" / "explore.csv").read_text()) == _csv(local)


def test_an_unreachable_scheduler_is_a_cluster_error():
    from modforge.arith.base import ParameterError

    with pytest.raises(ParameterError) as err:
        cluster.connect("tcp://127.0.0.1:9", timeout=2)
    assert err.value.param == "cluster"
