// einsum: parses the equation into labels per dim, takes diagonals of repeated labels, sums
// labels used nowhere else, and contracts operands left to right, each pair as one bmm over
// permuted and reshaped views (batch labels, then the left's, the contracted and the right's).
#include "ops/samples.h"

#include <kiln/ops/linalg.h>
#include <kiln/ops/reduction.h>
#include <kiln/ops/registry.h>
#include <kiln/ops/view.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <string>

namespace kiln::ops {
namespace {

using Labels = std::vector<int>;
// Ellipsis dims get labels above every letter, numbered from the leftmost broadcast dim.
constexpr int kEllipsisBase = 256;

struct Operand {
  Tensor t;
  Labels labels;  // one per dim
};

bool has(const Labels& l, int x) { return std::find(l.begin(), l.end(), x) != l.end(); }

// The labels of one term ("bij", "...ij"); ellipsis_dims is how many dims "..." stands for.
Labels parse_term(const std::string& term, int64_t ellipsis_dims, int64_t max_ellipsis) {
  Labels out;
  for (size_t i = 0; i < term.size(); ++i) {
    if (term[i] == '.') {
      KILN_CHECK(term.compare(i, 3, "...") == 0,
                 "einsum(): found '.' that is not part of an ellipsis");
      for (int64_t j = 0; j < ellipsis_dims; ++j) {
        out.push_back(kEllipsisBase + static_cast<int>(max_ellipsis - ellipsis_dims + j));
      }
      i += 2;
      continue;
    }
    KILN_CHECK(std::isalpha(static_cast<unsigned char>(term[i])),
               "einsum(): invalid subscript given at index {} in the equation string, subscripts "
               "must be in [a-zA-Z]",
               i);
    out.push_back(static_cast<unsigned char>(term[i]));
  }
  return out;
}

int64_t letter_count(const std::string& term) {
  return static_cast<int64_t>(std::count_if(term.begin(), term.end(), [](char c) {
    return std::isalpha(static_cast<unsigned char>(c));
  }));
}

// Takes the diagonal of every repeated label, then sums labels in neither `keep` nor `others`.
Operand simplify(Operand op, const Labels& keep, const Labels& others) {
  for (bool again = true; again;) {
    again = false;
    for (size_t i = 0; i < op.labels.size() && !again; ++i) {
      for (size_t j = i + 1; j < op.labels.size() && !again; ++j) {
        if (op.labels[i] != op.labels[j]) continue;
        const int label = op.labels[i];
        KILN_CHECK(op.t.size(static_cast<int64_t>(i)) == op.t.size(static_cast<int64_t>(j)),
                   "einsum(): subscript {} is repeated for operand but the sizes don't match, {} "
                   "!= {}",
                   static_cast<char>(label), op.t.size(static_cast<int64_t>(i)),
                   op.t.size(static_cast<int64_t>(j)));
        op.t = diagonal(op.t, 0, static_cast<int64_t>(i), static_cast<int64_t>(j));
        op.labels.erase(op.labels.begin() + static_cast<std::ptrdiff_t>(j));
        op.labels.erase(op.labels.begin() + static_cast<std::ptrdiff_t>(i));
        op.labels.push_back(label);
        again = true;
      }
    }
  }
  std::vector<int64_t> sum_dims;
  Labels kept;
  for (size_t i = 0; i < op.labels.size(); ++i) {
    if (has(keep, op.labels[i]) || has(others, op.labels[i])) {
      kept.push_back(op.labels[i]);
    } else {
      sum_dims.push_back(static_cast<int64_t>(i));
    }
  }
  if (!sum_dims.empty()) op.t = sum(op.t, sum_dims, false, op.t.dtype());
  op.labels = kept;
  return op;
}

int64_t size_of(const Operand& op, int label) {
  const auto it = std::find(op.labels.begin(), op.labels.end(), label);
  return op.t.size(it - op.labels.begin());
}

// a and b (already simplified) to one operand carrying the labels in `needed`.
Operand contract(const Operand& a, const Operand& b, const Labels& needed) {
  Labels batch, left, inner, right;
  for (int l : a.labels) {
    if (has(b.labels, l)) {
      (has(needed, l) ? batch : inner).push_back(l);
    } else {
      left.push_back(l);
    }
  }
  for (int l : b.labels) {
    if (!has(a.labels, l)) right.push_back(l);
  }
  // Shared labels broadcast (size 1 against n).
  std::map<int, int64_t> shared;
  for (const Labels* group : {&batch, &inner}) {
    for (int l : *group) {
      const int64_t x = size_of(a, l), y = size_of(b, l);
      KILN_CHECK(x == y || x == 1 || y == 1,
                 "einsum(): operands do not broadcast with remapped shapes (original->remapped): "
                 "size {} against {} for subscript {}",
                 x, y, l < kEllipsisBase ? std::string(1, static_cast<char>(l)) : "...");
      shared[l] = std::max(x, y);
    }
  }
  auto arrange = [&](const Operand& op, const Labels& first, const Labels& second,
                     const Labels& third, int64_t rows, int64_t cols) {
    std::vector<int64_t> perm, sizes;
    for (const Labels* group : {&first, &second, &third}) {
      for (int l : *group) {
        perm.push_back(std::find(op.labels.begin(), op.labels.end(), l) - op.labels.begin());
        sizes.push_back(shared.count(l) ? shared[l] : size_of(op, l));
      }
    }
    int64_t nbatch = 1;
    for (int l : batch) nbatch *= shared[l];
    return permute(op.t, perm).expand(sizes).reshape({nbatch, rows, cols});
  };
  int64_t nl = 1, nk = 1, nr = 1;
  std::vector<int64_t> out_sizes;
  for (int l : batch) out_sizes.push_back(shared[l]);
  for (int l : left) {
    nl *= size_of(a, l);
    out_sizes.push_back(size_of(a, l));
  }
  for (int l : inner) nk *= shared[l];
  for (int l : right) {
    nr *= size_of(b, l);
    out_sizes.push_back(size_of(b, l));
  }
  const Tensor product =
      bmm(arrange(a, batch, left, inner, nl, nk), arrange(b, batch, inner, right, nk, nr));
  Labels labels = batch;
  labels.insert(labels.end(), left.begin(), left.end());
  labels.insert(labels.end(), right.begin(), right.end());
  return {product.reshape(out_sizes), labels};
}

Tensor einsum_impl(std::string equation, const std::vector<Tensor>& tensors) {
  equation.erase(std::remove(equation.begin(), equation.end(), ' '), equation.end());
  const size_t arrow = equation.find("->");
  const std::string lhs = equation.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  KILN_CHECK(!tensors.empty(), "einsum(): must provide at least one operand");
  KILN_CHECK(terms.size() == tensors.size(),
             "einsum(): {} operands were provided but the equation specifies {}", tensors.size(),
             terms.size());

  // How many dims each "..." covers; all broadcast right-aligned against the widest.
  std::vector<int64_t> ellipsis(terms.size(), 0);
  int64_t max_ellipsis = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    const bool dots = terms[i].find("...") != std::string::npos;
    const int64_t letters = letter_count(terms[i]);
    const int64_t ndim = tensors[i].dim();
    KILN_CHECK(dots ? ndim >= letters : ndim == letters,
               "einsum(): the number of subscripts in the equation ({}) does not match the "
               "number of dimensions ({}) for operand {}{}",
               letters, ndim, i, dots ? "" : " and no ellipsis was given");
    ellipsis[i] = dots ? ndim - letters : 0;
    max_ellipsis = std::max(max_ellipsis, ellipsis[i]);
  }
  std::vector<Operand> ops;
  std::map<int, int> uses;
  for (size_t i = 0; i < terms.size(); ++i) {
    ops.push_back({tensors[i], parse_term(terms[i], ellipsis[i], max_ellipsis)});
    for (int l : ops.back().labels) ++uses[l];
  }
  Labels output;
  if (arrow == std::string::npos) {
    // Implicit output: the broadcast dims, then the letters used once, in order.
    for (const auto& [label, count] : uses) {
      if (label >= kEllipsisBase || count == 1) output.push_back(label);
    }
    std::stable_partition(output.begin(), output.end(), [](int l) { return l >= kEllipsisBase; });
  } else {
    const std::string rhs = equation.substr(arrow + 2);
    output = parse_term(rhs, max_ellipsis, max_ellipsis);
    for (size_t i = 0; i < output.size(); ++i) {
      KILN_CHECK(uses.count(output[i]) > 0,
                 "einsum(): output subscript {} does not appear in the equation for any input "
                 "operand",
                 static_cast<char>(output[i]));
      KILN_CHECK(std::count(output.begin(), output.end(), output[i]) == 1,
                 "einsum(): output subscript {} appears more than once in the output",
                 static_cast<char>(output[i]));
    }
  }

  auto labels_after = [&](size_t i) {
    Labels l;
    for (size_t j = i + 1; j < ops.size(); ++j)
      l.insert(l.end(), ops[j].labels.begin(), ops[j].labels.end());
    return l;
  };
  Operand acc = simplify(ops[0], output, labels_after(0));
  for (size_t i = 1; i < ops.size(); ++i) {
    Labels later = labels_after(i);
    Labels keep_acc = output;
    keep_acc.insert(keep_acc.end(), later.begin(), later.end());
    Labels others = ops[i].labels;
    acc = simplify(acc, keep_acc, others);
    Operand next = simplify(ops[i], keep_acc, acc.labels);
    acc = contract(acc, next, keep_acc);
  }
  // Labels of one operand broadcast against each other's size only when contracted; the
  // output's order is a permutation of what remains.
  std::vector<int64_t> perm;
  for (int l : output) {
    perm.push_back(std::find(acc.labels.begin(), acc.labels.end(), l) - acc.labels.begin());
  }
  return permute(acc.t, perm);
}

using Samples = std::vector<Sample>;
Tensor einsum_sample(IntList sizes, uint64_t seed, DType dt = kFloat32) {
  return make_sample(sizes, dt, -3.0, 3.0, seed);
}
using TV = std::vector<Tensor>;

}  // namespace

KILN_OP("einsum(str equation, Tensor[] tensors, *, int[]? path=None) -> Tensor")
    .composite([](const Stack& args) {
      return std::vector<Tensor>{einsum_impl(args[0].to_string(), args[1].to_tensor_list())};
    })
    .tolerance(1e-4, 1e-4)
    .samples([] {
      return Samples{
          {{"bij,bjk->bik", TV{einsum_sample({2, 3, 4}, 1), einsum_sample({2, 4, 5}, 2)}},
           "batched matmul"},
          {{"bhqd,bhkd->bhqk", TV{einsum_sample({2, 2, 3, 4}, 3), einsum_sample({2, 2, 5, 4}, 4)}},
           "attention scores"},
          {{"ij,j->i", TV{einsum_sample({3, 4}, 5, kFloat64), einsum_sample({4}, 6, kFloat64)}},
           "matrix-vector"},
          {{"i,j->ij", TV{einsum_sample({3}, 7), einsum_sample({4}, 8)}}, "outer"},
          {{"bii->bi", TV{einsum_sample({2, 3, 3}, 9)}}, "diagonal"},
          {{"ij->ji", TV{einsum_sample({3, 4}, 10)}}, "transpose"},
          {{"ij->", TV{einsum_sample({3, 4}, 11)}}, "sum"},
          {{"ij,jk", TV{einsum_sample({3, 4}, 12), einsum_sample({4, 2}, 13)}}, "implicit output"},
          {{"...ij,...jk->...ik", TV{einsum_sample({2, 3, 4}, 14), einsum_sample({4, 5}, 15)}},
           "ellipsis broadcast"},
          {{"ij,jk,kl->il",
            TV{einsum_sample({2, 3}, 16), einsum_sample({3, 4}, 17), einsum_sample({4, 2}, 18)}},
           "three operands"},
          {{"bi,bi->b",
            TV{make_noncontiguous_sample({3, 4}, kFloat32, -3, 3, 19), einsum_sample({3, 4}, 20)}},
           "row-wise dot"},
          {{"ij,jk->ik", TV{einsum_sample({3, 0}, 21), einsum_sample({0, 2}, 22)}},
           "empty contraction"},
          {{"ij,jk->ik", TV{einsum_sample({3, 4}, 23), einsum_sample({5, 2}, 24)}},
           "size mismatch"},
      };
    });

}  // namespace kiln::ops
