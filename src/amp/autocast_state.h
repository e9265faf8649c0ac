#pragma once
// Autocast's thread state as the rest of kiln reads it: a key that capture guards on (a compiled
// function traced under one autocast state is not reused under another), and a pause that
// compiled graphs run under (their casts were recorded when they were traced).
#include <kiln/core/dtype.h>

#include <cstdint>
#include <string>

namespace kiln::amp {

// 0 when autocast is off on this thread; else encodes each device type's enabled flag and dtype.
uint32_t autocast_state_key();
// The key in words, for guard failures ("autocast off", "autocast cuda bfloat16").
std::string describe_autocast_state(uint32_t key);

class AutocastPause {
 public:
  AutocastPause();
  ~AutocastPause();
  AutocastPause(const AutocastPause&) = delete;
  AutocastPause& operator=(const AutocastPause&) = delete;

 private:
  bool was_active_;
};

}  // namespace kiln::amp
