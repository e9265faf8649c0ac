// AdamW: Adam's update with decoupled weight decay (adam_update.h).
#include <kiln/optim/adamw.h>

#include "optim/adam_update.h"

namespace kiln::optim {

OptionMap AdamWOptions::to_map() const { return detail::adam_options_to_map(*this); }
void AdamWOptions::update_from(const OptionMap& map, const char* who) {
  detail::adam_options_update_from(*this, map, who);
}
void AdamWOptions::validate(const char* who) const { detail::adam_options_validate(*this, who); }

void AdamW::step() {
  detail::adam_step(params_, options_, state_, /*decoupled_weight_decay=*/true);
}

}  // namespace kiln::optim
