"""The package's shape: imports point one way (protocol <- client <- spark; formats beside protocol, at the
bottom), the client's roles import only what they build on, no module imports one that imports it back (lazy
imports inside functions included), no two sibling packages import each other, no folder of the client holds more
than a dozen modules (nor any other folder more than 14), and no file outgrows ~600 lines.

The import graph is read from the source with `ast`, so an import inside a function counts as much as
one at the top of a module."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "spark_kwire"
# Files that are allowed to be longer: the message declarations and the engine that reads them.
SIZE_EXCEPTIONS = {"spark_kwire/protocol/messages.py", "spark_kwire/protocol/schema.py"}
MAX_LINES = 600


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def package_modules() -> dict[str, Path]:
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    modules["pyspark_kwire"] = REPO / "pyspark_kwire.py"
    return modules


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """Every module `name` imports anywhere in its source: package modules by full name, others by their
    top-level name (e.g. 'pyspark'). `from pkg import x` counts as importing pkg.x when that is a module."""
    is_package = path.name == "__init__.py"
    base = name.split(".") if is_package else name.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = base[: len(base) - (node.level - 1)]
                target = ".".join(anchor + ([node.module] if node.module else []))
            else:
                target = node.module
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.add(sub if sub in known else target)
    return {f if f in known or f.startswith("spark_kwire") else f.split(".")[0] for f in found}


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    modules = package_modules()
    known = set(modules)
    return {name: imports_of(name, path, known) for name, path in modules.items()}


def test_import_graph_is_read_from_the_source(graph):
    # A check of the checker: known edges, top-level and lazy, must be found.
    assert "spark_kwire.client.errors" in graph["spark_kwire.client.admin.admin"]
    assert "spark_kwire.client.producer.producer" in graph["spark_kwire.client.producer.transactions"]  # lazy
    assert "spark_kwire.spark.source" in graph["spark_kwire"]  # lazy, inside register()
    assert "pyspark" in graph["spark_kwire.spark.source"]
    assert "spark_kwire.protocol.messages" in graph["spark_kwire.client.core.connection"]
    assert all(target in graph or not target.startswith("spark_kwire") for edges in graph.values()
               for target in edges), "an import names a spark_kwire module that does not exist"


def test_no_import_cycles(graph):
    internal = {name: {t for t in edges if t in graph} for name, edges in graph.items()}
    state: dict[str, str] = {}
    cycles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = "open"
        for target in sorted(internal[node]):
            if state.get(target) == "open":
                cycles.append(path[path.index(target):] + [target])
            elif target not in state:
                visit(target, path + [target])
        state[node] = "done"

    for name in sorted(internal):
        if name not in state:
            visit(name, [name])
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def _layer(name: str) -> str:
    for layer in ("protocol", "formats", "client", "spark"):
        if name.startswith(f"spark_kwire.{layer}"):
            return layer
    # spark_kwire.check (the Python helper and command line of `kwire check`) and __main__ work without pyspark,
    # as spark_kwire.admin does
    return {"spark_kwire.admin": "admin", "spark_kwire.check": "admin", "spark_kwire.__main__": "admin",
            "spark_kwire._version": "version"}.get(name, "top")


# The client by role: each folder of spark_kwire/client imports the client's ground (settings, errors, retry), its
# own modules and the roles it builds on, nothing else of the client.
CLIENT = "spark_kwire.client"
SETTINGS = f"{CLIENT}.settings"  # a folder of the ground, not a role: the options parsed into typed settings
CLIENT_GROUND = {SETTINGS, f"{CLIENT}.errors", f"{CLIENT}.retry"}
# The settings' modules that parse raw options (the others hold the typed values the roles take).
RAW_OPTION_PARSERS = {f"{SETTINGS}.{name}" for name in (
    "parse", "names", "values", "jaas", "tls_options", "sasl_options", "oauth_options", "kerberos_options")}
ROLE_BUILDS_ON = {
    "auth": (),                      # how a connection proves who it is: called by the connection
    "core": ("auth",),               # the cluster client: a connection secures itself through auth
    "consumer": ("core",),
    "producer": ("core",),
    "admin": ("core", "consumer"),   # lag: committed offsets against the consumer's log-end offsets
    "registry": ("auth",),           # the schema registry over HTTP(S): TLS and OAuth tokens from auth
    # `kwire check`: every step from this host to the topics, on the client's own connection, TLS, SASL, Kerberos
    # and OAuth code (and its error explanations), offsets and fetch scans, and the registry client
    "check": ("core", "auth", "consumer", "registry"),
}


def _role(name: str) -> str | None:
    """The client role of a module (``auth``, ``core``...), ``ground`` for settings/errors/retry, None outside."""
    if name in CLIENT_GROUND or name.startswith(SETTINGS + "."):
        return "ground"
    parts = name.split(".")
    if name.startswith(CLIENT + ".") and len(parts) > 3:
        return parts[2]
    return None


# What each layer may import from the package and from outside it.
FORBIDDEN = {
    "version": ("spark_kwire.protocol", "spark_kwire.client", "spark_kwire.spark", "spark_kwire.admin", "pyspark"),
    "protocol": ("spark_kwire.formats", "spark_kwire.client", "spark_kwire.spark", "spark_kwire.admin", "pyspark",
                 "socket", "ssl"),
    # payload formats (Avro, Protobuf, JSON Schema): bytes in, Arrow out; may use the protocol layer's kernels,
    # never the network or Spark
    "formats": ("spark_kwire.client", "spark_kwire.spark", "spark_kwire.admin", "pyspark", "socket", "ssl"),
    "client": ("spark_kwire.spark", "spark_kwire.admin", "pyspark"),
    "admin": ("spark_kwire.spark", "pyspark"),
}


def test_layers_point_one_way(graph):
    wrong = []
    for name, edges in sorted(graph.items()):
        banned = FORBIDDEN.get(_layer(name), ())
        for target in sorted(edges):
            if any(target == b or target.startswith(b + ".") for b in banned):
                wrong.append(f"{name} imports {target}")
    assert not wrong, "imports against the layering (protocol <- client <- spark):\n" + "\n".join(wrong)


def test_client_roles_import_only_what_they_build_on(graph):
    wrong = []
    for name, edges in sorted(graph.items()):
        role = _role(name)
        if role is None:
            continue
        allowed = {"ground", role, *ROLE_BUILDS_ON.get(role, ())} if role != "ground" else {"ground"}
        for target in sorted(edges):
            if target.startswith(CLIENT + ".") and _role(target) not in allowed:
                wrong.append(f"{name} ({role}) imports {target} ({_role(target)})")
    assert not wrong, "client roles importing what they do not build on:\n" + "\n".join(wrong)


def test_auth_reads_no_raw_option():
    """Mechanisms take their typed part of the settings: nothing in client/auth imports a parser of raw options
    (JAAS included) or builds settings from options itself."""
    assert RAW_OPTION_PARSERS <= set(modules := package_modules()), RAW_OPTION_PARSERS - set(modules)
    auth = {name: path for name, path in modules.items() if name.startswith(f"{CLIENT}.auth")}
    known = set(modules)
    wrong = [f"{name} imports {target}" for name, path in sorted(auth.items())
             for target in sorted(imports_of(name, path, known)) if target in RAW_OPTION_PARSERS]
    wrong += [f"{name} builds settings from options" for name, path in sorted(auth.items())
              if "from_kafka_options" in path.read_text() or "from_values" in path.read_text()]
    assert not wrong, "client/auth reading raw options:\n" + "\n".join(wrong)


def test_every_client_folder_is_a_role_that_says_what_it_owns():
    client = PACKAGE / "client"
    roles = sorted(p.name for p in client.iterdir() if p.is_dir() and not p.name.startswith("__")
                   and p.name != SETTINGS.rsplit(".", 1)[1])
    assert set(roles) <= set(ROLE_BUILDS_ON), f"client folders without role rules here: {set(roles) - set(ROLE_BUILDS_ON)}"
    for role in roles:
        doc = ast.get_docstring(ast.parse((client / role / "__init__.py").read_text())) or ""
        assert "Owns" in doc and "May import" in doc, f"spark_kwire/client/{role}/__init__.py must say what it owns and may import"


def test_no_folder_of_the_client_holds_more_than_a_dozen_modules():
    crowded = {}
    for folder in [PACKAGE / "client", *(p for p in (PACKAGE / "client").rglob("*") if p.is_dir())]:
        if folder.name == "__pycache__":
            continue
        entries = [p for p in folder.iterdir() if (p.suffix == ".py" and p.name != "__init__.py")
                   or (p.is_dir() and p.name != "__pycache__")]
        if len(entries) > 12:
            crowded[folder.relative_to(REPO).as_posix()] = len(entries)
    assert not crowded, f"folders with more than 12 modules and subpackages: {crowded}"


# No folder of the package holds more than this many modules and subpackages (``__init__.py`` not counted).
MAX_FOLDER_ENTRIES = 14


def folder_entries(folder: Path) -> list[Path]:
    return [p for p in folder.iterdir() if (p.suffix == ".py" and p.name != "__init__.py")
            or (p.is_dir() and p.name != "__pycache__")]


def test_no_folder_of_the_package_holds_more_than_fourteen_modules():
    crowded = {}
    for folder in [PACKAGE, *(p for p in PACKAGE.rglob("*") if p.is_dir() and p.name != "__pycache__")]:
        if len(entries := folder_entries(folder)) > MAX_FOLDER_ENTRIES:
            crowded[folder.relative_to(REPO).as_posix()] = len(entries)
    assert not crowded, f"folders with more than {MAX_FOLDER_ENTRIES} modules and subpackages: {crowded}"


def package_cycles(graph: dict[str, set[str]], packages: set[str]) -> list[list[str]]:
    """Cycles between sibling packages: for each package, its direct subpackages are the nodes (each standing for
    everything below it), with an edge where a module anywhere under one imports a module anywhere under another.
    A package's own modules may use its subpackages and be used by them; siblings must not use each other both
    ways, even through other siblings (module-level cycles are caught by test_no_import_cycles)."""
    cycles: list[list[str]] = []
    for parent in sorted(packages):
        children = sorted(p for p in packages if p.rsplit(".", 1)[0] == parent and p != parent)
        if len(children) < 2:
            continue

        def child_of(module: str) -> str | None:
            for child in children:
                if module == child or module.startswith(child + "."):
                    return child
            return None

        edges: dict[str, set[str]] = {child: set() for child in children}
        for name, targets in graph.items():
            source = child_of(name)
            if source is None:
                continue
            for target in targets:
                other = child_of(target)
                if other is not None and other != source:
                    edges[source].add(other)
        state: dict[str, str] = {}

        def visit(node: str, path: list[str]) -> None:
            state[node] = "open"
            for target in sorted(edges[node]):
                if state.get(target) == "open":
                    cycles.append(path[path.index(target):] + [target])
                elif target not in state:
                    visit(target, path + [target])
            state[node] = "done"

        for child in children:
            if child not in state:
                visit(child, [child])
    return cycles


def test_package_cycle_checker_sees_a_cycle_through_sibling_packages():
    # A check of the checker: two sibling packages importing each other through different modules, which no
    # module-level cycle shows.
    graph = {"p.a.x": {"p.b.y"}, "p.b.z": {"p.a.w"}, "p.a.w": set(), "p.b.y": set(), "p.c": {"p.a.x"}}
    assert package_cycles(graph, {"p", "p.a", "p.b"}) == [["p.a", "p.b", "p.a"]]
    graph["p.b.z"] = set()
    assert package_cycles(graph, {"p", "p.a", "p.b"}) == []


# Cycles found when this check came (issue #46), each being removed; none may be added, and one that is gone must
# leave this list.
KNOWN_PACKAGE_CYCLES: set[tuple[str, ...]] = set()


def test_no_import_cycles_between_packages(graph):
    packages = {name for name, path in package_modules().items() if path.name == "__init__.py"}
    found = {tuple(c) for c in package_cycles(graph, packages)}
    assert not found - KNOWN_PACKAGE_CYCLES, "packages importing each other:\n" + "\n".join(
        " -> ".join(c) for c in sorted(found - KNOWN_PACKAGE_CYCLES))
    assert not KNOWN_PACKAGE_CYCLES - found, f"gone, take them off KNOWN_PACKAGE_CYCLES: {KNOWN_PACKAGE_CYCLES - found}"


def test_no_file_over_600_lines():
    too_long = {}
    for path in sorted(list(PACKAGE.rglob("*.py")) + list((REPO / "harness").rglob("*.py"))):
        rel = path.relative_to(REPO).as_posix()
        lines = len(path.read_text().splitlines())
        if lines > MAX_LINES and rel not in SIZE_EXCEPTIONS:
            too_long[rel] = lines
    assert not too_long, f"files over {MAX_LINES} lines: {too_long}"


def test_architecture_page_names_every_module():
    """docs/architecture.md shows every folder of the package, each layer's modules and the modules of each client
    role: a module or folder added without a word there fails."""
    section = (REPO / "docs" / "architecture.md").read_text()
    missing = []
    for layer in ("protocol", "formats", "client", "spark"):
        if not (PACKAGE / layer).is_dir():
            continue
        for path in sorted(p for p in (PACKAGE / layer).rglob("*") if p.parent.name != "__pycache__"):
            name = path.name
            if name.startswith("__") or (path.is_file() and path.suffix != ".py"):
                continue
            in_client_role = path.parent.parent == PACKAGE / "client"
            if path.is_file() and path.parent != PACKAGE / layer and not in_client_role:
                continue
            shown = f"`{name}/`" if path.is_dir() else f"`{name}`"
            if shown not in section:
                missing.append(f"spark_kwire/{layer}/{name}")
    for top in ("spark_kwire/__init__.py", "spark_kwire/admin.py", "spark_kwire/check.py", "spark_kwire/__main__.py",
                "spark_kwire/_version.py", "pyspark_kwire.py"):
        if f"`{top}`" not in section:
            missing.append(top)
    assert not missing, f"docs/architecture.md does not mention: {missing}"


# Top-level folders that are made, not written: build outputs, caches, Spark's default warehouse of a session run
# from the checkout (virtualenvs and .kwire are hidden).
MADE_FOLDERS = {"build", "dist", "__pycache__", "spark-warehouse", "metastore_db"}


def test_architecture_page_names_every_top_level_folder():
    """The repository's folders (spark_kwire/, harness/, tests/, benchmarks/, docs/, conf/, notebooks/, jars/, .ci/)
    are each named on docs/architecture.md, so a new one comes with a word on what it holds."""
    page = (REPO / "docs" / "architecture.md").read_text()
    folders = [p.name for p in REPO.iterdir() if p.is_dir() and p.name not in MADE_FOLDERS
               and not p.name.endswith(".egg-info") and (not p.name.startswith(".") or p.name == ".ci")]
    assert {"spark_kwire", "harness", "tests", "benchmarks", "docs"} <= set(folders)
    missing = sorted(name for name in folders if f"`{name}/`" not in page)
    assert not missing, f"docs/architecture.md does not name these top-level folders: {missing}"


def _recipes() -> dict[str, str]:
    """The recipes of docs/architecture.md's "Where to change what": {its bold title: its text}."""
    page = (REPO / "docs" / "architecture.md").read_text()
    section = page.split("## Where to change what", 1)[1].split("\n## ", 1)[0]
    return dict(re.findall(r"^\*\*(.+?)\*\*(.*?)(?=^\*\*|\Z)", section, flags=re.S | re.M))


def test_architecture_page_has_a_recipe_for_each_common_change():
    titles = " ".join(_recipes())
    for change in ("kafka.*", "option of kwire's own", "payload format", "protocol message", "metadata table"):
        assert change in titles, f"docs/architecture.md has no recipe for: {change}"


def test_every_file_a_recipe_names_exists():
    named = {path for text in _recipes().values()
             for path in re.findall(r"`((?:spark_kwire|tests|docs)/[\w/.-]+?\.(?:py|md))`", text)}
    assert len(named) > 20, named  # the recipes name their files as repository paths
    missing = sorted(path for path in named if not (REPO / path).is_file())
    assert not missing, f"docs/architecture.md's recipes name files that do not exist: {missing}"
