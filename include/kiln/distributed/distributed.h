#pragma once
// kiln::distributed: process groups and collectives (torch.distributed).
#include <kiln/distributed/collectives.h>
#include <kiln/distributed/distributed_sampler.h>
#include <kiln/distributed/init.h>
#include <kiln/distributed/launcher.h>
#include <kiln/distributed/process_group.h>
#include <kiln/distributed/process_group_gloo.h>
#include <kiln/distributed/process_group_nccl.h>
#include <kiln/distributed/reduce_op.h>
#include <kiln/distributed/store.h>
#include <kiln/distributed/tcp_store.h>
#include <kiln/distributed/work.h>
