// phosphor_blend_lazy.cpp — ALE's PhosphorBlend (ale/environment/phosphor_blend.hpp) with its
// tables built on first use instead of in the constructor.
//
// Every ale::ALEInterface embeds a PhosphorBlend whose constructor fills a
// 256x256 blend palette and a 64x64x64 RGB-to-palette map (a nearest-colour
// search over 33M candidates): ~0.15 s per emulator, most of the time it
// takes to make an Atari pool. The tables are only read by process(), which
// ALE calls when its "color_averaging" setting is on; torchpool never turns
// it on (it reads the raw palette indices and does its own preprocessing),
// so here the constructor only marks the tables unbuilt and process() builds
// them the first time it runs. What process() computes is unchanged:
// CMakeLists.txt compiles this file in place of ALE's phosphor_blend.cpp, and
// the class layout is the header's, so the other ALE sources see the same object.
#include <cstdlib>

#include "ale/emucore/Console.hxx"
#include "ale/environment/phosphor_blend.hpp"

namespace ale {

namespace {
// m_rgb_ntsc holds even palette indices once built; an odd one marks it unbuilt.
constexpr uint8_t kUnbuilt = 1;
constexpr uint8_t kBlendRatioPercent = 77;  // Stella's default phosphor blend
}  // namespace

PhosphorBlend::PhosphorBlend(stella::OSystem* osystem) : m_osystem(osystem) {
  m_phosphor_blend_ratio = kBlendRatioPercent;
  m_rgb_ntsc[0][0][0] = kUnbuilt;
}

void PhosphorBlend::process(ALEScreen& screen) {
  if (m_rgb_ntsc[0][0][0] == kUnbuilt) makeAveragePalette();
  stella::Console& console = m_osystem->console();
  const uint8_t* current = console.mediaSource().currentFrameBuffer();
  const uint8_t* previous = console.mediaSource().previousFrameBuffer();
  uint8_t* out = screen.getArray();
  for (size_t i = 0; i < screen.arraySize(); ++i) out[i] = rgbToNTSC(m_avg_palette[current[i]][previous[i]]);
}

void PhosphorBlend::makeAveragePalette() {
  ColourPalette& palette = m_osystem->colourPalette();
  // Colour (even) palette entries only, as the emulator draws: odd ones are its grey shades.
  int red[128], green[128], blue[128];
  for (int c = 0; c < 256; c += 2) palette.getRGB(c, red[c / 2], green[c / 2], blue[c / 2]);
  for (int c1 = 0; c1 < 256; c1 += 2) {
    for (int c2 = 0; c2 < 256; c2 += 2) {
      const int a = c1 / 2, b = c2 / 2;
      m_avg_palette[c1][c2] =
          makeRGB(getPhosphor(red[a], red[b]), getPhosphor(green[a], green[b]), getPhosphor(blue[a], blue[b]));
    }
  }
  // The nearest colour entry (L1 over r, g, b; the lowest index wins a tie) of
  // each RGB point whose components are multiples of 4.
  for (int r = 0; r < 256; r += 4) {
    for (int g = 0; g < 256; g += 4) {
      for (int b = 0; b < 256; b += 4) {
        int best = 0, best_distance = 256 * 3 + 1;
        for (int c = 0; c < 128; ++c) {
          const int distance = std::abs(red[c] - r) + std::abs(green[c] - g) + std::abs(blue[c] - b);
          if (distance < best_distance) best_distance = distance, best = 2 * c;
        }
        m_rgb_ntsc[r >> 2][g >> 2][b >> 2] = static_cast<uint8_t>(best);
      }
    }
  }
}

uint8_t PhosphorBlend::getPhosphor(uint8_t v1, uint8_t v2) {
  const uint8_t high = v1 < v2 ? v2 : v1, low = v1 < v2 ? v1 : v2;
  const uint32_t blended = ((high - low) * m_phosphor_blend_ratio) / 100 + low;
  return blended > 255 ? 255 : static_cast<uint8_t>(blended);
}

uint32_t PhosphorBlend::makeRGB(uint8_t r, uint8_t g, uint8_t b) { return (r << 16) | (g << 8) | b; }

uint8_t PhosphorBlend::rgbToNTSC(uint32_t rgb) {
  return m_rgb_ntsc[((rgb >> 16) & 0xFF) >> 2][((rgb >> 8) & 0xFF) >> 2][(rgb & 0xFF) >> 2];
}

}  // namespace ale
