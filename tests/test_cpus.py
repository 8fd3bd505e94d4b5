"""num_threads defaults to the CPUs this process may use: its affinity and its cgroup's CPU quota."""

import os
import subprocess
import sys

import pytest

import torchpool
from torchpool._cpus import available_cpus, cgroup_cpu_quota


def write(root, name, text):
    path = os.path.join(root, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as file:
        file.write(text)


@pytest.mark.parametrize("files, quota", [
    ({"cpu.max": "max 100000\n"}, None),
    ({"cpu.max": "150000 100000\n"}, 1.5),
    ({"cpu.max": "400000 100000\n"}, 4.0),
    ({"cpu/cpu.cfs_quota_us": "200000\n", "cpu/cpu.cfs_period_us": "100000\n"}, 2.0),
    ({"cpu,cpuacct/cpu.cfs_quota_us": "-1\n", "cpu,cpuacct/cpu.cfs_period_us": "100000\n"}, None),
    ({}, None),
])
def test_cgroup_quota_is_read_from_v1_and_v2_files(tmp_path, files, quota):
    for name, text in files.items():
        write(str(tmp_path), name, text)
    assert cgroup_cpu_quota(str(tmp_path)) == quota


def test_a_quota_caps_the_affinity_count(tmp_path):
    write(str(tmp_path), "cpu.max", "50000 100000\n")  # half a CPU: still one thread
    assert available_cpus(str(tmp_path)) == 1
    write(str(tmp_path), "cpu.max", "max 100000\n")
    assert available_cpus(str(tmp_path)) == len(os.sched_getaffinity(0))


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs Linux affinity")
def test_a_pool_under_an_affinity_of_one_cpu_starts_one_thread():
    code = ("import os, torchpool; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}); "
            "print(torchpool.available_cpus(), torchpool.make('_Probe-v0', num_envs=8, max_busy_us=100.0).num_threads)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["1", "1"]


def test_the_default_is_never_more_than_the_affinity():
    assert torchpool.make("CartPole-v1", num_envs=64).num_threads == min(64, available_cpus())
