"""The Atari family's options and errors: no-op starts, fire reset, episodic
life, reward clipping, sticky actions, time limits, every game, bad input.

Pixel parity with ale-py + Gymnasium's preprocessing is tests/test_atari_parity.py.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

ale_py = pytest.importorskip("ale_py")
cv2 = pytest.importorskip("cv2")

import torchpool  # noqa: E402
from torchpool import registry  # noqa: E402
from torchpool.families import atari  # noqa: E402

if "Pong-v5" not in torchpool.list_envs():
    pytest.skip("torchpool was built without the Atari family", allow_module_level=True)

ATARI_IDS = sorted(atari.atari_env_id(rom) for rom in atari.playable_roms())


def ale(game: str) -> ale_py.ALEInterface:
    interface = ale_py.ALEInterface()
    interface.setLoggerMode(ale_py.LoggerMode.Error)
    interface.setFloat("repeat_action_probability", 0.0)
    interface.loadROM(ale_py.roms.get_rom_path(game))
    return interface


def frame(interface: ale_py.ALEInterface) -> np.ndarray:
    return cv2.resize(interface.getScreenGrayscale(), (84, 84), interpolation=cv2.INTER_AREA)


def first_frames(pool: torchpool.Pool) -> np.ndarray:
    return pool.reset()["observation"][:, -1].numpy()


@pytest.mark.slow
def test_every_game_ale_py_ships_is_registered_and_steps_like_ale() -> None:
    assert len(ATARI_IDS) >= 100
    assert {"Pong-v5", "Breakout-v5", "SpaceInvaders-v5", "MontezumaRevenge-v5"} <= set(ATARI_IDS)
    for rom in atari.playable_roms():
        env_id = atari.atari_env_id(rom)
        pool = torchpool.make(env_id, num_envs=1, noop_max=0, use_fire_reset=False, frame_skip=1, stack_num=1)
        reference = ale(rom)
        actions = reference.getMinimalActionSet()
        assert pool.action_spec.n == len(actions), env_id
        td = pool.reset()
        assert td["observation"].shape == (1, 1, 84, 84) and td["observation"].dtype == torch.uint8, env_id
        reference.reset_game()
        for step in range(20):
            index = (step * 7) % len(actions)
            td = pool.step(torch.tensor([index]))
            reward = reference.act(actions[index])
            assert float(td["reward"][0]) == reward, env_id
        np.testing.assert_array_equal(td["observation"][0, 0].numpy(), frame(reference), err_msg=env_id)
        assert int(td["lives"][0]) == reference.lives(), env_id
        pool.close()


def test_reset_is_the_game_after_fire_and_noops_draw_from_the_seed() -> None:
    reference = ale("breakout")
    reference.reset_game()
    no_fire = frame(reference)
    reference.act(ale_py.Action.FIRE)
    fired = frame(reference)

    got = first_frames(torchpool.make("Breakout-v5", num_envs=2, noop_max=0, use_fire_reset=True))
    np.testing.assert_array_equal(got[0], fired)
    np.testing.assert_array_equal(got[1], fired)
    got = first_frames(torchpool.make("Breakout-v5", num_envs=1, noop_max=0, use_fire_reset=False))
    np.testing.assert_array_equal(got[0], no_fire)

    # 1..noop_max no-op frames per reset, drawn from the per-env Rng: each
    # first frame is the reference after some k in [1, 30] no-ops.
    reference.reset_game()
    after_noops = []
    for _ in range(30):
        reference.act(ale_py.Action.NOOP)
        after_noops.append(frame(reference))
    pool = torchpool.make("Pong-v5", num_envs=16, noop_max=30, use_fire_reset=False, seed=5)
    pong = ale("pong")
    pong.reset_game()
    pong_after = []
    for _ in range(30):
        pong.act(ale_py.Action.NOOP)
        pong_after.append(frame(pong))
    firsts = first_frames(pool)
    matched = [[k for k, f in enumerate(pong_after) if np.array_equal(f, got)] for got in firsts]
    assert all(matched), "a first frame matches no count of no-ops in 1..30"
    assert len({tuple(m) for m in matched}) > 1, "every env drew the same number of no-ops"
    again = first_frames(torchpool.make("Pong-v5", num_envs=16, noop_max=30, use_fire_reset=False, seed=5))
    np.testing.assert_array_equal(firsts, again)


def test_episodic_life_ends_episodes_at_each_lost_life_and_game_over_only_at_the_end() -> None:
    pool = torchpool.make("Breakout-v5", num_envs=1, episodic_life=True, seed=0)
    td = pool.reset()
    assert int(td["lives"][0]) == 5
    lives_at_ends, game_over_at_ends = [], []
    rng = np.random.default_rng(0)
    for _ in range(5000):
        td = pool.step(torch.tensor([int(rng.integers(4))]))
        if bool(td["terminated"][0]):
            lives_at_ends.append(int(td["lives"][0]))
            game_over_at_ends.append(bool(td["game_over"][0]))
            if game_over_at_ends[-1]:
                break
        else:
            assert not bool(td["game_over"][0])
    # One episode per life, counting down: the game goes on after a lost life.
    assert lives_at_ends == [4, 3, 2, 1, 0]
    assert game_over_at_ends == [False, False, False, False, True]
    assert int(td["lives"][0]) == 0  # the terminal row reports the finishing step's extras

    plain = torchpool.make("Breakout-v5", num_envs=1, seed=0)
    plain.reset()
    for _ in range(5000):
        td = plain.step(torch.tensor([int(rng.integers(4))]))
        if bool(td["terminated"][0]):
            assert bool(td["game_over"][0]) and int(td["lives"][0]) == 0
            break
    else:
        pytest.fail("Breakout did not end in 5000 random steps")


@pytest.mark.parametrize("game", ["asterix", "atlantis", "wizard_of_wor"])
def test_episodic_life_ends_as_envpool_and_sb3_end_it(game: str) -> None:
    # NOTE [Episodic life] (csrc/envs/atari/atari.h), against bare ALE: the
    # frame skip stops only at the game's end, and a step ends the episode on
    # game over or when 0 < lives < the lives before it (EnvPool's Step, SB3's
    # EpisodicLifeEnv). Atlantis and WizardOfWor go on with 0 lives: that fall
    # is no end. A game ending inside the skip shows the frame it reached,
    # pooled with the one before only when that one is the step's
    # second-to-last; the next episode starts from the screen as it is.
    skip = 4
    pool = torchpool.make(atari.atari_env_id(game), num_envs=1, noop_max=0, use_fire_reset=False,
                          episodic_life=True, stack_num=1, frame_skip=skip)
    reference = ale(game)
    actions = reference.getMinimalActionSet()
    pool.reset()
    reference.reset_game()
    rng = np.random.default_rng(3)
    lives = reference.lives()
    ended_at, played_on_at_zero, life_ends = [], 0, 0
    for t in range(6000):
        index = int(rng.integers(len(actions)))
        td = pool.step(torch.tensor([index]))
        before, game_over_at = None, None
        for f in range(skip):
            reference.act(actions[index])
            if reference.game_over():
                game_over_at = f
                break
            if f == skip - 2:
                before = reference.getScreenGrayscale()
        last = reference.getScreenGrayscale()
        pooled = np.maximum(before, last) if game_over_at in (None, skip - 1) else last
        shown = td["final_observation"] if bool(td["done"][0]) else td["observation"]
        np.testing.assert_array_equal(shown[0, 0].numpy(), cv2.resize(pooled, (84, 84), interpolation=cv2.INTER_AREA),
                                      err_msg=f"step {t}")
        life_lost = 0 < reference.lives() < lives
        played_on_at_zero += reference.lives() == 0 < lives and game_over_at is None
        lives = reference.lives()
        assert bool(td["terminated"][0]) == (game_over_at is not None or life_lost), (
            f"step {t}: terminated {bool(td['terminated'][0])}, ALE: game over {game_over_at is not None}, "
            f"lives {lives}")
        life_ends += life_lost
        if game_over_at is not None:
            ended_at.append(game_over_at)
            reference.reset_game()
            lives = reference.lives()
            np.testing.assert_array_equal(td["observation"][0, 0].numpy(), frame(reference))
        if game == "asterix" and skip - 1 in ended_at and any(f < skip - 1 for f in ended_at):
            break
        if game != "asterix" and played_on_at_zero and ended_at:
            break
    assert life_ends > 0, "no life was lost: episodic life was not tested"
    if game == "asterix":  # both kinds of game end happened: on the last frame of a skip, and before it
        assert skip - 1 in ended_at and any(f < skip - 1 for f in ended_at), ended_at
    else:
        assert played_on_at_zero > 0, f"{game} never played on with 0 lives"


def test_reward_clip_keeps_the_raw_score_in_extras() -> None:
    clipped = torchpool.make("SpaceInvaders-v5", num_envs=2, reward_clip=True, seed=1)
    raw = torchpool.make("SpaceInvaders-v5", num_envs=2, reward_clip=False, seed=1)
    clipped.reset(), raw.reset()
    rng = np.random.default_rng(1)
    seen = set()
    for _ in range(300):
        action = torch.from_numpy(rng.integers(6, size=2))
        a, b = clipped.step(action), raw.step(action)
        torch.testing.assert_close(a["raw_reward"], b["reward"])
        torch.testing.assert_close(a["reward"], torch.sign(b["reward"]))
        seen.update(b["reward"].tolist())
    assert any(r > 1 for r in seen), f"no reward above 1 to clip in {sorted(seen)}"


def test_sticky_actions() -> None:
    def run(p: float, actions: list[int], seed: int = 0) -> np.ndarray:
        pool = torchpool.make("Pong-v5", num_envs=1, noop_max=0, repeat_action_probability=p, seed=seed)
        pool.reset()
        return np.stack([pool.step(torch.tensor([a]))["observation"][0, -1].numpy() for a in actions])

    rng = np.random.default_rng(2)
    actions = [int(a) for a in rng.integers(6, size=300)]
    # p = 1: the first action (NOOP, set at reset) sticks forever.
    np.testing.assert_array_equal(run(1.0, actions), run(0.0, [0] * len(actions)))
    # p = 0.25 changes the trajectory, reproducibly per seed, differently across seeds.
    sticky = run(0.25, actions)
    assert not np.array_equal(sticky, run(0.0, actions))
    np.testing.assert_array_equal(sticky, run(0.25, actions))
    assert not np.array_equal(sticky, run(0.25, actions, seed=1))


def test_sticky_action_rate_is_the_probability() -> None:
    # After a reset the previous action is NOOP. With frame_skip=1 the first
    # step's one frame either applies the new action or (with probability p)
    # sticks to NOOP; its screen tells which, by comparison with a
    # deterministic pool that took FIRE or NOOP. Each reset draws anew.
    envs, rounds, p = 8, 50, 0.25
    kwargs = dict(num_envs=envs, noop_max=0, use_fire_reset=False, frame_skip=1, stack_num=1)
    sticky = torchpool.make("Breakout-v5", repeat_action_probability=p, seed=11, **kwargs)
    plain = torchpool.make("Breakout-v5", **kwargs)
    fire = torch.ones(envs, dtype=torch.int64)
    plain.reset()
    moved = plain.step(fire)["observation"][0].clone()
    plain.reset()
    stayed = plain.step(torch.zeros(envs, dtype=torch.int64))["observation"][0].clone()
    assert not torch.equal(moved, stayed), "FIRE left no trace in the first frame"
    kept_old = 0
    for _ in range(rounds):
        sticky.reset()
        for row in sticky.step(fire)["observation"]:
            assert torch.equal(row, moved) != torch.equal(row, stayed)
            kept_old += torch.equal(row, stayed)
    n = envs * rounds
    assert abs(kept_old / n - p) < 4 * (p * (1 - p) / n) ** 0.5, kept_old / n  # 4 sigma


def test_truncation_at_max_episode_steps() -> None:
    pool = torchpool.make("Pong-v5", num_envs=2, max_episode_steps=7)
    assert torchpool.make("Pong-v5", num_envs=1).max_episode_steps == 27000
    pool.reset()
    for t in range(1, 15):
        td = pool.step(torch.zeros(2, dtype=torch.int64))
        assert bool(td["truncated"].all()) == (t % 7 == 0)
        assert not bool(td["terminated"].any())


def test_full_action_space_and_rgb_shapes() -> None:
    assert torchpool.make("Pong-v5", num_envs=1).action_spec.n == 6
    assert torchpool.make("Pong-v5", num_envs=1, full_action_space=True).action_spec.n == 18
    pool = torchpool.make("Pong-v5", num_envs=1, gray_scale=False, stack_num=2, img_height=50, img_width=40)
    assert pool.reset()["observation"].shape == (1, 6, 50, 40)
    assert pool.observation_spec.to_gymnasium().shape == (6, 50, 40)


def test_bad_input() -> None:
    pool = torchpool.make("Pong-v5", num_envs=2)
    pool.reset()
    with pytest.raises(ValueError, match="action 6 for env 0"):
        pool.step(torch.tensor([6, 0]))
    with pytest.raises(ValueError, match="action -1"):
        pool.step(torch.tensor([0, -1]))
    td = pool.step(torch.tensor([5, 0]))  # still usable afterwards
    assert td["observation"].shape == (2, 4, 84, 84)
    with pytest.raises(ValueError, match="img_height must be in \\[1, 210\\]"):
        torchpool.make("Pong-v5", img_height=300)
    with pytest.raises(ValueError, match="resize must be 'area' or 'bilinear'"):
        torchpool.make("Pong-v5", resize="cubic")
    with pytest.raises(ValueError, match="repeat_action_probability must be in \\[0, 1\\]"):
        torchpool.make("Pong-v5", repeat_action_probability=1.5)
    with pytest.raises(ValueError, match="uint8 frames"):
        torchpool.make("Pong-v5", obs_dtype=torch.float32)
    with pytest.raises(TypeError, match="unknown kwarg 'stack'.*stack_num"):
        torchpool.make("Pong-v5", stack=4)


def test_missing_rom_is_a_clear_error(monkeypatch, tmp_path) -> None:
    monkeypatch.setattr(atari, "ale_roms_dir", lambda: str(tmp_path))
    with pytest.raises(FileNotFoundError, match=r"Pong-v5: no ROM .*pong\.bin.*ale-py"):
        torchpool.make("Pong-v5")
    (tmp_path / "pong.bin").write_bytes(b"\0" * 2048)  # not a ROM ALE knows
    with pytest.raises(ValueError, match="cannot load the Atari ROM"):
        torchpool.make("Pong-v5")


def test_an_atari_id_in_a_build_without_atari_says_so(monkeypatch) -> None:
    # TORCHPOOL_ATARI=0 builds have no Atari entries; their ids get a pointed message.
    registry.list_envs()  # the Atari ids are registered on first use
    monkeypatch.setattr(atari.MODULE, "built", lambda: False)
    monkeypatch.delitem(registry._REGISTRY, "Pong-v5")
    with pytest.raises(ValueError, match="Pong-v5 is an Atari game, but this torchpool was built without"):
        torchpool.make("Pong-v5")


def test_render_is_the_emulators_rgb_screen_and_its_frame_count() -> None:
    pool = torchpool.make("Breakout-v5", num_envs=2, noop_max=0, use_fire_reset=False, frame_skip=1, stack_num=1)
    reference = ale("breakout")
    assert pool.renders
    td = pool.reset()
    reference.reset_game()
    assert td["episode_frame_number"].tolist() == [reference.getEpisodeFrameNumber()] * 2
    for step in range(30):
        td = pool.step(torch.tensor([step % 4, step % 4]))
        reference.act(reference.getMinimalActionSet()[step % 4])
    np.testing.assert_array_equal(pool.render(1).numpy(), reference.getScreenRGB())
    assert td["episode_frame_number"].tolist() == [reference.getEpisodeFrameNumber()] * 2
    with pytest.raises(ValueError, match="env id 2 is out of range"):
        pool.render(2)
    pool.send(torch.tensor([0, 0]))
    with pytest.raises(ValueError, match="env 0 is in flight"):
        pool.render(0)
    pool.recv()
    pool.close()
