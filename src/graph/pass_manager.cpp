// PassManager: runs graph passes in order, LLVM-style.
#include <kiln/graph/graph.h>

namespace kiln::graph {

PassManager& PassManager::add(std::unique_ptr<Pass> pass) {
  KILN_CHECK(pass != nullptr, "PassManager::add: the pass is null");
  passes_.push_back(std::move(pass));
  return *this;
}

bool PassManager::run(Graph& graph) const {
  bool changed = false;
  for (const auto& pass : passes_) changed = pass->run(graph) || changed;
  return changed;
}

std::vector<std::string_view> PassManager::names() const {
  std::vector<std::string_view> result;
  result.reserve(passes_.size());
  for (const auto& pass : passes_) result.push_back(pass->name());
  return result;
}

}  // namespace kiln::graph
