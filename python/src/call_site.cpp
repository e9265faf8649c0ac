// The user's Python line for graph nodes and graph-break messages.
#include <set>
#include <string>

#include "bindings.h"

namespace kiln::python {
namespace {

thread_local bool recording_sites = false;

// Interned strings for SourceLocation (which holds const char*): a registry that lives for the
// process, as source locations may be kept in cached graphs.
const char* intern(const std::string& s) {
  static std::set<std::string> strings;
  return strings.insert(s).first->c_str();
}

// The kiln package's folder: frames of its own Python files are skipped (the user's line is the
// first frame outside it). Set once at import.
std::string& package_dir() {
  static std::string dir;
  return dir;
}

bool inside_kiln_package(const std::string& file) {
  return !package_dir().empty() && file.compare(0, package_dir().size(), package_dir()) == 0;
}

}  // namespace

void set_package_dir(const std::string& dir) { package_dir() = dir; }
bool recording_python_sites() { return recording_sites; }
void set_recording_python_sites(bool on) { recording_sites = on; }

std::optional<SourceLocation> python_call_site() {
  PyFrameObject* frame = PyEval_GetFrame();  // borrowed
  if (frame == nullptr) return std::nullopt;
  Py_INCREF(frame);
  while (frame != nullptr) {
    PyCodeObject* code = PyFrame_GetCode(frame);  // new reference
    std::string file = py::handle(code->co_filename).cast<std::string>();
    std::string function = py::handle(code->co_name).cast<std::string>();
    Py_DECREF(code);
    if (!inside_kiln_package(file)) {
      auto line = static_cast<uint32_t>(PyFrame_GetLineNumber(frame));
      Py_DECREF(frame);
      return SourceLocation(intern(file), intern(function), line);
    }
    PyFrameObject* back = PyFrame_GetBack(frame);  // new reference
    Py_DECREF(frame);
    frame = back;
  }
  return std::nullopt;
}

PythonCallSite::PythonCallSite() {
  if (!recording_sites) return;
  site_ = python_call_site();
  if (site_) scope_.emplace(&*site_);
}

}  // namespace kiln::python
