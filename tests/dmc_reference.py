"""dm_control itself, driven over a pipe: the reference of tests/test_dmc_parity.py.

Runs under the Python of the reference environment (mujoco 3.17.0 + dm_control 1.0.50: dm_control does
not import under the mujoco 4.0.0 torchpool pins; docs/parity.md, "The Control Suite"), never under
torchpool's. One JSON object per line in each direction:

    {"cmd": "load", "domain": "walker", "task": "walk"}    -> {"keys": [...], "low": [...], "high": [...]}
    {"cmd": "reset_to", "state": [...]}                     -> {"observation": {...}}
    {"cmd": "step", "action": [...], "state": [...] | null, "after": [...] | null, "sensors": {...} | null}
                                                            -> {"observation", "reward", "discount", "last"}
    {"cmd": "resets", "count": n, "seed": s}                -> {"qpos": [[...]], "params": [[...]]}
    {"cmd": "returns", "tasks": [{"domain", "task", "actions"}], "episodes": n, "seed": s}
                                                            -> {"returns": [[...]], "lengths": [[...]]}

`returns` plays `episodes` whole episodes of each task from dm_control's own resets (its RandomState seeded
with `seed`), each the task's fixed `actions` one per step until dm_control's time limit, set to end the
episode after len(actions) steps, and gives each episode's return and length (test_dmc_mean_returns_...).

`state` is torchpool's state of one env (csrc/envs/dmc/dmc_env.h, DmcEnv::get_state): time, qpos, qvel,
act, qacc_warmstart, then the task's per-episode model parameters. reset_to runs dm_control's own reset
(its task draws with its own RandomState), then copies the state in and ends as reset does (after_reset:
a forward with actuation disabled). Quadruped escape's parameters are its terrain's 30 x 30 bumps: reset_to
hands them to dm_control's own draw, so dm_control smooths them into its height field itself.

A step given a state copies it in first and redoes mj_step1, the call a legacy step ends with, so the
next step starts from torchpool's state exactly (chaotic domains would otherwise drift apart by the
rounding of two MuJoCo versions). A step given an `after` state (where
the two versions' physics part ways: quadruped escape's height-field contacts) copies torchpool's state
after the step in, redoes mj_step1 and observes and rewards that: every quantity of the position and
velocity stages is then torchpool's; the acceleration-stage sensors stay dm_control's unless `sensors`
gives their readings by name.
"""

import json
import sys

import mujoco
import numpy as np
from dm_control import suite


class EscapeBumps:
    """A task's RandomState that hands quadruped escape its terrain bumps when told them (`replay`), and
    remembers the last ones it drew (`last`); every other draw is the RandomState's own."""

    def __init__(self, random):
        self.random, self.replay, self.last = random, None, None

    def uniform(self, low=0.0, high=1.0, size=None):
        if size is not None and np.shape(np.empty(size)) == (30, 30):
            if self.replay is not None:
                self.last, self.replay = self.replay, None
            else:
                self.last = self.random.uniform(low, high, size)
            return self.last.copy()
        return self.random.uniform(low, high, size)

    def __getattr__(self, name):
        return getattr(self.random, name)


def manipulator_bodies(task):
    """The bodies manipulator's task places each episode: its target, and for insert its receptacle."""
    bodies = ["target_peg" if "peg" in task else "target_ball"]
    if task.startswith("insert"):
        bodies.append("slot" if "peg" in task else "cup")
    return bodies


def task_parameters(physics, domain, task):
    """The per-episode model edits torchpool's state carries (DmcEnv::task_parameter_count)."""
    model = physics.named.model
    if domain == "reacher":
        return [model.geom_size["target", 0], model.geom_pos["target", "x"], model.geom_pos["target", "y"]]
    if domain == "point_mass" and task == "hard":
        return list(physics.model.wrap_prm[:4])
    if domain == "fish" and task == "swim":
        return list(model.geom_pos["target"])
    if domain == "finger" and task != "spin":
        return [model.site_pos["target", "x"], model.site_pos["target", "z"], model.site_size["target", 0]]
    if domain == "swimmer":
        return [model.geom_pos["target", "x"], model.geom_pos["target", "y"]]
    if domain == "stacker":
        return [model.body_pos["target", "x"], model.body_pos["target", "z"]]
    if domain == "lqr":
        return list(physics.model.jnt_stiffness)
    if domain == "quadruped" and task == "escape":
        return physics.escape_bumps.last.ravel().tolist()
    if domain == "manipulator":
        bodies = manipulator_bodies(task)
        return [value for body in bodies for value in (model.body_pos[body, "x"], model.body_pos[body, "z"],
                                                         model.body_quat[body, "qw"], model.body_quat[body, "qy"])]
    return []


def set_task_parameters(physics, domain, task, values):
    model = physics.named.model
    if domain == "reacher":
        model.geom_size["target", 0], model.geom_pos["target", "x"], model.geom_pos["target", "y"] = values
    elif domain == "point_mass" and task == "hard":
        physics.model.wrap_prm[:4] = values
    elif domain == "fish" and task == "swim":
        model.geom_pos["target"] = values
    elif domain == "finger" and task != "spin":
        model.site_pos["target", "x"], model.site_pos["target", "z"], model.site_size["target", 0] = values
    elif domain == "manipulator":
        bodies = manipulator_bodies(task)
        for k, body in enumerate(bodies):
            x, z, qw, qy = values[4 * k:4 * k + 4]
            model.body_pos[body, "x"], model.body_pos[body, "z"] = x, z
            model.body_quat[body, "qw"], model.body_quat[body, "qy"] = qw, qy
    elif domain == "swimmer":
        model.geom_pos["target", "x"], model.geom_pos["target", "y"] = values
        model.light_pos["target_light", "x"], model.light_pos["target_light", "y"] = values
    elif domain == "stacker":
        model.body_pos["target", "x"], model.body_pos["target", "z"] = values
    elif domain == "lqr":
        physics.model.jnt_stiffness[:] = values
    elif domain == "quadruped" and task == "escape":  # the terrain stays the episode's (reset_to set it)
        assert np.array_equal(np.asarray(values).reshape(30, 30), physics.escape_bumps.last), "escape: new bumps"


def set_state(physics, domain, task, state):
    model, data = physics.model, physics.data
    state = np.asarray(state, dtype=np.float64)
    data.time = state[0]
    offset = 1
    for array, size in ((data.qpos, model.nq), (data.qvel, model.nv), (data.act, model.na),
                        (data.qacc_warmstart, model.nv)):
        array[:] = state[offset:offset + size]
        offset += size
    set_task_parameters(physics, domain, task, state[offset:])


def load(domain, task, seed):
    # lqr's time limit: EnvPool's 1000 steps (30 s at its 0.03 s step; dm_control's default is none).
    kwargs = {"random": seed, **({"time_limit": 30} if domain == "lqr" else {})}
    env = suite.load(domain, task, task_kwargs=kwargs)
    if domain == "quadruped" and task == "escape":
        env.task._random = env.physics.escape_bumps = EscapeBumps(env.task.random)
        # Escape re-uploads its terrain to the renderer when the physics has rendering contexts, and asking
        # creates them, which fails without OpenGL (as in CI); the upload only affects images.
        type(env.physics).contexts = property(lambda physics: None)
    return env


def episode_returns(domain, task, actions, episodes, seed):
    """`episodes` returns of dm_control's own episodes of `task` under the fixed `actions`, and their lengths."""
    control_timestep = load(domain, task, seed).control_timestep()
    # The time limit ends an episode at the first step whose count reaches time_limit / control_timestep
    # (control.Environment.step); half a step short of len(actions) steps ends it after exactly that many.
    limit = (len(actions) - 0.5) * control_timestep
    env = suite.load(domain, task, task_kwargs={"random": seed, "time_limit": limit})
    actions = np.asarray(actions, dtype=np.float64)
    returns, lengths = [], []
    for _ in range(episodes):
        timestep, total, steps = env.reset(), 0.0, 0
        while not timestep.last() and steps < len(actions):
            timestep = env.step(actions[steps])
            total, steps = total + timestep.reward, steps + 1
        returns.append(total)
        lengths.append(steps if timestep.last() else -1)  # -1: the time limit did not end the episode
    return returns, lengths


def observation(env):
    return {key: np.asarray(value, dtype=np.float64).tolist()
            for key, value in env.task.get_observation(env.physics).items()}


def main():
    env = domain = task = None
    for line in sys.stdin:
        request = json.loads(line)
        command = request["cmd"]
        if command == "load":
            domain, task = request["domain"], request["task"]
            env = load(domain, task, 0)
            spec = env.action_spec()
            reply = {"keys": list(env.observation_spec()), "low": spec.minimum.tolist(),
                     "high": spec.maximum.tolist()}
        elif command == "reset_to":
            if domain == "quadruped" and task == "escape":
                env.physics.escape_bumps.replay = np.reshape(request["state"][-900:], (30, 30))
            env.reset()
            set_state(env.physics, domain, task, request["state"])
            env.physics.after_reset()
            reply = {"observation": observation(env)}
            if domain == "quadruped" and task == "escape":
                reply["hfield"] = env.physics.model.hfield_data.tolist()
        elif command == "step":
            if request["state"] is not None:
                set_state(env.physics, domain, task, request["state"])
                mujoco.mj_step1(env.physics.model.ptr, env.physics.data.ptr)
            step = env.step(np.asarray(request["action"], dtype=np.float64))
            reply = {"observation": observation(env), "reward": float(step.reward),
                     "discount": float(step.discount), "last": bool(step.last())}
            if request.get("after") is not None:
                set_state(env.physics, domain, task, request["after"])
                mujoco.mj_step1(env.physics.model.ptr, env.physics.data.ptr)
                for name, values in (request.get("sensors") or {}).items():
                    env.physics.named.data.sensordata[name] = values
                reply["observation"] = observation(env)
                reply["reward"] = float(env.task.get_reward(env.physics))
        elif command == "resets":
            env = load(domain, task, request["seed"])
            qpos, params = [], []
            for i in range(request["count"]):
                if domain == "lqr":  # the springs are drawn with the model: one model per draw
                    env = load(domain, task, request["seed"] + i)
                env.reset()
                qpos.append(env.physics.data.qpos.tolist())
                params.append([float(value) for value in task_parameters(env.physics, domain, task)])
            reply = {"qpos": qpos, "params": params}
        elif command == "returns":
            results = [episode_returns(job["domain"], job["task"], job["actions"], request["episodes"],
                                       request["seed"]) for job in request["tasks"]]
            reply = {"returns": [returns for returns, _ in results], "lengths": [lengths for _, lengths in results]}
        else:
            reply = {"error": f"unknown command {command!r}"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
