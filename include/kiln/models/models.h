#pragma once
// Reference models built from kiln::nn, with the module structure and parameter names of their
// usual PyTorch implementations so that their checkpoints load by name.
#include <kiln/models/bert.h>
#include <kiln/models/gpt2.h>
#include <kiln/models/mlp.h>
#include <kiln/models/resnet.h>
#include <kiln/models/vit.h>
