# Sourced: kiln_python_with_torch prints the path of a Python that can import what the tests and
# benchmarks compare against (torch, numpy, torchvision, transformers, safetensors, pytest), creating or
# completing a virtual environment under ${KILN_VENV:-~/.cache/kiln/venv} on first use (PyTorch
# from PyPI is large: the first install takes a few minutes; later runs reuse it).
KILN_PYTHON_MODULES=(torch numpy torchvision transformers safetensors pytest)

kiln_python_has_modules() {
  "$1" -c "import $(IFS=,; echo "${KILN_PYTHON_MODULES[*]}")" 2>/dev/null
}

kiln_python_with_torch() {
  local venv="${KILN_VENV:-$HOME/.cache/kiln/venv}"
  if [[ -n "${KILN_PYTHON:-}" ]]; then
    echo "$KILN_PYTHON"
    return
  fi
  if [[ -x "$venv/bin/python" ]] && kiln_python_has_modules "$venv/bin/python"; then
    echo "$venv/bin/python"
    return
  fi
  if kiln_python_has_modules "$(command -v python3)"; then
    command -v python3
    return
  fi
  echo "[setup] installing ${KILN_PYTHON_MODULES[*]} into $venv (first run only)" >&2
  [[ -x "$venv/bin/python" ]] || python3 -m venv "$venv" >&2
  "$venv/bin/pip" install -q --upgrade pip >&2
  "$venv/bin/pip" install -q "${KILN_PYTHON_MODULES[@]}" >&2
  echo "$venv/bin/python"
}
