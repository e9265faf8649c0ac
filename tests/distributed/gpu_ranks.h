#pragma once
// The nccl backend's multi-process tests need one GPU per rank (NCCL refuses two ranks of a
// communicator on one device); with fewer they are skipped, saying how many they need.
#include <gtest/gtest.h>
#include <kiln/cuda/cuda.h>

#define KILN_SKIP_WITHOUT_GPUS(n)                                                               \
  do {                                                                                          \
    if (::kiln::cuda::device_count() < (n))                                                     \
      GTEST_SKIP() << "needs " << (n) << " CUDA devices (one per nccl rank), this machine has " \
                   << ::kiln::cuda::device_count();                                             \
  } while (0)
