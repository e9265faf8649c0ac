#pragma once
// Layout optimization: oneDNN's convolutions read and write row-major (NCHW) activations through
// reorders into its blocked layout, two extra passes over every activation per convolution;
// channels-last (NHWC) activations it reads and writes as they are. cuDNN's tensor-core kernels
// for 16-bit convolutions read NHWC too. Converting a convolution net's input to channels-last
// once lets that layout flow through every convolution, pointwise op and pool (their meta
// functions keep it), and the graph's outputs are converted back to the layouts eager code
// returns.
#include <kiln/backends/backend.h>
#include <kiln/graph/graph.h>

#include <string>

namespace kiln::inductor {

// Rewrites a graph whose 2-d convolutions (float32 on the CPU, 16-bit on a GPU) have constant
// weights (or any weights, with `constant_weights_only` false: a training joint graph, whose
// backward convolutions then follow too) so that they read channels-last activations; every
// other node's layout is derived again from its inputs'. Leaves the graph as it is (returning 0)
// where a layout could change a value or not be derived: a node that mutates or reads storage
// directly (as_strided), or a view a new layout does not allow. Returns the number of convolutions
// that now read channels-last inputs; where that is 0 for a graph with convolutions, `why_not` (if
// given) says why.
size_t convolutions_to_channels_last(graph::Graph& graph, bool constant_weights_only = true,
                                     std::string* why_not = nullptr);

// Whether CPU convolution nets go channels-last: as options{"layout_optimization": "true" or
// "false"} says; unset, on CPUs with AVX-512 only. There oneDNN's NHWC kernels won (resnet18
// training 1.10x kiln eager's speed, PERF.md "fifth run"); on an AVX2 EPYC they lost to the
// row-major layout with reorders (resnet18 inference 194-211 against 178-186 ms, training
// 720-798 against 649-652; PERF.md "CPU autocast").
bool cpu_channels_last(const BackendContext& context);

// convolutions_to_channels_last on every convolution of `graph` (weights constant or not), unless
// options{"layout_optimization": "false"}; says what it did on `fusion` (convolutions "and their
// backward" for a `training` joint graph) or why not on `perf_hints`. GPU inference graphs take
// it before compilation (they are not frozen); training joint graphs through optimize_joint_graph.
// On GPUs it converts 16-bit convolutions only (cuDNN's tensor-core kernels read NHWC; float32
// ones stay row-major, where cuDNN's NCHW kernels are as fast).
void optimize_layout(graph::Graph& graph, const BackendContext& context, bool training);

}  // namespace kiln::inductor
