#!/usr/bin/env python3
"""The layering test: every #include and every target link follows the DAG.

The allowed edges are the ```dag block of docs/architecture.md (one line per
component: name, path, CMake target, `->` the components it may use). This
script reads that block, every `#include "..."` (and every `<...>` that names
a file of the tree) under harness/, impls/, scenarios/, bench/ and tests/, and
every target_link_libraries() in their CMake files and the top level's, and
prints one line per crossing (an include must be drawn on its component's own
line, a link may reach further down; an edge drawn but used by no include and
no link is stale and fails too):

  harness/support/conditions.h:14: #include "sweeps/matrix.h": support -> sweeps is not in docs/architecture.md

It also checks that every component folder states its job (its CMakeLists.txt's
first line, or a README) and that the README's layout names every file of
every harness folder.

And the adapters (harness/adapters, docs/adapters.md), which are programs, not
C++: an adapter (js/*.js, python/*.py, java/**/*.java) loads only its language's kit
(kits/js/protocol.js through require, kits/python/locklab_kit.py, the package
locklab.kit of kits/java), its language's standard modules, and its library (a
JavaScript one through the kit's library(), a package pinned in
kits/js/package.json; a Java one from a groupId an adapter's pom.xml pins); a Go
adapter (go/*/*.go) imports only the standard library, its kit (locklab/kits/go)
and a module that go/go.mod requires; a Rust adapter (rust/*/src/*.rs) uses only std, its kit
(locklab_kit) and a crate its Cargo.toml names, each crate but the kit pinned with `=`; a kit loads no adapter and nothing outside
its folder (the Go kit: the standard library alone; the Java kit: the JDK, Gson
and its own package; the Rust kit: std, serde, serde_json and tokio); require('x'), import('x') and `import ... from 'x'` are read alike, and a
require() or import() of a name computed at run time (importlib, __import__, runpy or exec in
Python) is refused, outside the JavaScript kit's own library(); and no C++ or CMake file of a component that is not tests
names an adapter's file: the C++ finds adapters through catalog.json only.

Exit 0 when nothing crosses, 1 when something does, 2 on a broken dag block.
`--self-test` plants each kind of crossing in a copy of the tree (a wrong
include in quotes, in angle brackets, in an .inl; a folder missing from the
dag; an include reachable only through another component; a stale edge; a
wrong link, in a generator expression, from the top level; a cycle; a
folder without its job; a file the README does not name; an adapter loading
another adapter, a library directly, an unpinned library, a Python module of the
tree, each by a dynamic load too; a Go adapter importing another adapter or an
unpinned module; a Java adapter importing another adapter or an unpinned library;
a Rust adapter using another adapter's crate or an unpinned crate;
a kit loading an adapter (the Go kit: a library too; the Java kit too; the Rust kit too); C++ naming an adapter's file) and checks that each
one is caught, and that the unmodified copy passes.
"""
import argparse
import glob
import os
import re
import shutil
import sys
import tempfile

SCANNED = ("harness", "impls", "scenarios", "bench", "tests")
SOURCE_EXT = (".h", ".hh", ".hpp", ".hxx", ".inl", ".ipp", ".tpp", ".c", ".cc", ".cpp", ".cxx")
# "..." and <...>: an angle-bracket include that names a file of the tree is checked too.
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
# Targets that are not components: build flags and the preloaded shim.
NOT_COMPONENTS = {"locklab_warnings", "locklab_clock_shim"}


class DagError(Exception):
    pass


def read_dag(root):
    """Components {name: (path, target, deps)} from the dag block."""
    path = os.path.join(root, "docs", "architecture.md")
    text = open(path, encoding="utf-8").read()
    blocks = re.findall(r"^```dag\n(.*?)^```", text, re.S | re.M)
    if len(blocks) != 1:
        raise DagError("docs/architecture.md: expected one ```dag block, found %d" % len(blocks))
    nodes = {}
    for number, line in enumerate(blocks[0].splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        left, arrow, right = line.partition("->")
        fields = left.split()
        if not arrow or len(fields) != 3:
            raise DagError("dag line %d: want 'name path target -> deps', got %r" % (number, line))
        name, rel, target = fields
        if name in nodes:
            raise DagError("dag line %d: %s given twice" % (number, name))
        deps = [d.strip() for d in right.split(",") if d.strip()]
        nodes[name] = (rel, None if target == "-" else target, deps)
    for name, (rel, _, deps) in nodes.items():
        if not os.path.isdir(os.path.join(root, rel)):
            raise DagError("dag: %s's path %s does not exist" % (name, rel))
        for dep in deps:
            if dep != "*" and dep not in nodes:
                raise DagError("dag: %s -> %s: no component %s" % (name, dep, dep))
    check_acyclic(nodes)
    return nodes


def check_acyclic(nodes):
    state = {}

    def visit(name, trail):
        if state.get(name) == "done":
            return
        if state.get(name) == "open":
            raise DagError("dag: a cycle: " + " -> ".join(trail + [name]))
        state[name] = "open"
        for dep in nodes[name][2]:
            if dep != "*":
                visit(dep, trail + [name])
        state[name] = "done"

    for name in nodes:
        visit(name, [])


def closure(nodes):
    """name -> every component it may use (its deps, theirs, ...)."""
    reach = {}

    def of(name):
        if name in reach:
            return reach[name]
        deps = nodes[name][2]
        if "*" in deps:
            reach[name] = set(nodes) - {name}
            return reach[name]
        found = set()
        for dep in deps:
            found |= {dep} | of(dep)
        reach[name] = found
        return found

    for name in nodes:
        of(name)
    return reach


def node_of(nodes, rel_path):
    """The component a file belongs to: its longest path prefix."""
    best = None
    for name, (rel, _, _) in nodes.items():
        if rel_path == rel or rel_path.startswith(rel + "/"):
            if best is None or len(rel) > len(nodes[best][0]):
                best = name
    return best


def source_files(root):
    for top in SCANNED:
        for folder, dirs, files in os.walk(os.path.join(root, top)):
            dirs[:] = [d for d in dirs if d not in ("build", "node_modules", "__pycache__", ".go")]
            for f in sorted(files):
                if f.endswith(SOURCE_EXT):
                    yield os.path.relpath(os.path.join(folder, f), root)


def resolve(root, rel_file, header):
    """The file an include names, searched the way the build's include roots do."""
    top = rel_file.split("/", 1)[0]
    candidates = [os.path.join(os.path.dirname(rel_file), header)]
    if top != "impls":
        candidates.append(os.path.join("harness", header))
    candidates.append(os.path.join("impls", header))
    if top in ("tests", "bench", "scenarios"):
        candidates.append(os.path.join(top, header))
    for candidate in candidates:
        if os.path.isfile(os.path.join(root, candidate)):
            return os.path.normpath(candidate)
    return None


def drawn(nodes):
    """name -> the components its dag line lists (every one it includes directly), plus redis, which every
    component may use without drawing it; `*`: all."""
    return {name: (set(nodes) if "*" in deps else set(deps) | {"redis"}) - {name}
            for name, (_, _, deps) in nodes.items()}


def check_includes(root, nodes, reach, used):
    """Every include crossing components must be drawn on its component's line (not only reachable through
    another); each one is added to `used` for check_stale_edges."""
    problems = []
    direct = drawn(nodes)
    for rel in source_files(root):
        source = node_of(nodes, rel)
        if source is None:
            problems.append("%s: in no component of docs/architecture.md" % rel)
            continue
        if source == "harness":
            problems.append("%s: harness/ holds component folders only: this file is in no component of "
                            "docs/architecture.md" % rel)
        for number, line in enumerate(open(os.path.join(root, rel), encoding="utf-8", errors="replace"), 1):
            match = INCLUDE.match(line)
            if not match:
                continue
            angled, header = match.group(1) == "<", match.group(2)
            where = '%s:%d: #include "%s"' % (rel, number, header)
            target = resolve(root, rel, header)
            if angled and target is None:
                continue  # a system or package header
            if target is None:
                problems.append("%s: not found (impls/ sees only impls/; harness headers carry their folder)" % where)
                continue
            dest = node_of(nodes, target)
            if target.startswith("harness/") and rel.startswith("harness/") and "/" not in header:
                problems.append("%s: a harness include carries its folder (\"folder/file.h\")" % where)
            if dest is None or dest == source:
                continue
            used.add((source, dest))
            if dest not in direct[source]:
                why = "" if dest not in reach[source] else " (only through another component: draw the edge)"
                problems.append("%s: %s -> %s is not in docs/architecture.md%s" % (where, source, dest, why))
    return problems


def cmake_calls(text, command):
    """(name, items) of every `command(name items...)`, comments stripped, spanning lines."""
    text = re.sub(r"#[^\n]*", "", text)
    for match in re.finditer(r"\b%s\s*\(" % command, text):
        depth, i = 1, match.end()
        while i < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        words = text[match.end():i - 1].split()
        if words:
            yield words[0], words[1:]


def check_links(root, nodes, reach, used):
    by_target = {target: name for name, (_, target, _) in nodes.items() if target}
    problems = []
    for folder, files in cmake_folders(root):
        rel_dir = os.path.relpath(folder, root)
        text = "\n".join(open(os.path.join(folder, f), encoding="utf-8").read() for f in files)
        for command in ("add_library", "add_executable"):
            for name, _ in cmake_calls(text, command):
                if name.startswith("locklab_") and name not in by_target and name not in NOT_COMPONENTS:
                    problems.append("%s/CMakeLists.txt: target %s is in no component of docs/architecture.md"
                                    % (rel_dir, name))
        for name, items in cmake_calls(text, "target_link_libraries"):
            source = by_target.get(name) or node_of(nodes, rel_dir)
            if source is None:  # the top level: no component of its own
                problems.append("%s/CMakeLists.txt: %s links from outside every component folder" % (rel_dir, name))
                continue
            for word in items:
                problems.extend(link_problems(rel_dir, name, word, source, by_target, reach, used))
    return problems


def cmake_folders(root):
    """(folder, its CMake files) for the root, cmake/ and every scanned tree."""
    tops = [root] + [os.path.join(root, top) for top in ("cmake",) + SCANNED]
    for top in tops:
        for folder, dirs, files in os.walk(top):
            dirs[:] = [] if top == root else [d for d in dirs if d not in ("build", "node_modules")]
            cmake = sorted(f for f in files if f == "CMakeLists.txt" or f.endswith(".cmake"))
            if cmake:
                yield folder, cmake


def link_problems(rel_dir, name, word, source, by_target, reach, used):
    """What is wrong with target `name` (of component `source`) linking `word`."""
    if "${" in word:
        return ["%s/CMakeLists.txt: %s links %s: a variable hides what is linked" % (rel_dir, name, word)]
    problems = []
    # Anywhere in the word: a generator expression or an alias (locklab::run) names a target too.
    for item in re.findall(r"locklab(?:_|::)\w+", word):
        item = item.replace("::", "_")
        if item in NOT_COMPONENTS:
            continue
        dest = by_target.get(item)
        if dest is None:
            problems.append("%s/CMakeLists.txt: %s links %s, a target in no component" % (rel_dir, name, item))
        elif dest != source:
            used.add((source, dest))
        if dest is not None and dest != source and dest != "redis" and dest not in reach[source]:
            problems.append("%s/CMakeLists.txt: %s links %s: %s -> %s is not in docs/architecture.md"
                            % (rel_dir, name, item, source, dest))
    return problems


def check_jobs(root, nodes):
    """Every component folder states its job: the first line of its CMakeLists.txt
    is a comment, or (a folder built from its parent's CMakeLists) a README says it."""
    problems = []
    for name, (rel, _, _) in sorted(nodes.items()):
        cmake = os.path.join(root, rel, "CMakeLists.txt")
        readme = os.path.join(root, rel, "README")
        if os.path.isfile(cmake):
            first = open(cmake, encoding="utf-8").readline()
            if not first.startswith("# ") or len(first.strip()) < 10:
                problems.append("%s/CMakeLists.txt: the first line must be a comment saying %s's one job" % (rel, name))
        elif not os.path.isfile(readme) or len(open(readme, encoding="utf-8").read().strip()) < 10:
            problems.append("%s: no CMakeLists.txt, so a README must say %s's one job" % (rel, name))
    return problems


def readme_layout(root):
    """{folder: text} of the README's layout block: the lines of `  name/ ...` and their continuations."""
    text = open(os.path.join(root, "README.md"), encoding="utf-8").read()
    match = re.search(r"^## Layout\n+```\n(.*?)^```", text, re.S | re.M)
    if not match:
        return None
    folders, current = {}, None
    for line in match.group(1).splitlines():
        head = re.match(r"^  ([a-z_]+)/\s", line + " ")
        if head:
            current = head.group(1)
            folders[current] = line
        elif line.startswith("    ") and current:
            folders[current] += " " + line
        else:
            current = None
    return folders


def check_readme(root, nodes):
    """The README's layout names every harness component folder and every file stem in it."""
    layout = readme_layout(root)
    if layout is None:
        return ["README.md: no ```-block under '## Layout'"]
    problems = []
    for name, (rel, _, _) in sorted(nodes.items()):
        if not rel.startswith("harness/"):
            continue
        folder = rel.split("/", 1)[1]
        if folder not in layout:
            problems.append("README.md: the layout does not list harness/%s/" % folder)
            continue
        words = set(re.findall(r"[a-z_]+", layout[folder]))
        stems = {f.rsplit(".", 1)[0] for f in os.listdir(os.path.join(root, rel)) if f.endswith((".h", ".cpp"))}
        for stem in sorted(stems - words):
            problems.append("README.md: the layout's harness/%s/ line does not name %s" % (folder, stem))
    return problems


ADAPTERS = "harness/adapters"
# require() of these needs no package: node's own modules ("node:fs" too).
NODE_BUILTINS = {"assert", "buffer", "child_process", "crypto", "dgram", "dns", "events", "fs", "fs/promises", "http",
                 "https", "module", "net", "os", "path", "perf_hooks", "process", "readline", "stream", "string_decoder",
                 "timers", "timers/promises", "tty", "url", "util", "worker_threads", "zlib"}
REQUIRE = re.compile(r"""\brequire\(\s*['"]([^'"]+)['"]\s*\)""")
# import('x') (dynamic, with a literal) and `import ... from 'x'` / `import 'x'` (a module file): loads like require.
JS_IMPORT = re.compile(r"""(?:\bimport\(\s*['"]([^'"]+)['"]\s*\)|^\s*import\s+(?:[^'"]*?\sfrom\s+)?['"]([^'"]+)['"])""")
# A require() or import() whose argument is not one string literal: what it loads cannot be read here.
JS_DYNAMIC = re.compile(r"""(?<![\w.])(require|import)\(\s*(?!['"][^'"]*['"]\s*\))[^)\s]""")
LIBRARY = re.compile(r"""\blibrary\(\s*['"]([^'"]+)['"]\s*\)""")
# A Go import: a line of an import block, or `import [name] "path"`.
GO_IMPORT_BLOCK = re.compile(r"^import\s*\((.*?)^\)", re.M | re.S)
GO_IMPORT_LINE = re.compile(r'^import\s+(?:[\w.]+\s+)?"([^"]+)"', re.M)
GO_QUOTED = re.compile(r'^\s*(?:[\w.]+\s+)?"([^"]+)"', re.M)
GO_KIT = "locklab/kits/go"
PY_IMPORT = re.compile(r"^\s*(?:import\s+([\w.]+(?:\s*,\s*[\w.]+)*)|from\s+([\w.]+)\s+import)", re.M)
# importlib.import_module('x') / __import__('x') with a literal: an import of x.
PY_DYNAMIC_LITERAL = re.compile(r"""\b(?:importlib\.import_module|__import__)\(\s*['"]([\w.]+)['"]\s*[,)]""")
# Any other way to load code by a name or a path computed at run time.
PY_DYNAMIC = re.compile(r"\b(?:importlib|__import__|runpy|imp\.load_\w+|exec\(|execfile\()")
# A Rust `use` or `extern crate`: its first path element names the crate.
RUST_USE = re.compile(r"^\s*(?:pub\s+)?(?:use|extern\s+crate)\s+(?:::)?([A-Za-z_]\w*)", re.M)
RUST_STANDARD = {"std", "core", "alloc", "crate", "self", "super"}
RUST_KIT_CRATES = {"serde", "serde_json", "tokio"}  # the Rust kit's own dependencies (kits/rust/Cargo.toml)


def rust_dependencies(crate_dir):
    """{crate as Rust spells it: version requirement} of a Cargo.toml's [dependencies] ("" for the kit's path)."""
    text = open(os.path.join(crate_dir, "Cargo.toml"), encoding="utf-8").read()
    section = re.search(r"^\[dependencies\]\n(.*?)(?=^\[|\Z)", text, re.M | re.S)
    found = {}
    for name, value in re.findall(r"^([\w-]+)\s*=\s*(.*)$", section.group(1) if section else "", re.M):
        version = re.search(r'^"([^"]*)"|version\s*=\s*"([^"]*)"', value)
        found[name.replace("-", "_")] = (version.group(1) or version.group(2)) if version else ""
    return found


def rust_problems(root, rel, allowed, what):
    """The `use` lines of a Rust file of harness/adapters that name a crate outside `allowed`."""
    text = open(os.path.join(root, rel), encoding="utf-8").read()
    allowed = allowed | set(re.findall(r"^\s*(?:pub\s+)?mod\s+(\w+)", text, re.M))  # the file's own modules
    return ["%s:%d: uses %s: %s" % (rel, text.count("\n", 0, m.start()) + 1, m.group(1), what)
            for m in RUST_USE.finditer(text) if m.group(1) not in RUST_STANDARD | allowed]


def check_rust(root):
    """The Rust adapters and kit (the module docstring): one line per crossing."""
    problems = []
    for crate in sorted(glob.glob(os.path.join(root, ADAPTERS, "rust", "*", "Cargo.toml"))):
        crate_dir = os.path.dirname(crate)
        deps = rust_dependencies(crate_dir)
        for name, version in sorted(deps.items()):
            if name != "locklab_kit" and not version.startswith("="):
                problems.append("%s: %s is not pinned with = (%r)" % (os.path.relpath(crate, root), name, version))
        src = os.path.relpath(os.path.join(crate_dir, "src"), os.path.join(root, ADAPTERS))
        for rel in adapter_files(root, src, ".rs"):
            problems.extend(rust_problems(root, rel, set(deps) - {n for n in deps if n.startswith("locklab_") and
                                                                  n != "locklab_kit"},
                                          "an adapter uses its kit (locklab_kit) and a crate its Cargo.toml pins"))
    for rel in adapter_files(root, "kits/rust/src", ".rs"):
        problems.extend(rust_problems(root, rel, RUST_KIT_CRATES, "the Rust kit uses std, serde, serde_json and tokio"))
    return problems


def adapter_files(root, sub, ext):
    folder = os.path.join(root, ADAPTERS, sub)
    if not os.path.isdir(folder):
        return []
    return sorted(os.path.join(ADAPTERS, sub, f) for f in os.listdir(folder) if f.endswith(ext))


def library_lines(text):
    """The line numbers of the kit's own `function library(...) {...}`: the one place a
    require() of a name given at run time is the rule (it loads the pinned library an adapter names)."""
    match = re.search(r"^function library\(.*?^\}", text, re.S | re.M)
    if not match:
        return set()
    first = text.count("\n", 0, match.start()) + 1
    return set(range(first, first + match.group(0).count("\n") + 1))


def js_loads(line):
    """The names a line loads with a literal: require('x'), import('x'), import ... from 'x'."""
    names = [("require", name) for name in REQUIRE.findall(line)]
    for dynamic, static in JS_IMPORT.findall(line):
        names.append(("import", dynamic or static))
    return names


def js_problems(root, rel, allowed_dir, pinned):
    """What a JavaScript file of harness/adapters loads that it must not: a relative require()
    or import must land in `allowed_dir`, any other must be a node module, library() a pinned
    package; a require() or import() of a name computed at run time is refused (outside the
    kit's library()), since what it loads cannot be checked."""
    problems = []
    text = open(os.path.join(root, rel), encoding="utf-8").read()
    exempt = library_lines(text)
    for number, line in enumerate(text.splitlines(), 1):
        code = line.split("//", 1)[0]
        for call in JS_DYNAMIC.findall(code):
            if number not in exempt:
                problems.append("%s:%d: %s() of a name computed at run time: load the kit by its literal path and "
                                "the library with the kit's library('NAME')" % (rel, number, call))
        for call, name in js_loads(code):
            where = "%s:%d: %s('%s')" % (rel, number, call, name)
            if name.startswith("."):
                target = os.path.normpath(os.path.join(os.path.dirname(rel), name))
                if os.path.dirname(target) != allowed_dir:
                    problems.append("%s: loads %s, outside %s/ (an adapter loads its kit and its library; a kit "
                                    "no adapter)" % (where, target, allowed_dir))
            elif name.removeprefix("node:") not in NODE_BUILTINS:
                problems.append("%s: a package loaded directly: load it with the kit's library() (resolved from "
                                "%s/kits/js/node_modules, pinned by its package-lock.json)" % (where, ADAPTERS))
        for name in LIBRARY.findall(line):
            if pinned is not None and name not in pinned:
                problems.append("%s:%d: library('%s'): not pinned in %s/kits/js/package.json"
                                % (rel, number, name, ADAPTERS))
    return problems


def py_problems(root, rel, tree_modules, allowed):
    """A Python file of harness/adapters may import the standard library, `allowed` (its kit),
    and modules that are not the tree's (its library): never another adapter, nor locklab's own."""
    problems = []
    text = open(os.path.join(root, rel), encoding="utf-8").read()
    imports = [(m.start(), m.group(1).split(",") if m.group(1) else [m.group(2)]) for m in PY_IMPORT.finditer(text)]
    imports += [(m.start(), [m.group(1)]) for m in PY_DYNAMIC_LITERAL.finditer(text)]
    for number, line in enumerate(text.splitlines(), 1):
        code = line.split("#", 1)[0]
        if PY_DYNAMIC.search(PY_DYNAMIC_LITERAL.sub("", code)) and not PY_IMPORT.match(code):
            problems.append("%s:%d: loads code by a name computed at run time (importlib, __import__, runpy, "
                            "exec): an adapter imports its kit and its library by name" % (rel, number))
    for start, names in imports:
        number = text.count("\n", 0, start) + 1
        for name in (n.strip().split(".")[0] for n in names):
            if name in allowed or name in sys.stdlib_module_names:
                continue
            if name in tree_modules:
                problems.append("%s:%d: imports %s, a module of this tree (%s): an adapter imports its kit and its "
                                "library, a kit nothing of the tree" % (rel, number, name, tree_modules[name]))
    return problems


def go_imports(text):
    """(line number, import path) of every import of a Go file."""
    found = []
    for block in GO_IMPORT_BLOCK.finditer(text):
        start = text.count("\n", 0, block.start(1))
        found += [(start + block.group(1).count("\n", 0, m.start()) + 1, m.group(1))
                  for m in GO_QUOTED.finditer(block.group(1))]
    found += [(text.count("\n", 0, m.start()) + 1, m.group(1)) for m in GO_IMPORT_LINE.finditer(text)]
    return found


def go_required(root):
    """The modules harness/adapters/go/go.mod requires directly (None: no go.mod)."""
    path = os.path.join(root, ADAPTERS, "go", "go.mod")
    if not os.path.isfile(path):
        return None
    text = open(path, encoding="utf-8").read()
    lines = re.findall(r"^\s*(?:require\s+)?([\w.\-/]+)\s+v\S+(.*)$", text, re.M)
    return {name for name, rest in lines if "// indirect" not in rest}


def go_problems(root, rel, kit, pinned):
    """A Go file of harness/adapters imports the standard library (a path whose first element has
    no dot), and, for an adapter (`kit` True), the kit and a module go/go.mod requires."""
    problems = []
    for number, path in go_imports(open(os.path.join(root, rel), encoding="utf-8").read()):
        first = path.split("/")[0]
        if "." not in first and first != "locklab":
            continue
        if kit and path == GO_KIT:
            continue
        if kit and pinned and any(path == m or path.startswith(m + "/") for m in pinned if m != GO_KIT):
            continue
        what = ("an adapter imports its kit (%s) and a module %s/go/go.mod requires" % (GO_KIT, ADAPTERS) if kit
                else "the Go kit imports the standard library alone, and no adapter")
        problems.append("%s:%d: imports %s: %s" % (rel, number, path, what))
    return problems


JAVA_IMPORT = re.compile(r"^\s*import\s+(?:static\s+)?([\w.]+)(?:\.\*)?\s*;", re.M)
JAVA_STANDARD = ("java.", "javax.")
JAVA_KIT_JSON = "com.google.gson."  # the kit's JSON, pinned in kits/java/pom.xml; an adapter reads requests with it


def java_files(root, sub):
    """The .java files under harness/adapters/<sub>, build output (target/) left out."""
    found = []
    for folder, dirs, files in os.walk(os.path.join(root, ADAPTERS, sub)):
        dirs[:] = [d for d in dirs if d != "target"]
        found += [os.path.relpath(os.path.join(folder, f), root) for f in files if f.endswith(".java")]
    return sorted(found)


def java_pinned_groups(root):
    """The groupIds the Java adapters' pom.xml files name: an adapter's library is one of them."""
    groups = set()
    for folder, dirs, files in os.walk(os.path.join(root, ADAPTERS, "java")):
        dirs[:] = [d for d in dirs if d != "target"]
        if "pom.xml" in files:
            groups |= set(re.findall(r"<groupId>([\w.]+)</groupId>", open(os.path.join(folder, "pom.xml")).read()))
    return groups


def java_problems(root, rel, is_kit, groups):
    """What a Java file of harness/adapters imports that it must not (the module docstring)."""
    problems = []
    text = open(os.path.join(root, rel), encoding="utf-8").read()
    for match in JAVA_IMPORT.finditer(text):
        number, name = text.count("\n", 0, match.start()) + 1, match.group(1)
        if name.startswith(JAVA_STANDARD + (JAVA_KIT_JSON, "locklab.kit.")):
            continue
        where = "%s:%d: import %s" % (rel, number, name)
        if name.startswith("locklab."):
            problems.append("%s: another adapter's package (an adapter imports its kit, locklab.kit, and its "
                            "library; a kit no adapter)" % where)
        elif is_kit:
            problems.append("%s: the Java kit imports the JDK, Gson and its own package only" % where)
        elif not any(name.startswith(group + ".") for group in groups):
            problems.append("%s: not a library an adapter's pom.xml pins (%s)" % (where, ", ".join(sorted(groups))))
    return problems


def check_adapters(root):
    """The adapters' own layering (the module docstring): one line per crossing."""
    if not os.path.isdir(os.path.join(root, ADAPTERS)):
        return []
    problems = []
    package = os.path.join(root, ADAPTERS, "kits", "js", "package.json")
    pinned = None
    if os.path.isfile(package):
        import json
        pinned = set(json.load(open(package, encoding="utf-8")).get("dependencies", {}))
    kit_js, kit_py = ADAPTERS + "/kits/js", ADAPTERS + "/kits/python"
    for rel in adapter_files(root, "js", ".js"):
        problems.extend(js_problems(root, rel, kit_js, pinned))
    for rel in adapter_files(root, "kits/js", ".js"):
        problems.extend(js_problems(root, rel, kit_js, pinned))
    pinned_go = go_required(root)
    for folder in sorted(glob.glob(os.path.join(root, ADAPTERS, "go", "*", ""))):
        for rel in adapter_files(root, os.path.relpath(folder, os.path.join(root, ADAPTERS)), ".go"):
            problems.extend(go_problems(root, rel, True, pinned_go))
    for rel in adapter_files(root, "kits/go", ".go"):
        if os.path.isfile(os.path.join(root, rel)):  # not .go/, the module cache
            problems.extend(go_problems(root, rel, False, None))
    problems.extend(check_rust(root))
    # Every .py of the tree outside build output is a module an adapter or a kit must not import.
    tree_modules = {}
    for top in ("harness", "tests", "scripts", "bench", "docs"):
        for folder, dirs, files in os.walk(os.path.join(root, top)):
            dirs[:] = [d for d in dirs if d not in ("build", "node_modules", "__pycache__", ".go")]
            for f in files:
                if f.endswith(".py"):
                    tree_modules.setdefault(f[:-3], os.path.relpath(os.path.join(folder, f), root))
    for rel in adapter_files(root, "python", ".py"):
        problems.extend(py_problems(root, rel, tree_modules, {"locklab_kit"}))
    for rel in adapter_files(root, "kits/python", ".py"):
        problems.extend(py_problems(root, rel, tree_modules, set()))
    groups = java_pinned_groups(root)
    for rel in java_files(root, "java"):
        problems.extend(java_problems(root, rel, False, groups))
    for rel in java_files(root, "kits/java"):
        problems.extend(java_problems(root, rel, True, groups))
    # The C++ (and its CMake) finds an adapter through the catalog only; tests may name one (tests -> *).
    names = {os.path.basename(f) for f in adapter_files(root, "js", ".js") + adapter_files(root, "python", ".py") +
             java_files(root, "java")}
    for top in ("harness", "impls", "scenarios", "bench"):
        for folder, dirs, files in os.walk(os.path.join(root, top)):
            dirs[:] = [d for d in dirs if d not in ("build", "node_modules", "adapters")] \
                if os.path.relpath(folder, root) == "harness" else \
                [d for d in dirs if d not in ("build", "node_modules", ".go")]
            for f in sorted(files):
                if not (f.endswith(SOURCE_EXT) or f == "CMakeLists.txt" or f.endswith(".cmake")):
                    continue
                rel = os.path.relpath(os.path.join(folder, f), root)
                for number, line in enumerate(open(os.path.join(root, rel), encoding="utf-8", errors="replace"), 1):
                    for name in sorted(n for n in names if n in line):
                        problems.append("%s:%d: names the adapter %s: the C++ finds adapters through %s/catalog.json "
                                        "only" % (rel, number, name, ADAPTERS))
    return problems


COLUMN_TABLE = "harness/sweeps/matrix_columns.cpp"
# Where a column's name may be written as a string: its one record; the faults of the same names, where they
# are made (nemesis/) and applied (run/: the fault "failover" needs a replica); the command line's help text
# (cli/). A library row's cells are written in its catalog entry (harness/adapters/catalog.json), not in C++.
COLUMN_NAME_HOMES = (COLUMN_TABLE, "harness/nemesis/", "harness/run/", "harness/cli/")


def check_column_literals(root):
    """A matrix column is one record in one table: no other harness file spells its name as a string literal."""
    table = os.path.join(root, COLUMN_TABLE)
    if not os.path.isfile(table):
        return [COLUMN_TABLE + ": missing (the matrix's column table)"]
    names = re.findall(r'\.name = "([^"]+)"', open(table, encoding="utf-8").read())
    if not names:
        return [COLUMN_TABLE + ": no `.name = \"...\"` entries found"]
    literal = re.compile(r'"(%s)"' % "|".join(re.escape(n) for n in names))
    problems = []
    for rel in source_files(root):
        if not rel.startswith("harness/") or rel.startswith(COLUMN_NAME_HOMES):
            continue
        for number, line in enumerate(open(os.path.join(root, rel), encoding="utf-8"), 1):
            for match in literal.finditer(line):
                problems.append('%s:%d: "%s" names the matrix column %s: find it in %s (find_matrix_column)'
                                % (rel, number, match.group(1), match.group(1), COLUMN_TABLE))
    return problems


def check_stale_edges(nodes, used):
    """Every edge the dag draws is used: some file of the component includes the other, or its target links it."""
    return ["docs/architecture.md: %s -> %s is drawn, but nothing in %s includes or links %s (a stale edge)"
            % (name, dep, name, dep)
            for name, (_, _, deps) in nodes.items() for dep in deps
            if dep != "*" and (name, dep) not in used]


def check(root):
    """Every crossing, one line each (empty: the tree follows the DAG)."""
    nodes = read_dag(root)
    reach = closure(nodes)
    used = set()
    crossings = check_includes(root, nodes, reach, used) + check_links(root, nodes, reach, used)
    return (crossings + check_stale_edges(nodes, used) + check_jobs(root, nodes) +
            check_readme(root, nodes) + check_adapters(root) + check_column_literals(root))


def plant(copy, rel, text, mode="a"):
    with open(os.path.join(copy, rel), mode, encoding="utf-8") as f:
        f.write(text)


def plant_file(copy, rel, text):
    os.makedirs(os.path.dirname(os.path.join(copy, rel)), exist_ok=True)
    plant(copy, rel, text, "w")


def self_test(root):
    """Each plant must be caught with its message; the clean copy must pass."""
    # .go and bin: the Go adapters' module cache and binaries (harness/adapters/kits/go/install); target: the Java build.
    ignore = shutil.ignore_patterns("build", "results", ".git", "node_modules", "__pycache__", ".go", "bin", "target")
    plants = [
        ("an upward include", lambda c: plant(c, "harness/support/conditions.h", '\n#include "sweeps/matrix.h"\n'),
         "support -> sweeps is not in docs/architecture.md"),
        ("a link outside its edges",
         lambda c: plant(c, "harness/support/CMakeLists.txt", "\ntarget_link_libraries(locklab_support PUBLIC locklab_run)\n"),
         "locklab_support links locklab_run: support -> run is not in docs/architecture.md"),
        ("a cycle in the dag", lambda c: add_edge(c, "support", "run"), "dag: a cycle"),
        ("an include reachable but not drawn", lambda c: plant(c, "harness/sweeps/compare.cpp", '\n#include "history/checker.h"\n'),
         "sweeps -> history is not in docs/architecture.md (only through another component: draw the edge)"),
        ("a stale edge in the dag", lambda c: add_edge(c, "report", "impls"),
         "report -> impls is drawn, but nothing in report includes or links impls (a stale edge)"),
        ("a file the README's layout does not name", lambda c: plant(c, "harness/report/zz_unlisted.h", "#pragma once\n", "w"),
         "the layout's harness/report/ line does not name zz_unlisted"),
        ("an include in angle brackets", lambda c: plant(c, "harness/support/files.h", "\n#include <sweeps/matrix.h>\n"),
         "support -> sweeps is not in docs/architecture.md"),
        ("a folder missing from the dag", lambda c: plant_file(c, "harness/extra/x.cpp", '#include "sweeps/matrix.h"\n'),
         "harness/extra/x.cpp: harness/ holds component folders only"),
        ("a link in a generator expression",
         lambda c: plant(c, "harness/support/CMakeLists.txt", "\ntarget_link_libraries(locklab_support PUBLIC $<BUILD_INTERFACE:locklab_run>)\n"),
         "locklab_support links locklab_run: support -> run"),
        ("a link from the top level", lambda c: plant(c, "CMakeLists.txt", "\ntarget_link_libraries(locklab_history PUBLIC locklab_run)\n"),
         "locklab_history links locklab_run: history -> run"),
        ("a header of another extension", lambda c: plant_file(c, "harness/support/helpers.inl", '#include "run/run.h"\n'),
         "harness/support/helpers.inl:1: #include \"run/run.h\": support -> run"),
        ("a folder without its job", lambda c: plant(c, "harness/report/CMakeLists.txt", "add_library(x)\n", "w"),
         "harness/report/CMakeLists.txt: the first line must be a comment"),
        ("the adapters' folder without its job", lambda c: os.remove(os.path.join(c, ADAPTERS, "README")),
         "harness/adapters: no CMakeLists.txt, so a README must say adapters's one job"),
        ("an adapter loading another adapter",
         lambda c: plant(c, ADAPTERS + "/js/redis_lock.js", "\nrequire('./node_redlock');\n"),
         "require('./node_redlock'): loads harness/adapters/js/node_redlock, outside harness/adapters/kits/js/"),
        ("an adapter loading its library directly",
         lambda c: plant(c, ADAPTERS + "/js/redis_lock.js", "\nrequire('ioredis');\n"),
         "require('ioredis'): a package loaded directly"),
        ("an adapter loading a library that is not pinned",
         lambda c: plant(c, ADAPTERS + "/js/redis_lock.js", "\nlibrary('left-pad');\n"),
         "library('left-pad'): not pinned"),
        ("a kit loading an adapter",
         lambda c: plant(c, ADAPTERS + "/kits/js/protocol.js", "\nrequire('../../js/redis_lock');\n"),
         "loads harness/adapters/js/redis_lock, outside harness/adapters/kits/js/"),
        ("a Python adapter importing a module of the tree",
         lambda c: plant(c, ADAPTERS + "/python/redis_py.py", "\nimport serve_lock\n"),
         "imports serve_lock, a module of this tree (tests/adapters/serve_lock.py)"),
        ("the Python kit importing an adapter",
         lambda c: plant(c, ADAPTERS + "/kits/python/locklab_kit.py", "\nimport redis_py\n"),
         "imports redis_py, a module of this tree (harness/adapters/python/redis_py.py)"),
        ("a Go adapter importing another adapter",
         lambda c: plant(c, ADAPTERS + "/go/redsync/main.go", '\nimport _ "locklab/adapters/go/redislock"\n'),
         "imports locklab/adapters/go/redislock: an adapter imports its kit"),
        ("a Go adapter importing a module go.mod does not require",
         lambda c: plant(c, ADAPTERS + "/go/redislock/main.go", '\nimport _ "github.com/gomodule/redigo/redis"\n'),
         "imports github.com/gomodule/redigo/redis: an adapter imports its kit"),
        ("the Go kit importing an adapter",
         lambda c: plant(c, ADAPTERS + "/kits/go/kit.go", '\nimport _ "locklab/adapters/go/redsync"\n'),
         "kits/go/kit.go:"),
        ("the Go kit importing a library",
         lambda c: plant(c, ADAPTERS + "/kits/go/serve.go", '\nimport _ "github.com/redis/go-redis/v9"\n'),
         "imports github.com/redis/go-redis/v9: the Go kit imports the standard library alone"),
        ("a Rust adapter using another adapter's crate",
         lambda c: plant(c, ADAPTERS + "/rust/redlock/src/main.rs", "\nuse locklab_rslock::x;\n"),
         "uses locklab_rslock: an adapter uses its kit"),
        ("a Rust adapter depending on an unpinned crate",
         lambda c: plant(c, ADAPTERS + "/rust/rslock/Cargo.toml", '\nanyhow = "1"\n'),
         "anyhow is not pinned with ="),
        ("the Rust kit using a library",
         lambda c: plant(c, ADAPTERS + "/kits/rust/src/serve.rs", "\nuse rslock::LockManager;\n"),
         "uses rslock: the Rust kit uses std, serde, serde_json and tokio"),
        ("a Java adapter importing another adapter's package",
         lambda c: plant_java(c, "java/redisson/locklab/adapters/RedissonGetLock.java", "import locklab.adapters.other.X;"),
         "import locklab.adapters.other.X: another adapter's package"),
        ("a Java adapter importing a library no pom.xml pins",
         lambda c: plant_java(c, "java/redisson/locklab/adapters/RedissonGetLock.java", "import redis.clients.jedis.Jedis;"),
         "import redis.clients.jedis.Jedis: not a library an adapter's pom.xml pins"),
        ("the Java kit importing an adapter",
         lambda c: plant_java(c, "kits/java/kit/src/main/java/locklab/kit/Kit.java", "import locklab.adapters.RedissonGetLock;"),
         "import locklab.adapters.RedissonGetLock: another adapter's package"),
        ("an adapter loading by a require() of a computed name",
         lambda c: plant(c, ADAPTERS + "/js/redis_lock.js", "\nconst x = require(['..', 'js', 'node_redlock'].join('/'));\n"),
         "require() of a name computed at run time"),
        ("an adapter's dynamic import() of another adapter",
         lambda c: plant(c, ADAPTERS + "/js/redis_lock.js", "\nimport('./node_redlock.js').then(() => {});\n"),
         "import('./node_redlock.js'): loads harness/adapters/js/node_redlock.js, outside harness/adapters/kits/js/"),
        ("an adapter's import() of a computed name",
         lambda c: plant(c, ADAPTERS + "/js/redis_lock.js", "\nconst name = 'ioredis'; import(name);\n"),
         "import() of a name computed at run time"),
        ("a Python adapter's importlib of a module of the tree",
         lambda c: plant(c, ADAPTERS + "/python/redis_py.py", "\nimport importlib\nimportlib.import_module('serve_lock')\n"),
         "imports serve_lock, a module of this tree (tests/adapters/serve_lock.py)"),
        ("a Python adapter's __import__ of a computed name",
         lambda c: plant(c, ADAPTERS + "/python/redis_py.py", "\nmodule = __import__('serve' + '_lock')\n"),
         "loads code by a name computed at run time"),
        ("a column's name spelled outside its record",
         lambda c: plant(c, "harness/report/matrix_report.cpp", '\n// const char* k = "node-restart";\n'),
         '"node-restart" names the matrix column node-restart'),
        ("C++ naming an adapter's file",
         lambda c: plant(c, "harness/workload/lock_catalog.cpp", '\n// "python/redis_py.py"\n'),
         "names the adapter redis_py.py: the C++ finds adapters through harness/adapters/catalog.json only"),
    ]
    failures = 0
    with tempfile.TemporaryDirectory(prefix="locklab-layering-") as tmp:
        clean = os.path.join(tmp, "clean")
        shutil.copytree(root, clean, ignore=ignore, symlinks=True)
        found = check(clean)
        if found:
            print("self-test: the unmodified copy does not pass:\n  " + "\n  ".join(found))
            failures += 1
        for number, (what, apply, expected) in enumerate(plants):
            copy = os.path.join(tmp, "plant%d" % number)
            shutil.copytree(clean, copy, symlinks=True)
            apply(copy)
            try:
                lines = check(copy)
            except DagError as error:
                lines = [str(error)]
            if any(expected in line for line in lines):
                print("self-test: %s is caught: %s" % (what, next(l for l in lines if expected in l)))
            else:
                print("self-test: %s is NOT caught (wanted %r, got %r)" % (what, expected, lines))
                failures += 1
    return failures


def plant_java(copy, rel, line):
    """`line` (an import) after the package line of the Java file harness/adapters/<rel>."""
    path = os.path.join(copy, ADAPTERS, rel)
    text = open(path, encoding="utf-8").read()
    open(path, "w", encoding="utf-8").write(re.sub(r"^(package [\w.]+;)$", r"\1\n" + line, text, count=1, flags=re.M))


def add_edge(copy, source, dest):
    path = os.path.join(copy, "docs", "architecture.md")
    text = open(path, encoding="utf-8").read()
    pattern = re.compile(r"^(%s\s+\S+\s+\S+\s*->)(.*)$" % re.escape(source), re.M)
    text = pattern.sub(lambda m: m.group(1) + (m.group(2).rstrip() + ", " if m.group(2).strip() else " ") + dest,
                       text, count=1)
    open(path, "w", encoding="utf-8").write(text)


def main():
    parser = argparse.ArgumentParser(description="Check harness/, impls/, scenarios/, bench/ and tests/ against "
                                     "the DAG in docs/architecture.md.")
    parser.add_argument("--source", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        help="the project's source tree (default: this script's parent folder)")
    parser.add_argument("--self-test", action="store_true",
                        help="plant a wrong include, a wrong link and a cycle in a copy; each must be caught")
    args = parser.parse_args()
    root = os.path.abspath(args.source)
    if not os.path.isfile(os.path.join(root, "docs", "architecture.md")):
        print("layering: %s has no docs/architecture.md (--source is the project's root)" % root, file=sys.stderr)
        return 2
    try:
        if args.self_test:
            return 1 if self_test(root) else 0
        problems = check(root)
    except DagError as error:
        print("layering: " + str(error), file=sys.stderr)
        return 2
    for line in problems:
        print(line)
    if problems:
        print("layering: %d crossing(s) against the DAG of docs/architecture.md" % len(problems))
        return 1
    print("layering: every include and target link follows docs/architecture.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
