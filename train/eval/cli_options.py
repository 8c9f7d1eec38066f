"""The options `eval cruxeval`, `eval fidelity` and `eval next-state` share (one definition, one help text each)."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from model.decoding import Decoding

DECODING_HELP = ("full: every decode-time rule (model.decoding); plain: the model alone, constrained to well-formed states and "
                 "static control flow, one greedy answer per stop, no companions")

ModelOpt = Annotated[Path | None, typer.Option(help="checkpoint folder (default: the shipped checkpoints/default)")]
VllmUrlOpt = Annotated[str | None, typer.Option(help="a `vllm serve` URL for --backend vllm")]
ConstrainedOpt = Annotated[bool, typer.Option(help="constrain decoding to well-formed states")]
FlowConstraintOpt = Annotated[bool, typer.Option(help="narrow each stop to static control flow (model.static.flow)")]
ReprCheckOpt = Annotated[bool, typer.Option(help="never write an impossible repr (duplicate keys, unbalanced brackets)")]
ThreadsOpt = Annotated[int, typer.Option(min=1, help="torch CPU threads for decoding")]
CandidatesOpt = Annotated[int, typer.Option(min=1, help="answers drawn per predicted stop (greedy, then samples), the most likely kept (model.decode.rerank); every other action")]
CallCandidatesOpt = Annotated[int | None, typer.Option(min=1, help="the same for inv_step_call, a call's arguments (default: model.decode.rerank's, 8)")]
CoarseCandidatesOpt = Annotated[int | None, typer.Option(min=1, help="the same for step_return, continue and breakpoint (default: model.decode.rerank's)")]
CheckWeightOpt = Annotated[float | None, typer.Option(help="weight of the backward check in the ranking (inv_step_call after a return; default model.decode.rerank's)")]
EvidenceWeightOpt = Annotated[float | None, typer.Option(help="log-probability taken off an inv_step_call answer per argument use it contradicts (model.decode.arg_evidence; default model.decode.rerank's)")]
StalePenaltyOpt = Annotated[float | None, typer.Option(help="log-probability taken off a step_return/continue/breakpoint answer that loops back in the same frame changing nothing (model.decode.rerank; default model.decode.rerank's)")]
SampleSeedOpt = Annotated[int, typer.Option(help="seed of the sampled answers (the ranked ones); with --seed-per-draw, each seed is an independent draw of the same decoding")]
SeedPerDrawOpt = Annotated[bool, typer.Option("--seed-per-draw/--one-generator", help="each sampled answer draws from its own seed (reproducible with any --workers; model.backends.hf); --one-generator: one generator per process")]
SoloOpt = Annotated[bool, typer.Option(help="no companion models, whatever the checkpoint's ensemble.json names (model.backends.ensemble)")]
DecodingOpt = Annotated[Decoding, typer.Option(help=DECODING_HELP)]
ProgressOpt = Annotated[bool, typer.Option(help="show a progress bar")]
CoarseStepsOpt = Annotated[str, typer.Option(help="how Continue, Step Out and a run to a breakpoint are predicted: model (one jump), fine (successive fine steps), auto (fine steps while a breakpoint can be reached: the adapter's coarseSteps default)")]
StepTokensOpt = Annotated[int | None, typer.Option(min=1, help="tokens one step may decode over all its attempts, candidates and fine steps (the adapter's stepTokens, 640; no time limit, so a run is reproducible); default unbounded")]
