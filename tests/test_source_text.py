"""Programs are read as Python reads them: byte-order mark, PEP 263 coding declarations, any newline style.

Unit tests of `protocol.source_text`, then the same files through both recorders (real debugpy and the
fast recorder must agree on them) and through the adapter.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol.source_text import decode_source, read_source
from tests.dap_client import DapTestClient, TcpAdapter

ROOT = Path(__file__).resolve().parent.parent
BOM = b"\xef\xbb\xbf"

# name -> bytes; each program binds a = 'é' on line `first`, then b on the next line
PROGRAMS = {
    "bom": BOM + "a = 'é'\nb = a * 2\n".encode(),
    "latin1_cookie": b"# -*- coding: latin-1 -*-\na = '\xe9'\nb = a * 2\n",
    "crlf": "a = 'é'\r\nb = a * 2\r\n".encode(),
}
FIRST_LINE = {"bom": 1, "latin1_cookie": 2, "crlf": 1}


def test_decoding_follows_the_interpreter() -> None:
    for name, data in PROGRAMS.items():
        text = decode_source(data)
        assert "a = 'é'\nb = a * 2\n" in text and "\ufeff" not in text and "\r" not in text, name
    with pytest.raises(UnicodeDecodeError) as err:
        decode_source(b"x = 1\ns = '\xff'\n")
    assert err.value.start == 11
    with pytest.raises(UnicodeDecodeError):
        decode_source(b"# coding: ascii\ns = '\xe9'\n")
    with pytest.raises(SyntaxError):
        decode_source(b"# coding: no-such-codec\nx = 1\n")
    assert decode_source(b"# coding: no-such-codec\nx = '\xff'\n", errors="replace") == "# coding: no-such-codec\nx = '\ufffd'\n"


@given(st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=200).map(lambda t: "x = 1\ny = 2\n" + t),
       st.sampled_from(["\n", "\r\n", "\r"]), st.booleans())
def test_any_text_comes_back_with_plain_newlines(text: str, newline: str, bom: bool) -> None:
    lines = text.split("\n")
    data = (BOM if bom else b"") + newline.join(lines).encode()
    assert decode_source(data) == text


def test_read_source_reads_a_file(tmp_path: Path) -> None:
    path = tmp_path / "p.py"
    path.write_bytes(PROGRAMS["latin1_cookie"])
    assert read_source(path).splitlines()[1] == "a = 'é'"


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_both_recorders_agree_on_encoded_files(name: str, tmp_path: Path) -> None:
    path = tmp_path / f"{name}.py"
    path.write_bytes(PROGRAMS[name])
    out = {}
    for recorder in ("fast", "debugpy"):
        done = subprocess.run([sys.executable, "-m", "neural_debugger_cli", "tracegen", "record", str(path),
                               "--actions", "next,next", "--recorder", recorder],
                              cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        out[recorder] = done.stdout
    lines = out["fast"].splitlines()
    first = FIRST_LINE[name]
    assert f'"stack": [["<module>", {first}]]' in lines[0]
    assert f'"stack": [["<module>", {first + 1}]], "locals": {{"a": "\'é\'"}}' in lines[1]
    assert out["fast"] == out["debugpy"]


@pytest.fixture(scope="module")
def adapter():
    with TcpAdapter() as running:
        yield running


def test_adapter_debugs_encoded_files_and_names_bad_encodings(adapter, tmp_path: Path) -> None:
    client: DapTestClient = adapter.client()
    try:
        client.ok("initialize", {"adapterID": "neural", "linesStartAt1": True})
        bad = tmp_path / "ascii.py"
        bad.write_bytes(b"# coding: ascii\ns = '\xe9'\n")
        reply = client.request("launch", {"program": str(bad), "backend": "oracle"})
        assert not reply["success"] and "not ascii text" in reply["message"]
        unknown = tmp_path / "unknown.py"
        unknown.write_bytes(b"# coding: no-such-codec\nx = 1\n")
        reply = client.request("launch", {"program": str(unknown), "backend": "oracle"})
        assert not reply["success"] and "no-such-codec" in reply["message"]
        path = tmp_path / "bom.py"
        path.write_bytes(PROGRAMS["bom"])
        client.ok("launch", {"program": str(path), "backend": "oracle", "stopOnEntry": True})
        client.ok("configurationDone")
        client.wait_event("stopped")
        client.ok("next", {"threadId": 1})
        client.wait_event("stopped")
        frame = client.ok("stackTrace", {"threadId": 1})["stackFrames"][0]
        assert frame["line"] == 2
        hover = client.ok("evaluate", {"expression": "a", "frameId": frame["id"], "context": "hover"})
        assert hover["result"] == "'é'"
    finally:
        client.close()
