// The backend registry: name -> Backend, filled by static initializers (the built-in `eager`) and
// by users at run time, so every access holds the registry's mutex.
#include <kiln/backends/backend.h>
#include <kiln/core/error.h>

#include <exception>
#include <mutex>
#include <utility>

namespace kiln {
namespace {

struct BackendRegistry {
  std::mutex mutex;
  // std::map: sorted names for list_backends, and stable addresses for lookup_backend's reference
  // (entries are never erased).
  struct Entry {
    Backend backend;
    BackendTraits traits;
  };
  std::map<std::string, Entry> backends;
};

BackendRegistry& registry() {
  static BackendRegistry r;
  return r;
}

std::string joined_names(const std::map<std::string, BackendRegistry::Entry>& backends) {
  std::string out;
  for (const auto& entry : backends) {
    if (!out.empty()) out += ", ";
    out += entry.first;
  }
  return out.empty() ? "(none)" : out;
}

}  // namespace

void register_backend(const std::string& name, Backend backend, BackendTraits traits) {
  KILN_CHECK(!name.empty(), "register_backend: the backend name is empty");
  KILN_CHECK(static_cast<bool>(backend), "register_backend: backend \"{}\" is an empty function",
             name);
  BackendRegistry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  KILN_CHECK(r.backends.find(name) == r.backends.end(),
             "register_backend: a backend named \"{}\" is already registered", name);
  r.backends.emplace(name, BackendRegistry::Entry{std::move(backend), traits});
}

std::vector<std::string> list_backends() {
  BackendRegistry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<std::string> names;
  names.reserve(r.backends.size());
  for (const auto& entry : r.backends) names.push_back(entry.first);
  return names;
}

namespace {

const BackendRegistry::Entry& entry_named(const std::string& name) {
  BackendRegistry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.backends.find(name);
  KILN_CHECK(it != r.backends.end(),
             "compile: backend \"{}\" is not registered; registered backends: {}", name,
             joined_names(r.backends));
  return it->second;
}

}  // namespace

const Backend& lookup_backend(const std::string& name) { return entry_named(name).backend; }

BackendTraits backend_traits(const std::string& name) { return entry_named(name).traits; }

CompiledGraph run_backend(const std::string& backend_name, const Backend& backend,
                          const graph::Graph& graph, std::span<const Tensor> example_inputs,
                          const BackendContext& context) {
  const std::string& graph_name =
      context.graph_name.empty() ? "<unnamed graph>" : context.graph_name;
  KILN_CHECK(static_cast<bool>(backend), "compile: backend \"{}\" is an empty function",
             backend_name);
  CompiledGraph compiled;
  try {
    compiled = backend(graph, example_inputs, context);
  } catch (const std::exception& e) {
    // kiln::Error derives from std::exception: both keep their message, now with the backend and
    // graph named.
    KILN_FAIL("compile: backend \"{}\" failed on {}: {}", backend_name, graph_name, e.what());
  } catch (...) {
    KILN_FAIL(
        "compile: backend \"{}\" failed on {}: it threw an exception that is not a "
        "std::exception",
        backend_name, graph_name);
  }
  KILN_CHECK(static_cast<bool>(compiled),
             "compile: backend \"{}\" returned an empty callable for {}; a backend must return a "
             "function that runs the graph",
             backend_name, graph_name);
  return compiled;
}

}  // namespace kiln
