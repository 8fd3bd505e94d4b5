"""A one-node SLURM cluster on loopback for the tests: munged, slurmctld and slurmd from Debian's packages
(``apt install slurmctld slurmd slurm-client munge``; .ci/run installs them), each started in the foreground as
a child of the test with a configuration of its own under a temporary folder, so nothing in the machine's /etc
is read or changed. Jobs submitted through it (sbatch, submitit) run on this machine as the real SLURM runs
them: a batch script started by slurmd, in a process tree of its own, with SLURM_* variables set.

    with slurm_cluster(folder) as environment:   # {"SLURM_CONF": ...}: what a client needs
        subprocess.run(["sbatch", ...], env={**os.environ, **environment})

``missing()`` names what is not installed (the tests skip with it, or fail in CI).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

from distributed_script import free_port

DAEMONS = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "scancel")
PARTITION = "test"


def missing() -> list[str]:
    """What the cluster lacks here: its programs, or root (slurmd starts jobs as their user)."""
    absent = [name for name in DAEMONS if shutil.which(name) is None and not Path("/usr/sbin", name).exists()]
    return absent + ([] if os.geteuid() == 0 else ["root (slurmd runs as root)"])


def _daemon(name: str) -> str:
    return shutil.which(name) or str(Path("/usr/sbin", name))


def _config(folder: Path, host: str) -> str:
    cpus = os.cpu_count() or 1
    return "\n".join([
        "ClusterName=torchpool-test",
        f"SlurmctldHost={host}(127.0.0.1)",
        f"SlurmctldPort={free_port()}",
        f"SlurmdPort={free_port()}",
        "SlurmUser=root",
        "AuthType=auth/munge",
        "CredType=cred/munge",
        f"AuthInfo=socket={folder}/munge.socket",
        f"StateSaveLocation={folder}/state",
        f"SlurmdSpoolDir={folder}/spool",
        f"SlurmctldPidFile={folder}/slurmctld.pid",
        f"SlurmdPidFile={folder}/slurmd.pid",
        f"SlurmctldLogFile={folder}/slurmctld.log",
        f"SlurmdLogFile={folder}/slurmd.log",
        "ProctrackType=proctrack/linuxproc",  # no cgroups needed
        "TaskPlugin=task/none",
        "SwitchType=switch/none",
        "MpiDefault=none",
        "SchedulerType=sched/builtin",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_Core",
        "ReturnToService=2",
        "JobAcctGatherType=jobacct_gather/none",
        "AccountingStorageType=accounting_storage/none",  # submitit falls back from sacct to squeue
        f"NodeName={host} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory=2000 State=UNKNOWN",
        # Jobs may share cores: the tests' collectors ask one CPU each on a machine of two.
        f"PartitionName={PARTITION} Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4",
        "",
    ])


def jobs(environment: dict[str, str]) -> list[str]:
    """The cluster's jobs still queued or running, as squeue lists them (id and state)."""
    listed = subprocess.run(["squeue", "-h", "-o", "%i %T"], capture_output=True, text=True,
                            env={**os.environ, **environment}, timeout=30)
    return [line for line in listed.stdout.splitlines() if line.strip()]


@contextlib.contextmanager
def slurm_cluster(folder: Path) -> Iterator[dict[str, str]]:
    folder.mkdir(parents=True, exist_ok=True)
    for sub in ("state", "spool"):
        (folder / sub).mkdir(exist_ok=True)
    host = socket.gethostname().split(".")[0]
    conf = folder / "slurm.conf"
    conf.write_text(_config(folder, host))
    environment = {"SLURM_CONF": str(conf)}
    env = {**os.environ, **environment}
    daemons: list[subprocess.Popen] = []
    try:
        munge_key = Path("/etc/munge/munge.key")
        key = [] if munge_key.exists() else [f"--key-file={folder / 'munge.key'}"]
        if key:  # the package makes /etc/munge/munge.key; elsewhere, a key of the test's own
            (folder / "munge.key").write_bytes(os.urandom(128))
            (folder / "munge.key").chmod(0o600)
        daemons.append(subprocess.Popen(
            [_daemon("munged"), "--foreground", "--force", f"--socket={folder}/munge.socket",
             f"--pid-file={folder}/munged.pid", f"--log-file={folder}/munged.log", f"--seed-file={folder}/munge.seed",
             *key], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT))
        _wait_for(lambda: (folder / "munge.socket").exists(), "munged's socket", folder)
        daemons.append(subprocess.Popen([_daemon("slurmctld"), "-D", "-i"], env=env, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.STDOUT))
        daemons.append(subprocess.Popen([_daemon("slurmd"), "-D"], env=env, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.STDOUT))

        def idle() -> bool:
            info = subprocess.run(["sinfo", "-h", "-o", "%t"], capture_output=True, text=True, env=env, timeout=30)
            return info.stdout.strip() in ("idle", "mix", "alloc")

        _wait_for(idle, "the node to come up idle", folder)
        yield environment
    finally:
        if daemons:
            subprocess.run(["scancel", "--full", "--user=root"], env=env, capture_output=True, timeout=30)
        for daemon in reversed(daemons):
            daemon.send_signal(signal.SIGTERM)
        for daemon in reversed(daemons):
            try:
                daemon.wait(timeout=20)
            except subprocess.TimeoutExpired:
                daemon.kill()
                daemon.wait()


def _wait_for(ready, what: str, folder: Path, timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if ready():
            return
        time.sleep(0.2)
    logs = "".join(f"\n--- {log.name}:\n{log.read_text()[-1500:]}" for log in sorted(folder.glob("*.log")))
    raise RuntimeError(f"the test's SLURM cluster did not start: no {what} within {timeout_s:.0f} s{logs}")
