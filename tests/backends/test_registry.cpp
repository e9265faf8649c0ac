// The backend registry: registration, listing, lookup and how a backend's failures are reported.
// The backends here are user backends that never run the graph (the eager backend's execution is
// tested with the interpreter).
#include <gtest/gtest.h>
#include <kiln/backends/backend.h>
#include <kiln/capture/compile.h>

#include <algorithm>
#include <stdexcept>

#include "test_util.h"

namespace kiln {
namespace {

using testing::throws_error;

// Returns its inputs unchanged: a backend that needs no graph execution.
Backend identity_backend() {
  return [](const graph::Graph&, std::span<const Tensor>, const BackendContext&) -> CompiledGraph {
    return [](std::span<const Tensor> inputs) {
      return std::vector<Tensor>(inputs.begin(), inputs.end());
    };
  };
}

BackendContext context_named(std::string graph_name) {
  BackendContext context;
  context.graph_name = std::move(graph_name);
  return context;
}

bool listed(const std::string& name) {
  auto names = list_backends();
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Registrations last for the process: registering only when absent keeps the tests repeatable
// (--gtest_repeat).
void register_once(const std::string& name, Backend backend) {
  if (!listed(name)) register_backend(name, std::move(backend));
}

TEST(BackendRegistry, EagerIsAlwaysRegistered) {
  EXPECT_TRUE(listed("eager"));
  EXPECT_NO_THROW(lookup_backend("eager"));
}

TEST(BackendRegistry, ListIsSorted) {
  register_once("test_registry_zz", identity_backend());
  register_once("test_registry_aa", identity_backend());
  auto names = list_backends();
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_TRUE(listed("test_registry_aa"));
  EXPECT_TRUE(listed("test_registry_zz"));
  EXPECT_TRUE(listed("eager"));
}

TEST(BackendRegistry, LookupFindsTheRegisteredBackend) {
  // Each backend returns a different callable, so the lookup must return the one registered
  // under the name asked for.
  register_once("test_registry_returns_first",
                [](const graph::Graph&, std::span<const Tensor>,
                   const BackendContext& context) -> CompiledGraph {
                  std::string mode = context.mode;
                  return [mode](std::span<const Tensor> inputs) {
                    EXPECT_EQ(mode, "max-autotune");
                    return std::vector<Tensor>{inputs[0]};
                  };
                });
  register_once(
      "test_registry_returns_second",
      [](const graph::Graph&, std::span<const Tensor>, const BackendContext&) -> CompiledGraph {
        return [](std::span<const Tensor> inputs) { return std::vector<Tensor>{inputs[1]}; };
      });
  graph::Graph g;
  Tensor a = full({2}, 1.0), b = full({3}, 2.0);
  std::vector<Tensor> inputs = {a, b};
  BackendContext context = context_named("graph 0 of f");
  context.mode = "max-autotune";

  const Backend& first = lookup_backend("test_registry_returns_first");
  CompiledGraph run_first = run_backend("test_registry_returns_first", first, g, inputs, context);
  std::vector<Tensor> out = run_first(inputs);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].numel(), 2);
  EXPECT_EQ(out[0].tolist<double>(), (std::vector<double>{1.0, 1.0}));

  const Backend& second = lookup_backend("test_registry_returns_second");
  out = run_backend("test_registry_returns_second", second, g, inputs, context)(inputs);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].tolist<double>(), (std::vector<double>{2.0, 2.0, 2.0}));
}

TEST(BackendRegistry, IdentityBackendReturnsItsInputs) {
  register_once("test_registry_identity", identity_backend());
  graph::Graph g;
  Tensor x = full({2, 2}, 3.0);
  std::vector<Tensor> inputs = {x};
  CompiledGraph compiled =
      run_backend("test_registry_identity", lookup_backend("test_registry_identity"), g, inputs,
                  context_named("graph 0 of f"));
  std::vector<Tensor> out = compiled(inputs);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].is_same(x));
}

TEST(BackendRegistry, DuplicateNameRejected) {
  register_once("test_registry_dup", identity_backend());
  EXPECT_TRUE(throws_error([] { register_backend("test_registry_dup", identity_backend()); },
                           {"register_backend", "\"test_registry_dup\"", "already registered"}));
  EXPECT_TRUE(throws_error([] { register_backend("eager", identity_backend()); },
                           {"\"eager\"", "already registered"}));
}

TEST(BackendRegistry, EmptyNameAndEmptyFunctionRejected) {
  EXPECT_TRUE(throws_error([] { register_backend("", identity_backend()); },
                           {"register_backend", "name is empty"}));
  EXPECT_TRUE(throws_error([] { register_backend("test_registry_null", Backend()); },
                           {"\"test_registry_null\"", "empty function"}));
  EXPECT_FALSE(listed("test_registry_null"));
}

TEST(BackendRegistry, UnknownNameListsTheRegisteredOnes) {
  register_once("test_registry_listed", identity_backend());
  auto names = list_backends();
  std::string expected_list = names[0];
  for (size_t i = 1; i < names.size(); ++i) expected_list += ", " + names[i];
  EXPECT_TRUE(throws_error([] { lookup_backend("foo"); },
                           {"compile: backend \"foo\" is not registered; registered backends: ",
                            expected_list, "eager", "test_registry_listed"}));
}

TEST(BackendRegistry, ThrowingBackendIsWrappedWithItsNameAndGraph) {
  Backend throws_kiln = [](const graph::Graph&, std::span<const Tensor>,
                           const BackendContext&) -> CompiledGraph {
    KILN_FAIL("mine: unsupported op {}", "aten::foo");
  };
  Backend throws_std = [](const graph::Graph&, std::span<const Tensor>,
                          const BackendContext&) -> CompiledGraph {
    throw std::out_of_range("vector index 7 out of range");
  };
  Backend throws_int = [](const graph::Graph&, std::span<const Tensor>,
                          const BackendContext&) -> CompiledGraph { throw 42; };
  graph::Graph g;
  EXPECT_TRUE(throws_error(
      [&] { run_backend("odd", throws_int, g, {}, context_named("graph 0 of f")); },
      {"compile: backend \"odd\" failed on graph 0 of f: it threw an exception that is not a "
       "std::exception"}));
  EXPECT_TRUE(throws_error(
      [&] { run_backend("mine", throws_kiln, g, {}, context_named("graph 0 of f")); },
      {"compile: backend \"mine\" failed on graph 0 of f: mine: unsupported op aten::foo"}));
  EXPECT_TRUE(throws_error(
      [&] { run_backend("mine", throws_std, g, {}, context_named("graph 2 of forward")); },
      {"compile: backend \"mine\" failed on graph 2 of forward: vector index 7 out of range"}));
}

// A named backend (a function with a name and traits, as compiled DDP's wrapper passes it)
// is compiled with as a registered one would be: symbolic graphs when its traits take them, its
// name in errors.
TEST(BackendRegistry, ANamedBackendGoesByItsNameAndTraits) {
  bool symbolic = false;
  NamedBackend recording{"recording",
                         [&symbolic](const graph::Graph& g, std::span<const Tensor> ex,
                                     const BackendContext& context) {
                           symbolic = graph::has_symbolic_sizes(g);
                           return lookup_backend("eager")(g, ex, context);
                         },
                         BackendTraits{.symbolic_graphs = true}};
  auto f =
      compile([](const Tensor& x) { return x * 2.0; }, {.dynamic = true, .backend = recording});
  EXPECT_TRUE(testing::all_close(f(tensor({1.0, 2.0})), tensor({2.0, 4.0})));
  EXPECT_TRUE(symbolic);
  NamedBackend throwing{"named_one",
                        [](const graph::Graph&, std::span<const Tensor>,
                           const BackendContext&) -> CompiledGraph { KILN_FAIL("not today"); },
                        {}};
  auto g = compile([](const Tensor& x) { return x * 2.0; }, {.backend = throwing});
  EXPECT_TRUE(throws_error([&] { g(tensor({1.0})); },
                           {"compile: backend \"named_one\" failed on graph 0 of", "not today"}));
  EXPECT_TRUE(throws_error(
      [] {
        compile([](const Tensor& x) { return x; }, {.backend = NamedBackend{"empty", {}, {}}});
      },
      {"compile: the backend function of \"empty\" is empty"}));
}

TEST(BackendRegistry, EmptyCallableRejected) {
  Backend returns_nothing = [](const graph::Graph&, std::span<const Tensor>,
                               const BackendContext&) -> CompiledGraph { return {}; };
  graph::Graph g;
  EXPECT_TRUE(throws_error(
      [&] { run_backend("lazy", returns_nothing, g, {}, context_named("graph 1 of g")); },
      {"compile: backend \"lazy\" returned an empty callable for graph 1 of g"}));
}

TEST(BackendRegistry, BackendSeesContextAndExampleInputs) {
  std::string seen_option;
  size_t seen_inputs = 0;
  Backend inspects = [&](const graph::Graph&, std::span<const Tensor> examples,
                         const BackendContext& context) -> CompiledGraph {
    seen_option = context.options.at("tile");
    seen_inputs = examples.size();
    return [](std::span<const Tensor>) { return std::vector<Tensor>{}; };
  };
  graph::Graph g;
  std::vector<Tensor> examples = {full({1}, 0.0), full({1}, 0.0), full({1}, 0.0)};
  BackendContext context = context_named("graph 0 of f");
  context.options["tile"] = "32";
  run_backend("inspects", inspects, g, examples, context);
  EXPECT_EQ(seen_option, "32");
  EXPECT_EQ(seen_inputs, 3u);
}

}  // namespace
}  // namespace kiln
