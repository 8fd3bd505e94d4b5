// extra_field_test.cpp — typed handles to a family's extra fields (spec.h's
// extra_field, env.h's StepOutput::extra): a handle is checked against the
// declared dtype once, and a handle that does not fit the row is refused in
// debug builds instead of writing over another field.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "check.h"
#include "core/env.h"

using namespace torchpool;

template <class F>
static std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::logic_error& error) {
    return error.what();
  }
  return "";
}

int main() {
  const std::vector<FieldSpec> extras = {
      {"lives", Dtype::Int32, {}}, {"tendon_length", Dtype::Float64, {3}}, {"game_over", Dtype::Bool, {}}};
  const ExtraField<double> tendons = extra_field<double>(extras, "tendon_length");
  CHECK(tendons.index == 1 && tendons.count == 3, "tendon_length: index %zu, count %zu", tendons.index, tendons.count);
  CHECK(error_of([&] { extra_field<float>(extras, "lives"); }) ==
            "extra field 'lives' is declared as int32, not as the handle's float32",
        "a handle of another type than declared is refused");
  CHECK(error_of([&] { extra_field<bool>(extras, "unstable"); }) == "no extra field named 'unstable' is declared",
        "an undeclared name is refused");
  CHECK(!error_of([&] { extra_field<bool>(extras, 3); }).empty(), "an index past the extras is refused");

  // A row: three extras of 4, 24 and 1 bytes.
  int32_t lives = 0;
  double tendon_values[3] = {0, 0, 0};
  bool game_over = false;
  uint8_t* fields[] = {reinterpret_cast<uint8_t*>(&lives), reinterpret_cast<uint8_t*>(tendon_values),
                       reinterpret_cast<uint8_t*>(&game_over)};
  const size_t bytes[] = {4, 24, 1};
  double observation = 0;
  uint8_t* observations[] = {reinterpret_cast<uint8_t*>(&observation)};
  const Dtype observation_dtypes[] = {Dtype::Float64};
  StepOutput out(observations, observation_dtypes, 1, fields, bytes, 3);
  *out.extra(extra_field<int32_t>(extras, "lives")) = 5;
  out.extra(tendons)[2] = 1.5;
  *out.extra(extra_field<bool>(extras, 2)) = true;
  CHECK(lives == 5 && tendon_values[2] == 1.5 && game_over, "the handles write their own fields");
#ifndef NDEBUG
  const ExtraField<double> too_long{1, 4};
  CHECK(!error_of([&] { out.extra(too_long); }).empty(), "a handle longer than its field is refused");
  const ExtraField<bool> past_the_end{3, 1};
  CHECK(!error_of([&] { out.extra(past_the_end); }).empty(), "a handle past the row's extras is refused");
#endif
  return 0;
}
