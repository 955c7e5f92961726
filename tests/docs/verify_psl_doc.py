#!/usr/bin/env python3
"""Extract examples from docs/psl.md and verify them with poems check.
Usage: verify_psl_doc.py REPO_ROOT POEMS_BINARY WORK_DIR [--update]
<!-- file: NAME.psl -->  before a ```psl block: written to WORK_DIR/NAME.psl
<!-- fragment: PATH -->   before a ```psl block: must be a verbatim substring of REPO_ROOT/PATH
A ```psl block with no marker is an error.
A ```text block whose first line is `$ poems check ...` is run in the verify dir and
its remaining lines must equal the output (stderr+stdout).
A file block not followed by such a text block must check with no diagnostics."""
import re, subprocess, sys, os, shutil
root, poems, vd = sys.argv[1], sys.argv[2], sys.argv[3]
doc_path = os.path.join(root, 'docs', 'psl.md')
doc = open(doc_path).read().split('\n')
shutil.rmtree(vd, ignore_errors=True); os.makedirs(vd)
blocks = []  # (kind, marker, lang, text, line)
i = 0
pending = None
while i < len(doc):
    line = doc[i]
    m = re.match(r'<!-- (file|fragment): (\S+)( error)? -->', line)
    if m:
        pending = (m.group(1), m.group(2), bool(m.group(3))); i += 1; continue
    m = re.match(r'```(\w*)', line)
    if m:
        lang = m.group(1); start = i; body = []
        i += 1
        while not doc[i].startswith('```'):
            body.append(doc[i]); i += 1
        blocks.append((pending, lang, '\n'.join(body) + '\n', start + 1, start, i))
        pending = None
    i += 1
fails = 0
# write all files first (imports)
for marker, lang, text, ln, *_ in blocks:
    if lang == 'psl':
        if marker is None:
            print(f'line {ln}: psl block without marker'); fails += 1; continue
        kind, name, _ = marker
        if kind == 'file':
            p = os.path.join(vd, name); os.makedirs(os.path.dirname(p), exist_ok=True)
            if os.path.exists(p): print(f'line {ln}: duplicate file {name}'); fails += 1
            open(p, 'w').write(text)
        else:
            src = open(os.path.join(root, name)).read()
            if text.rstrip('\n') not in src:
                print(f'line {ln}: fragment not found in {name}'); fails += 1
checked = set()
updates = []
for idx, (marker, lang, text, ln, b0, b1) in enumerate(blocks):
    if lang == 'text' and text.startswith('$ poems '):
        cmdline, expected = text.split('\n', 1)
        args = cmdline[2:].split()
        r = subprocess.run([poems] + args[1:], cwd=vd, capture_output=True, text=True)
        out = r.stderr + r.stdout
        for a in args[2:]:
            checked.add(a)
        if out != expected:
            updates.append((b0, b1, cmdline, out)); print(f'line {ln}: output differs for {cmdline}\n--- expected\n{expected}--- got\n{out}'); fails += 1
for marker, lang, text, ln, *_ in blocks:
    if lang == 'psl' and marker and marker[0] == 'file' and not marker[2] and marker[1] not in checked:
        r = subprocess.run([poems, 'check', marker[1]], cwd=vd, capture_output=True, text=True)
        if r.returncode != 0 or r.stderr:
            print(f'line {ln}: {marker[1]} not clean (rc {r.returncode})\n{r.stderr}'); fails += 1
if '--update' in sys.argv and updates:
    for b0, b1, cmdline, out in sorted(updates, reverse=True):
        doc[b0+1:b1] = [cmdline] + out.rstrip('\n').split('\n')
    open(doc_path, 'w').write('\n'.join(doc))
    print('updated', len(updates))
n = sum(1 for b in blocks if b[1] == 'psl')
print(f'{n} psl blocks, {fails} failures')
sys.exit(1 if fails else 0)
