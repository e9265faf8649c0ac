// Printing tensors: every expected string below is what PyTorch 2.15 prints for the same values
// (repr of the torch tensor, with "torch." spelled "kiln.").
#include <kiln/kiln.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "test_util.h"

namespace kiln {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Writes row-major values into a fresh tensor through its raw memory (no other op family).
template <typename T>
void write_values(const Tensor& t, const std::vector<double>& values) {
  T* p = static_cast<T*>(t.data_ptr());
  for (size_t i = 0; i < values.size(); ++i) p[i] = static_cast<T>(values[i]);
}

Tensor make(const std::vector<double>& values, std::vector<int64_t> shape, DType dtype = kFloat32) {
  Tensor t = empty(shape, TensorOptions(dtype));
  EXPECT_EQ(static_cast<size_t>(t.numel()), values.size());
  switch (dtype) {
    case DType::Float32:
      write_values<float>(t, values);
      break;
    case DType::Float64:
      write_values<double>(t, values);
      break;
    case DType::Float16: {
      Half* p = static_cast<Half*>(t.data_ptr());
      for (size_t i = 0; i < values.size(); ++i) p[i] = Half(static_cast<float>(values[i]));
    } break;
    case DType::BFloat16: {
      BFloat16* p = static_cast<BFloat16*>(t.data_ptr());
      for (size_t i = 0; i < values.size(); ++i) p[i] = BFloat16(static_cast<float>(values[i]));
      break;
    }
    case DType::Int64:
      write_values<int64_t>(t, values);
      break;
    case DType::Int32:
      write_values<int32_t>(t, values);
      break;
    case DType::UInt8:
      write_values<uint8_t>(t, values);
      break;
    case DType::Bool: {
      bool* p = static_cast<bool*>(t.data_ptr());
      for (size_t i = 0; i < values.size(); ++i) p[i] = values[i] != 0.0;
      break;
    }
    default:
      ADD_FAILURE() << "make: unsupported dtype";
  }
  return t;
}

Tensor make1d(const std::vector<double>& values, DType dtype = kFloat32) {
  return make(values, {static_cast<int64_t>(values.size())}, dtype);
}

// 0, step, 2*step, ... with the given shape.
Tensor ramp(std::vector<int64_t> shape, double step = 1.0, DType dtype = kFloat32) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<double>(i) * step;
  return make(v, shape, dtype);
}

// Restores the default print options when a test that changes them ends.
class PrintOptionsGuard {
 public:
  explicit PrintOptionsGuard(const PrintOptions& o) { set_printoptions(o); }
  ~PrintOptionsGuard() { set_printoptions(PrintOptions{}); }
};

TEST(PrintFloat, FixedMode) {
  EXPECT_EQ(make1d({1.5, -2.25, 3.0}).str(), "tensor([ 1.5000, -2.2500,  3.0000])");
  EXPECT_EQ(make({1.25, -10.5, 100.125, 0.0}, {2, 2}).str(),
            "tensor([[  1.2500, -10.5000],\n"
            "        [100.1250,   0.0000]])");
  EXPECT_EQ(make1d({-0.0, 1.5}).str(), "tensor([-0.0000, 1.5000])");
}

TEST(PrintFloat, IntegerMode) {
  EXPECT_EQ(make1d({1., 2., -3.}).str(), "tensor([ 1.,  2., -3.])");
  EXPECT_EQ(make({0, 0, 0, 0}, {2, 2}).str(),
            "tensor([[0., 0.],\n"
            "        [0., 0.]])");
}

TEST(PrintFloat, ScientificMode) {
  EXPECT_EQ(make1d({1e-5, 1.0}).str(), "tensor([1.0000e-05, 1.0000e+00])");
  EXPECT_EQ(make1d({1e9, 1.0}).str(), "tensor([1.0000e+09, 1.0000e+00])");
  EXPECT_EQ(make1d({1.0, 2000.0}).str(), "tensor([1.0000e+00, 2.0000e+03])");
  EXPECT_EQ(make1d({1.0, 2000.0, -5.0}).str(), "tensor([ 1.0000e+00,  2.0000e+03, -5.0000e+00])");
  EXPECT_EQ(make1d({-1.2345e-7, 3.0e5, 0.0}).str(),
            "tensor([-1.2345e-07,  3.0000e+05,  0.0000e+00])");
  EXPECT_EQ(make1d({123456789.0, 1.0}).str(), "tensor([1.2346e+08, 1.0000e+00])");
}

TEST(PrintFloat, NanAndInf) {
  EXPECT_EQ(make1d({1.5, kNaN, kInf, -kInf}).str(), "tensor([1.5000,    nan,    inf,   -inf])");
  EXPECT_EQ(make1d({1., kNaN, -kInf}).str(), "tensor([1., nan, -inf])");
  EXPECT_EQ(make1d({kNaN, kNaN}).str(), "tensor([nan, nan])");
  EXPECT_EQ(make1d({-kNaN, 2.}).str(), "tensor([nan, 2.])");
  EXPECT_EQ(make({kNaN}, {}).str(), "tensor(nan)");
}

TEST(PrintFloat, LongRowsWrapAtLineWidth) {
  EXPECT_EQ(ramp({30}, 1.5).str(),
            "tensor([ 0.0000,  1.5000,  3.0000,  4.5000,  6.0000,  7.5000,  9.0000, 10.5000,\n"
            "        12.0000, 13.5000, 15.0000, 16.5000, 18.0000, 19.5000, 21.0000, 22.5000,\n"
            "        24.0000, 25.5000, 27.0000, 28.5000, 30.0000, 31.5000, 33.0000, 34.5000,\n"
            "        36.0000, 37.5000, 39.0000, 40.5000, 42.0000, 43.5000])");
  EXPECT_EQ(ramp({40}, 1000, kInt64).str(),
            "tensor([    0,  1000,  2000,  3000,  4000,  5000,  6000,  7000,  8000,  9000,\n"
            "        10000, 11000, 12000, 13000, 14000, 15000, 16000, 17000, 18000, 19000,\n"
            "        20000, 21000, 22000, 23000, 24000, 25000, 26000, 27000, 28000, 29000,\n"
            "        30000, 31000, 32000, 33000, 34000, 35000, 36000, 37000, 38000, 39000])");
}

TEST(PrintSummarize, Vector2000) {
  EXPECT_EQ(ramp({2000}).str(),
            "tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9970e+03, 1.9980e+03,\n"
            "        1.9990e+03])");
}

TEST(PrintSummarize, Matrix40x40) {
  EXPECT_EQ(ramp({40, 40}, 0.125).str(),
            "tensor([[0.0000e+00, 1.2500e-01, 2.5000e-01,  ..., 4.6250e+00, 4.7500e+00,\n"
            "         4.8750e+00],\n"
            "        [5.0000e+00, 5.1250e+00, 5.2500e+00,  ..., 9.6250e+00, 9.7500e+00,\n"
            "         9.8750e+00],\n"
            "        [1.0000e+01, 1.0125e+01, 1.0250e+01,  ..., 1.4625e+01, 1.4750e+01,\n"
            "         1.4875e+01],\n"
            "        ...,\n"
            "        [1.8500e+02, 1.8512e+02, 1.8525e+02,  ..., 1.8962e+02, 1.8975e+02,\n"
            "         1.8988e+02],\n"
            "        [1.9000e+02, 1.9012e+02, 1.9025e+02,  ..., 1.9462e+02, 1.9475e+02,\n"
            "         1.9488e+02],\n"
            "        [1.9500e+02, 1.9512e+02, 1.9525e+02,  ..., 1.9962e+02, 1.9975e+02,\n"
            "         1.9988e+02]])");
}

TEST(PrintSummarize, ThreeDimInts) {
  std::string expected =
      "tensor([[[   0,    1,    2,  ...,   17,   18,   19],\n"
      "         [  20,   21,   22,  ...,   37,   38,   39],\n"
      "         [  40,   41,   42,  ...,   57,   58,   59],\n"
      "         ...,\n"
      "         [ 140,  141,  142,  ...,  157,  158,  159],\n"
      "         [ 160,  161,  162,  ...,  177,  178,  179],\n"
      "         [ 180,  181,  182,  ...,  197,  198,  199]],\n"
      "\n"
      "        [[ 200,  201,  202,  ...,  217,  218,  219],\n"
      "         [ 220,  221,  222,  ...,  237,  238,  239],\n"
      "         [ 240,  241,  242,  ...,  257,  258,  259],\n"
      "         ...,\n"
      "         [ 340,  341,  342,  ...,  357,  358,  359],\n"
      "         [ 360,  361,  362,  ...,  377,  378,  379],\n"
      "         [ 380,  381,  382,  ...,  397,  398,  399]],\n"
      "\n"
      "        [[ 400,  401,  402,  ...,  417,  418,  419],\n"
      "         [ 420,  421,  422,  ...,  437,  438,  439],\n"
      "         [ 440,  441,  442,  ...,  457,  458,  459],\n"
      "         ...,\n"
      "         [ 540,  541,  542,  ...,  557,  558,  559],\n"
      "         [ 560,  561,  562,  ...,  577,  578,  579],\n"
      "         [ 580,  581,  582,  ...,  597,  598,  599]],\n"
      "\n"
      "        ...,\n"
      "\n"
      "        [[1400, 1401, 1402,  ..., 1417, 1418, 1419],\n"
      "         [1420, 1421, 1422,  ..., 1437, 1438, 1439],\n"
      "         [1440, 1441, 1442,  ..., 1457, 1458, 1459],\n"
      "         ...,\n"
      "         [1540, 1541, 1542,  ..., 1557, 1558, 1559],\n"
      "         [1560, 1561, 1562,  ..., 1577, 1578, 1579],\n"
      "         [1580, 1581, 1582,  ..., 1597, 1598, 1599]],\n"
      "\n"
      "        [[1600, 1601, 1602,  ..., 1617, 1618, 1619],\n"
      "         [1620, 1621, 1622,  ..., 1637, 1638, 1639],\n"
      "         [1640, 1641, 1642,  ..., 1657, 1658, 1659],\n"
      "         ...,\n"
      "         [1740, 1741, 1742,  ..., 1757, 1758, 1759],\n"
      "         [1760, 1761, 1762,  ..., 1777, 1778, 1779],\n"
      "         [1780, 1781, 1782,  ..., 1797, 1798, 1799]],\n"
      "\n"
      "        [[1800, 1801, 1802,  ..., 1817, 1818, 1819],\n"
      "         [1820, 1821, 1822,  ..., 1837, 1838, 1839],\n"
      "         [1840, 1841, 1842,  ..., 1857, 1858, 1859],\n"
      "         ...,\n"
      "         [1940, 1941, 1942,  ..., 1957, 1958, 1959],\n"
      "         [1960, 1961, 1962,  ..., 1977, 1978, 1979],\n"
      "         [1980, 1981, 1982,  ..., 1997, 1998, 1999]]])";
  EXPECT_EQ(ramp({10, 10, 20}, 1, kInt64).str(), expected);
}

TEST(PrintNesting, ThreeDim) {
  EXPECT_EQ(ramp({2, 3, 4}, 1, kInt64).str(),
            "tensor([[[ 0,  1,  2,  3],\n"
            "         [ 4,  5,  6,  7],\n"
            "         [ 8,  9, 10, 11]],\n"
            "\n"
            "        [[12, 13, 14, 15],\n"
            "         [16, 17, 18, 19],\n"
            "         [20, 21, 22, 23]]])");
  EXPECT_EQ(ramp({2, 3, 2}, 0.5).str(),
            "tensor([[[0.0000, 0.5000],\n"
            "         [1.0000, 1.5000],\n"
            "         [2.0000, 2.5000]],\n"
            "\n"
            "        [[3.0000, 3.5000],\n"
            "         [4.0000, 4.5000],\n"
            "         [5.0000, 5.5000]]])");
}

TEST(PrintNesting, NonContiguousReadsThroughStrides) {
  // The transpose of [[1.5, 2, 3], [4, 5, 6.25]]: shape (3, 2), strides (1, 3).
  Tensor t = empty_strided({3, 2}, {1, 3});
  write_values<float>(t, {1.5, 2.0, 3.0, 4.0, 5.0, 6.25});
  EXPECT_EQ(t.str(),
            "tensor([[1.5000, 4.0000],\n"
            "        [2.0000, 5.0000],\n"
            "        [3.0000, 6.2500]])");
}

TEST(PrintDType, Suffixes) {
  EXPECT_EQ(make1d({1.5, 2.0}, kFloat64).str(), "tensor([1.5000, 2.0000], dtype=kiln.float64)");
  EXPECT_EQ(make1d({1, -20, 300}, kInt32).str(), "tensor([  1, -20, 300], dtype=kiln.int32)");
  EXPECT_EQ(make1d({0, 255}, kUInt8).str(), "tensor([  0, 255], dtype=kiln.uint8)");
  EXPECT_EQ(make1d({0.1, 2.5, -3.0}, kFloat16).str(),
            "tensor([ 0.1000,  2.5000, -3.0000], dtype=kiln.float16)");
  EXPECT_EQ(make1d({0.1, 2.5, -3.0}, kBFloat16).str(),
            "tensor([ 0.1001,  2.5000, -3.0000], dtype=kiln.bfloat16)");
}

TEST(PrintDType, SuffixMovesToNextLineWhenTooLong) {
  EXPECT_EQ(make1d({1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5}, kFloat64).str(),
            "tensor([1.5000, 2.5000, 3.5000, 4.5000, 5.5000, 6.5000, 7.5000, 8.5000, 9.5000],\n"
            "       dtype=kiln.float64)");
  EXPECT_EQ(make1d({1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5}, kFloat16).str(),
            "tensor([1.5000, 2.5000, 3.5000, 4.5000, 5.5000, 6.5000, 7.5000, 8.5000],\n"
            "       dtype=kiln.float16)");
  EXPECT_EQ(make({1e-3, 1e5}, {1, 2}, kFloat64).str(),
            "tensor([[1.0000e-03, 1.0000e+05]], dtype=kiln.float64)");
  EXPECT_EQ(make1d({123456.5, -1.25, 3.0, 4.0, 5.0, 6.0, 7.0}, kFloat64).str(),
            "tensor([ 1.2346e+05, -1.2500e+00,  3.0000e+00,  4.0000e+00,  5.0000e+00,\n"
            "         6.0000e+00,  7.0000e+00], dtype=kiln.float64)");
}

TEST(PrintIntegral, IntsAndBools) {
  EXPECT_EQ(make1d({1, -20, 300}, kInt64).str(), "tensor([  1, -20, 300])");
  EXPECT_EQ(make({1, 0, 0, 1}, {2, 2}, kBool).str(),
            "tensor([[ True, False],\n"
            "        [False,  True]])");
}

TEST(PrintEmpty, ShapesAndDTypes) {
  EXPECT_EQ(empty({0}).str(), "tensor([])");
  EXPECT_EQ(empty({0, 3}).str(), "tensor([], size=(0, 3))");
  EXPECT_EQ(empty({0}, TensorOptions(kInt64)).str(), "tensor([], dtype=kiln.int64)");
  EXPECT_EQ(empty({0, 3}, TensorOptions(kFloat64)).str(),
            "tensor([], size=(0, 3), dtype=kiln.float64)");
}

TEST(PrintZeroDim, Scalars) {
  EXPECT_EQ(make({3.5}, {}).str(), "tensor(3.5000)");
  EXPECT_EQ(make({7}, {}, kInt64).str(), "tensor(7)");
  EXPECT_EQ(make({-2.0}, {}, kFloat64).str(), "tensor(-2., dtype=kiln.float64)");
  EXPECT_EQ(make({1}, {}, kBool).str(), "tensor(True)");
}

TEST(PrintMeta, ShowsSizeNotValues) {
  TensorOptions meta = TensorOptions(kFloat32).device(kMeta);
  EXPECT_EQ(empty({2, 3}, meta).str(), "tensor(..., device='meta', size=(2, 3))");
  EXPECT_EQ(empty({4}, TensorOptions(kInt64).device(kMeta)).str(),
            "tensor(..., device='meta', size=(4,), dtype=kiln.int64)");
  EXPECT_EQ(empty({}, TensorOptions(kFloat64).device(kMeta)).str(),
            "tensor(..., device='meta', size=(), dtype=kiln.float64)");
}

TEST(PrintSuffix, RequiresGrad) {
  Tensor t = make1d({1.0, 2.0});
  t.requires_grad_();
  EXPECT_EQ(t.str(), "tensor([1., 2.], requires_grad=True)");
}

TEST(PrintStream, OperatorShiftMatchesStr) {
  std::ostringstream os;
  os << make1d({1.5, -2.25, 3.0});
  EXPECT_EQ(os.str(), "tensor([ 1.5000, -2.2500,  3.0000])");
}

TEST(PrintOptionsTest, PrecisionSciModeThresholdLinewidthEdgeitems) {
  {
    PrintOptions o;
    o.precision = 2;
    PrintOptionsGuard g(o);
    EXPECT_EQ(get_printoptions().precision, 2);
    EXPECT_EQ(make1d({1.12345, -2.5}).str(), "tensor([ 1.12, -2.50])");
  }
  EXPECT_EQ(get_printoptions().precision, 4);
  {
    PrintOptions o;
    o.sci_mode_auto = false;
    o.sci_mode = true;
    PrintOptionsGuard g(o);
    EXPECT_EQ(make1d({1.5, 2.0}).str(), "tensor([1.5000e+00, 2.0000e+00])");
  }
  {
    PrintOptions o;
    o.sci_mode_auto = false;
    o.sci_mode = false;
    PrintOptionsGuard g(o);
    EXPECT_EQ(make1d({1e-5, 1.0}).str(), "tensor([0.0000, 1.0000])");
  }
  {
    PrintOptions o;
    o.threshold = 5;
    PrintOptionsGuard g(o);
    EXPECT_EQ(ramp({10}, 1, kInt64).str(), "tensor([0, 1, 2,  ..., 7, 8, 9])");
  }
  {
    PrintOptions o;
    o.linewidth = 20;
    PrintOptionsGuard g(o);
    EXPECT_EQ(ramp({10}, 1, kInt64).str(),
              "tensor([0, 1, 2, 3,\n"
              "        4, 5, 6, 7,\n"
              "        8, 9])");
  }
  {
    PrintOptions o;
    o.edgeitems = 1;
    o.threshold = 3;
    PrintOptionsGuard g(o);
    EXPECT_EQ(ramp({3, 4}, 1, kInt64).str(),
              "tensor([[ 0,  ...,  3],\n"
              "        ...,\n"
              "        [ 8,  ..., 11]])");
  }
}

TEST(PrintOptionsTest, EdgeitemsZeroShowsOnlyEllipsisAndSize) {
  PrintOptions o;
  o.edgeitems = 0;
  o.threshold = 5;
  PrintOptionsGuard g(o);
  EXPECT_EQ(ramp({3, 4}, 1, kInt64).str(), "tensor([...], size=(3, 4))");
  EXPECT_EQ(ramp({10}).str(), "tensor([...], size=(10,))");
}

TEST(PrintOptionsTest, PrecisionZeroRoundsHalfToEven) {
  PrintOptions o;
  o.precision = 0;
  PrintOptionsGuard g(o);
  EXPECT_EQ(make1d({1.5, 2.25, -3.75}).str(), "tensor([ 2,  2, -4])");
}

TEST(PrintOptionsTest, RejectsNegativePrecision) {
  PrintOptions o;
  o.precision = -1;
  EXPECT_TRUE(testing::throws_error([&] { set_printoptions(o); }, {"precision"}));
}

}  // namespace
}  // namespace kiln
