#!/usr/bin/env python3
"""Ceiling of exact parallel direct execution on P host cores (issue 45).

Replays a one-core run's timeline (`poems direct ... --timeline run.json`, the
Chrome trace: each rank's computations, sends and receives in virtual time) on
P host cores under the rule any exact (conservative) scheme must keep: a
receive of virtual time T completes only once its send was issued and every
other rank is known to be at T - lookahead or later (a rank's known time: the
virtual time of its computation so far, as its CPU clock would tell; a rank
waiting or queued for a core: the time it resumes at, which is optimistic).
A rank that must wait leaves its core and pays c_sync when it resumes (its
hand-over: the block, the wake, the engine's work for it); a receive that need
not wait pays c_check. Ranks run until they wait, lowest virtual time first.
Polling the ranks' clocks is free, so the figures are ceilings, not forecasts.

    ceiling.py run.json P:c_sync_us:c_check_us:lookahead_us[:sends][:pinned] ...
    ceiling.py lu8.json 1:15.8:0:4 2:15.8:1:4 2:41.35:1:4 2:15.8:1:4:sends

With ":sends" a send waits for the others' time too (a scheme in which every
MPI call sees the engine at its own virtual time, not only the receives); with
":pinned" rank r computes on core r·P div N only (N ranks parted among the cores
 in blocks).

docs/PERFORMANCE.md, "A ceiling for ranks on several host cores".
"""
import re, sys, heapq, collections
if len(sys.argv) < 3:
    sys.exit(__doc__)
pat = re.compile(r'"name": "(calc|send|recv)".*?"tid": (\d+), "ts": ([0-9.]+), "dur": ([0-9.]+), "args": \{"cpu": \d+, "peer": (-?\d+)')
ev = collections.defaultdict(list)
for spec in sys.argv[2:]:
    f = spec.split(':')
    try:
        ok = (len(f) >= 4 and int(f[0]) >= 1 and all(float(x) >= 0 for x in f[1:4])
              and set(f[4:]) <= {'sends', 'pinned'})
    except ValueError:
        ok = False
    if not ok:
        sys.exit(f"ceiling.py: {spec}: expected P:c_sync_us:c_check_us:lookahead_us[:sends][:pinned] (P >= 1, the others >= 0)")
try:
    with open(sys.argv[1]) as f:
        for line in f:
            m = pat.search(line)
            if m:
                ev[int(m.group(2))].append((float(m.group(3)), m.group(1), float(m.group(4)), int(m.group(5))))
except OSError as e:
    sys.exit(f"ceiling.py: {sys.argv[1]}: {e.strerror}")
if not ev:
    sys.exit(f"ceiling.py: {sys.argv[1]}: no calc, send or recv events (a `poems direct --timeline` Chrome trace?)")
ranks = sorted(ev)
items = {}
for r in ranks:
    seq, cnt = [], collections.Counter()
    for ts, kind, dur, peer in sorted(ev[r]):
        if kind == 'calc':
            seq.append((0, dur, ts))
        elif kind == 'send':
            k = cnt[('s', peer)]; cnt[('s', peer)] += 1
            seq.append((1, (r, peer, k), ts))
        else:
            k = cnt[('r', peer)]; cnt[('r', peer)] += 1
            seq.append((2, (peer, r, k), ts))
    items[r] = seq
INF = float('inf')

def run(P, c_sync, c_check, lam, sync_sends, pinned):
    issued = set(); waiting = {}
    idx = {r: 0 for r in ranks}
    state = {r: 'ready' for r in ranks}
    w0 = {r: 0.0 for r in ranks}      # wall start of the calc running
    ready = [(0.0, r) for r in ranks]; heapq.heapify(ready)
    wglob = set(); resumed = set()
    clock = []; now = 0.0; waits = collections.Counter()
    free_cores = set(range(P)); core_of = {}  # pinned: rank r computes on core r*P//N only
    def bound(q):
        s = state[q]
        if s == 'done': return INF
        i = idx[q]; kind, a, ts = items[q][i - 1] if s == 'calc' else items[q][i]
        if s == 'calc': return ts + min(a, now - w0[q])
        return ts
    def others_min(r):
        return min((bound(q) for q in ranks if q != r), default=INF)
    def advance(r, t):
        seq = items[r]; i = idx[r]
        while i < len(seq):
            kind, a, ts = seq[i]
            if kind == 0:
                idx[r] = i + 1; state[r] = 'calc'; w0[r] = t
                heapq.heappush(clock, (t + a, 1, r)); return
            if kind == 1:
                if sync_sends and others_min(r) < ts - lam:
                    idx[r] = i; wglob.add(r); state[r] = 'wglob'; waits['global'] += 1
                    return 'left'
                issued.add(a); w = waiting.pop(a, None)
                if w is not None:
                    wglob.add(w); state[w] = 'wglob'
            else:
                if a not in issued:
                    idx[r] = i; waiting[a] = r; state[r] = 'wsend'; waits['send'] += 1
                    return 'left'
                if others_min(r) < ts - lam:
                    idx[r] = i; wglob.add(r); state[r] = 'wglob'; waits['global'] += 1
                    return 'left'
                t += c_check
            i += 1
        idx[r] = i; state[r] = 'done'; return 'left'
    while True:
        # ranks waiting on the global bound whose condition now holds become ready
        changed = True
        while changed:
            changed = False
            for w in sorted(wglob):
                kind, a, ts = items[w][idx[w]]
                if (kind == 1 or a in issued) and others_min(w) >= ts - lam:
                    wglob.discard(w); state[w] = 'ready'; heapq.heappush(ready, (ts, w)); resumed.add(w); changed = True
        later = []
        while ready and free_cores:
            t, r = heapq.heappop(ready)
            core = r * P // len(ranks) if pinned else min(free_cores)
            if core not in free_cores:
                later.append((t, r)); continue
            free_cores.remove(core); core_of[r] = core; state[r] = 'start'
            heapq.heappush(clock, (now + (c_sync if r in resumed else 0.0), 0, r))
        for x in later: heapq.heappush(ready, x)
        # a timer for the earliest wall time a global waiter could go on
        tnext = INF
        for w in wglob:
            kind, a, ts = items[w][idx[w]]
            target = ts - lam
            if kind == 2 and a not in issued: continue
            tw = now
            for q in ranks:
                if q == w: continue
                b = bound(q)
                if b >= target: continue
                if state[q] == 'calc': tw = max(tw, now + (target - b))
                else: tw = INF; break
            tnext = min(tnext, tw)
        if not clock:
            if tnext == INF: break
        if clock and clock[0][0] <= tnext:
            now, _, r = heapq.heappop(clock)
            if advance(r, now) == 'left':
                free_cores.add(core_of.pop(r))
        else:
            now = max(now, tnext) + 1e-6
    return now, waits

tc = sum(x[1] for r in ranks for x in items[r] if x[0] == 0)
nrecv = sum(1 for r in ranks for x in items[r] if x[0] == 2)
print(f"{len(ranks)} ranks, computation {tc / 1e6:.3f} s, {nrecv} receives")
for spec in sys.argv[2:]:
    P, cs, cc, lam, *what = spec.split(':')
    sync_sends, pinned = 'sends' in what, 'pinned' in what
    T, w = run(int(P), float(cs), float(cc), float(lam), sync_sends, pinned)
    print(f"P={P} c_sync={cs} us c_check={cc} us lookahead={lam} us{' sends wait too' if sync_sends else ''}"
          f"{' ranks pinned' if pinned else ''}: {T / 1e6:.2f} s,"
          f" waits for a send {w['send']}, for the others' time {w['global']}", flush=True)
