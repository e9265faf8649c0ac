# Sourced: kiln_python_with_torch prints the path of a Python that can import torch and numpy,
# creating a virtual environment under ${KILN_VENV:-~/.cache/kiln/venv} on first use (PyTorch
# from PyPI is large: the first install takes a few minutes; later runs reuse it).
kiln_python_with_torch() {
  local venv="${KILN_VENV:-$HOME/.cache/kiln/venv}"
  if [[ -n "${KILN_PYTHON:-}" ]]; then
    echo "$KILN_PYTHON"
    return
  fi
  if [[ -x "$venv/bin/python" ]] && "$venv/bin/python" -c "import torch, numpy" 2>/dev/null; then
    echo "$venv/bin/python"
    return
  fi
  if python3 -c "import torch, numpy" 2>/dev/null; then
    command -v python3
    return
  fi
  echo "[setup] installing PyTorch and numpy into $venv (first run only)" >&2
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install -q --upgrade pip >&2
  "$venv/bin/pip" install -q torch numpy torchvision transformers safetensors >&2
  echo "$venv/bin/python"
}
