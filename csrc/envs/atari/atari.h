// atari.h — every ALE game, with EnvPool's / DeepMind's preprocessing built in.
//
// The model/env split: AtariModel reads the task kwargs and asks one scratch
// ALE instance for the game's action set; each env owns its own
// ale::ALEInterface (emulator, RAM, ROM settings), touched by one thread at a
// time.
//
// One step, matching ale-py + Gymnasium's AtariPreprocessing (frame_skip)
// + FrameStackObservation frame for frame:
//   repeat frame_skip times: pick the action (sticky: keep the previous one
//   with repeat_action_probability, drawn from the env's Rng), emulate one
//   frame, add its reward; stop early at game over; keep the last two
//   frames' screens. With episodic_life, a step after which 0 < lives < the
//   lives before it ends the episode (NOTE [Episodic life]).
//   Observation = resize(max(last two frames)), pushed onto the frame stack.
// The second-to-last frame is copied as the emulator's palette indices, the
// last one read where the emulator drew it; grey (or R, G, B) values come
// from the palette's tables (what ALE's getScreenGrayscale / getScreenRGB do)
// row by row as the resizer asks, so no full-size grey, RGB or pooled frame
// is ever written, and rows equal to an earlier row are not built again
// (screen.h).
//
// One deliberate difference: when an episode ends inside the frame skip,
// AtariPreprocessing returns the previous step's observation again (it stops
// before copying the screen); here the final observation shows the frames
// actually reached. Only that terminal frame differs.
//
// Reset: reset the game (unless episodic_life and only a life was lost:
// then the game goes on), then 1..noop_max no-op frames drawn from the Rng,
// then FIRE once if use_fire_reset and the game has FIRE. The frame stack is
// filled with the first frame.
//
// preprocessing="sb3" follows SB3's AtariWrapper (NoopResetEnv, MaxAndSkipEnv,
// EpisodicLifeEnv, FireResetEnv, WarpFrame) instead, where it differs: the
// grey frame is OpenCV's RGB2GRAY of the max-pooled RGB frames (not ALE's
// grey, pooled); FIRE reset is a whole step of FIRE and then one of the
// action at index 2, the observation pooled from the last; and a lost life
// (episodic_life) is followed by one whole no-op step, not by no-op frames.
#pragma once

#include <ale/ale_interface.hpp>
#include <ale/common/Log.hpp>
#include <ale/emucore/MD5.hxx>
#include <ale/games/Roms.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "../../core/env.h"
#include "resize.h"
#include "screen.h"

namespace torchpool::atari {

// ALE logs every ROM load to stderr; a pool of 64 envs would print 64 banners.
inline void quiet_ale() {
  static std::once_flag once;
  std::call_once(once, [] { ale::Logger::setMode(ale::Logger::Error); });
}

// Whether ALE has game support (rewards, terminal states) for this ROM's MD5.
// ale-py also ships a few ROMs only its multi-player mode can run (Combat,
// Joust, ...); ALE's loadROM would exit() the process on those.
// The same test as ALEInterface::isSupportedROM, which leaks the settings
// object it builds; here it is freed.
inline bool rom_supported(const std::string& rom_path) {
  std::ifstream file(rom_path, std::ios::binary);
  if (!file) return false;
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const std::string md5 = ale::stella::MD5(bytes.data(), static_cast<uint32_t>(bytes.size()));
  const std::unique_ptr<ale::RomSettings> settings(ale::buildRomRLWrapper(rom_path, md5));
  return settings != nullptr && settings->md5() == md5;
}

inline void check_rom(const std::string& rom_path) {
  if (!rom_supported(rom_path))
    throw std::invalid_argument("cannot load the Atari ROM '" + rom_path +
                                "': ALE has no game support for this file (wrong or damaged ROM?)");
}

// A fresh emulator with the game loaded; the ROM must have passed check_rom()
// (once per pool, in AtariModel: the check reads and hashes the whole file).
inline std::unique_ptr<ale::ALEInterface> load_game(const std::string& rom_path) {
  quiet_ale();
  auto ale = std::make_unique<ale::ALEInterface>();
  ale->setFloat("repeat_action_probability", 0.0f);  // sticky actions are ours (per-env Rng)
  ale->setInt("frame_skip", 1);                      // so is the frame skip
  ale->setInt("max_num_frames_per_episode", 0);      // and the time limit (the executor's)
  try {
    ale->loadROM(rom_path);
  } catch (const std::exception& error) {
    throw std::invalid_argument("cannot load the Atari ROM '" + rom_path + "': " + error.what());
  }
  return ale;
}

// The console's RAM: the Atari 2600 has 128 bytes (ALE's ALERAM, checked against it in AtariModel).
constexpr int64_t kRamBytes = 128;

template <typename Values>
void check_among(const char* name, int value, const Values& available) {
  if (value < 0 ||
      std::find(available.begin(), available.end(), static_cast<typename Values::value_type>(value)) != available.end())
    return;
  std::string names;
  for (const auto& choice : available) names += (names.empty() ? "" : ", ") + std::to_string(choice);
  throw std::invalid_argument(std::string(name) + "=" + std::to_string(value) + " is not one of this game's: " + names +
                              " (or -1, the default)");
}

class AtariModel {
 public:
  explicit AtariModel(const Config& config)
      : rom_path(config.string("rom_path")),
        height(static_cast<int>(config.integer("img_height"))),
        width(static_cast<int>(config.integer("img_width"))),
        stack_num(static_cast<int>(config.integer("stack_num"))),
        gray_scale(config.flag("gray_scale")),
        frame_skip(static_cast<int>(config.integer("frame_skip"))),
        noop_max(static_cast<int>(config.integer("noop_max"))),
        episodic_life(config.flag("episodic_life")),
        reward_clip(config.flag("reward_clip")),
        repeat_action_probability(config.real("repeat_action_probability")),
        bilinear(config.string("resize") == "bilinear"),
        sb3(config.string("preprocessing") == "sb3"),
        mode(static_cast<int>(config.integer("mode"))),
        difficulty(static_cast<int>(config.integer("difficulty"))) {
    check_rom(rom_path);
    const auto probe = load_game(rom_path);
    // -1 keeps the game's default, as EnvPool's; others must be among the game's own.
    check_among("mode", mode, probe->getAvailableModes());
    check_among("difficulty", difficulty, probe->getAvailableDifficulties());
    if (probe->getRAM().size() != static_cast<size_t>(kRamBytes))
      throw std::logic_error("ALE's RAM has " + std::to_string(probe->getRAM().size()) + " bytes, not 128");
    // 210 x 160 for most games; a few (Adventure: 250 rows) are taller.
    screen_height = static_cast<int>(probe->getScreen().height());
    screen_width = static_cast<int>(probe->getScreen().width());
    actions = config.flag("full_action_space") ? probe->getLegalActionSet() : probe->getMinimalActionSet();
    fire_reset =
        config.flag("use_fire_reset") && std::find(actions.begin(), actions.end(), ale::PLAYER_A_FIRE) != actions.end();
  }

  int channels() const { return gray_scale ? 1 : 3; }

  // The game's mode and difficulty as chosen (a fresh emulator starts in the defaults); takes effect at the
  // next reset_game().
  void choose_mode(ale::ALEInterface& ale) const {
    if (mode >= 0) ale.setMode(static_cast<ale::game_mode_t>(mode));
    if (difficulty >= 0) ale.setDifficulty(static_cast<ale::difficulty_t>(difficulty));
  }

  EnvSpec spec(Dtype) const {
    EnvSpec spec;
    spec.observations = {{{stack_num * channels(), height, width},
                          Dtype::UInt8,
                          std::vector<double>(1, 0.0),
                          std::vector<double>(1, 255.0)}};
    spec.action.discrete = true;
    spec.action.num_actions = static_cast<int64_t>(actions.size());
    spec.extras = extras();
    spec.max_episode_steps = 27000;  // EnvPool's default: 108k frames at frame_skip 4
    // Roughly: 60-100 us of emulation per frame on a 2020s x86 core, plus ~30 us of preprocessing.
    spec.step_cost_ns = 100'000.0 * frame_skip + 30'000.0;
    return spec;
  }

  static std::vector<FieldSpec> extras() {
    return {{"lives", Dtype::Int32, {}},
            {"raw_reward", Dtype::Float32, {}},
            {"game_over", Dtype::Bool, {}},
            {"episode_frame_number", Dtype::Int32, {}},
            {"ram", Dtype::UInt8, {kRamBytes}}};
  }
  const ExtraField<int32_t> lives_field = extra_field<int32_t>(extras(), "lives");
  const ExtraField<float> raw_reward_field = extra_field<float>(extras(), "raw_reward");
  const ExtraField<bool> game_over_field = extra_field<bool>(extras(), "game_over");
  // ALE's frames since the game's reset (ale-py's info key): a game's length as Monitor counts it under SB3's
  // AtariWrapper, no-op and FIRE frames included.
  const ExtraField<int32_t> frame_number_field = extra_field<int32_t>(extras(), "episode_frame_number");
  // The console's 128 bytes of RAM after the step, as EnvPool's info["ram"].
  const ExtraField<uint8_t> ram_field = extra_field<uint8_t>(extras(), "ram");

  const std::string rom_path;
  const int height, width, stack_num;
  const bool gray_scale;
  const int frame_skip, noop_max;
  const bool episodic_life, reward_clip;
  const double repeat_action_probability;
  const bool bilinear;
  const bool sb3;              // SB3's AtariWrapper: OpenCV grey of the RGB max, its FIRE and lost-life resets
  const int mode, difficulty;  // -1: the game's default
  ale::ActionVect actions;
  bool fire_reset = false;
  int screen_height = 0, screen_width = 0;
};

class Atari {
 public:
  using Model = AtariModel;

  explicit Atari(const Model& model)
      : model_(model),
        ale_(load_game(model.rom_path)),
        plane_(static_cast<size_t>(model.height) * model.width),
        frame_size_(plane_ * model.channels()),
        pixels_(static_cast<size_t>(model.screen_height) * model.screen_width),
        area_(model.screen_height, model.screen_width, model.height, model.width),
        bilinear_(model.screen_height, model.screen_width, model.height, model.width),
        equal_rows_(model.screen_height, model.screen_width),
        stack_(frame_size_ * model.stack_num) {
    model.choose_mode(*ale_);
    // Tables of what ALE's getScreenGrayscale / getScreenRGB compute per
    // palette index: grey is the palette entry after the index (ALE
    // interleaves colours and greys), RGB the entry itself as 0xRRGGBB. Most
    // games only show even indices; some (Air Raid) show odd ones too.
    const auto& palette = ale_->theOSystem->colourPalette();
    for (int index = 0; index < 256; ++index) {
      const uint32_t colour = palette.getRGB(index);
      tables_[0][index] = static_cast<float>(palette.getRGB(std::min(index + 1, 255)) & 0xFF);  // grey
      tables_[1][index] = static_cast<float>((colour >> 16) & 0xFF);                            // red
      tables_[2][index] = static_cast<float>((colour >> 8) & 0xFF);                             // green
      tables_[3][index] = static_cast<float>(colour & 0xFF);                                    // blue
      tables_[4][index] = static_cast<float>(opencv_grey(colour >> 16 & 0xFF, colour >> 8 & 0xFF, colour & 0xFF));
    }
    before_.resize(pixels_);
    for (auto& repeats : repeats_) repeats.resize(model.screen_height);
  }

  void reset(Rng& rng, StepOutput& out) {
    const bool only_a_life = model_.episodic_life && !ale_->game_over(false) && life_lost_;
    bool pooled = false;
    if (model_.sb3) {
      pooled = reset_as_sb3(rng, only_a_life);
    } else {
      if (!only_a_life) ale_->reset_game();
      life_lost_ = false;
      play_noops(rng);
      if (model_.fire_reset) {
        ale_->act(ale::PLAYER_A_FIRE);
        if (ale_->game_over(false)) ale_->reset_game();
      }
    }
    last_action_ = ale::PLAYER_A_NOOP;
    lives_ = ale_->lives();

    push_frame(pooled, /*fill=*/true);
    write(out, 0.0, false);
  }

  StepResult step(const Action& action, Rng& rng, StepOutput& out) {
    double reward = 0.0;
    bool game_over = false;
    const bool pooled = play_step(model_.actions[static_cast<size_t>(action.index)], rng, reward, game_over);
    push_frame(pooled, /*fill=*/false);

    StepResult result;
    result.terminated = game_over || life_lost_;
    result.reward = model_.reward_clip ? static_cast<double>((reward > 0) - (reward < 0)) : reward;
    write(out, reward, game_over);
    return result;
  }

  // ALE's RGB screen (getScreenRGB), full size.
  std::vector<int64_t> render(std::vector<uint8_t>& pixels) const {
    pixels.resize(static_cast<size_t>(model_.screen_height) * model_.screen_width * 3);
    ale_->getScreenRGB(pixels);
    return {model_.screen_height, model_.screen_width, 3};
  }

 private:
  // SB3's grey (cv::cvtColor RGB2GRAY on 8 bits): fixed-point weights 0.299, 0.587, 0.114 in 14 bits, rounded.
  static uint32_t opencv_grey(uint32_t red, uint32_t green, uint32_t blue) {
    return (red * 4899 + green * 9617 + blue * 1868 + (1u << 13)) >> 14;
  }

  void play_noops(Rng& rng) {
    const int noops = model_.noop_max > 0 ? static_cast<int>(rng.integer(model_.noop_max)) + 1 : 0;
    for (int i = 0; i < noops; ++i) {
      ale_->act(ale::PLAYER_A_NOOP);
      if (ale_->game_over(false)) ale_->reset_game();
    }
  }

  // One env step of `chosen`: frame_skip frames (sticky as configured), ended
  // early by game over only; the second-to-last frame is kept in before_.
  // Returns whether the screen is to be pooled.
  //
  // NOTE [Episodic life]: a life is lost when, after the whole step,
  // 0 < lives < the lives before it: EnvPool's Step and SB3's EpisodicLifeEnv
  // both. Neither cuts the frame skip at a lost life (SB3's MaxAndSkipEnv
  // stops only at the game's end), and neither counts the fall to 0 lives:
  // games such as Atlantis and WizardOfWor go on with 0 lives, so that is one
  // more life, ended by game over.
  bool play_step(ale::Action chosen, Rng& rng, double& reward, bool& game_over) {
    const int skip = model_.frame_skip;
    const int lives_before = lives_;
    bool pooled = skip >= 2;
    int frame = 0;
    for (; frame < skip; ++frame) {
      if (model_.repeat_action_probability <= 0.0 || rng.uniform(0.0, 1.0) >= model_.repeat_action_probability)
        last_action_ = chosen;
      reward += ale_->act(last_action_);
      game_over = ale_->game_over(false);
      // The game ends inside the skip: show the frame reached, pooled with the
      // one before only if that one is this step's second-to-last.
      if (game_over) break;
      if (frame == skip - 2)
        scan_rows(ale_->getScreen().getArray(), before_.data(), repeats_[1].data(), model_.screen_height,
                  model_.screen_width);
    }
    lives_ = ale_->lives();
    if (model_.episodic_life && 0 < lives_ && lives_ < lives_before) life_lost_ = true;
    return pooled && frame >= skip - 1;
  }

  // SB3's resets, innermost first: NoopResetEnv's (reset, no-op frames) or,
  // after a lost life, EpisodicLifeEnv's whole no-op step; then FireResetEnv's
  // steps of FIRE and of action 2, each followed by the inner reset again if
  // it ended the episode. Returns whether the last screen is to be pooled.
  bool reset_as_sb3(Rng& rng, bool only_a_life) {
    auto inner_reset = [&](bool after_a_life) {
      life_lost_ = false;
      lives_ = ale_->lives();
      last_action_ = ale::PLAYER_A_NOOP;
      if (after_a_life) {
        double reward = 0.0;
        bool game_over = false;
        const bool pooled = play_step(ale::PLAYER_A_NOOP, rng, reward, game_over);
        life_lost_ = false;
        lives_ = ale_->lives();
        // EpisodicLifeEnv.reset: a no-op step that ends the game is followed by a real reset.
        if (!game_over) return pooled;
      }
      ale_->reset_game();
      lives_ = ale_->lives();
      play_noops(rng);
      return false;
    };
    bool pooled = inner_reset(only_a_life);
    if (!model_.fire_reset || model_.actions.size() < 3) return pooled;
    for (const ale::Action action : {model_.actions[1], model_.actions[2]}) {
      double reward = 0.0;
      bool game_over = false;
      pooled = play_step(action, rng, reward, game_over);
      if (game_over || life_lost_) pooled = inner_reset(!game_over);
    }
    return pooled;
  }

  // Resizes the emulator's current screen (max-pooled with before_ if
  // `pooled`) into the newest stack slot, one plane per channel; the stack is
  // a ring, unrolled oldest-first by write(). The resizer asks for source
  // rows; each is looked up from the palette indices only when asked for.
  void push_frame(bool pooled, bool fill) {
    head_ = (head_ + 1) % model_.stack_num;
    uint8_t* slot = stack_.data() + static_cast<size_t>(head_) * frame_size_;
    const size_t width = static_cast<size_t>(model_.screen_width);
    const uint8_t* last = ale_->getScreen().getArray();
    const uint8_t* before = pooled ? before_.data() : nullptr;
    const int* first_equal = nullptr;
    if (!model_.bilinear) {
      scan_rows(last, nullptr, repeats_[0].data(), model_.screen_height, model_.screen_width);
      first_equal = equal_rows_.find(last, repeats_[0].data(), before, repeats_[1].data());
    }
    const bool opencv_grey_of_max = model_.sb3 && model_.gray_scale;
    for (int c = 0; c < model_.channels(); ++c) {
      const float* table = tables_[!model_.gray_scale ? 1 + c : model_.sb3 ? 4 : 0].data();
      auto row = [&](int r, float* line) {
        const uint8_t* now = last + r * width;
        if (before != nullptr && opencv_grey_of_max) {
          const uint8_t* earlier = before + r * width;
          for (size_t x = 0; x < width; ++x) {
            auto channel = [&](int k) {
              return static_cast<uint32_t>(std::max(tables_[k][now[x]], tables_[k][earlier[x]]));
            };
            line[x] = static_cast<float>(opencv_grey(channel(1), channel(2), channel(3)));
          }
        } else if (before != nullptr) {
          const uint8_t* earlier = before + r * width;
          for (size_t x = 0; x < width; ++x) line[x] = std::max(table[now[x]], table[earlier[x]]);
        } else {
          for (size_t x = 0; x < width; ++x) line[x] = table[now[x]];
        }
      };
      if (model_.bilinear)
        bilinear_(row, slot + c * plane_);
      else
        area_(row, first_equal, slot + c * plane_);
    }
    if (fill)
      for (int i = 0; i < model_.stack_num; ++i)
        if (i != head_) std::memcpy(stack_.data() + static_cast<size_t>(i) * frame_size_, slot, frame_size_);
  }

  void write(StepOutput& out, double raw_reward, bool game_over) {
    auto* observation = out.observation<uint8_t>();
    for (int i = 0; i < model_.stack_num; ++i) {
      const int slot = (head_ + 1 + i) % model_.stack_num;
      std::memcpy(observation + static_cast<size_t>(i) * frame_size_,
                  stack_.data() + static_cast<size_t>(slot) * frame_size_, frame_size_);
    }
    *out.extra(model_.lives_field) = lives_;
    *out.extra(model_.raw_reward_field) = static_cast<float>(raw_reward);
    *out.extra(model_.game_over_field) = game_over;
    *out.extra(model_.frame_number_field) = ale_->getEpisodeFrameNumber();
    std::memcpy(out.extra(model_.ram_field), ale_->getRAM().array(), kRamBytes);
  }

  const Model& model_;
  std::unique_ptr<ale::ALEInterface> ale_;
  const size_t plane_, frame_size_, pixels_;
  AreaResize area_;
  BilinearResize bilinear_;
  // palette index -> ALE's grey, red, green, blue, OpenCV's grey, as floats:
  // the resizers work in float, and max() of whole numbers in float is exact.
  std::array<std::array<float, 256>, 5> tables_{};
  EqualRows equal_rows_;
  std::vector<uint8_t> before_;                  // the second-to-last frame's palette indices
  std::array<std::vector<uint8_t>, 2> repeats_;  // per row: equal to the row above? [0] last frame, [1] before_
  std::vector<uint8_t> stack_;
  int head_ = 0;
  ale::Action last_action_ = ale::PLAYER_A_NOOP;
  int lives_ = 0;
  bool life_lost_ = false;
};

// The benchmarks' raw limit (benchmarks/atari.py): frames per second of bare
// emulation in one thread, uniformly random minimal-set actions, resetting at
// game over, no screen processing at all.
inline double emulation_rate(const std::string& rom_path, double seconds) {
  check_rom(rom_path);
  const auto ale = load_game(rom_path);
  const ale::ActionVect actions = ale->getMinimalActionSet();
  Rng rng(0);
  ale->reset_game();
  int64_t frames = 0;
  const auto start = std::chrono::steady_clock::now();
  double elapsed = 0.0;
  while (elapsed < seconds) {
    for (int i = 0; i < 256; ++i, ++frames) {
      ale->act(actions[static_cast<size_t>(rng.integer(static_cast<int64_t>(actions.size())))]);
      if (ale->game_over(false)) ale->reset_game();
    }
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  return static_cast<double>(frames) / elapsed;
}

}  // namespace torchpool::atari
