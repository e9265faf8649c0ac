#include <kiln/nn/container.h>

#include <string>

namespace kiln::nn {

namespace {

ModulePtr module_at(const Module& owner, const OrderedDict<ModulePtr>& children, int64_t index) {
  const int64_t n = static_cast<int64_t>(children.size());
  KILN_CHECK_T(IndexError, index >= -n && index < n, "{}: index {} is out of range (size {})",
               owner.name(), index, n);
  if (index < 0) index += n;
  return children.items()[static_cast<size_t>(index)].second;
}

}  // namespace

Sequential::Sequential(const std::vector<ModulePtr>& modules) : Module("Sequential") {
  extend(modules);
}

Sequential::Sequential(const OrderedDict<ModulePtr>& named_modules) : Module("Sequential") {
  for (const auto& [key, m] : named_modules) register_module(key, m);
}

void Sequential::push_back(ModulePtr module) {
  register_module(std::to_string(size()), std::move(module));
}

void Sequential::extend(const std::vector<ModulePtr>& modules) {
  for (const ModulePtr& m : modules) push_back(m);
}

ModulePtr Sequential::operator[](int64_t index) const {
  return module_at(*this, own_children(), index);
}

Tensor Sequential::forward(const Tensor& input) {
  Tensor x = input;
  for (const auto& [key, m] : own_children()) x = m->forward(x);
  return x;
}

ModuleList::ModuleList(const std::vector<ModulePtr>& modules) : Module("ModuleList") {
  extend(modules);
}

void ModuleList::push_back(ModulePtr module) {
  register_module(std::to_string(size()), std::move(module));
}

void ModuleList::extend(const std::vector<ModulePtr>& modules) {
  for (const ModulePtr& m : modules) push_back(m);
}

ModulePtr ModuleList::operator[](int64_t index) const {
  return module_at(*this, own_children(), index);
}

std::string ModuleList::repr() const {
  const auto& items = own_children().items();
  if (items.empty()) return name() + "()";
  std::vector<std::string> reprs;
  for (const auto& [key, m] : items) reprs.push_back(m->repr());
  std::string out = name() + "(";
  size_t start = 0;
  while (start < reprs.size()) {
    size_t end = start;
    while (end + 1 < reprs.size() && reprs[end + 1] == reprs[start]) ++end;
    std::string local =
        start == end ? fmt::format("({}): {}", start, reprs[start])
                     : fmt::format("({}-{}): {} x {}", start, end, end - start + 1, reprs[start]);
    // Indent continuation lines by two spaces (Python's _addindent).
    std::string indented;
    for (char c : local) {
      indented += c;
      if (c == '\n') indented += "  ";
    }
    out += "\n  " + indented;
    start = end + 1;
  }
  return out + "\n)";
}

ModuleDict::ModuleDict(const OrderedDict<ModulePtr>& modules) : Module("ModuleDict") {
  update(modules);
}

void ModuleDict::insert(const std::string& key, ModulePtr module) {
  if (contains(key)) {
    replace_module(key, std::move(module));
  } else {
    register_module(key, std::move(module));
  }
}

void ModuleDict::update(const OrderedDict<ModulePtr>& modules) {
  for (const auto& [key, m] : modules) insert(key, m);
}

ModulePtr ModuleDict::operator[](const std::string& key) const {
  const ModulePtr* m = own_children().find(key);
  KILN_CHECK(m != nullptr, "{}: no module under key \"{}\"", name(), key);
  return *m;
}

}  // namespace kiln::nn
