#pragma once
// Views (share storage with their input) and copying ops, as free functions.
#include <kiln/core/tensor.h>

#include <kiln/core/source_location.h>
#include <optional>
#include <vector>

namespace kiln {

Tensor view(const Tensor& self, IntList size,
            const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor reshape(const Tensor& self, IntList size,
               const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor flatten(const Tensor& self, int64_t start_dim = 0, int64_t end_dim = -1,
               const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor unflatten(const Tensor& self, int64_t dim, IntList sizes,
                 const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor permute(const Tensor& self, IntList dims,
               const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor transpose(const Tensor& self, int64_t dim0, int64_t dim1,
                 const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor t(const Tensor& self, const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor squeeze(const Tensor& self,
               const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor squeeze(const Tensor& self, int64_t dim,
               const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor squeeze(const Tensor& self, IntList dims,
               const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor unsqueeze(const Tensor& self, int64_t dim,
                 const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor expand(const Tensor& self, IntList size,
              const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor expand_as(const Tensor& self, const Tensor& other,
                 const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor broadcast_to(const Tensor& self, IntList size,
                    const kiln::SourceLocation& loc = kiln::SourceLocation::current());
std::vector<Tensor> broadcast_tensors(
    TensorList tensors, const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor narrow(const Tensor& self, int64_t dim, int64_t start, int64_t length,
              const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor slice(const Tensor& self, int64_t dim = 0, std::optional<int64_t> start = std::nullopt,
             std::optional<int64_t> end = std::nullopt, int64_t step = 1,
             const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor select(const Tensor& self, int64_t dim, int64_t index,
              const kiln::SourceLocation& loc = kiln::SourceLocation::current());
std::vector<Tensor> unbind(const Tensor& self, int64_t dim = 0,
                           const kiln::SourceLocation& loc = kiln::SourceLocation::current());
std::vector<Tensor> split(const Tensor& self, int64_t split_size, int64_t dim = 0,
                          const kiln::SourceLocation& loc = kiln::SourceLocation::current());
std::vector<Tensor> split_with_sizes(
    const Tensor& self, IntList split_sizes, int64_t dim = 0,
    const kiln::SourceLocation& loc = kiln::SourceLocation::current());
std::vector<Tensor> chunk(const Tensor& self, int64_t chunks, int64_t dim = 0,
                          const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor as_strided(const Tensor& self, IntList size, IntList stride,
                  std::optional<int64_t> storage_offset = std::nullopt,
                  const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor movedim(const Tensor& self, IntList source, IntList destination,
               const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor movedim(const Tensor& self, int64_t source, int64_t destination,
               const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor diagonal(const Tensor& self, int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1,
                const kiln::SourceLocation& loc = kiln::SourceLocation::current());

Tensor contiguous(const Tensor& self,
                  const kiln::SourceLocation& loc = kiln::SourceLocation::current());
// A copy laid out in fmt (ChannelsLast for 4-d, ChannelsLast3d for 5-d) unless already so.
Tensor contiguous(const Tensor& self, MemoryFormat fmt,
                  const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor clone(const Tensor& self, const kiln::SourceLocation& loc = kiln::SourceLocation::current());
// Converts dtype (returns self when nothing changes and copy is false).
Tensor to(const Tensor& self, DType dtype, bool copy = false,
          const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor& copy_(Tensor& self, const Tensor& src,
              const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor& fill_(Tensor& self, const Scalar& value,
              const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor& zero_(Tensor& self, const kiln::SourceLocation& loc = kiln::SourceLocation::current());

}  // namespace kiln
