"""The CLI explains itself: every option has a help text, and docs/cli.md shows every command
with exactly the options its `--help` lists, pointing at nothing outside the repository."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import click
from click.testing import CliRunner

from excerpt.cli.main import cli

DOCS = Path(__file__).resolve().parents[2] / "docs" / "cli.md"
EVERYWHERE = {"-h", "--help", "--json"}  # documented once, at the top of docs/cli.md
PRINCIPAL = {"--acl-tag", "--clearance", "--all-access"}  # "[principal options]"
DEFAULT_VERB = {"eval": "run"}  # `excerpt eval DATASET` is `excerpt eval run DATASET`
OPTION = re.compile(r"(?<![\w-])(--?[a-z][a-z0-9-]*)")


def commands(group: click.Group = cli, path: tuple[str, ...] = ()
             ) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    for name, command in sorted(group.commands.items()):
        yield (*path, name), command
        if isinstance(command, click.Group):
            yield from commands(command, (*path, name))


def option_names(command: click.Command) -> list[set[str]]:
    """Each option's names (long and short, --x/--no-x), without those every command has."""
    out = []
    for p in command.params:
        if isinstance(p, click.Option):
            names = set(p.opts) | set(p.secondary_opts)
            if not names & EVERYWHERE:
                out.append(names)
    return out


def synopses() -> list[tuple[tuple[str, ...], set[str]]]:
    """(command path, the options it names) for each synopsis line of docs/cli.md's code
    blocks, with its indented continuation lines (what follows '->' is output)."""
    found: list[tuple[tuple[str, ...], set[str]]] = []
    fenced = False
    current: tuple[tuple[str, ...], set[str]] | None = None
    for line in DOCS.read_text("utf-8").splitlines():
        if line.startswith("```"):
            fenced, current = not fenced, None
            continue
        text = line.split("->")[0]
        if not fenced:
            continue
        if line.startswith("excerpt "):
            path = _command_of(text.split()[1:])
            current = (path, set()) if path else None
            if current:
                found.append(current)
        elif not line.startswith(" ") or line.strip().startswith("->"):
            current = None
        if current is not None:
            current[1].update(OPTION.findall(text))
            if "principal options" in text:
                current[1].update(PRINCIPAL)
    return found


def _command_of(words: list[str]) -> tuple[str, ...] | None:
    """The command a synopsis line runs: its words walked down the command tree, skipping
    options and placeholders (CONVERSATION)."""
    group: click.Command = cli
    path: list[str] = []
    for word in words:
        if not isinstance(group, click.Group):
            break
        if word in group.commands:
            path.append(word)
            group = group.commands[word]
        elif not (word.startswith(("-", "[")) or word.isupper() or "://" in word):
            if path and path[-1] in DEFAULT_VERB:
                path.append(DEFAULT_VERB[path[-1]])
            break
    return tuple(path) or None


def test_every_option_of_every_command_has_a_help_text() -> None:
    empty = [f"excerpt {' '.join(path)} {'/'.join(p.opts)}"
             for path, command in [((), cli), *commands()]
             for p in command.params if isinstance(p, click.Option) and not (p.help or "").strip()]
    assert empty == []


def test_memory_add_help_shows_the_conversation_argument() -> None:
    result = CliRunner().invoke(cli, ["memory", "add", "--help"], prog_name="excerpt")
    assert result.exit_code == 0
    assert "Usage: excerpt memory CONVERSATION add [OPTIONS] TEXT" in result.output
    assert "CONVERSATION: the conversation's name" in result.output


def test_docs_cli_shows_each_command_with_the_options_of_its_help() -> None:
    lines = synopses()
    tree = dict(commands())
    problems = []
    for path, command in tree.items():
        options = option_names(command)
        name = "excerpt " + " ".join(path)
        own = [names for p, names in lines if p == path]
        under = [names for p, names in lines if p[:len(path)] == path]  # its verbs' lines too
        if not (own if not isinstance(command, click.Group) else under or not options):
            problems.append(f"{name}: no synopsis line in docs/cli.md")
        shown = set().union(*under)
        problems += [f"{name}: {sorted(names)[0]} missing from docs/cli.md" for names in options
                     if not names & shown]
        known = set().union(*options, *(n for i in range(1, len(path))
                                        for n in option_names(tree[path[:i]])))
        problems += [f"{name}: docs/cli.md names {o}, which --help does not list"
                     for o in sorted(set().union(*own) - known - EVERYWHERE)]
    assert problems == []


def test_docs_cli_points_at_nothing_outside_the_repository() -> None:
    text = DOCS.read_text("utf-8")
    assert "../" not in text
    assert re.findall(r"(?<![\w.~])/(?:work|home|tmp|Users|root)/", text) == []
