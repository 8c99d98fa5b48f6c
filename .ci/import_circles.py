#!/usr/bin/env python3
"""Import circles between the files of a Rust crate.

    python3 .ci/import_circles.py crates/server/src

Reads every `.rs` file under the directory (test modules left out: a
`#[cfg(test)] mod name { ... }` body, and the line after any other
`#[cfg(test)]`), finds which files each one refers to — `crate::a::b`
paths, `use crate::{a, b::c}` groups, `super::` paths, and in a `mod.rs`
or `lib.rs` the paths through its own child modules (a `pub use` of a
child counts; declaring `mod child;` does not) — and prints every set of
files that refer to each other round a loop (the strongly connected
components of that graph). Exits 1 if there is one.

It reads text, not the compiler's view: a path is taken to name the
longest module prefix that is a file, which is what the crate's own
layout makes true. Written for the "no import circle" targets of issues
63 (the engine) and 66 (the server), so that CI keeps them."""
import os
import re
import sys


def module_files(root):
    files = {}
    for d, _, names in os.walk(root):
        for f in names:
            if not f.endswith(".rs"):
                continue
            path = os.path.join(d, f)
            parts = os.path.relpath(path, root)[:-3].split("/")
            if parts[-1] in ("mod", "lib"):
                parts = parts[:-1]
            files["::".join(parts)] = path
    return files


def without_test_modules(src):
    """`src` less every `#[cfg(test)] mod name { ... }` (braces matched)."""
    out, at = [], 0
    for m in re.finditer(r"#\[cfg\(test\)\]\s*(?:pub(?:\([\w:]+\))?\s+)?mod\s+\w+\s*\{", src):
        if m.start() < at:
            continue
        depth, i = 1, m.end()
        while i < len(src) and depth:
            depth += {"{": 1, "}": -1}.get(src[i], 0)
            i += 1
        out.append(src[at:m.start()])
        at = i
    return "".join(out) + src[at:]


def production_text(src):
    src = re.sub(r"//[^\n]*", "", src)
    src = without_test_modules(src)
    return re.sub(r"#\[cfg\(test\)\]\s*\n[^\n]*", "", src)


def dependencies(mod, path, files):
    def resolve(p):
        segs = p.split("::")
        for n in range(len(segs), -1, -1):
            m = "::".join(segs[:n])
            if m in files:
                return m
        return None

    src = production_text(open(path).read())
    deps = set()

    def add(p):
        r = resolve(p)
        if r is not None:
            deps.add(r)

    for m in re.finditer(r"crate::([A-Za-z_][\w:]*)(::\{([^}]*)\})?", src):
        base = m.group(1).rstrip(":")
        for item in (m.group(3) or "").split(","):
            item = item.strip().split(" ")[0]
            if item and item != "self":
                add(base + "::" + item)
        add(base)
    for m in re.finditer(r"crate::\{([^;]*)\};", src, re.S):
        for item in re.sub(r"\{[^{}]*\}", "", m.group(1)).split(","):
            item = item.strip().split(" ")[0].rstrip(":")
            if item and item != "self":
                add(item)
    segs = mod.split("::") if mod else []
    is_dir = os.path.basename(path) in ("mod.rs", "lib.rs")
    supers = r"(?<!::)\b((?:super::)+)(?:(?!super\b)([A-Za-z_]\w*(?:::(?!\{)\w+)*))?(?:::)?(\{([^}]*)\})?"
    for m in re.finditer(supers, src):
        up = m.group(1).count("super::")
        base_segs = segs if is_dir else segs[:-1]
        base_segs = base_segs[: len(base_segs) - (up if is_dir else up - 1)]
        head = (m.group(2) or "").rstrip(":")
        base = "::".join(base_segs + ([head] if head else []))
        items = [i.strip().split(" ")[0] for i in (m.group(4) or "").split(",") if i.strip()]
        for it in items or [""]:
            add(base + ("::" + it if it else ""))
    if is_dir:
        for m in re.finditer(r"(?<![\w:])(\w+)::(\w+)?", src):
            child = (mod + "::" if mod else "") + m.group(1)
            if child in files:
                add(child + ("::" + m.group(2) if m.group(2) else ""))
    deps.discard(mod)
    return deps


def circles(graph):
    index, low, stack, on, found, counter = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def main():
    root = sys.argv[1]
    files = module_files(root)
    graph = {
        mod: dependencies(mod, path, files)
        for mod, path in files.items()
        if os.path.basename(path) != "tests.rs" and "/tests/" not in path
    }
    found = circles(graph)
    print(f"{root}: {len(graph)} files, {len(found)} import circles")
    for part in sorted(found, key=len, reverse=True):
        print(f"  {len(part)} files: " + ", ".join(p or "lib" for p in part))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
