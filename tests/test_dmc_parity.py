"""The Control Suite family against dm_control itself, step for step.

dm_control 1.0.50 does not import under mujoco 4.0.0 (the version torchpool pins), so the reference runs
in an environment of its own (mujoco 3.17.0 + dm_control 1.0.50, made on first use under
.venv-dmc-reference, or the Python named by TORCHPOOL_DMC_REFERENCE) as a child process
(tests/dmc_reference.py); docs/parity.md, "The Control Suite", says why and what the tolerances are.

For each id, from the same state (torchpool's, copied into dm_control after each reset and before each
step), with the same actions (a sixth of them outside the control range): every observation key, the
reward, the discount and the step type, over a whole episode to the time limit and the reset after it.
Initial states are drawn by torchpool's RNG, so they match dm_control's in distribution (tested with a
two-sample KS test), and whole episodes, each side from its own resets, have the same mean return under fixed
actions (test_dmc_mean_returns_match_dm_control).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch
from side_venv import side_python

import torchpool
from torchpool.families import dmc

pytestmark = pytest.mark.skipif(not torchpool._family_modules.built("DmcWalker"),
                                reason="torchpool was built without the Control Suite family")

ROOT = Path(__file__).resolve().parent.parent
REFERENCE_VENV = ROOT / ".venv-dmc-reference"
REFERENCE_PACKAGES = ["mujoco==3.17.0", "dm_control==1.0.50"]
# Two MuJoCo versions (3.17 there, 4.0 here) agree to ~1e-12 per step on these models; observations and
# rewards are compared at 1e-9 absolute + 1e-9 relative.
TOL = 1e-9

IDS = [(domain, task) for domain, (_, _, tasks) in dmc.DMC_DOMAINS.items() for task in tasks]
# mujoco 3.17 and 4.0 themselves part ways now and then on humanoid_CMU (a step from the same state
# differs by up to ~0.05 in rare contact states: its 10 physics steps per control step amplify solver
# rounding; seen once in 2,000 steps). Its first episode agrees; its physics is checked against
# mujoco 4.0 running dm_control's step sequence (the last test here), as every domain's could be.
# On quadruped escape (whenever the body touches the height field) and dog (from its first contacts, ~15
# steps in) they part ways within a step. There the reference observes torchpool's state after each step
# (tests/dmc_reference.py, `after`), which fixes everything of the position and velocity stages; the
# acceleration-stage sensors are dm_control's own then: dog's are copied over from torchpool's observation
# (they are plain sensor readings, and its reward needs the touch sensors), escape's keys holding them are
# left out. Their physics is checked against mujoco 4.0
# (test_dmc_physics_where_mujoco_versions_differ_is_dm_controls_step_on_the_pinned_mujoco).
OBSERVED_AFTER = {("quadruped", "escape"): {"imu", "force_torque"},
                  **{("dog", task): set() for task in dmc.DMC_DOMAINS["dog"][2]}}
# observation key -> its acceleration-stage sensors, in the key's order.
COPIED_SENSORS = {"dog": {"inertial_sensors": ["accelerometer", "velocimeter", "gyro"],
                          "foot_forces": ["foot_L", "foot_R", "hand_L", "hand_R"],
                          "touch_sensors": ["palm_L", "palm_R", "sole_L", "sole_R"]}}


def _sensor_readings(domain: str, observation) -> dict[str, list[float]]:
    """The sensors COPIED_SENSORS names, read from one env's observation."""
    readings = {}
    for key, names in COPIED_SENSORS.get(domain, {}).items():
        values = observation[key][0].tolist()
        size = len(values) // len(names)
        readings.update({name: values[k * size:(k + 1) * size] for k, name in enumerate(names)})
    return readings


def escape_terrain(bumps: np.ndarray, resolution: int = 201) -> np.ndarray:
    """Quadruped escape's height field from its 30 x 30 bumps, as dm_control's Escape task writes it."""
    from scipy import ndimage

    row, col = np.ogrid[-1:1:resolution * 1j, -1:1:resolution * 1j]
    radius = np.clip(np.sqrt(col**2 + row**2), .04, 1)
    bowl = .5 - np.cos(2 * np.pi * radius) / 2
    return (bowl * ndimage.zoom(bumps, resolution / float(len(bumps)))).ravel().astype(np.float32)


def _reference_python() -> str:
    return os.environ.get("TORCHPOOL_DMC_REFERENCE") or side_python(
        REFERENCE_VENV, REFERENCE_PACKAGES, "import dm_control.suite", "no dm_control reference environment")


class Reference:
    """dm_control in its child process (tests/dmc_reference.py)."""

    def __init__(self, python: str):
        self.process = subprocess.Popen([python, str(ROOT / "tests" / "dmc_reference.py")], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True)

    def __call__(self, cmd: str, **fields) -> dict:
        self.send(cmd, **fields)
        return self.receive(cmd)

    def send(self, cmd: str, **fields) -> None:
        """Sends one request; its reply comes from receive(), so the caller may work meanwhile."""
        self.process.stdin.write(json.dumps({"cmd": cmd, **fields}) + "\n")
        self.process.stdin.flush()

    def receive(self, cmd: str) -> dict:
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the dm_control reference died on {cmd!r}")
        reply = json.loads(line)
        assert "error" not in reply, reply["error"]
        return reply

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=30)


@pytest.fixture(scope="module")
def reference():
    ref = Reference(_reference_python())
    yield ref
    ref.close()


def _close(got, want, where: str, what: str) -> float:
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, f"{where}: {what} has shape {got.shape}, dm_control's {want.shape}"
    error = np.abs(got - want)
    assert np.all(error <= TOL + TOL * np.abs(want)), (
        f"{where}: {what} differs by {error.max():.3g}:\n  torchpool {got.tolist()}\n  dm_control {want.tolist()}")
    return float(error.max(initial=0.0))


@pytest.mark.parametrize("domain,task", IDS, ids=[dmc.dmc_env_id(d, t) for d, t in IDS])
def test_dmc_task_matches_dm_control(reference, domain, task):
    env_id = dmc.dmc_env_id(domain, task)
    spec = reference("load", domain=domain, task=task)
    pool = torchpool.make(env_id, num_envs=1, seed=7, obs_dtype=torch.float64)
    rng = np.random.default_rng(7)
    low, high = np.array(spec["low"]), np.array(spec["high"])
    # lqr's motors are unbounded (+-mjMAXVAL): drive them within +-1, as a controller would.
    sample_low, sample_high = np.maximum(low, -1.0), np.minimum(high, 1.0)
    assert np.array_equal(pool.action_spec.low.numpy().astype(np.float64), low), f"{env_id}: action low"
    assert np.array_equal(pool.action_spec.high.numpy().astype(np.float64), high), f"{env_id}: action high"
    try:
        td = pool.reset()
        observation = td["observation"]
        assert list(observation.keys()) == spec["keys"], f"{env_id}: keys {list(observation.keys())}"
        state = list(pool._core.get_state(0))
        reply = reference("reset_to", state=state)
        for key in spec["keys"]:
            _close(observation[key][0].numpy(), reply["observation"][key], f"{env_id} reset", key)
        if "hfield" in reply:  # dm_control's terrain from torchpool's bumps is the one torchpool's physics has
            want_terrain = escape_terrain(np.reshape(state[-900:], (30, 30)))
            assert np.array_equal(np.float32(reply["hfield"]), want_terrain), f"{env_id}: the terrain differs"
        observed_after = (domain, task) in OBSERVED_AFTER
        unobserved = OBSERVED_AFTER.get((domain, task), set())
        fresh, episodes, steps = True, 0, 0
        while episodes < 1:
            span = (sample_high - sample_low) * 0.1
            action = rng.uniform(sample_low - span, sample_high + span)
            state = None if fresh else list(pool._core.get_state(0))
            td = pool.step(torch.from_numpy(action[None]))
            done = bool(td["done"][0])
            after = list(pool._core.get_state(0)) if observed_after and not done else None
            sensors = _sensor_readings(domain, td["observation"]) if after else None
            want = reference("step", action=action.tolist(), state=state, after=after, sensors=sensors)
            steps += 1
            where = f"{env_id} step {steps}"
            assert not bool(td["unstable"][0]), f"{where}: flagged unstable"
            assert done == want["last"], f"{where}: torchpool done={done}, dm_control last={want['last']}"
            assert bool(td["terminated"][0]) == (want["last"] and want["discount"] == 0.0), where
            got = td["final_observation"] if done else td["observation"]
            for key in spec["keys"]:
                if observed_after and (done or key in unobserved):
                    continue
                _close(got[key][0].numpy(), want["observation"][key], where, key)
            # Rewards are float32 in the batch: within one float32 rounding.
            reward = float(td["reward"][0])
            assert (observed_after and done) or abs(reward - want["reward"]) <= TOL + abs(want["reward"]) * 2.0**-23, (
                f"{where}: reward torchpool={reward!r} dm_control={want['reward']!r}")
            fresh = done
            if done:
                assert steps % 1000 == 0, f"{where}: the episode ended before the time limit"
                episodes += 1
                want = reference("reset_to", state=list(pool._core.get_state(0)))["observation"]
                for key in spec["keys"]:
                    _close(td["observation"][key][0].numpy(), want[key], f"{where} (autoreset)", key)
    finally:
        pool.close()


@pytest.mark.parametrize("domain,task", IDS, ids=[dmc.dmc_env_id(d, t) for d, t in IDS])
def test_dmc_initial_states_match_dm_control_in_distribution(reference, domain, task):
    """Every qpos coordinate and task parameter of 120 initial states: a two-sample KS test against 120 of
    dm_control's (fixed seeds on both sides, so the outcome is fixed too)."""
    from scipy.stats import ks_2samp

    count = 120
    reference("load", domain=domain, task=task)
    want = reference("resets", count=count, seed=11)
    pool = torchpool.make(dmc.dmc_env_id(domain, task), num_envs=count, seed=11, obs_dtype=torch.float64)
    try:
        pool.reset()
        states = np.array([pool._core.get_state(i) for i in range(count)])
    finally:
        pool.close()
    nq = len(want["qpos"][0])
    ours = {"qpos": states[:, 1:1 + nq], "params": states[:, states.shape[1] - len(want["params"][0]):]}
    for name in ("qpos", "params"):
        theirs = np.array(want[name]).reshape(count, -1)
        for k in range(theirs.shape[1]):
            p_value = ks_2samp(ours[name][:, k], theirs[:, k]).pvalue
            assert p_value > 1e-4, (
                f"{domain} {task}: initial {name}[{k}] differs in distribution (KS p={p_value:.2g}; "
                f"torchpool mean {ours[name][:, k].mean():.4g}, dm_control {theirs[:, k].mean():.4g})")


# The whole-episode check: ids whose returns under fixed actions vary with the initial state, episodes per
# side, and steps per episode (a time limit on both sides keeps the test's cost within a minute).
RETURN_IDS = ["WalkerStand-v1", "QuadrupedWalk-v1", "FishUpright-v1", "ReacherEasy-v1", "BallInCupCatch-v1"]
RETURN_EPISODES = 256
RETURN_STEPS = 100


def _torchpool_returns(env_id: str, actions: np.ndarray, seed: int) -> np.ndarray:
    """RETURN_EPISODES returns of torchpool's episodes of `env_id`, one per env of one pool, each the fixed
    `actions` (RETURN_STEPS rows) to the time limit: float64[RETURN_EPISODES]."""
    pool = torchpool.make(env_id, num_envs=RETURN_EPISODES, seed=seed, max_episode_steps=RETURN_STEPS,
                          obs_dtype=torch.float64)
    returns = torch.zeros(RETURN_EPISODES, dtype=torch.float64)
    try:
        pool.reset()
        for t, action in enumerate(actions):
            td = pool.step(torch.from_numpy(np.repeat(action[None], RETURN_EPISODES, axis=0)))
            returns += td["reward"].double()
            assert not td["unstable"].any(), f"{env_id} step {t + 1}: flagged unstable"
            ended = td["done"]
            assert bool(ended.all() if t + 1 == RETURN_STEPS else not ended.any()), (
                f"{env_id} step {t + 1}: {int(ended.sum())} of {RETURN_EPISODES} episodes ended")
    finally:
        pool.close()
    return returns.numpy()


def test_dmc_mean_returns_match_dm_control():
    """Whole episodes, which the step-by-step parity above (re-synced to torchpool's state every step) cannot
    see: for each of RETURN_IDS, one fixed action sequence (RETURN_STEPS actions drawn once, uniform in the
    action box, from a seeded RNG) played from RETURN_EPISODES initial states per side, each side drawing its
    own (torchpool's RNG; dm_control's RandomState), to a time limit set to RETURN_STEPS on both sides. The
    mean returns agree within 3 standard errors of their difference.

    The two samples are independent, so the difference of their means has standard error
    sqrt(se_torchpool**2 + se_dm_control**2), each se the sample's std / sqrt(n). With 256 episodes a side the
    difference is close to normal; if the two engines' returns have one distribution, |z| > 3 has probability
    0.27% per id (~1.3% over the five), so a change of seeds or of MuJoCo's rounding seldom fails it, while a
    bias of three of those standard errors in the reset distribution, the rewards, the time limit or the
    physics over a whole episode does: ~6% of walker's mean return, about a third of quadruped's and fish's,
    and most of reacher's and ball_in_cup's, whose sparse returns vary most (the run prints the table). The
    seeds are fixed, so a given build passes or fails every time. Both sides run at once: dm_control in its
    process, torchpool here."""
    reference = Reference(_reference_python())
    try:
        rng = np.random.default_rng(2026)
        jobs, actions = [], {}
        for env_id in RETURN_IDS:
            domain, task = dmc.DMC_IDS[env_id]
            with torchpool.make(env_id, num_envs=1) as pool:
                low, high = pool.action_spec.low.double().numpy(), pool.action_spec.high.double().numpy()
            actions[env_id] = rng.uniform(low, high, size=(RETURN_STEPS, *low.shape))
            jobs.append({"domain": domain, "task": task, "actions": actions[env_id].tolist()})
        reference.send("returns", tasks=jobs, episodes=RETURN_EPISODES, seed=13)
        ours = {env_id: _torchpool_returns(env_id, actions[env_id], seed=13) for env_id in RETURN_IDS}
        reply = reference.receive("returns")
    finally:
        reference.close()
    rows, failures = [], []
    for env_id, theirs, lengths in zip(RETURN_IDS, reply["returns"], reply["lengths"]):
        assert set(lengths) == {RETURN_STEPS}, f"{env_id}: dm_control's episode lengths {sorted(set(lengths))}"
        theirs = np.asarray(theirs)
        mean, their_mean = ours[env_id].mean(), theirs.mean()
        se = ours[env_id].std(ddof=1) / np.sqrt(len(ours[env_id]))
        their_se = theirs.std(ddof=1) / np.sqrt(len(theirs))
        assert se > 0 and their_se > 0, f"{env_id}: the returns do not vary, so their means test nothing"
        z = (mean - their_mean) / np.hypot(se, their_se)
        rows.append(f"{env_id:18} torchpool {mean:8.3f} +- {se:.3f}   dm_control {their_mean:8.3f} +- {their_se:.3f}"
                    f"   z {z:+.2f}")
        if abs(z) >= 3:
            failures.append(env_id)
    print("\n".join(["mean return over whole episodes (+- standard error):", *rows]))
    assert not failures, f"mean returns differ by 3 standard errors or more on {failures}:\n" + "\n".join(rows)


def _legacy_step(model, data, state: np.ndarray, action: np.ndarray, frame_skip: int) -> np.ndarray:
    """MuJoCo 4.0's Python bindings from torchpool's state (time, qpos, qvel, act, qacc_warmstart) through
    dm_control's legacy step (mj_step1 to bring the state's stages up to date, ctrl, mj_step2, frame_skip - 1
    mj_steps, mj_step1): the next state, laid out the same way."""
    import mujoco

    data.time, offset = state[0], 1
    for array in (data.qpos, data.qvel, data.act, data.qacc_warmstart):
        array[:] = state[offset:offset + len(array)]
        offset += len(array)
    mujoco.mj_step1(model, data)
    data.ctrl[:] = action
    mujoco.mj_step2(model, data)
    for _ in range(frame_skip - 1):
        mujoco.mj_step(model, data)
    mujoco.mj_step1(model, data)
    return np.concatenate([[data.time], data.qpos, data.qvel, data.act, data.qacc_warmstart])


@pytest.mark.parametrize("env_id", ["HumanoidCMUStand-v1", "WalkerWalk-v1", "CheetahRun-v1", "FingerTurnHard-v1"])
def test_dmc_physics_is_dm_controls_step_on_the_pinned_mujoco(env_id):
    """Without the reference environment: from each step's state, MuJoCo 4.0's Python bindings running
    dm_control's legacy step (ctrl, mj_step2, frame_skip - 1 mj_step, mj_step1) land on torchpool's next
    state bit for bit, over 1,500 steps and an autoreset."""
    import mujoco

    domain, task = dmc.DMC_IDS[env_id]
    frame_skip = dmc.DMC_DOMAINS[domain][1]
    model = mujoco.MjModel.from_xml_path(f"{dmc.dm_control_suite_dir()}/{domain}.xml")
    data = mujoco.MjData(model)
    pool = torchpool.make(env_id, num_envs=1, seed=3, obs_dtype=torch.float64)
    rng = np.random.default_rng(3)
    low, high = pool.action_spec.low.double().numpy(), pool.action_spec.high.double().numpy()
    sizes = (model.nq, model.nv, model.na, model.nv)
    try:
        pool.reset()
        for t in range(1500):
            before = np.array(pool._core.get_state(0))
            action = rng.uniform(low, high)
            td = pool.step(torch.from_numpy(action[None]))
            if bool(td["done"][0]):
                continue
            after = np.array(pool._core.get_state(0))
            model_parameters = before[1 + sum(sizes):]
            if domain == "finger":  # the target the episode drew (DmcEnv task parameters)
                model.site_pos[model.site("target").id, [0, 2]] = model_parameters[:2]
                model.site_size[model.site("target").id, 0] = model_parameters[2]
            replica = _legacy_step(model, data, before, action, frame_skip)
            assert np.array_equal(after[:len(replica)], replica), f"{env_id} step {t}: the physics differs"
    finally:
        pool.close()


def _edited_model(domain: str, task: str):
    """dm_control's make_model edits of quadruped escape and dog, made with MuJoCo 4.0's MjSpec."""
    import mujoco

    spec = mujoco.MjSpec.from_file(f"{dmc.dm_control_suite_dir()}/{domain}.xml")
    if domain == "quadruped":  # make_model(floor_size=40, terrain=True, rangefinders=True)
        spec.geom("floor").size[:2] = 40
        removed = [spec.geom(f"wall_{side}") for side in ("px", "py", "nx", "ny")] + [spec.body("ball"),
                                                                                      spec.site("target")]
    else:  # dog's make_model(floor_size, remove_ball=task != "fetch")
        spec.geom("floor").size = [10 if task == "fetch" else 15 * {"trot": 3, "run": 9}.get(task, 1)] * 2 + [.1]
        removed = [] if task == "fetch" else [spec.body("ball"), spec.geom("target"), spec.camera("ball"),
                                              spec.camera("head")] + [spec.geom(f"wall_{side}")
                                                                       for side in ("px", "nx", "py", "ny")]
    for element in removed:
        spec.delete(element)
    return spec.compile()


@pytest.mark.parametrize("env_id", ["QuadrupedEscape-v1", "DogRun-v1", "DogFetch-v1"])
def test_dmc_physics_where_mujoco_versions_differ_is_dm_controls_step_on_the_pinned_mujoco(env_id):
    """Without the reference environment, for the ids whose physics mujoco 3.17 and 4.0 compute differently:
    the model as dm_control's make_model builds it, quadruped escape's height field from each episode's
    bumps as dm_control smooths them (escape_terrain, which the parity test holds against dm_control's own),
    and MuJoCo 4.0's Python bindings running dm_control's legacy step land on torchpool's next state bit
    for bit, over 1,200 steps and an autoreset."""
    import mujoco

    domain, task = dmc.DMC_IDS[env_id]
    frame_skip = dmc.DMC_DOMAINS[domain][1]
    model = _edited_model(domain, task)
    data = mujoco.MjData(model)
    pool = torchpool.make(env_id, num_envs=1, seed=5, obs_dtype=torch.float64)
    rng = np.random.default_rng(5)
    low, high = pool.action_spec.low.double().numpy(), pool.action_spec.high.double().numpy()
    bumps, terrains, episodes = None, 0, 1
    try:
        pool.reset()
        for t in range(1200):
            before = np.array(pool._core.get_state(0))
            action = rng.uniform(low, high)
            td = pool.step(torch.from_numpy(action[None]))
            if bool(td["done"][0]):
                episodes += 1
                continue
            after = np.array(pool._core.get_state(0))
            if model.nhfield and (bumps is None or not np.array_equal(bumps, before[-900:])):
                bumps, terrains = before[-900:], terrains + 1
                model.hfield_data[:] = escape_terrain(bumps.reshape(30, 30))
            replica = _legacy_step(model, data, before, action, frame_skip)
            assert np.array_equal(after[:len(replica)], replica), f"{env_id} step {t}: the physics differs"
    finally:
        pool.close()
    assert episodes == 2 and terrains == (2 if model.nhfield else 0)
