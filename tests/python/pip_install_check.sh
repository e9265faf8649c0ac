#!/usr/bin/env bash
# `pip install .` packs the module as a wheel (reusing the given build folder instead of a fresh
# Release build) and installs it into a scratch folder; the installed package is imported from
# outside the repository and computes, compiled, what eager computes.
#   pip_install_check.sh PYTHON SOURCE_DIR BUILD_DIR
set -euo pipefail
python=$1 source_dir=$2 build_dir=$3
target=$(mktemp -d)
trap 'rm -rf "$target"' EXIT
KILN_WHEEL_BUILD_DIR="$build_dir" "$python" -m pip install -q --no-deps --no-index \
  --target "$target/site" "$source_dir"
cd "$target"
PYTHONPATH="$target/site" "$python" - <<'PY'
import os
import kiln
assert os.path.dirname(kiln.__file__).endswith("site/kiln"), kiln.__file__
x = kiln.randn(8, 5)
f = kiln.compile(lambda x: (x.sin() * 2).sum(1))
assert (f(x) - (x.sin() * 2).sum(1)).abs().max().item() < 1e-5
print("installed kiln", kiln.__file__, "ok")
PY
