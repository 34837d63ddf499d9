"""C# projects of a source folder: which project a ``.cs`` file belongs to, which projects it
sees, and the namespaces every file of a project imports without writing ``using``.

A project is a folder holding a ``.csproj`` (MSBuild XML, read with ElementTree) or a
``project.json`` (the .NET Core preview format, still found in real repositories); a ``.cs``
file belongs to the project of the nearest such folder up its path.  What a project sees:
itself and, transitively, the projects its ``<ProjectReference Include="…">`` items name (a
reference to an ``.xproj`` or a missing file counts as the project of that folder) or, in a
``project.json``, the dependencies named like a project of the folder.  Transitive, as SDK
projects are by default: a name declared by a project two references away is seen.

Namespaces imported by the whole project: every ``global using X;`` of its files, the SDK's
implicit usings when ``<ImplicitUsings>`` is ``enable`` / ``true`` (the set depends on the
``Sdk`` attribute: ``Microsoft.NET.Sdk``, ``.Web``, ``.Worker``), and ``<Using Include="X"/>``
items (``<Using Remove>`` takes one away; aliases and ``Static`` usings are ignored, as the
file reader ignores them).

A folder with no project file at all keeps today's behaviour: every file sees every other, and
its global usings apply to every file.  A file outside every project of a folder that has some
(a loose script) is treated the same way: it sees everything and is seen by everything.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import PurePosixPath

__all__ = ["Project", "ProjectSet", "global_usings", "read_projects"]

_BASE_USINGS = ("System", "System.Collections.Generic", "System.IO", "System.Linq",
                "System.Net.Http", "System.Threading", "System.Threading.Tasks")
_SDK_USINGS = {  # https://learn.microsoft.com/dotnet/core/project-sdk/overview#implicit-using-directives
    "microsoft.net.sdk.web": ("System.Net.Http.Json", "Microsoft.AspNetCore.Builder",
                              "Microsoft.AspNetCore.Hosting", "Microsoft.AspNetCore.Http",
                              "Microsoft.AspNetCore.Routing", "Microsoft.Extensions.Configuration",
                              "Microsoft.Extensions.DependencyInjection",
                              "Microsoft.Extensions.Hosting", "Microsoft.Extensions.Logging"),
    "microsoft.net.sdk.worker": ("Microsoft.Extensions.Configuration",
                                 "Microsoft.Extensions.DependencyInjection",
                                 "Microsoft.Extensions.Hosting", "Microsoft.Extensions.Logging"),
}
_GLOBAL_USING = re.compile(r"^[ \t]*global[ \t]+using[ \t]+(?!static\b)([A-Za-z_@][\w.@]*)[ \t]*;",
                           re.MULTILINE)


@dataclass
class Project:
    """One project: its folder (POSIX, relative to the ingested root) and what it declares."""

    name: str
    folder: str
    references: set[str] = field(default_factory=set)  # folders of referenced projects
    usings: set[str] = field(default_factory=set)  # namespaces every file imports


@dataclass
class ProjectSet:
    """The projects of one ingested folder, by folder."""

    projects: dict[str, Project] = field(default_factory=dict)

    def project_of(self, file: str) -> Project | None:
        """The project of the nearest project folder up ``file``'s path (None: no project)."""
        for parent in PurePosixPath(file).parents:
            found = self.projects.get(_folder(parent))
            if found is not None:
                return found
        return None

    def sees(self, folder: str) -> frozenset[str]:
        """The project folders ``folder``'s code sees: itself and its references, transitively."""
        seen: set[str] = set()
        todo = [folder]
        while todo:
            cur = todo.pop()
            if cur in seen or cur not in self.projects:
                continue
            seen.add(cur)
            todo.extend(sorted(self.projects[cur].references))
        return frozenset(seen)


def read_projects(files: dict[str, str]) -> ProjectSet:
    """The projects among ``files`` (relative POSIX path -> text of each ``.csproj`` and
    ``project.json``); unreadable project files are skipped (their folder is then no project)."""
    out = ProjectSet()
    names: dict[str, str] = {}  # project name (lower-cased) -> folder
    raw_json: dict[str, set[str]] = {}
    for path in sorted(files):
        folder = _folder(PurePosixPath(path).parent)
        if path.lower().endswith(".csproj"):
            project = _read_csproj(path, files[path], folder)
        else:
            project, deps = _read_project_json(files[path], folder)
            if project is not None:
                raw_json[folder] = deps
        if project is not None and folder not in out.projects:
            out.projects[folder] = project
            names.setdefault(project.name.lower(), folder)
            names.setdefault(PurePosixPath(folder).name.lower(), folder)
    for folder, deps in raw_json.items():
        out.projects[folder].references |= {names[d.lower()] for d in deps if d.lower() in names}
    for project in out.projects.values():
        project.references.discard(project.folder)
    return out


def global_usings(text: str, usings: set[str]) -> set[str]:
    """The ``global using X;`` directives of a file's text that its parse also saw as usings
    (so one inside a comment or a string is not taken)."""
    return {m.group(1) for m in _GLOBAL_USING.finditer(text)} & usings


def _read_csproj(path: str, text: str, folder: str) -> Project | None:
    try:
        root = ET.fromstring(text.lstrip("\ufeff"))
    except ET.ParseError:
        return None
    project = Project(PurePosixPath(path).stem, folder)
    implicit = False
    for el in root.iter():
        tag = el.tag.rsplit("}", 1)[-1]
        include = (el.get("Include") or "").replace("\\", "/")
        if tag == "ProjectReference" and include:
            project.references.add(_folder(PurePosixPath(folder, include).parent))
        elif tag == "ImplicitUsings":
            implicit = (el.text or "").strip().lower() in ("enable", "true")
        elif tag == "Using" and el.get("Alias") is None and el.get("Static") is None:
            if include:
                project.usings.add(include)
            elif el.get("Remove"):
                project.usings.discard(el.get("Remove") or "")
    if implicit:
        sdk = (root.get("Sdk") or "Microsoft.NET.Sdk").split("/")[0].strip().lower()
        project.usings |= {*_BASE_USINGS, *_SDK_USINGS.get(sdk, ())}
    return project


def _read_project_json(text: str, folder: str) -> tuple[Project | None, set[str]]:
    """A ``project.json`` project and the names of its dependencies (all frameworks)."""
    try:
        data = json.loads(text)
    except ValueError:
        return None, set()
    if not isinstance(data, dict):
        return None, set()
    deps: set[str] = set()
    blocks = [data.get("dependencies")]
    frameworks = data.get("frameworks")
    if isinstance(frameworks, dict):
        blocks += [fw.get("dependencies") for fw in frameworks.values() if isinstance(fw, dict)]
    for block in blocks:
        if isinstance(block, dict):
            deps |= set(block)
    return Project(PurePosixPath(folder).name or "project", folder), deps


def _folder(path: PurePosixPath) -> str:
    """A folder in one spelling: normalised, '' for the root, '..' parts folded."""
    parts: list[str] = []
    for part in path.parts:
        if part == "..":
            if parts:
                parts.pop()
        elif part not in (".", ""):
            parts.append(part)
    return "/".join(parts)
