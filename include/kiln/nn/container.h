#pragma once
// Containers: Sequential, ModuleList, ModuleDict (torch.nn.modules.container). Children are named
// "0", "1", ... (or by key), so parameter names read "layers.0.weight" as in PyTorch.
#include <kiln/nn/module.h>

#include <memory>
#include <vector>

namespace kiln::nn {

// Runs its modules in order, each one's output feeding the next:
//   auto net = std::make_shared<Sequential>(std::make_shared<Linear>(3, 4),
//                                           std::make_shared<ReLU>());
class Sequential : public Module {
 public:
  Sequential() : Module("Sequential") {}
  template <typename... Ms>
  explicit Sequential(std::shared_ptr<Ms>... modules) : Module("Sequential") {
    (push_back(std::move(modules)), ...);
  }
  explicit Sequential(const std::vector<ModulePtr>& modules);
  // Children under the given names (PyTorch's Sequential(OrderedDict(...))).
  explicit Sequential(const OrderedDict<ModulePtr>& named_modules);

  void push_back(ModulePtr module);
  void append(ModulePtr module) { push_back(std::move(module)); }
  void extend(const std::vector<ModulePtr>& modules);

  size_t size() const { return own_children().size(); }
  bool empty() const { return size() == 0; }
  // A negative index counts from the end; raises kiln::IndexError out of range.
  ModulePtr operator[](int64_t index) const;
  template <typename M>
  std::shared_ptr<M> at(int64_t index) const {
    auto typed = std::dynamic_pointer_cast<M>((*this)[index]);
    KILN_CHECK(typed != nullptr, "{}: module {} is a {}, not the type asked for", name(), index,
               (*this)[index]->name());
    return typed;
  }
  std::vector<ModulePtr> modules_in_order() const { return own_children().values(); }

  Tensor forward(const Tensor& input) override;
};

// Holds submodules in a list; it has no forward of its own.
class ModuleList : public Module {
 public:
  ModuleList() : Module("ModuleList") {}
  explicit ModuleList(const std::vector<ModulePtr>& modules);
  template <typename... Ms>
  explicit ModuleList(std::shared_ptr<Ms>... modules) : Module("ModuleList") {
    (push_back(std::move(modules)), ...);
  }

  void push_back(ModulePtr module);
  void append(ModulePtr module) { push_back(std::move(module)); }
  void extend(const std::vector<ModulePtr>& modules);
  size_t size() const { return own_children().size(); }
  bool empty() const { return size() == 0; }
  ModulePtr operator[](int64_t index) const;
  template <typename M>
  std::shared_ptr<M> at(int64_t index) const {
    auto typed = std::dynamic_pointer_cast<M>((*this)[index]);
    KILN_CHECK(typed != nullptr, "{}: module {} is a {}, not the type asked for", name(), index,
               (*this)[index]->name());
    return typed;
  }
  // The modules in order, for range-for loops.
  std::vector<ModulePtr> items() const { return own_children().values(); }
  auto begin() const { return ListIterator{own_children().begin()}; }
  auto end() const { return ListIterator{own_children().end()}; }

  // PyTorch's ModuleList repr: runs of identical modules print once, "(0-2): 3 x Linear(...)".
  std::string repr() const override;

 private:
  struct ListIterator {
    std::vector<std::pair<std::string, ModulePtr>>::const_iterator it;
    const ModulePtr& operator*() const { return it->second; }
    ListIterator& operator++() {
      ++it;
      return *this;
    }
    bool operator!=(const ListIterator& o) const { return it != o.it; }
    bool operator==(const ListIterator& o) const { return it == o.it; }
  };
};

// Holds submodules by key, in insertion order; no forward of its own.
class ModuleDict : public Module {
 public:
  ModuleDict() : Module("ModuleDict") {}
  explicit ModuleDict(const OrderedDict<ModulePtr>& modules);

  // Adds or replaces the module under key.
  void insert(const std::string& key, ModulePtr module);
  void update(const OrderedDict<ModulePtr>& modules);
  bool contains(const std::string& key) const { return own_children().contains(key); }
  size_t size() const { return own_children().size(); }
  bool empty() const { return size() == 0; }
  // Raises kiln::Error naming the key when absent.
  ModulePtr operator[](const std::string& key) const;
  template <typename M>
  std::shared_ptr<M> at(const std::string& key) const {
    auto typed = std::dynamic_pointer_cast<M>((*this)[key]);
    KILN_CHECK(typed != nullptr, "{}: module \"{}\" is a {}, not the type asked for", name(), key,
               (*this)[key]->name());
    return typed;
  }
  std::vector<std::string> keys() const { return own_children().keys(); }
  std::vector<ModulePtr> values() const { return own_children().values(); }
  const std::vector<std::pair<std::string, ModulePtr>>& items() const {
    return own_children().items();
  }
};

}  // namespace kiln::nn
