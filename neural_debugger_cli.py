"""The `neural-debugger` command.

Each package owns its own typer app in its `cli.py`; this module only mounts them, lazily, so
`neural-debugger dap` does not pay for importing torch or the training code.
"""
from __future__ import annotations

import importlib

import click
import typer

# command name -> ("module:attribute" of a typer.Typer, one-line help shown by --help)
COMMANDS: dict[str, tuple[str, str]] = {
    "dap": ("adapter.cli:app", "Serve the Debug Adapter Protocol on stdio (or --port N on 127.0.0.1)."),
    "demo": ("adapter.demo:app", "Step through an example program with the shipped model, predicted vs real."),
    "tracegen": ("tracegen.cli:app", "Record real debugger sessions (record) and make training data (synth)."),
    "serve-model": ("model.cli:app", "Serve a checkpoint with vLLM (GPU)."),
    "train": ("train.cli:app", "Train or fine-tune a neural debugger model."),
    "eval": ("train.eval_cli:app", "Evaluate a model: CruxEval and next-state fidelity."),
}


class LazyGroup(click.Group):
    """A click group whose subcommands are imported only when invoked."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        target, help_text = COMMANDS[cmd_name]
        if ctx.resilient_parsing or "--help" in ctx.args:
            pass
        module_name, _, attr = target.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name and module_name.startswith(exc.name.split(".")[0]):
                return click.Command(cmd_name, help=f"{help_text} (not available: {exc})", callback=_unavailable(cmd_name, exc))
            raise
        command = typer.main.get_command(getattr(module, attr))
        command.name = cmd_name
        if not command.help:
            command.help = help_text
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, help_text) for name, (_, help_text) in COMMANDS.items()])


def _unavailable(name: str, exc: Exception):  # noqa: ANN202
    def callback() -> None:
        raise click.ClickException(f"`{name}` is not available in this installation: {exc}")

    return callback


cli = LazyGroup(name="neural-debugger", help="Step through Python without running it: a debugger whose every stop is predicted by a language model.")


def main() -> None:
    cli()


if __name__ == "__main__":
    main()
