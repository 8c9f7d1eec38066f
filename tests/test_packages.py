"""PyPI packages as a program source (tracegen/packages.py), on a small package laid out like an
installed wheel (site/ + dist-info with RECORD), recorded by the real recorder."""
from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from tracegen.dataset import record_filtered
from tracegen.packages import (
    MANIFEST, PINNED, InstalledPackage, PackageSource, _entry, PackagePin, file_doctests, import_closure, module_name, package_programs,
)
from tracegen.sources import parse_sources
from tracegen.synth.filter import FilterPolicy

INIT = '''"""Tiny tools."""
from .core import scale, Box
from . import text
'''
CORE = '''from tinytools.util import clamp


def scale(xs, k):
    """Multiply and clamp.

    >>> ys = scale([1, 2, 3], 4)
    >>> ys
    [4, 8, 10]
    >>> total = sum(ys)
    >>> scale([], 2)
    []
    """
    out = []
    for x in xs:
        out.append(clamp(x * k))
    return out


class Box:
    """A box.

    >>> b = Box(3)
    >>> b.grow(2)
    5
    >>> b.grow(1)
    6
    >>> b.size + 1
    7
    >>> Box('x').grow(1)  # doctest: +SKIP
    """

    def __init__(self, size):
        self.size = size

    def grow(self, by):
        self.size += by
        return self.size
'''
UTIL = '''def clamp(x, hi=10):
    return min(x, hi)
'''
TEXT = '''def shout(s):
    """
    >>> shout('hi')
    'HI!'
    """
    return s.upper() + '!'
'''
FILES = {"tinytools/__init__.py": INIT, "tinytools/core.py": CORE, "tinytools/util.py": UTIL, "tinytools/text.py": TEXT}


def _install(folder: Path, split: str = "train") -> InstalledPackage:
    """Lay out `tinytools` as pip --target would (files + dist-info) and write the manifest."""
    site = folder / "site"
    for rel, text in FILES.items():
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_text(text)
    info = site / "tinytools-1.0.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tinytools\nVersion: 1.0\nLicense-Expression: MIT\n\nA package.\n")
    (info / "RECORD").write_text("".join(f"{rel},sha256=x,1\n" for rel in FILES) + "tinytools-1.0.dist-info/RECORD,,\n")
    entry = _entry(site, PackagePin("tinytools", "1.0", "MIT", split))
    (folder / MANIFEST).write_text(json.dumps({"packages": [entry.__dict__]}))
    return entry


def test_the_pinned_list_is_permissive_and_pinned() -> None:
    assert len({p.name for p in PINNED if p.split == "train"}) >= 12
    assert {p.split for p in PINNED} == {"train", "dev"}
    for pin in PINNED:
        assert pin.version and pin.version[0].isdigit()
        assert any(ok in pin.licence for ok in ("MIT", "BSD", "Apache", "PSF")), pin


def test_manifest_entry_reads_the_wheel(tmp_path: Path) -> None:
    entry = _install(tmp_path)
    assert entry.declared_licence == "MIT"
    assert entry.top_level == ["tinytools"]
    assert sorted(entry.files) == sorted(FILES)
    assert all(len(digest) == 64 for digest in entry.files.values())


def test_doctests_are_found_without_importing_and_skip_is_honoured() -> None:
    tests = {t.name: t for t in file_doctests(CORE, "tinytools.core", "tinytools/core.py")}
    assert sorted(tests) == ["tinytools.core.Box", "tinytools.core.scale"]
    assert len(tests["tinytools.core.Box"].examples) == 4  # the +SKIP example is left out
    assert module_name("tinytools/__init__.py") == "tinytools" and module_name("tinytools/core.py") == "tinytools.core"


def test_import_closure_follows_the_package_imports(tmp_path: Path) -> None:
    _install(tmp_path)
    closure = import_closure(tmp_path / "site", "from tinytools.core import scale\nys = scale([1], 2)\n")
    assert sorted(closure) == sorted(FILES)  # the package __init__ pulls in core, util (absolute) and text (from . import)
    assert import_closure(tmp_path / "site", "import json\nx = json.dumps(1)\n") == {}


def test_programs_run_the_package_as_user_code_across_files(tmp_path: Path) -> None:
    entry = _install(tmp_path)
    made = package_programs(tmp_path / "site", entry)
    by_name = {p.origin.rsplit(":", 1)[-1]: p for p in made.programs}
    assert sorted(by_name) == ["tinytools.core.Box", "tinytools.core.scale", "tinytools.text.shout"]
    spec = by_name["tinytools.core.scale"]
    assert spec.source.startswith("from tinytools.core import scale\n")
    assert "out1 = ys" in spec.source
    assert dict(spec.modules) == FILES and spec.kind == "package"
    trace, reason = record_filtered(spec, FilterPolicy(wall_seconds=60))  # room for a busy machine
    assert reason is None, reason
    files = {info.file for info in trace.frames.values() if not info.lib}
    assert {"tinytools/core.py", "tinytools/util.py"} <= files  # stepping enters the package's modules
    assert trace.module_sources == FILES


def test_package_source_splits_and_parse_sources(tmp_path: Path) -> None:
    _install(tmp_path / "train")
    _install(tmp_path / "dev", split="dev")
    src = PackageSource(tmp_path / "train")
    assert len(src.programs) == 3
    assert src.draw(random.Random(0)) in src.programs
    with pytest.raises(ValueError, match="no dev programs"):
        PackageSource(tmp_path / "train", split="dev")
    with pytest.raises(ValueError, match="no train programs"):
        PackageSource(tmp_path / "dev")
    with pytest.raises(ValueError, match="unknown package split"):
        PackageSource(tmp_path / "dev", split="test")
    ws = parse_sources(f"synthetic@2,packages:{tmp_path / 'dev'}:dev@1")
    assert [s.name for s in ws.sources] == ["synthetic", f"packages:{tmp_path / 'dev'}:dev"]
    with pytest.raises(FileNotFoundError, match="tracegen packages --out"):
        parse_sources(f"packages:{tmp_path / 'missing'}")
    with pytest.raises(ValueError, match="packages:DIR"):
        parse_sources("packages")
