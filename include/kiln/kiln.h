#pragma once
// Everything a kiln user needs: #include <kiln/kiln.h>
#include <kiln/core/device.h>
#include <kiln/core/dtype.h>
#include <kiln/core/error.h>
#include <kiln/core/parallel.h>
#include <kiln/core/scalar.h>
#include <kiln/core/tensor.h>
#include <kiln/ops/binary.h>
#include <kiln/ops/creation.h>
#include <kiln/ops/indexing.h>
#include <kiln/ops/print.h>
#include <kiln/ops/random.h>
#include <kiln/ops/reduction.h>
#include <kiln/ops/registry.h>
#include <kiln/ops/shape.h>
#include <kiln/ops/unary.h>
#include <kiln/ops/view.h>
