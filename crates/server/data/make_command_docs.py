"""Writes ../src/command_docs/commands.json: Redis's own description of every command
`slsm serve` serves (and of every subcommand of those), from which `COMMAND`,
`COMMAND INFO`, `COMMAND DOCS`, `COMMAND LIST` and `COMMAND COUNT` answer
as redis-server answers them.

The source is Redis's `src/commands/*.json` (BSD-3-Clause, Copyright (c)
Redis Ltd.): Redis 7.0.15's, the version the server is checked against
byte for byte, and Redis 7.2.4's for what 7.0 does not have (`CLIENT
SETINFO`). The served commands are the rows of `src/registry/rows/`.

    python3 make_command_docs.py REDIS_7.0.15_CHECKOUT REDIS_7.2.4_CHECKOUT

It also writes ../src/command_docs/unserved.json (see `write_unserved`).
"""
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# The fields the replies use (server.c's addReplyCommandInfo/Docs).
COMMAND_FIELDS = ["summary", "since", "group", "complexity", "doc_flags", "deprecated_since",
                  "replaced_by", "history", "arity", "container", "command_flags",
                  "acl_categories", "command_tips", "key_specs", "arguments",
                  "get_keys_function"]
# Subcommands of Redis 7.0's containers that came with 7.2 and are served.
FROM_72 = ["client|setinfo"]
ARG_FIELDS = ["name", "type", "key_spec_index", "token", "summary", "since",
              "deprecated_since", "optional", "multiple", "multiple_token", "arguments"]


def load(checkout):
    out = {}
    folder = os.path.join(checkout, "src", "commands")
    for name in sorted(os.listdir(folder)):
        if name.endswith(".json"):
            with open(os.path.join(folder, name)) as f:
                for cmd, desc in json.load(f).items():
                    container = desc.get("container", "").lower()
                    full = f"{container}|{cmd.lower()}" if container else cmd.lower()
                    out[full] = desc
    return out


def arguments(args):
    kept = []
    for a in args:
        a = {k: v for k, v in a.items() if k in ARG_FIELDS}
        if "arguments" in a:
            a["arguments"] = arguments(a["arguments"])
        kept.append(a)
    return kept


def trimmed(desc):
    d = {k: v for k, v in desc.items() if k in COMMAND_FIELDS}
    for spec in d.get("key_specs", []):
        spec.pop("notes", None) if not spec.get("notes") else None
    if "arguments" in d:
        d["arguments"] = arguments(d["arguments"])
    return d


def served_commands():
    """The commands of the registry's rows (src/registry/rows/*.rs), but
    those a row describes itself (`.own(...)`: not Redis's)."""
    rows = os.path.join(HERE, "..", "src", "registry", "rows")
    served = []
    for name in sorted(os.listdir(rows)):
        with open(os.path.join(rows, name)) as f:
            text = f.read()
        for m in re.finditer(r'Row::\w+\(\s*"([a-z_|-]+)"[^\n]*', text):
            if ".own(" not in m.group(0):
                served.append(m.group(1))
    return served


def main():
    v70, v72 = load(sys.argv[1]), load(sys.argv[2])
    served = served_commands()
    out = {}
    for name in served:
        source = v70 if name in v70 else v72
        if source is v72:
            print(f"{name}: from Redis 7.2")
        if name not in source:
            sys.exit(f"{name}: not in Redis 7.0 or 7.2")
        out[name] = trimmed(source[name])
        for full, desc in sorted(v70.items()) + [(n, v72[n]) for n in FROM_72]:
            if full.startswith(name + "|"):
                out[full] = trimmed(desc)
    with open(os.path.join(HERE, "..", "src", "command_docs", "commands.json"), "w") as f:
        json.dump(out, f, separators=(",", ":"), sort_keys=False)
        f.write("\n")
    print(f"{len(served)} commands, {len(out) - len(served)} subcommands")
    write_unserved(v70, out)


def write_unserved(v70, served):
    """../src/command_docs/unserved.json: Redis 7.0.15's commands `slsm serve`
    does not serve, for the ACL rules that name them (`acl/catalog.rs`):
    a rule written for Redis is accepted, and described back as Redis
    describes it, only if every command Redis has is known."""
    # A server not in sentinel mode leaves Sentinel's own commands out.
    sentinel = {n for n, d in v70.items() if "ONLY_SENTINEL" in d.get("command_flags", [])}
    unserved = {name: trimmed(desc) for name, desc in sorted(v70.items())
                if name not in served and name.split("|")[0] not in sentinel}
    for desc in unserved.values():
        desc.pop("arguments", None)
        desc.pop("history", None)
    with open(os.path.join(HERE, "..", "src", "command_docs", "unserved.json"), "w") as f:
        json.dump(unserved, f, separators=(",", ":"), sort_keys=False)
        f.write("\n")
    print(f"{len(unserved)} unserved commands and subcommands")


main()
