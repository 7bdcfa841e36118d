"""Package discovery for the wheel: the repository root is the package `parafuse`.

Every folder under the package folders below is a package, those with Python code and
the data folders alike (templates/, cpp_runtime/...), so that setuptools ships the data
as package data of a package it knows, without warnings. Tests, benchmarks, samples and
this file stay out of the wheel.
"""

from setuptools import find_namespace_packages, setup
from setuptools.command.build_py import build_py

PACKAGE_FOLDERS = ["cli", "grammar", "ccn_compiler", "fsm_compiler", "emitters", "cpp_runtime"]
SUBPACKAGES = find_namespace_packages(
    where=".", include=[f"{folder}{tail}" for folder in PACKAGE_FOLDERS for tail in ("", ".*")])


class BuildWithoutSetup(build_py):
    """build_py that leaves setup.py (a module of the root folder) out of the package."""

    def find_package_modules(self, package: str, package_dir: str) -> list:
        return [found for found in super().find_package_modules(package, package_dir)
                if found[:2] != ("parafuse", "setup")]


setup(packages=["parafuse", *(f"parafuse.{name}" for name in SUBPACKAGES)],
      cmdclass={"build_py": BuildWithoutSetup})
