"""Builds the package gpusort for pip: the extension _gpusort made by the project's CMake build
(the target _gpusort alone, without the tests), beside the pure-Python files of src/python/gpusort.
CMake options may be added through the environment, e.g. CMAKE_ARGS="-DGPUSORT_ENABLE_CUDA=OFF".
"""

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


class CMakeBuild(build_ext):
    """Configures the project in the build folder, builds _gpusort for this interpreter and copies
    the file where setuptools puts the extension."""

    def build_extension(self, ext):
        build = Path(self.build_temp).resolve() / "cmake"
        configure = ["cmake", "-S", str(ROOT), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
                     "-DGPUSORT_BUILD_TESTS=OFF", f"-DPython3_EXECUTABLE={sys.executable}"]
        subprocess.run(configure + shlex.split(os.environ.get("CMAKE_ARGS", "")), check=True)
        subprocess.run(["cmake", "--build", str(build), "--target", "_gpusort", "-j", str(os.cpu_count() or 1)],
                       check=True)
        target = Path(self.get_ext_fullpath(ext.name))
        built = build / "python" / "gpusort" / target.name
        if not built.exists():
            sys.exit(f"setup.py: CMake built no {built.name} (see 'Python module skipped' above)")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, target)


setup(
    packages=["gpusort"],
    package_dir={"": "src/python"},
    package_data={"gpusort": ["*.pyi", "py.typed"]},
    ext_modules=[Extension("gpusort._gpusort", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    # Not build/, the CMake build folder of the project.
    options={"build": {"build_base": "build-pip"}},
)
