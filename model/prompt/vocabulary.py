"""The words of the neural-debugger language: its special tokens, and how a free-text field is
written between them (a JSON string with ``|`` escaped, so no special token can appear inside).

The layout of a session (`model.prompt.language`) and of a source listing (`model.prompt.listing`) are built
from these; the tokenizer makes each special token one token.
"""
from __future__ import annotations

import json
import re

from protocol.debugger import ActionKind, Ending, StopReason

BOS = "<|bos|>"
EOS = "<|eos|>"
PAD = "<|pad|>"
STATE_END = "<|state_end|>"  # ends every state: the generation stop token
FRAME_SEP = "<|frame_sep|>"  # a frame continuing the previous state's frame at the same depth (delta locals)
CALL_SEP = "<|call_sep|>"  # a frame in a new scope (full locals)
LINE_SEP = "<|line_sep|>"  # precedes a line number, in the source listing and in states
RETURN_SEP = "<|return_sep|>"
EXCEPTION_SEP = "<|exception_sep|>"
SRC_SEP = "<|src_sep|>"  # opens and closes the source listing; in a frame of another file, precedes [path, text]
ARG_SEP = "<|arg_sep|>"  # reserved (paper vocabulary)
ACTION_SEP = "<|action_sep|>"  # reserved (paper vocabulary)
BREAKPOINTS = "<|breakpoints|>"  # the session breakpoints, each as <|line_sep|>N
STDOUT = "<|stdout|>"

REASON_ENTRY = "<|reason_entry|>"
REASON_STEP = "<|reason_step|>"
REASON_BREAKPOINT = "<|reason_breakpoint|>"
REASON_EXCEPTION = "<|reason_exception|>"
EXITED = "<|exited|>"  # an exit state whose ending is unknown

STEP_INTO = "<|step_into|>"
STEP_OVER = "<|step_over|>"
STEP_RETURN = "<|step_return|>"
BREAKPOINT = "<|breakpoint|>"  # followed by <|line_sep|>N
CONTINUE = "<|continue|>"
INV_STEP_INTO = "<|inv_step_into|>"
INV_STEP_OVER = "<|inv_step_over|>"
INV_STEP_CALL = "<|inv_step_call|>"

EXIT_NORMAL = "<|exit_normal|>"
EXIT_ERROR = "<|exit_error|>"
EXIT_NEVER = "<|exit_never|>"

ACTION_TOKENS: dict[ActionKind, str] = {
    ActionKind.STEP_INTO: STEP_INTO,
    ActionKind.STEP_OVER: STEP_OVER,
    ActionKind.STEP_RETURN: STEP_RETURN,
    ActionKind.BREAKPOINT: BREAKPOINT,
    ActionKind.CONTINUE: CONTINUE,
    ActionKind.INV_STEP_INTO: INV_STEP_INTO,
    ActionKind.INV_STEP_OVER: INV_STEP_OVER,
    ActionKind.INV_STEP_CALL: INV_STEP_CALL,
}
REASON_TOKENS: dict[StopReason, str] = {
    StopReason.ENTRY: REASON_ENTRY,
    StopReason.STEP: REASON_STEP,
    StopReason.BREAKPOINT: REASON_BREAKPOINT,
    StopReason.EXCEPTION: REASON_EXCEPTION,
}
ENDING_TOKENS: dict[Ending, str] = {Ending.NORMAL: EXIT_NORMAL, Ending.ERROR: EXIT_ERROR, Ending.NEVER: EXIT_NEVER}

SPECIAL_TOKENS: list[str] = [
    PAD, BOS, EOS, STATE_END,
    FRAME_SEP, CALL_SEP, LINE_SEP, RETURN_SEP, EXCEPTION_SEP, SRC_SEP, ARG_SEP, ACTION_SEP, BREAKPOINTS, STDOUT,
    REASON_ENTRY, REASON_STEP, REASON_BREAKPOINT, REASON_EXCEPTION, EXITED,
    *ACTION_TOKENS.values(),
    *ENDING_TOKENS.values(),
]  # fmt: skip
STOP_TOKEN = STATE_END

_SPLIT_RE = re.compile("(" + "|".join(re.escape(t) for t in SPECIAL_TOKENS) + ")")
_SURROGATE_RE = re.compile("[\ud800-\udfff]")


# --- field encoding ----------------------------------------------------------------------------


def _escape_json(encoded: str) -> str:
    """Escape ``|`` (so no special token can appear) and lone surrogates in JSON output."""
    encoded = encoded.replace("|", "\\u007c")
    return _SURROGATE_RE.sub(lambda m: f"\\u{ord(m.group()):04x}", encoded)


def json_string(text: str) -> str:
    """One free-text field as a JSON string literal (compact, ``|`` escaped)."""
    return _escape_json(json.dumps(text, ensure_ascii=False))
