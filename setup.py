"""Build hook: the wheel carries the shipped model and the examples, which live outside the packages.

Everything else is in pyproject.toml. A checkout keeps `checkpoints/default/` and `examples/` at the
top (docs and commands use those paths); `build_py` copies them into the built packages as
`model/checkpoints/default/` (with its companion model beside it, `model/checkpoints/companion-stage12/`,
which `checkpoints/default/ensemble.json` names by a relative path) and `adapter/examples/`, where `model.paths.default_checkpoint` and
`adapter.demo.default_program` look when the checkout's folders are not there (an installed
package). An editable install reads them from the checkout and copies nothing.
"""
from __future__ import annotations

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
# (folder in the checkout, folder inside the built packages, a file that must be there)
SHIPPED = (
    ("checkpoints/default", "model/checkpoints/default", "config.json"),
    ("checkpoints/companion-stage12", "model/checkpoints/companion-stage12", "config.json"),  # default/ensemble.json names it
    ("examples", "adapter/examples", "demo.py"),
)


class BuildPyWithShippedFiles(build_py):
    """build_py, then the shipped model and the examples copied into the built packages."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        for source, target, required in SHIPPED:
            folder = ROOT / source
            if not (folder / required).is_file():
                raise SystemExit(f"error: {folder / required} is missing: the wheel would not carry {source}/")
            destination = Path(self.build_lib) / target
            self.mkpath(str(destination))
            for path in sorted(p for p in folder.iterdir() if p.is_file()):
                self.copy_file(str(path), str(destination / path.name))


setup(cmdclass={"build_py": BuildPyWithShippedFiles})
