"""kiln's PEP 517 build backend: configures and builds the kiln Python module with CMake (the
project's own build), installs its `python` component into a staging folder and packs that as a
wheel. No requirements beyond the standard library, so `pip install .` works offline."""
import base64
import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_NAME = "kiln"
_VERSION = "0.1.0"


def _metadata():
    return (f"Metadata-Version: 2.1\nName: {_NAME}\nVersion: {_VERSION}\n"
            "Summary: A deep-learning framework whose heart is a compiler, with PyTorch's API\n"
            "Requires-Python: >=3.11\nRequires-Dist: numpy\n")


def _tag():
    impl = f"cp{sys.version_info.major}{sys.version_info.minor}"
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"{impl}-{impl}-{platform}"


def _dist_info():
    return f"{_NAME}-{_VERSION}.dist-info"


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    path = os.path.join(metadata_directory, _dist_info())
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "METADATA"), "w") as f:
        f.write(_metadata())
    return _dist_info()


def _run(cmd):
    print("[kiln build]", " ".join(cmd), file=sys.stderr, flush=True)
    subprocess.run(cmd, check=True)


def _build(staging):
    # KILN_WHEEL_BUILD_DIR names an existing, configured build folder to reuse as it is (the
    # test suite packs its own build this way); by default a Release build of its own.
    build_dir = os.environ.get("KILN_WHEEL_BUILD_DIR")
    if not build_dir or not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
        build_dir = build_dir or os.path.join(_ROOT, "build-wheel")
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        _run(["cmake", "-S", _ROOT, "-B", build_dir, *generator, "-DCMAKE_BUILD_TYPE=Release",
              "-DKILN_BUILD_TESTS=OFF", "-DKILN_BUILD_BENCH=OFF", "-DKILN_BUILD_EXAMPLES=OFF",
              f"-DKILN_PYTHON={sys.executable}", "-DKILN_BUILD_PYTHON=ON"])
    _run(["cmake", "--build", build_dir, "--target", "kiln_python",
          "-j", str(os.cpu_count() or 2)])
    _run(["cmake", "--install", build_dir, "--component", "python", "--prefix", staging])


def _record_line(arcname, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{arcname},sha256={digest},{len(data)}"


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    staging = os.path.join(wheel_directory, "kiln-staging")
    shutil.rmtree(staging, ignore_errors=True)
    _build(staging)
    wheel_name = f"{_NAME}-{_VERSION}-{_tag()}.whl"
    records = []
    dist_info = _dist_info()
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel_name), "w",
                         zipfile.ZIP_DEFLATED) as whl:
        package = os.path.join(staging, _NAME)
        for folder, _, files in sorted(os.walk(package)):
            for name in sorted(files):
                path = os.path.join(folder, name)
                arcname = os.path.relpath(path, staging)
                with open(path, "rb") as f:
                    data = f.read()
                whl.writestr(arcname, data)
                records.append(_record_line(arcname, data))
        extra = {
            "METADATA": _metadata(),
            "WHEEL": ("Wheel-Version: 1.0\nGenerator: kiln_build_backend\n"
                      f"Root-Is-Purelib: false\nTag: {_tag()}\n"),
        }
        for name, text in extra.items():
            arcname = f"{dist_info}/{name}"
            whl.writestr(arcname, text)
            records.append(_record_line(arcname, text.encode()))
        records.append(f"{dist_info}/RECORD,,")
        whl.writestr(f"{dist_info}/RECORD", "\n".join(records) + "\n")
    shutil.rmtree(staging, ignore_errors=True)
    return wheel_name


def build_sdist(sdist_directory, config_settings=None):
    """The repository's sources (without build folders) as NAME-VERSION.tar.gz."""
    base = f"{_NAME}-{_VERSION}"
    skip = {".git", "__pycache__"}

    def keep(info):
        parts = info.name.split("/")
        if any(p in skip or p.startswith("build") for p in parts[1:]):
            return None
        return info

    path = os.path.join(sdist_directory, base + ".tar.gz")
    with tarfile.open(path, "w:gz") as tar:
        for name in sorted(os.listdir(_ROOT)):
            tar.add(os.path.join(_ROOT, name), arcname=f"{base}/{name}", filter=keep)
    return base + ".tar.gz"
