#pragma once
// Views (share storage with their input) and copying ops, as free functions.
#include <kiln/core/tensor.h>

#include <optional>
#include <vector>

namespace kiln {

Tensor view(const Tensor& self, IntList size);
Tensor reshape(const Tensor& self, IntList size);
Tensor flatten(const Tensor& self, int64_t start_dim = 0, int64_t end_dim = -1);
Tensor unflatten(const Tensor& self, int64_t dim, IntList sizes);
Tensor permute(const Tensor& self, IntList dims);
Tensor transpose(const Tensor& self, int64_t dim0, int64_t dim1);
Tensor t(const Tensor& self);
Tensor squeeze(const Tensor& self);
Tensor squeeze(const Tensor& self, int64_t dim);
Tensor squeeze(const Tensor& self, IntList dims);
Tensor unsqueeze(const Tensor& self, int64_t dim);
Tensor expand(const Tensor& self, IntList size);
Tensor expand_as(const Tensor& self, const Tensor& other);
Tensor broadcast_to(const Tensor& self, IntList size);
std::vector<Tensor> broadcast_tensors(TensorList tensors);
Tensor narrow(const Tensor& self, int64_t dim, int64_t start, int64_t length);
Tensor slice(const Tensor& self, int64_t dim = 0, std::optional<int64_t> start = std::nullopt,
             std::optional<int64_t> end = std::nullopt, int64_t step = 1);
Tensor select(const Tensor& self, int64_t dim, int64_t index);
std::vector<Tensor> unbind(const Tensor& self, int64_t dim = 0);
std::vector<Tensor> split(const Tensor& self, int64_t split_size, int64_t dim = 0);
std::vector<Tensor> split_with_sizes(const Tensor& self, IntList split_sizes, int64_t dim = 0);
std::vector<Tensor> chunk(const Tensor& self, int64_t chunks, int64_t dim = 0);
Tensor as_strided(const Tensor& self, IntList size, IntList stride,
                  std::optional<int64_t> storage_offset = std::nullopt);
Tensor movedim(const Tensor& self, IntList source, IntList destination);
Tensor movedim(const Tensor& self, int64_t source, int64_t destination);
Tensor diagonal(const Tensor& self, int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1);

Tensor contiguous(const Tensor& self);
// A copy laid out in fmt (ChannelsLast for 4-d, ChannelsLast3d for 5-d) unless already so.
Tensor contiguous(const Tensor& self, MemoryFormat fmt);
Tensor clone(const Tensor& self);
// Converts dtype (returns self when nothing changes and copy is false).
Tensor to(const Tensor& self, DType dtype, bool copy = false);
Tensor& copy_(Tensor& self, const Tensor& src);
Tensor& fill_(Tensor& self, const Scalar& value);
Tensor& zero_(Tensor& self);

}  // namespace kiln
