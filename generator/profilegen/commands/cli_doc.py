"""`profilegen cli-doc`: docs/CLI.md, the command-line reference, generated from the commands.

Hidden: a maintainer's command (`make cli-doc`). It walks the click group as it is, so the page
can only say what the commands take; a test fails when the checked-in page differs.
"""

from __future__ import annotations

from collections.abc import Iterator

import click

from ..errors import EXIT_FINDINGS, EXIT_OK
from ..fit.options import WHAT_IF_SETTINGS
from ..model.vocabulary import SETTINGS
from ..write import write_files
from .common import Command, Context, DefaultGroup, pass_context

PAGE = "docs/CLI.md"
HEADER = """# Command-line reference

Generated from the commands themselves by `make cli-doc`; a test fails when this page is out
of date. `profilegen COMMAND --help` says the same, with every option's help.

Every command exits **0** when it did what was asked, **1** on findings (the column below; any
command also exits 1 when the registry it reads has errors), **2** on a usage or input error or
a service that cannot be reached, and **3** on a bug in profilegen (with a hint to report it).
Results go to stdout; progress and diagnostics to stderr. `--format json` prints the same
result as one JSON document. `--offline` (or `HF_HUB_OFFLINE=1`) keeps a command that can
reach the network off it.
"""


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def walk(group: click.Group, ctx: click.Context) -> Iterator[tuple[click.Context, click.Command]]:
    """Every command a user can run, depth first, in name order; a group with a default
    command (`fit PROFILE`) is that command, under the group's name."""
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if command is None or command.hidden:
            continue
        sub = click.Context(command, info_name=name, parent=ctx)
        if isinstance(command, DefaultGroup):
            yield click.Context(command.default_command(), info_name=name, parent=ctx), command
        if isinstance(command, click.Group):
            yield from walk(command, sub)
        else:
            yield sub, command


def _option(param: click.Option, ctx: click.Context) -> str:
    names = ", ".join(f"`{n}`" for n in [*param.opts, *param.secondary_opts])
    if param.is_flag:
        return names
    if isinstance(param.type, click.Choice):
        return f"{names} " + "\\|".join(str(c) for c in param.type.choices)
    return f"{names} {param.make_metavar(ctx)}"


def _formats(command: click.Command) -> str:
    for param in command.params:
        if param.name == "fmt" and isinstance(param.type, click.Choice):
            return ", ".join(str(c) for c in param.type.choices)
    return ""


def _exit_1(command: click.Command) -> str:
    return command.exit_1 if isinstance(command, Command) else ""


def _usage(ctx: click.Context, command: click.Command) -> str:
    words = [p.make_metavar(ctx) for p in command.params if isinstance(p, click.Argument)]
    return " ".join([ctx.command_path, *words])


def _summary(ctx: click.Context, command: click.Command) -> list[str]:
    lines = [
        "| command | --format | --offline | exit 1 when |",
        "|---|---|---|---|",
    ]
    for sub, cmd in walk(command, ctx) if isinstance(command, click.Group) else ():
        offline = "yes" if any(p.name == "offline" for p in sub.command.params) else ""
        own = sub.command
        lines.append(
            f"| [`{_cell(_usage(sub, own))}`](#{_anchor(sub)}) | {_formats(own)} | {offline} "
            f"| {_cell(_exit_1(own) or _exit_1(cmd))} |"
        )
    return lines


def _anchor(ctx: click.Context) -> str:
    return ctx.command_path.replace(" ", "-")


def _details(ctx: click.Context) -> list[str]:
    command = ctx.command
    lines = [f'<a id="{_anchor(ctx)}"></a>', f"### `{_usage(ctx, command)}`", ""]
    lines += [_cell(command.get_short_help_str(limit=300)), ""]
    options = [p for p in command.params if isinstance(p, click.Option) and not p.hidden]
    if options:
        lines += ["| option | default | what |", "|---|---|---|"]
        for param in options:
            default = param.default if param.show_default and not param.is_flag else None
            shown = "required" if param.required else f"`{default}`" if default else ""
            lines.append(f"| {_option(param, ctx)} | {shown} | {_cell(param.help or '')} |")
        lines.append("")
    old = [p for p in command.params if isinstance(p, click.Option) and p.hidden]
    if old:
        lines += ["Earlier spellings, still taken for one release (with a note on stderr):", ""]
        lines += [f"- {_option(p, ctx)}: {_cell(p.help or '')}" for p in old]
        lines.append("")
    return lines


def _settings() -> list[str]:
    lines = [
        "## Envelope settings",
        "",
        "`fit --set`, `new --set` and `explain -e` take a setting by its registry path, or by an",
        "alias: fit's option, or a variable an engine reads it from (`explain -e` sets the one",
        "the profile's engine reads).",
        "",
        "| setting | `fit` varies it | fit option | variables |",
        "|---|---|---|---|",
    ]
    for s in SETTINGS:
        if s.aliases or s.path in WHAT_IF_SETTINGS:
            option = f"`--{s.option}`" if s.option else ""
            fit = "yes" if s.path in WHAT_IF_SETTINGS else ""
            env = ", ".join(f"`{e}`" for e in s.env)
            lines.append(f"| `{s.path}` | {fit} | {option} | {env} |")
    others = [s.path for s in SETTINGS if not s.aliases and s.path not in WHAT_IF_SETTINGS]
    lines += [
        "",
        "Every other field of the envelope goes by its path alone: "
        + ", ".join(f"`{p}`" for p in others)
        + ".",
    ]
    return lines


def cli_reference(group: click.Group) -> str:
    """The page: every command with its formats, --offline and exit 1, then each one's
    options, then the envelope settings' spellings."""
    ctx = click.Context(group, info_name="profilegen")
    globals_ = [p for p in group.params if isinstance(p, click.Option) and not p.hidden]
    lines = [HEADER, "## Commands", "", *_summary(ctx, group), "", "## Global options", ""]
    lines += ["| option | what |", "|---|---|"]
    lines += [f"| {_option(p, ctx)} | {_cell(p.help or '')} |" for p in globals_]
    lines += ["", "## Options, command by command", ""]
    for sub, _command in walk(group, ctx):
        lines += _details(sub)
    lines += _settings()
    return "\n".join(lines) + "\n"


@click.command("cli-doc", cls=Command, hidden=True, exit_1="--check: docs/CLI.md is stale")
@click.option("--check", is_flag=True, help="Only say whether docs/CLI.md is up to date.")
@pass_context
def command(obj: Context, check: bool) -> int:
    """Write docs/CLI.md from the commands (a maintainer's command: `make cli-doc`)."""
    root = click.get_current_context().find_root().command
    assert isinstance(root, click.Group)
    text = cli_reference(root).encode()
    path = obj.root / PAGE
    if check:
        stale = not path.is_file() or path.read_bytes() != text
        if stale:
            click.echo(f"{PAGE}: stale (run `make cli-doc`)", err=True)
        return EXIT_FINDINGS if stale else EXIT_OK
    for written in write_files({path: text}, root=obj.root):
        click.echo(f"wrote {written.relative_to(obj.root).as_posix()}")
    return EXIT_OK
