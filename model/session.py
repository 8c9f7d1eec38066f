"""NeuralDebugger: a debugging session whose every stop is predicted by a language model.

The session never executes the user's program: it compiles it only to know its lines (Python's
`compile` runs nothing), renders the session in the neural-debugger language
(`model.prompt.language`), asks a `Backend` for the next state under the step's `model.decode.spec.DecodingSpec`, and parses the
answer back into a `protocol.State`.

Context handling: each state in the history keeps the token ids it stands for in the prompt
(the model's own generated ids, or the rendering of a given or edited state), so consecutive
prompts share their prefix token for token and the backend's KV cache (or vLLM's prefix cache)
only prefills the new action and state. When the prompt would no longer fit the model's context,
the prompt starts at a later state written in full (a window, as `language.render_window`).
"""
from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from model.prompt import language as lang
from model.backends.base import Backend, BackendError, Generation, Scorer
from model.budget import Spending, StepBudget
from model.decode.confidence import Calibration, RawScores, code_kind, json_string_end, raw_scores
from model.decode.constraints import close_text
from model.decode.cut_values import runaway, tail_runaway, trim_runaway
from model.decoding import Decoding, rules_for
from model.backends.ensemble import load_companions, named_companions
from model.prompt.listing import STATE_RESERVE, Listing
from model.decode.rerank import CALL_CANDIDATES, CHECK_WEIGHT, COARSE_CANDIDATES, EVIDENCE_WEIGHT, STALE_PENALTY, Candidate
from model.decode.spec import COARSE_ACTIONS, ENSEMBLE_KINDS, DecodingSpec, SpecOptions, build_spec, sampling_plan
from model.session_api import SessionError
from model.static.reach import FineStep, back_on_calling_line, fine_step, no_target_ahead, returned_call
from model.static.user_modules import collect_user_modules
from model.prompt.value_chars import encode_text, value_chars_enabled
from protocol.debugger import Action, ActionKind, Ending, Frame, State, Step, StopReason

MIN_ALTERNATIVE = 0.005  # alternatives less likely than this are not offered
# COARSE_ACTIONS (one answer simulates many lines) and ENSEMBLE_KINDS (companions draw too): model.decode.spec
MAX_FINE_STEPS = 200  # fine steps one coarse action may take when it runs by fine steps (`coarse_steps`)
# how Continue, Step Out and a run to a breakpoint are predicted: "model" one jump; "fine" successive fine steps until
# one arrives; "auto" fine steps while a breakpoint can be reached on the way, one jump when none can
CoarseSteps = Literal["model", "fine", "auto"]



@dataclass
class StateRecord:
    """One state of the session and how it came to be.

    ids: the token ids standing for this state in the prompt (ending with the stop token).
    generation: the backend's answer when the state was predicted (None: given or edited).
    edited: local names set by the user (confidence 1). note: why a prediction failed, if it did.
    """

    state: State
    ids: list[int]
    generation: Generation | None = None
    text: str = ""
    edited: set[tuple[int, str]] = field(default_factory=set)
    note: str | None = None
    backwards: bool = False  # predicted with an inverse action (before the start of the history)
    scores: RawScores | None = None  # raw confidences of the generation (computed on first use)
    remark: str | None = None  # what the user should know about how the stop was reached (a budget cut, fine steps)


def entry_state(program: str) -> State:
    """The stop on entry: the module's first executed line, no locals.

    A program without statements (empty, or only comments) still stops once, on line 0, as debugpy
    does. Raises SessionError when the program does not compile.
    """
    lines = _module_lines(program)
    if not lines:
        return State(reason=StopReason.ENTRY, frames=[Frame(name="<module>", line=0, source="")])
    first = min(lines)
    return State(reason=StopReason.ENTRY, frames=[Frame(name="<module>", line=first, source=lang.source_line(program, first))])


def _module_lines(program: str) -> list[int]:
    """The source lines the module's own code runs (SessionError when it does not compile)."""
    try:
        code = compile(program, "<program>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        raise SessionError(f"the program does not compile: {exc}") from None
    return [line for _, _, line in code.co_lines() if line is not None and line > 0]


def exit_state() -> State:
    """A normal exit with status 0 and nothing printed."""
    return State(reason=StopReason.EXITED, exit_code=0, ending=Ending.NORMAL)


def executable_lines(program: str) -> set[int]:
    """Lines that can hold a breakpoint (lines of any code object of the program)."""
    info = lang.program_info(program)
    return set(info.lines or ())


class NeuralDebugger:
    """A `model.session_api.DebugSession` answered by a language model.

    backend: the model (`HFBackend`, `VLLMServerBackend`, `VLLMEngineBackend`). tokenizer: a
    transformers tokenizer of the checkpoint. program / path: the source text and its file.
    temperature: 0 for greedy. max_state_tokens: the longest state to generate. constrained:
    apply `StateConstraint`. max_model_len: the context length (default: the backend's, else 2048).
    decoding: `Decoding.FULL` (every rule of `model.decoding`) or `Decoding.PLAIN` (the model alone: well-formed
    states and control flow, the greedy answer).
    """

    def __init__(
        self,
        backend: Backend,
        tokenizer: Any,
        program: str,
        path: str | None = None,
        *,
        breakpoints: Sequence[int] = (),
        temperature: float = 0.0,
        max_state_tokens: int = 384,
        constrained: bool = True,
        max_model_len: int | None = None,
        retry_temperature: float | None = 0.7,
        calibration: Calibration | None = None,
        flow_constraint: bool = True,
        repr_check: bool = True,
        candidates: int = 1,
        call_candidates: int = CALL_CANDIDATES,
        coarse_candidates: int = COARSE_CANDIDATES,
        check_weight: float = CHECK_WEIGHT,
        evidence_weight: float = EVIDENCE_WEIGHT,
        stale_penalty: float = STALE_PENALTY,
        companions: Sequence[Backend] = (),
        ensemble_kinds: frozenset[ActionKind] = ENSEMBLE_KINDS,
        decoding: Decoding = Decoding.FULL,
        budget: StepBudget | None = None,
        coarse_steps: CoarseSteps = "model",
    ) -> None:
        self.decoding = Decoding(decoding)
        self.rules = rules_for(self.decoding)  # which decode-time rules apply beyond well-formedness and control flow
        self.flow_constraint = flow_constraint  # narrow each stop to static control flow (model.flow)
        self.repr_check = repr_check  # never write an impossible repr (model.repr_check; transformers backend)
        self.backend = backend
        # answers drawn per predicted stop, the most likely kept (model.decode.rerank); 1 is the greedy answer alone
        self.candidates = max(1, int(candidates))  # after any other action (step_into, step_over, the other inverse ones)
        self.call_candidates = max(1, int(call_candidates))  # after inv_step_call (a call's first stop: its arguments)
        self.coarse_candidates = max(1, int(coarse_candidates))  # after step_return, continue, a run to a breakpoint
        self.check_weight = float(check_weight)  # weight of a backward check where one exists (model.decode.rerank)
        self.evidence_weight = float(evidence_weight)  # taken off per argument use an answer contradicts (model.decode.arg_evidence)
        self.stale_penalty = float(stale_penalty)  # taken off a coarse action's answer that loops back changing nothing (model.decode.rerank)
        # other models (same tokenizer) that also draw answers after `ensemble_kinds`, every answer scored by the mean under all (model.backends.ensemble)
        self.companions: list[Backend] = list(companions)
        self.ensemble_kinds = frozenset(ensemble_kinds)
        self.notices: list[str] = []  # lines for the user about how the session was set up (e.g. a companion left out)
        self.budget = budget  # time and tokens one step may spend (model.budget); None: unbounded (evaluation)
        if coarse_steps not in ("model", "fine", "auto"):
            raise ValueError(f"coarse_steps must be 'model', 'fine' or 'auto', not {coarse_steps!r}")
        self.coarse_steps: CoarseSteps = coarse_steps
        self._spending: Spending | None = None  # the current step's use of `budget`
        self._spec_key: tuple | None = None  # the step's decoding spec (model.decode.spec), built once for all its attempts and candidates
        self._spec: DecodingSpec | None = None
        self._enter_call = False  # the stop being predicted must enter a call of the line (a coarse action's fine step)
        self.calibration = calibration or Calibration()
        self.tokenizer = tokenizer
        self.program = program
        self.path = path
        self.temperature = float(temperature)
        self.max_state_tokens = int(max_state_tokens)
        self.constrained = constrained
        self.retry_temperature = retry_temperature
        self.max_model_len = int(max_model_len or getattr(backend, "max_model_len", None) or 2048)
        self.stop_id = self._special_id(lang.STOP_TOKEN)
        self._value_chars = value_chars_enabled(tokenizer)  # string contents one token per character (model.prompt.value_chars)
        self._lines = executable_lines(program)
        self._breakpoints: list[int] = sorted(set(int(b) for b in breakpoints) & self._lines)
        self._records: list[StateRecord] = []  # [initial, then one per step]
        self._actions: list[Action] = []  # the action before records[i + 1]
        self._window = 0  # index of the record the prompt starts from
        self._listing: Listing | None = None  # the window's source listing (model.prompt.listing); None: choose at the next prompt
        self.modules: dict[str, str] = {}  # other user files the listing may show (path -> source)
        self.modules.update(collect_user_modules(program, path).sources if path else {})  # relative path -> source
        self._file_breakpoints: dict[str, list[int]] = {}  # other user file (relative path) -> lines
        self._token_counts: dict[str, int] = {}  # listing lines already counted (choose_listing asks often)
        self._inverse: list[State | Step] = []  # the inverse chain ([late state, Step(inv, earlier)...])
        self._header_ids: list[int] | None = None
        self.ranking: list[tuple[State, Candidate]] = []  # the last ranked prediction's candidates (diagnostics)
        self.prefill_log: list[int | None] = []  # prompt tokens prefilled per prediction (KV-cache check)

    # ----------------------------------------------------------- factories

    @classmethod
    def from_checkpoint(
        cls,
        folder: str | Path,
        program: str | None = None,
        path: str | None = None,
        *,
        backend: str = "transformers",
        vllm_url: str | None = None,
        served_model_name: str | None = None,
        device: str = "cpu",
        seed: int = 0,
        timeout: float = 60.0,
        companions: Sequence[str | Path] | None = None,
        **options: Any,
    ) -> "NeuralDebugger":
        """A session on `program` (or the file at `path`) with the checkpoint in `folder`.

        backend: "transformers" (in-process, CPU or CUDA), "vllm" (a `vllm serve` at `vllm_url`)
        or "vllm-engine" (vLLM in this process). timeout: seconds each request to the vLLM server may
        take before the step fails (backend "vllm" only). companions: checkpoint folders that draw and
        score a call's arguments too (`model.backends.ensemble`; a folder that cannot be used is an error); None: those
        the folder's ensemble.json names, any that cannot be used left out with a line in the session's
        `notices` (the transformers backend only: a vLLM backend serves one model). Other options go to `NeuralDebugger`.
        """
        if program is None:
            if path is None:
                raise SessionError("give the program's source text or its path")
            try:
                program = Path(path).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise SessionError(f"cannot read the program {path}: {exc}") from None
        notices: list[str] = []
        try:
            if backend == "transformers":
                from model.backends.hf import HFBackend

                model: Backend = HFBackend(folder, device=device, seed=seed)
                tokenizer = model.tokenizer  # type: ignore[attr-defined]
                if companions is None:  # those ensemble.json names: one that cannot be used is a notice, not an error
                    loaded = named_companions(folder, tokenizer, device=device, seed=seed)
                else:
                    loaded = load_companions(list(companions), tokenizer, device=device, seed=seed)
                options["companions"] = loaded.backends
                notices = loaded.problems
            elif companions:
                raise SessionError(f"companion models need the transformers backend, not {backend!r}")
            elif backend == "vllm":
                from model.backends.vllm_server import VLLMServerBackend

                if not vllm_url:
                    raise SessionError('backend "vllm" needs a server URL (vllm_url), e.g. http://127.0.0.1:8000')
                tokenizer = _load_tokenizer(folder)
                model = VLLMServerBackend(vllm_url, model=served_model_name, timeout=timeout, seed=seed,
                                          max_model_len=_context_length(folder))
            elif backend in ("vllm-engine", "vllm_engine"):
                from model.backends.vllm_engine import VLLMEngineBackend

                tokenizer = _load_tokenizer(folder)
                model = VLLMEngineBackend(folder, seed=seed)
            else:
                raise SessionError(f"unknown backend {backend!r}: use transformers, vllm or vllm-engine")
        except BackendError as exc:
            raise SessionError(str(exc)) from None
        options.setdefault("calibration", Calibration.load(folder))
        session = cls(model, tokenizer, program, path, **options)
        session.notices.extend(notices)
        return session

    # ------------------------------------------------------------- protocol

    def start(self) -> State:
        """Reset to the entry state (never predicted: it is the module's first line)."""
        state = entry_state(self.program)
        self._records = [StateRecord(state=state, ids=self._encode(lang.render_state(state, None)))]
        self._actions = []
        self._window = 0
        self._listing = None
        self._inverse = [state]
        return state

    def start_from(self, state: State) -> State:
        """Start at a given stop (a snapshot, e.g. a function's return for input prediction) instead of the entry."""
        self._records = [StateRecord(state=state, ids=self._encode(lang.render_state(state, None)))]
        self._actions = []
        self._window = 0
        self._listing = None
        self._inverse = [state]
        return state

    def replace_program(self, program: str, state: State) -> State:
        """Go on from `state` with an edited program (its file changed while stopped): later stops are predicted
        from the new source, on whose lines `state` stands; the history starts again at `state`."""
        _module_lines(program)  # SessionError when it does not compile
        self.program = program
        self._lines = executable_lines(program)
        self._breakpoints = sorted(set(self._breakpoints) & self._lines)
        self.modules = collect_user_modules(program, self.path).sources if self.path else {}
        self._file_breakpoints = {f: lines for f, lines in self._file_breakpoints.items() if f in self.modules}
        self._header_ids = None
        return self.start_from(state)

    def set_breakpoints(self, lines: list[int]) -> list[int]:
        accepted = sorted(set(int(line) for line in lines) & self._lines)
        if accepted != self._breakpoints:
            self._breakpoints = accepted
            self._header_ids = None
            if self._listing is not None and not self._listing.full:
                self._listing = None  # a bounded listing shows the breakpoints' lines: choose it again
        return accepted

    @property
    def breakpoints(self) -> list[int]:
        return list(self._breakpoints)

    def set_file_breakpoints(self, file: str, lines: list[int]) -> list[int]:
        """Replace the breakpoints of another user file (absolute, or relative to the program's folder);
        returns the lines accepted (lines with code). The prompt lists them with their file."""
        rel = self._relative(file)
        if rel is None:
            raise SessionError(f"{file} is not a user module of the program (a file its imports reach under its folder)")
        accepted = sorted(set(int(n) for n in lines) & set(lang.program_info(self.modules[rel]).lines or ()))
        if accepted != self._file_breakpoints.get(rel, []):
            if accepted:
                self._file_breakpoints[rel] = accepted
            else:
                self._file_breakpoints.pop(rel, None)
            self._header_ids = None
            if self._listing is not None and not self._listing.full:
                self._listing = None  # a bounded listing shows the breakpoints' lines: choose it again
        return accepted

    def _relative(self, file: str) -> str | None:
        """A user module's path relative to the program's folder (as frames carry it), or None."""
        if file in self.modules:
            return file
        if self.path is None:
            return None
        folder = Path(self.path).resolve().parent
        try:
            rel = Path(file).resolve().relative_to(folder).as_posix()
        except (ValueError, OSError):
            return None
        return rel if rel in self.modules else None

    def _all_breakpoints(self) -> list[int | tuple[str, int]]:
        """The session breakpoints as the prompt writes them: program lines, then (file, line) of other files."""
        return [*self._breakpoints, *((f, n) for f, lines in sorted(self._file_breakpoints.items()) for n in lines)]

    def step(self, action: Action) -> State:
        """Predict the state after `action` (forward actions; inverse ones are accepted too)."""
        current = self._current_record()
        if current.state.finished and not action.kind.inverse:
            raise SessionError("the program has exited; restart the session to debug it again")
        if action.kind is ActionKind.BREAKPOINT:
            if action.line is None or action.line not in self._lines:
                raise SessionError(f"cannot run to line {action.line}: not an executable line of the program")
        if not self._lines and not action.kind.inverse:  # nothing to run: any step ends the program
            return self.append(action, exit_state())
        self._spending = self.budget.start() if self.budget is not None else None
        if action.kind in COARSE_ACTIONS and self._by_fine_steps(action):
            return self._run_by_steps(action)
        record = self._predict(action)
        self._actions.append(action)
        self._records.append(record)
        self._remark(record)
        return record.state

    def _by_fine_steps(self, action: Action) -> bool:
        """Whether this coarse action runs as successive fine steps (`coarse_steps`): always ("fine"), never ("model"), or
        ("auto") unless no breakpoint can be reached on the way (`no_target_ahead`), where one jump lands where the
        action alone leads (the caller, the end) in one prediction instead of a fine step per line."""
        if self.coarse_steps != "auto":
            return self.coarse_steps == "fine"
        if action.kind is ActionKind.BREAKPOINT or self._file_breakpoints:
            return True
        return not no_target_ahead(self.program, self._records[-1].state, self._breakpoints, step_out=action.kind is ActionKind.STEP_RETURN)

    def _run_by_steps(self, action: Action) -> State:
        """A coarse action as successive predicted fine stops, until one arrives: a breakpoint line (reason breakpoint;
        a return to a calling line is no line event and does not count: `back_on_calling_line`), an exception, the end, or for step_return the
        caller (a shorter stack). Each fine step is the one `model.static.reach.fine_step` picks from the source: Step
        Over where the line's calls cannot reach a breakpoint, Step Into (narrowed to entering the call where the line
        certainly calls) where they can. Each fine stop joins the history (Step Back undoes one). When the budget runs
        out first, or what is left of it would not hold one more fine step as long as the mean one so far (a fine step
        the budget cuts is dropped anyway), the last fine stop is shown and its remark says so."""
        start_depth = len(self._records[-1].state.frames)
        targets = set(self._breakpoints) | ({action.line} if action.kind is ActionKind.BREAKPOINT and action.line else set())
        name = {ActionKind.CONTINUE: "Continue", ActionKind.STEP_RETURN: "Step Out"}.get(action.kind, "the run to a breakpoint")
        for count in range(1, MAX_FINE_STEPS + 1):
            previous = self._records[-1].state
            fine = FineStep.plain() if self._file_breakpoints else fine_step(self.program, previous, targets,
                                                                              step_out=action.kind is ActionKind.STEP_RETURN)
            fine_action = Action(kind=fine.kind)
            self._enter_call = fine.enter
            try:
                record = self._predict(fine_action)
            finally:
                self._enter_call = False
            self._actions.append(fine_action)
            self._records.append(record)
            state = record.state
            if record.note and count > 1 and self._spending is not None and self._spending.exhausted():
                self._actions.pop()  # a fine step cut by the budget: the last whole one is the better answer
                self._records.pop()
                record = self._records[-1]
                self._spending.cuts.clear()
                self._spending.cut(f"{name} ran {count - 1} fine step(s) and did not arrive; this is the last one (go on to continue)")
                break
            if record.note and record.generation is None and count > 1:  # a fine step that could not move: the run did
                why = record.note.split(";")[0]
                self._actions.pop()
                self._records.pop()
                record = self._records[-1]
                record.remark = f"{name} ran {count - 1} fine step(s) and did not arrive: the next could not be predicted ({why}); this is the last one"
                break
            if record.note or state.finished or state.reason is StopReason.EXCEPTION:
                break
            top = state.top
            lines = targets if top is None or top.file is None else set(self._file_breakpoints.get(top.file, ()))
            if top is not None and top.line in lines and not back_on_calling_line(previous, state):
                state.reason = StopReason.BREAKPOINT
                record.ids = self._encode(lang.render_state(state, previous))
                break
            if action.kind is ActionKind.STEP_RETURN and len(state.frames) < start_depth:
                break
            if self._spending is not None and not self._spending.fits(self._spending.elapsed() / count):
                self._spending.cut(f"{name} ran {count} fine step(s) and did not arrive; this is the last one (go on to continue)")
                break
        else:
            record.remark = f"{name} ran {MAX_FINE_STEPS} fine steps and did not arrive; this is the last one"
        self._remark(record)
        return record.state

    def _remark(self, record: StateRecord) -> None:
        """Keep what the step's budget cut on the record, for the user."""
        cut = self._spending.summary() if self._spending is not None else ""
        if cut:
            record.remark = cut if record.remark is None else f"{record.remark}; {cut}"
        self._spending = None

    @property
    def remark(self) -> str | None:
        """What the user should know about how the current stop was reached (a cut for lack of budget), or None."""
        return self._current_record().remark

    def append(self, action: Action, state: State) -> State:
        """Record a known state as the result of `action` without predicting it (teacher forcing, replays)."""
        previous = self._current_record().state
        self._actions.append(action)
        self._records.append(StateRecord(state=state, ids=self._encode(lang.render_state(state, previous))))
        return state

    def step_back(self) -> State:
        """Undo the last step exactly; at the start of the history, predict the state before with an inverse action."""
        self._current_record()
        if self._actions:
            self._actions.pop()
            self._records.pop()
            self._window = min(self._window, len(self._records) - 1)
            return self._records[-1].state
        state = self._records[0].state
        if state.reason is StopReason.ENTRY:
            raise SessionError("already at the start of the program: there is no earlier stop")
        return self._predict_inverse(ActionKind.INV_STEP_INTO)

    def predict_before(self, kind: ActionKind = ActionKind.INV_STEP_CALL) -> State:
        """Predict an earlier stop than the current one with an inverse action ("how did we get here?").

        inv_step_call: the first stop of the current function (its arguments); inv_step_over: the
        previous line of this frame; inv_step_into: the previous stop. The predicted state becomes
        the start of the history (marked `predicted_backwards`); `step_back` there predicts further
        back with inv_step_into. Raises SessionError at the module's entry, and for inv_step_call at
        module level (a module has no call).
        """
        if not kind.inverse:
            raise SessionError(f"{kind.value} is not an inverse action: use inv_step_call, inv_step_over or inv_step_into")
        state = self._current_record().state
        if state.finished:
            raise SessionError("the program has exited: step back to a stop first")
        if state.reason is StopReason.ENTRY:
            raise SessionError("already at the start of the program: there is no earlier stop")
        if kind is ActionKind.INV_STEP_CALL and (state.top is None or state.top.name == "<module>") and state.return_value is None:
            raise SessionError("inv_step_call needs a stop inside a function (or just after a call returned)")
        return self._predict_inverse(kind)

    def set_variable(self, name: str, value: str, frame_index: int = 0) -> State:
        """Set a local of the current state (value: a repr string); later steps predict from the edited state."""
        record = self._current_record()
        state = record.state.model_copy(deep=True)
        if not 0 <= frame_index < len(state.frames):
            raise SessionError(f"no frame {frame_index}: the stack has {len(state.frames)} frame(s)")
        if not name or lang._NAME_FORBIDDEN.search(name):
            raise SessionError(f"{name!r} is not a variable name")
        if not isinstance(value, str):
            raise SessionError("the new value must be a repr string, e.g. '42' or \"'text'\"")
        state.frames[frame_index].locals[name] = value
        previous = self._records[-2].state if len(self._records) > 1 and len(self._records) - 1 > self._window else None
        record.state = state
        record.ids = self._encode(lang.render_state(state, previous))
        record.edited.add((frame_index, name))
        return state

    @property
    def history(self) -> list[Step]:
        return [Step(action=a, state=r.state) for a, r in zip(self._actions, self._records[1:])]

    @property
    def state(self) -> State:
        return self._current_record().state

    @property
    def note(self) -> str | None:
        """Why the current state could not be predicted (None when it was)."""
        return self._current_record().note

    def confidence(self) -> dict[str, float]:
        """Calibrated confidence (0..1) of each local of the current top frame (see `variable_confidence`)."""
        return self.variable_confidence(0)

    def stop_confidence(self) -> float:
        """Calibrated probability that the current stop's location (reason and stack) is right.

        1 for a given state (the entry, a known state recorded with `append`); 0 for a prediction
        that failed or was cut off and closed; else the calibrated probability of the location's
        tokens (`model.decode.confidence`).
        """
        record = self._current_record()
        if record.generation is None:
            return 0.0 if record.note else 1.0
        if record.note:
            return 0.0
        return self.calibration.location(self._scores(record).location, code_kind(self.program))

    def variable_confidence(self, frame_index: int = 0) -> dict[str, float]:
        """Calibrated confidence (0..1) of each local of frame `frame_index` (0 = top) of the current state.

        A variable the prediction wrote: its ``"name":"repr"`` tokens' probability; one it kept
        (``..``): the lower of the ``..`` marker's probability and its earlier raw score; then calibrated.
        Values set by the user, and given (not predicted) states, are 1.
        """
        index = len(self._records) - 1
        self._current_record()
        frames = self._records[index].state.frames
        if not 0 <= frame_index < len(frames):
            return {}
        depth = len(frames) - 1 - frame_index
        return {name: self._calibrated_variable(index, depth, name) for name in frames[frame_index].locals}

    def return_confidence(self) -> float:
        """Calibrated confidence of the current stop's pending return value (1 when given, or when there is none)."""
        record = self._current_record()
        if record.generation is None:
            return 0.0 if record.note else 1.0
        raw = 0.0 if record.note else self._scores(record).return_value
        return 1.0 if raw is None else self.calibration.variable(raw, code_kind(self.program))

    @property
    def predicted(self) -> bool:
        """Whether the current state was predicted by the model (False: the entry, or a given state)."""
        record = self._current_record()
        return record.generation is not None or record.note is not None

    @property
    def predicted_backwards(self) -> bool:
        """Whether the current state was predicted with an inverse action (before the start of the history)."""
        return self._current_record().backwards

    def alternatives(self, name: str, frame_index: int = 0, count: int = 3, samples: int = 12,
                     floor: float = MIN_ALTERNATIVE) -> list[tuple[str, float]]:
        """The model's next most likely values of a predicted local of the current state, with calibrated confidences.

        The prompt that produced the current state, plus the generated text up to the value, is
        continued `samples` times by sampling (temperature 1), constrained to one JSON string;
        distinct values other than the shown one are ranked by the model's probability. Each one's
        confidence is P(the shown value is wrong) (calibrated) times the model's probability of that
        value among the values other than the shown one; those under `floor` are left
        out. Empty when the value was not
        written by the current prediction (given, edited, kept unchanged) or cannot be found.
        """
        index = len(self._records) - 1
        record = self._current_record()
        frames = record.state.frames
        if record.generation is None or record.note or not 0 <= frame_index < len(frames):
            return []
        depth = len(frames) - 1 - frame_index
        if (frame_index, name) in record.edited:
            return []
        from model.decode.confidence import layout, span_logprob, token_ends

        shape = layout(record.text)
        if depth >= len(shape.frames) or name not in shape.frames[depth].values:
            return []
        value_start, value_end = shape.frames[depth].values[name]
        pair_start = shape.frames[depth].pairs[name][0]
        gen = record.generation
        ends = token_ends(self.tokenizer, gen.token_ids)
        cut = sum(1 for end in ends if end <= value_start)  # generated tokens wholly before the value
        lead_from = ends[cut - 1] if cut else 0
        key_logprob = span_logprob(ends[:cut], gen.logprobs[:cut], [(pair_start, value_start)])
        prompt = self._prompt_for(index)
        if prompt is None:
            return []
        prompt = prompt + list(gen.token_ids[:cut])
        constraint = _JsonValueConstraint(record.text[lead_from:value_start])
        shown = json.loads(record.text[value_start:value_end])
        found: dict[str, float] = {}
        budget = max(8, 2 * (len(ends) - cut))  # the shown value's tokens, twice; a sample still open then is dropped
        for _ in range(max(0, samples)):
            if len(prompt) + budget >= self.max_model_len:
                break
            try:
                sample = self.backend.generate(prompt, max_tokens=budget, temperature=1.0, stop_ids=[self.stop_id], constraint=constraint)
            except BackendError:
                break
            closed = constraint.closed_at(sample.text)
            if closed is None:
                continue
            sample_ends = token_ends(self.tokenizer, sample.token_ids)
            used = next(i for i, end in enumerate(sample_ends) if end >= closed) + 1  # tokens up to the closing quote
            try:
                value = json.loads(sample.text[len(constraint.lead):closed])
            except (json.JSONDecodeError, ValueError):
                continue
            if not isinstance(value, str) or value == shown:
                continue
            found[value] = math.exp(key_logprob + sum(sample.logprobs[:used]))
        # P(alternative) = P(the shown value is wrong, calibrated) * the model's P(alternative | not the shown value)
        shown_raw = self._raw_variable(index, depth, name)
        wrong = 1.0 - self.calibration.variable(shown_raw, code_kind(self.program))
        ranked = sorted(found.items(), key=lambda kv: -kv[1])
        scored = [(value, wrong * raw / max(1e-12, 1.0 - shown_raw)) for value, raw in ranked]
        return [(value, min(1.0, p)) for value, p in scored if p >= floor][: max(0, count)]

    def close(self) -> None:
        self.backend.close()
        for companion in self.companions:
            companion.close()

    # ----------------------------------------------------------- prediction

    def _current_record(self) -> StateRecord:
        if not self._records:
            raise SessionError("the session has not started: call start() first")
        return self._records[-1]

    def _predict(self, action: Action) -> StateRecord:
        previous = self._records[-1].state
        outcome = self._generate_or_rank(self._prompt_ids(action), previous, action, returned=self._returned_call())
        if isinstance(outcome, StateRecord):
            return outcome
        stay = previous.model_copy(deep=True)
        if not stay.finished:
            stay.reason = StopReason.STEP
        stay.return_value, stay.exception, stay.stdout = None, None, ""
        return StateRecord(state=stay, ids=self._encode(lang.render_state(stay, previous)),
                           note=f"{outcome}; the session did not move: still at the previous stop")

    @property
    def moved(self) -> bool:
        """False when the last step could not be predicted and the session stayed at the stop before it."""
        record = self._current_record()
        return not (record.note and record.generation is None and len(self._records) > 1)

    def _generate_state(self, prompt: list[int], previous: State, action: Action | None = None,
                        breakpoints: Sequence[int] | None = None, temperature: float | None = None,
                        backend: Backend | None = None, spec: DecodingSpec | None = None) -> StateRecord | str:  # fmt: skip
        """The predicted state after `previous`, or why there is none.

        A greedy (or configured) attempt first; if its text does not parse, or runs out of tokens,
        one more with twice the tokens and some sampling (`retry_temperature`; None keeps the
        session's temperature, e.g. greedy for evaluation); a text still cut off is closed
        (`close_text`) and noted; a text the step budget cut is first trimmed where a repetition began, and in a bounded step a
        value that runs into a repetition is stopped where it began (`stop_repeats`, "repeat") and closed alike. For an
        inverse action (an earlier stop: some answer beats none) a text cut off inside a repetition (`model.decode.cut_values.runaway`) is not retried but trimmed to
        where the repetition began (plus two periods), and a cut text is closed with its open repr
        (`close_text(..., close_values=True)`). Forward actions keep the plain closers: closing their
        runaways too cost held-out location and CruxEval-O (docs/model-notes.md, session 10). With
        `action` (and `flow_constraint`), the stop is narrowed to static control flow (`breakpoints`:
        the program's, default the session's). `temperature`: instead of the session's. `backend`: the
        model that answers (default the session's; a companion when ranking an ensemble's answers). `spec`: the step's
        decoding spec (`model.decode.spec`; default: built for `previous`, `action` and `breakpoints`), whose grammar the
        backend enforces and whose plan gives the tokens and the retry.
        """
        spec = spec or self._step_spec(previous, action, breakpoints)
        constraint, plan = spec.grammar, spec.plan
        spending = self._spending
        backwards = action is not None and action.kind.inverse  # an earlier stop: some answer beats none
        model = self.backend if backend is None else backend
        failure = ""
        cut: tuple[str, Generation] | None = None
        base = plan.temperature if temperature is None else temperature
        for attempt in range(2):
            temperature = base if attempt == 0 or plan.retry_temperature is None else max(base, plan.retry_temperature)
            max_tokens = plan.max_tokens * (1 + attempt)
            if spending is not None:
                if attempt and spending.exhausted():
                    spending.cut("no second attempt")
                    break
                max_tokens = spending.limit(max_tokens)
            try:
                gen = model.generate(prompt, max_tokens=max_tokens, temperature=temperature, stop_ids=[self.stop_id], constraint=constraint,
                                     **self._budget_kwargs(spending))
            except BackendError as exc:
                raise SessionError(f"the model backend failed: {exc}") from None
            self.prefill_log.append(gen.prefilled)
            if spending is not None:
                spending.spend(len(gen.token_ids) + (gen.stop_token is not None))
            text = self.tokenizer.decode(gen.token_ids, skip_special_tokens=False)
            if gen.finish_reason == "deadline" or (spending is not None and gen.finish_reason == "length" and spending.exhausted()):
                # a text the budget cut inside a repetition is trimmed where the repetition began: closing it scans
                # back over every character, which cost a second more than the budget on a 600-character runaway
                failure, cut = "the prediction was cut after its step budget", (trim_runaway(text), gen)
                if spending is not None:
                    spending.cut(f"a prediction cut after {len(gen.token_ids)} tokens")
                break
            if gen.finish_reason == "repeat":  # a runaway value stopped as it began (`stop_repeats`), not at the deadline
                found = tail_runaway(text)
                failure, cut = "the prediction ran into a repetition", (text if found is None else found.cut(text), gen)
                break
            if gen.finish_reason in ("length", "error", "rejected"):  # out of tokens, no allowed token left, refused by the grammar's checks
                failure, cut = f"the predicted state did not end within {max_tokens} tokens", (text, gen)
                if gen.finish_reason == "rejected" and constraint is not None:
                    failure = f"the predicted state breaks the grammar's {' / '.join(constraint.unfolded)} check"
                repetition = runaway(text) if backwards and gen.finish_reason == "length" else None
                if repetition is not None:
                    failure = f"the predicted state ran into a repetition and did not end within {max_tokens} tokens"
                    cut = (repetition.cut(text), gen)  # more tokens only repeat further
                    break
                continue
            try:
                state = lang.parse_state(text, previous, self.program, self.modules)
            except lang.ParseError as exc:
                failure = f"the predicted state does not parse: {exc}"
                continue
            return StateRecord(state=state, ids=self._generated_ids(gen, text), generation=gen, text=text)
        closed = close_text(cut[0], constraint, close_values=backwards) if cut is not None and constraint is not None else None
        if closed is not None and cut is not None:
            try:
                state = lang.parse_state(closed, previous, self.program, self.modules)
            except lang.ParseError:
                return failure
            note = f"{failure}; the prediction was cut there and closed"
            return StateRecord(state=state, ids=self._encode(closed + lang.STOP_TOKEN), generation=cut[1], text=closed, note=note)
        return failure

    @staticmethod
    def _budget_kwargs(spending: Spending | None) -> dict[str, Any]:
        """What a bounded step asks of the backend beyond an unbounded one: its deadline, and to stop a value that runs into a
        repetition as it begins (`stop_repeats`: a runaway otherwise spent the whole budget, docs/speed.md). Evaluation
        sessions have no budget and decode as before."""
        if spending is None:
            return {}
        kwargs: dict[str, Any] = {"stop_repeats": True}
        if spending.deadline is not None:
            kwargs["deadline"] = spending.deadline
        return kwargs

    def _step_spec(self, previous: State, action: Action | None, breakpoints: Sequence[int] | None = None,
                   kind: ActionKind | None = None, returned: str | None = None) -> DecodingSpec:  # fmt: skip
        """The decoding spec of the next state (`model.decode.spec`), built once per stop asked: every attempt, candidate
        and companion shares it. `kind`: the action asked when `action` is None (an answer not narrowed by it).
        `returned`: the function whose call came back to `previous` (`model.static.reach.returned_call`)."""
        options = self._spec_options()
        bps = tuple(self._breakpoints if breakpoints is None else breakpoints)
        kind = action.kind if action is not None else kind
        enter = self._enter_call
        key = (lang.render_state(previous, None), action.model_dump_json() if action is not None else None, bps, kind, options,
               self.program, tuple(sorted(self.modules.items())), enter, returned, tuple(sorted((f, tuple(lines)) for f, lines in self._file_breakpoints.items())))  # fmt: skip
        if key != self._spec_key or self._spec is None:
            self._spec = build_spec(self.program, previous, action, options, modules=self.modules, breakpoints=bps, kind=kind,
                                    enter=enter, returned=returned, file_breakpoints=self._file_breakpoints)  # fmt: skip
            self._spec_key = key
        return self._spec

    def _returned_call(self) -> str | None:
        """The function whose call came back to the current stop, when the history says it is a step's stop back on its
        calling line (`model.static.reach.returned_call`)."""
        if len(self._records) < 2 or not self._actions:
            return None
        return returned_call(self._records[-2].state, self._actions[-1].kind, self._records[-1].state)

    def _spec_options(self) -> SpecOptions:
        """The session's settings as they are now (an evaluation may change them after construction)."""
        return SpecOptions(rules=self.rules, constrained=self.constrained, flow_constraint=self.flow_constraint, repr_check=self.repr_check,
                           candidates=self.candidates, call_candidates=self.call_candidates, coarse_candidates=self.coarse_candidates,
                           check_weight=self.check_weight, evidence_weight=self.evidence_weight, stale_penalty=self.stale_penalty,
                           temperature=self.temperature, max_state_tokens=self.max_state_tokens,
                           retry_temperature=self.retry_temperature, ensemble_kinds=self.ensemble_kinds)  # fmt: skip

    def _predict_inverse(self, kind: ActionKind) -> State:
        """The state before the current one, predicted from the inverse chain (late state, then earlier ones).

        The chain goes on from the current state when it is where the chain ended (the start of the
        history); from any other stop it starts afresh there, and the forward history is left.
        """
        first = self._records[-1].state
        chain = list(self._inverse)
        if not chain or _chain_end(chain) != first:
            chain = [first]
        action = Action(kind=kind)
        self._spending = self.budget.start() if self.budget is not None else None
        listing = lang.window_listing(None, first, self.program, self._listing_context(), self._count,
                                 breakpoints=self._all_breakpoints(), modules=self.modules)
        prompt = self._encode(lang.render_prompt(self.program, self._all_breakpoints(), chain, action, listing, self.modules))
        if len(prompt) + self.max_state_tokens > self.max_model_len:
            chain = [first]
            prompt = self._encode(lang.render_prompt(self.program, self._all_breakpoints(), chain, action, listing, self.modules))
        record = self._generate_or_rank(prompt, first, action)
        if not isinstance(record, StateRecord):
            raise SessionError(f"cannot step back further: the model's prediction of the earlier stop is not a state ({record})")
        chain.append(Step(action=action, state=record.state))
        self._inverse = chain
        record.backwards = True
        if record.generation is not None and record.note is None:
            record.scores = self._raw_scores(record)  # of the text as generated (a delta against the later state)
        record.ids = self._encode(lang.render_state(record.state, None))
        self._records, self._actions, self._window, self._listing = [record], [], 0, None
        self._remark(record)
        return record.state

    def _generate_or_rank(self, prompt: list[int], previous: State, action: Action | None,
                          breakpoints: Sequence[int] | None = None, kind: ActionKind | None = None,
                          returned: str | None = None) -> StateRecord | str:  # fmt: skip
        """`_generate_state`, or the best of several answers (`model.decode.rerank`) when the step's plan draws more than
        one (`model.decode.spec.sampling_plan`: `call_candidates` after inv_step_call, `coarse_candidates` after step_return,
        continue, breakpoint, `candidates` after any other). `kind`: the action asked, when `action` is None (an
        unnarrowed answer, as next-state evaluation asks inverse actions). `returned`: the function whose call came back
        to `previous` (`model.static.reach.returned_call`; the session's own steps read it from the history)."""
        spec = self._step_spec(previous, action, breakpoints, kind, returned)
        count = spec.plan.count
        if count <= 1 or not isinstance(self.backend, Scorer):  # one answer, or nothing to rank them by: the greedy answer
            return self._generate_state(prompt, previous, action, breakpoints, spec=spec)
        ranked = self.ranked_candidates(prompt, previous, action, count, breakpoints, kind, spec=spec)
        self.ranking = [(record.state, candidate) for record, candidate in ranked]
        if not ranked:
            return self._generate_state(prompt, previous, action, breakpoints, spec=spec)  # none parsed: the greedy answer's own failure message
        return ranked[spec.scoring.best([c for _, c in ranked])][0]

    def _candidate_count(self, kind: ActionKind | None) -> int:
        """How many answers the plan draws after an action of `kind` (see `_generate_or_rank`); one without `rules.ranking`."""
        return sampling_plan(kind, self._spec_options()).count

    def ranked_candidates(self, prompt: list[int], previous: State, action: Action | None, count: int,
                          breakpoints: Sequence[int] | None = None, kind: ActionKind | None = None,
                          spec: DecodingSpec | None = None) -> list[tuple[StateRecord, Candidate]]:  # fmt: skip
        """Up to `count` distinct predicted stops after `previous` (the greedy answer, then samples), each
        scored by the step's scoring rule (`model.decode.spec.ScoringRule`); `prompt` asks `action` (None: not narrowed
        by it, as `_generate_state`). When the plan says so (`ensemble`: after an action in `ensemble_kinds`), each
        companion draws `count` answers too (its greedy one, then samples) and an answer's likelihood is its mean
        log-probability under the session's model and the companions (`kind`: the action asked, when `action` is None)."""
        spec = spec or self._step_spec(previous, action, breakpoints, kind)
        members = [self.backend, *self.companions] if spec.plan.ensemble else [self.backend]
        records: dict[str, tuple[StateRecord, bool]] = {}
        spending = self._spending
        for m, member in enumerate(members):
            for i, temperature in enumerate(spec.plan.draw_temperatures(count)):
                if spending is not None and (i or m) and spending.exhausted():
                    spending.cut(f"{len(records)} answer(s) drawn of {count * len(members)}")
                    break
                record = self._generate_state(prompt, previous, action, breakpoints, temperature=temperature, backend=member, spec=spec)
                if isinstance(record, StateRecord):
                    records.setdefault(lang.render_state(record.state, None), (record, m == 0 and i == 0))
        scorer = self.backend if isinstance(self.backend, Scorer) else None
        scorers = [b for b in members if isinstance(b, Scorer)] if scorer is not None else []
        out = []
        for text, (record, greedy) in records.items():
            logprobs = [self._token_logprobs(s, prompt, record.ids) for s in scorers]
            check = self._forward_to(scorer, record.state, previous) if scorer is not None and spec.scoring.checks else None
            out.append((record, spec.scoring.candidate(text, record.state, logprobs, greedy=greedy, check=check)))
        return out

    def _forward_to(self, scorer: Scorer, earlier: State, later: State) -> float:
        """log P(`later` | `earlier`, step_return): the teacher-forced forward check of a candidate (no breakpoints)."""
        step_return = Action(kind=ActionKind.STEP_RETURN)
        try:
            listing = lang.window_listing(None, earlier, self.program, self._listing_context(), self._count, modules=self.modules)
            prompt = self._encode(lang.render_prompt(self.program, [], [earlier], step_return, listing, self.modules))
            target = self._encode(lang.render_state(later, earlier))
        except (ValueError, SessionError):
            return -math.inf
        return self._score(scorer, prompt, target)

    def _score(self, scorer: Scorer, prompt: list[int], target: list[int]) -> float:
        logprobs = self._token_logprobs(scorer, prompt, target)
        return -math.inf if logprobs is None else float(sum(logprobs))

    def _token_logprobs(self, scorer: Scorer, prompt: list[int], target: list[int]) -> list[float] | None:
        """The teacher-forced log-probability of each id of `target` after `prompt`; None when it cannot be scored."""
        if len(prompt) + len(target) > self.max_model_len:
            return None
        try:
            return [float(x) for x in scorer.score(prompt, target)]
        except BackendError:
            return None

    # --------------------------------------------------------------- prompt

    def _generated_ids(self, gen: Generation, text: str) -> list[int]:
        """The ids a generated state stands for in later prompts: the model's own (the KV cache holds them); for a
        value-chars model, the text encoded the way it was trained when the generation tokenized it otherwise."""
        ids = list(gen.token_ids) + [self.stop_id]
        if self._value_chars:
            canonical = self._encode(text + lang.STOP_TOKEN)
            if canonical != ids:
                return canonical
        return ids

    def _prompt_ids(self, action: Action) -> list[int]:
        """Header, the window's first state in full, then (action, state) ids, then `action`.

        The listing follows the current stop (`model.prompt.language.window_listing`, asked at every
        prompt): it is kept while it covers the stop and fits beside it, so the cached prefix stays
        valid; a new listing starts a new window at the stop it was chosen for. A prompt too long
        moves the window start under the same listing. Training windows follow the same sequence
        of listings (`language.render_windows`).
        """
        action_ids = self._encode(lang.render_action(action))
        budget = self.max_model_len - self.max_state_tokens
        last = len(self._records) - 1
        listing = lang.window_listing(self._listing, self._records[last].state, self.program, self._listing_context(), self._count,
                                 breakpoints=self._all_breakpoints(), modules=self.modules)
        if listing != self._listing:
            self._listing, self._header_ids, self._window = listing, None, last
        if self._prompt_len(self._window) + len(action_ids) > budget:
            self._window = self._choose_window(budget - len(action_ids))
            if self._prompt_len(self._window) + len(action_ids) > budget:
                raise SessionError(f"the program and its current state do not fit the model's context of {self.max_model_len} tokens")
        return self._assemble(self._window) + action_ids

    def _listing_context(self) -> int:
        """The context the listing rule sizes windows for: the model's, less any state budget above the rule's reserve."""
        return self.max_model_len - max(0, self.max_state_tokens - STATE_RESERVE)

    def _count(self, text: str) -> int:
        """Tokens of `text`, remembered (the listing rule asks for the same lines and listing at every step)."""
        count = self._token_counts.get(text)
        if count is None:
            if len(self._token_counts) > 20000:
                self._token_counts.clear()
            count = self._token_counts[text] = len(self._encode(text))
        return count

    def _assemble(self, start: int) -> list[int]:
        ids = list(self._header())
        first = self._records[start]
        ids += first.ids if start == 0 else self._encode(lang.render_state(first.state, None))
        for action, record in zip(self._actions[start:], self._records[start + 1 :]):
            ids += self._encode(lang.render_action(action)) + record.ids
        return ids

    def _prompt_len(self, start: int) -> int:
        return len(self._assemble(start))

    def _choose_window(self, budget: int) -> int:
        """The latest start leaving about a quarter of the budget free (half the room after a long
        header, e.g. a bounded listing), so the window then stays put a while."""
        last = len(self._records) - 1
        header = len(self._header())
        target = max(budget * 3 // 4, header + (budget - header) // 2)
        for start in range(last, self._window - 1, -1):
            if self._prompt_len(start) > target:
                return min(start + 1, last)
        return self._window

    def _header(self) -> list[int]:
        if self._header_ids is None:
            self._header_ids = self._encode(lang.render_header(self.program, self._all_breakpoints(), self._listing, self.modules))
        return self._header_ids

    def _encode(self, text: str) -> list[int]:
        return encode_text(self.tokenizer, text, self._value_chars)  # as the model was trained: value chars when it has the flag

    def _special_id(self, token: str) -> int:
        token_id = self.tokenizer.convert_tokens_to_ids(token)
        if token_id is None or token_id == getattr(self.tokenizer, "unk_token_id", -1) or self.tokenizer.decode([token_id]) != token:
            raise SessionError(f"the checkpoint's tokenizer lacks the special token {token}: is it a neural-debugger checkpoint?")
        return int(token_id)

    # ----------------------------------------------------------- confidence

    def _scores(self, record: StateRecord) -> RawScores:
        if record.scores is None:
            record.scores = self._raw_scores(record)
        return record.scores

    def _raw_scores(self, record: StateRecord) -> RawScores:
        gen = record.generation
        assert gen is not None
        return raw_scores(self.tokenizer, gen.token_ids, gen.logprobs, record.text)

    def _raw_variable(self, index: int, depth: int, name: str) -> float:
        """Raw probability of local `name` of frame `depth` (outermost = 0) in record `index`: the lowest along its kept values."""
        product = 1.0  # the minimum so far
        while True:
            record = self._records[index]
            frames = record.state.frames
            if (len(frames) - 1 - depth, name) in record.edited:
                return product
            if record.generation is None:
                return 0.0 if record.note else product
            if record.note:
                return 0.0
            scores = self._scores(record)
            if depth >= len(scores.frames):
                return product
            if name in scores.frames[depth]:
                return min(product, scores.frames[depth][name])
            rest = scores.rest[depth]
            if rest is None:
                return product
            product = min(product, rest)
            if index == 0 or not _holds(self._records[index - 1].state, depth, name):
                return product
            index -= 1

    def _calibrated_variable(self, index: int, depth: int, name: str) -> float:
        record = self._records[index]
        if (len(record.state.frames) - 1 - depth, name) in record.edited or record.generation is None and not record.note:
            return 1.0
        return self.calibration.variable(self._raw_variable(index, depth, name), code_kind(self.program))

    def _prompt_for(self, index: int) -> list[int] | None:
        """The prompt (ids) that the current record answered, rebuilt from the history; None when it cannot be."""
        record = self._records[index]
        if index != len(self._records) - 1 or index == 0 or self._window >= index:
            return None
        ids = self._assemble(self._window)
        if len(ids) >= self.max_model_len or ids[len(ids) - len(record.ids):] != record.ids:
            return None
        return ids[: len(ids) - len(record.ids)]


class _JsonValueConstraint:
    """Fixed lead text (e.g. ``":``), then one JSON string; after its closing quote anything (cut off by the caller)."""

    def __init__(self, lead: str) -> None:
        self.lead = lead
        self.regex = re.escape(lead) + r'"(?:[^"\\\x00-\x1f]|\\.)*".*'

    def closed_at(self, text: str) -> int | None:
        """Index just past the JSON string's closing quote in `text`, None while it is open (or `text` does not fit)."""
        if not text.startswith(self.lead):
            return None
        try:
            return json_string_end(text, len(self.lead))
        except ValueError:  # not a string (yet), or still open
            return None

    def allows(self, text: str) -> bool:
        if len(text) <= len(self.lead):
            return self.lead.startswith(text)
        if not text.startswith(self.lead) or text[len(self.lead)] != '"':
            return False
        closed = self.closed_at(text)
        body = text[len(self.lead) + 1 : closed]
        # a value never holds a raw "|" (it is written \u007c), so no special token; no control characters
        return not any(ch == "|" or ch < " " for ch in body)

    def complete(self, text: str) -> bool:
        return self.closed_at(text) is not None


def _holds(state: State, depth: int, name: str) -> bool:
    """Whether frame `depth` (outermost = 0) of `state` has a local `name`."""
    frames = state.frames
    return depth < len(frames) and name in frames[len(frames) - 1 - depth].locals


def _chain_end(chain: list[State | Step]) -> State:
    last = chain[-1]
    return last.state if isinstance(last, Step) else last


def _load_tokenizer(folder: str | Path) -> Any:
    from model.backends.hf import TRANSFORMERS_LOCK  # light: torch/transformers are imported lazily there

    try:
        with TRANSFORMERS_LOCK:
            from transformers import AutoTokenizer

            return AutoTokenizer.from_pretrained(str(folder))
    except (OSError, ValueError) as exc:
        raise SessionError(f"cannot load the tokenizer of {folder}: {exc}") from None


def _context_length(folder: str | Path) -> int | None:
    try:
        config = json.loads((Path(folder) / "config.json").read_text())
    except (OSError, ValueError):
        return None
    value = config.get("max_position_embeddings")
    return int(value) if isinstance(value, int) else None
