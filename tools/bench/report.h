#pragma once
// kiln_bench's outputs: the table on the terminal and the JSON of BENCHMARKS.md.
#include <cstdio>
#include <string>
#include <vector>

#include "machine.h"
#include "result.h"

namespace kiln_bench {

void print_table(const std::vector<Result>& results, const Machine& machine, std::FILE* out);

// Writes {"machine": ..., "results": [...]}; throws kiln::Error when the file cannot be written.
void write_json(const std::vector<Result>& results, const Machine& machine,
                const std::string& path);

}  // namespace kiln_bench
