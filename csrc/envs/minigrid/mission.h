// mission.h — the mission string as tokens: one token per space-separated word (punctuation stays with
// its word, "room," is a word), from a fixed vocabulary, 0 the padding. The text is the words joined by
// single spaces, so the tokens give it back exactly (torchpool.families.minigrid.mission_text).
//
// The vocabulary only grows, at its end: a token keeps its meaning across versions. Python reads it from
// the module (torchpool._minigrid.vocabulary).
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace torchpool::minigrid {

inline const std::vector<std::string>& vocabulary() {
  // Index 0 is the padding; the words of every MiniGrid mission follow.
  static const std::vector<std::string> words = {
      "", "get", "to", "the", "green", "goal", "square", "use", "key", "open", "door", "and", "then", "avoid", "lava",
      "find", "opening", "a", "go", "fetch", "you", "must", "red", "blue", "purple", "yellow", "grey", "ball", "box",
      "reach", "pick", "up", "from", "room,", "unlock", "matching", "object", "at", "end", "of", "hallway", "traverse",
      "rooms", "put", "near", "maze",
      // BabyAI's (minigrid/envs/babyai/core/verifier.py): ", then" leaves its comma on the word before.
      "next", "in", "front", "behind", "on", "your", "left", "right", "after", "ball,", "box,", "key,", "door,",
      "object,", "you,", "left,", "right,"};
  return words;
}

// The tokens a MiniGrid mission gets: the longest (LockedRoom's) has 17 words. A task with longer missions
// (BabyAI's) asks for more (TaskShape::mission_tokens).
inline constexpr int kMissionTokens = 24;

// Writes `mission`'s tokens into out[0, length), zero-padded.
inline void tokenize(std::string_view mission, uint8_t* out, int length = kMissionTokens) {
  std::memset(out, 0, static_cast<size_t>(length));
  const std::vector<std::string>& words = vocabulary();
  int count = 0;
  size_t start = 0;
  while (start < mission.size()) {
    size_t end = mission.find(' ', start);
    if (end == std::string_view::npos) end = mission.size();
    const std::string_view word = mission.substr(start, end - start);
    size_t token = 1;
    while (token < words.size() && words[token] != word) ++token;
    if (token == words.size())
      throw std::logic_error("minigrid: the word '" + std::string(word) + "' is not in the mission vocabulary");
    if (count == length) throw std::logic_error("minigrid: a mission longer than " + std::to_string(length) + " words");
    out[count++] = static_cast<uint8_t>(token);
    start = end + 1;
  }
}

}  // namespace torchpool::minigrid
