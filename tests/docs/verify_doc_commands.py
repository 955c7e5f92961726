#!/usr/bin/env python3
"""Run the commands of README.md and the runnable examples of docs/*.md.
Usage: verify_doc_commands.py REPO_ROOT BIN_DIR WORK_DIR [FILE.md ...]

README.md: every command line of every ```sh block that starts with
`build/bin/poems` or `mpirun` runs (`scripts/...` lines are the two top-level
commands CI runs itself); it must exit 0.
docs/*.md: a ```sh block after `<!-- run -->` runs the same way (a line may
also start with `poems`). A ```text block after `<!-- run -->` holds
`$ poems ...` lines each followed by its exact output (stderr then stdout).
`<!-- run: exit N -->` expects exit code N from every command of the block.
In expected output, `…` stands for any text within a line (a wall time) and
a line `...` for any number of lines (elided rows).

`<!-- file: NAME -->` blocks of a document (as in docs/psl.md) are written
into its directory first, so its commands can use them.

Commands run in document order, each file in a fresh WORK_DIR/NAME in which
`examples` and `build/bin` point into the repository and the build, so the
paths the documents use work and what they write stays there; the
knowledge base is that directory's poems.db."""
import os, re, shlex, subprocess, sys

root, bindir, work = sys.argv[1], sys.argv[2], sys.argv[3]
files = sys.argv[4:] or ["README.md"] + sorted("docs/" + f for f in os.listdir(os.path.join(root, "docs"))
                                                 if f.endswith(".md"))
root_user = os.geteuid() == 0


def logical_lines(text):
    """Lines joined at a trailing backslash, comments after `  #` dropped."""
    out, pending = [], ""
    for line in text.split("\n"):
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        line = pending + line
        pending = ""
        m = re.search(r"\s+#\s", line)
        if m and line[:m.start()].count("'") % 2 == 0 and line[:m.start()].count('"') % 2 == 0:
            line = line[:m.start()]
        if line.strip():
            out.append(line.strip())
    return out


def command(line, readme):
    if line.startswith("build/bin/poems ") or line == "build/bin/poems":
        return line
    if not readme and (line.startswith("poems ") or line == "poems"):
        return "build/bin/" + line
    if line.startswith("mpirun "):
        # As root, and on a machine with fewer cores than ranks, mpirun needs these.
        flags = " --oversubscribe" + (" --allow-run-as-root" if root_user else "")
        return "mpirun" + flags + line[len("mpirun"):]
    return None


def matches(expected, got):
    pattern = ""
    for line in expected.split("\n"):
        if line == "...":
            pattern += r"(?:[^\n]*\n)*?"
        else:
            pattern += "[^\n]*".join(re.escape(part) for part in line.split("…")) + "\n"
    return re.fullmatch(pattern[:-1], got) is not None


def run(cmd, cwd):
    env = {k: v for k, v in os.environ.items() if k != "POEMS_DB"}  # ./poems.db, as the documents say
    r = subprocess.run(["bash", "-c", cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    return r.returncode, r.stdout, r.stderr


fails = commands = 0
for name in files:
    path = os.path.join(root, name)
    doc = open(path).read().split("\n")
    readme = name == "README.md"
    cwd = os.path.join(work, name.replace("/", "_").replace(".md", ""))
    subprocess.run(["rm", "-rf", cwd])
    os.makedirs(os.path.join(cwd, "build"))
    os.symlink(os.path.join(root, "examples"), os.path.join(cwd, "examples"))
    os.symlink(bindir, os.path.join(cwd, "build", "bin"))
    for k, line in enumerate(doc):  # the document's files
        m = re.match(r"<!-- file: (\S+)( error)? -->", line)
        if m and k + 1 < len(doc) and doc[k + 1].startswith("```"):
            j, body = k + 2, []
            while not doc[j].startswith("```"):
                body.append(doc[j])
                j += 1
            target = os.path.join(cwd, m.group(1))
            os.makedirs(os.path.dirname(target), exist_ok=True)
            open(target, "w").write("\n".join(body) + "\n")
    marker, i = None, 0
    while i < len(doc):
        m = re.match(r"<!-- run(?:: exit (\d+))? -->", doc[i])
        if m:
            marker = int(m.group(1) or 0)
            i += 1
            continue
        m = re.match(r"```(\w*)", doc[i])
        if not m:
            if doc[i].strip():
                marker = None
            i += 1
            continue
        lang, start = m.group(1), i + 1
        i += 1
        body = []
        while not doc[i].startswith("```"):
            body.append(doc[i])
            i += 1
        i += 1
        expected_rc = marker if marker is not None else 0
        runnable = marker is not None or (readme and lang == "sh")
        marker = None
        if not runnable:
            continue
        if lang == "text":
            text = "\n".join(body) + "\n"
            chunks = re.split(r"^\$ ", text, flags=re.M)[1:]
            for chunk in chunks:
                cmdline, _, expected = chunk.partition("\n")
                cmd = command(cmdline.strip(), False)
                if cmd is None:
                    continue
                commands += 1
                rc, out, err = run(cmd, cwd)
                if rc != expected_rc or not matches(expected, err + out):
                    fails += 1
                    print(f"{name}:{start}: {cmdline}\n  exit {rc} (expected {expected_rc})\n--- expected\n{expected}"
                          f"--- got\n{err + out}")
            continue
        for line in logical_lines("\n".join(body)):
            cmd = command(line, readme)
            if cmd is None:
                continue
            commands += 1
            rc, out, err = run(cmd, cwd)
            if rc != expected_rc:
                fails += 1
                print(f"{name}:{start}: {line}\n  exit {rc} (expected {expected_rc})\n{err[-3000:]}")
print(f"{commands} commands, {fails} failures")
sys.exit(1 if fails else 0)
