"""The `neural-debugger` command.

Each package owns its own typer app in its `cli.py`; this module only dispatches to them, lazily,
so `neural-debugger dap` does not pay for importing torch or the training code.
"""
from __future__ import annotations

import importlib
import sys

# command name -> ("module:attribute" of a typer.Typer, one-line help shown by --help)
COMMANDS: dict[str, tuple[str, str]] = {
    "dap": ("adapter.cli:app", "Serve the Debug Adapter Protocol on stdio (or --port N on 127.0.0.1)."),
    "mcp": ("adapter.mcp_server.cli:app", "Serve MCP tools for coding agents: step through code, predict calls, verify (stdio or --http PORT)."),
    "demo": ("adapter.demo:app", "Step through an example program with the shipped model, predicted vs real."),
    "tracegen": ("tracegen.cli:app", "Record real debugger sessions (record) and make training data (synth)."),
    "serve-model": ("model.cli:app", "Serve a checkpoint with vLLM (GPU)."),
    "train": ("train.cli:app", "Train or fine-tune a neural debugger model."),
    "eval": ("train.eval.cli:app", "Evaluate a model: CruxEval and next-state fidelity."),
    "ablate": ("train.eval.ablate_cli:app", "Does a lever help? Train levers on fixed data for the same budget, evaluate, tabulate."),
}
PROG = "neural-debugger"


def usage() -> str:
    width = max(map(len, COMMANDS))
    lines = [
        f"Usage: {PROG} COMMAND [ARGS]...",
        "",
        "  Step through Python without running it: a debugger whose every stop is predicted",
        "  by a language model.",
        "",
        "Commands:",
    ]
    lines += [f"  {name.ljust(width)}  {help_text}" for name, (_, help_text) in COMMANDS.items()]
    lines += ["", f"Run `{PROG} COMMAND --help` for a command's options."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        print(usage())
        raise SystemExit(0 if args else 2)
    name, rest = args[0], args[1:]
    if name not in COMMANDS:
        print(f"{PROG}: unknown command {name!r}\n\n{usage()}", file=sys.stderr)
        raise SystemExit(2)
    module_name, _, attr = COMMANDS[name][0].partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        print(f"{PROG} {name}: not available in this installation ({exc})", file=sys.stderr)
        raise SystemExit(1) from None
    app = getattr(module, attr)
    app(args=rest, prog_name=f"{PROG} {name}")


if __name__ == "__main__":
    main()
