#!/usr/bin/env python3
"""Runs the tool-layer benchmark (shared/bench/BENCH.md) for toolsmith, the Rust peer (rig) and
the Python reference (Pydantic AI) alternately, and writes a Markdown table of the medians.

    scripts/bench-side-by-side.py --rounds 2                 # full mode, about 3 min a round
    scripts/bench-side-by-side.py --rounds 1 --quick         # smoke run; numbers not comparable
    scripts/bench-side-by-side.py --rounds 3 --skip python --out side-by-side.md

Each round runs every implementation once, one after the other; the order rotates from round to
round (python, toolsmith, rig; then toolsmith, rig, python; ...), so that none always runs first
or last in a window. Every run is one process that prints one JSON object on its last stdout
line (BENCH.md §4):

- toolsmith: `cargo run --release -p toolsmith-bench -- --json`
- rig:       `cargo run --release --manifest-path bench/rig-peer/Cargo.toml -- --json`
- python:    `PYTHON REFERENCE --json`, then, when the file exists,
             `PYTHON crates/toolsmith-bench/reference/extra_workloads.py --json` (its keys join
             the Python column)

Both Rust binaries are built before the first round, so no run includes a build. The table gives,
per workload key, the median over the rounds of each implementation's median, wall time with
CPU time in brackets, and the ratios Pydantic AI / toolsmith and rig / toolsmith of those medians
(wall, with CPU in brackets). A key that one side does not report shows "–". A second table lists
every run with its start time and load average. `--raw FILE` keeps every JSON object (one a line).

Standard library only. Progress goes to stderr; the Markdown goes to stdout or `--out FILE`.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXTRA = ROOT / "crates" / "toolsmith-bench" / "reference" / "extra_workloads.py"
# Relative to the repository root, where every command runs.
RIG_MANIFEST = "bench/rig-peer/Cargo.toml"

IMPLS = ("python", "toolsmith", "rig")
TITLES = {"python": "Pydantic AI", "toolsmith": "toolsmith", "rig": "rig"}

# BENCH.md's order, then the newer workloads; other keys follow in the order they first appear.
KEY_ORDER = [
    "call_overhead_100",
    "call_overhead_100_sequential",
    "test_model_100_tools",
    "register_1000_tools",
    "step_10k_deferred",
    "search_10k",
    "search_10k_delta",
    "concurrent_10k",
    "concurrent_10k_rss_mb",
    "concurrent_10k_kib_per_run",
    "history_1000_parse",
    "history_1000_serialise",
    "rss_1000_tools_mb",
]
# Keys that are not µs: their unit ("" for a plain number).
UNITS = {
    "_mb": "MiB",
    "_kib_per_run": "KiB",
    "_bytes": "B",
    "_ratio": "",
    "concurrent_10k_runs": "",
    "search_100k_tools": "",
    "_cpu_per_run_us": "µs",
}
# Keys that are notes, not figures: left out of the table.
NOTES = ("_note",)
META = {"impl", "version", "mode", "loadavg", "cpu_us"}


def log(message: str) -> None:
    print(f"bench-side-by-side: {message}", file=sys.stderr, flush=True)


def loadavg() -> list[float]:
    try:
        return [float(v) for v in Path("/proc/loadavg").read_text().split()[:3]]
    except OSError:
        return []


def utc_now() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


def cargo_jobs(args: argparse.Namespace) -> list[str]:
    return ["-j", str(args.jobs)] if args.jobs else []


def commands(args: argparse.Namespace) -> dict[str, list[list[str]]]:
    """The commands of one run of each implementation (the Python one has one or two)."""
    mode = ["--quick"] if args.quick else []
    jobs = cargo_jobs(args)
    python = [[args.python, str(args.reference), "--json", *mode]]
    if EXTRA.is_file():
        python.append([args.python, str(EXTRA), "--json", *mode])
    return {
        "toolsmith": [["cargo", "run", "-q", "--release", *jobs, "-p", "toolsmith-bench", "--", "--json", *mode]],
        "rig": [["cargo", "run", "-q", "--release", *jobs, "--manifest-path", RIG_MANIFEST, "--", "--json", *mode]],
        "python": python,
    }


def build(args: argparse.Namespace, impls: list[str]) -> None:
    """Builds the Rust binaries before any round, so that no timed run waits for a build."""
    builds = {
        "toolsmith": ["cargo", "build", "-q", "--release", *cargo_jobs(args), "-p", "toolsmith-bench"],
        "rig": ["cargo", "build", "-q", "--release", *cargo_jobs(args), "--manifest-path", RIG_MANIFEST],
    }
    for impl in impls:
        if impl in builds:
            log(f"building {impl}: {shlex.join(builds[impl])}")
            subprocess.run(builds[impl], cwd=ROOT, check=True)


def run_one(command: list[str]) -> dict:
    """Runs one benchmark process; the JSON object on its last stdout line."""
    proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = "\n".join(proc.stderr.strip().splitlines()[-15:])
        raise RuntimeError(f"{shlex.join(command)} exited with {proc.returncode}:\n{tail}")
    lines = proc.stdout.strip().splitlines()
    if not lines:
        raise RuntimeError(f"{shlex.join(command)} printed nothing on stdout")
    try:
        result = json.loads(lines[-1])
    except json.JSONDecodeError as e:
        raise RuntimeError(f"{shlex.join(command)}: the last stdout line is not JSON ({e}): {lines[-1][:200]}")
    if not isinstance(result, dict):
        raise RuntimeError(f"{shlex.join(command)}: the last stdout line is not a JSON object")
    return result


def merge(results: list[dict]) -> dict:
    """One implementation's result from one or more processes (reference + extra workloads)."""
    merged: dict = {"cpu_us": {}}
    for r in results:
        for k, v in r.items():
            if k == "cpu_us":
                merged["cpu_us"].update(v or {})
            elif k == "loadavg":
                merged.setdefault("loadavg", v)
                merged["loadavg_end"] = v[-1] if v else None
            elif k in ("impl", "version", "mode"):
                merged.setdefault(k, v)
            else:
                merged[k] = v
    return merged


def ordered_keys(runs: list[dict]) -> list[str]:
    seen: list[str] = []
    for run in runs:
        for k in run["result"]:
            if k not in META and k != "loadavg_end" and not k.endswith(NOTES) and k not in seen:
                seen.append(k)
    known = [k for k in KEY_ORDER if k in seen]
    return known + [k for k in seen if k not in KEY_ORDER]


def unit(key: str) -> str:
    for suffix, u in UNITS.items():
        if key.endswith(suffix):
            return u
    return "µs"


def fmt_time(us: float) -> str:
    """µs as ms from 1 ms up, else as µs, with about four significant digits."""
    if us >= 1000:
        ms = us / 1000
        if ms >= 1000:
            return f"{ms:,.0f} ms"
        return f"{ms:.1f} ms" if ms >= 100 else f"{ms:.2f} ms" if ms >= 10 else f"{ms:.3f} ms"
    return f"{us:.1f} µs" if us >= 10 else f"{us:.2f} µs"


def fmt_value(key: str, value: float | None) -> str:
    if value is None:
        return "–"
    u = unit(key)
    if u == "µs":
        return fmt_time(value)
    if u == "":
        return f"{value:,.0f}" if value >= 100 else f"{value:.2f}"
    if u == "B":
        return f"{value:,.0f} B"
    return f"{value:.1f} {u}" if u == "MiB" else f"{value:.2f} {u}"


def fmt_cell(key: str, wall: float | None, cpu: float | None) -> str:
    if wall is None:
        return "–"
    text = fmt_value(key, wall)
    if cpu is not None and unit(key) == "µs":
        text += f" ({fmt_time(cpu)})"
    return text


def fmt_ratio(num: float | None, den: float | None) -> str | None:
    if num is None or den is None or den <= 0:
        return None
    r = num / den
    if r >= 1000:
        return f"{r:,.0f}×"
    return f"{r:.1f}×" if r >= 10 else f"{r:.2f}×"


def ratio_cell(key: str, meds: dict, num: str, den: str) -> str:
    wall = fmt_ratio(meds[num][key][0], meds[den][key][0])
    if wall is None:
        return "–"
    cpu = fmt_ratio(meds[num][key][1], meds[den][key][1]) if unit(key) == "µs" else None
    return f"{wall} ({cpu})" if cpu else wall


def medians(runs: list[dict], impls: list[str], keys: list[str]) -> dict:
    """`{impl: {key: (median wall, median cpu)}}` over the rounds; `None` where nothing ran."""
    out: dict = {}
    for impl in IMPLS:
        mine = [r["result"] for r in runs if r["impl"] == impl and r.get("result")]
        out[impl] = {}
        for key in keys:
            walls = [r[key] for r in mine if isinstance(r.get(key), (int, float))]
            cpus = [r["cpu_us"][key] for r in mine if isinstance(r.get("cpu_us", {}).get(key), (int, float))]
            out[impl][key] = (
                statistics.median(walls) if walls and impl in impls else None,
                statistics.median(cpus) if cpus and impl in impls else None,
            )
    return out


def end_time(runs: list[dict]) -> str:
    """When the last run ended (its start and duration), as HH:MM:SS."""
    if not runs:
        return "?"
    last = runs[-1]
    start = dt.datetime.strptime(last["start"], "%Y-%m-%d %H:%M:%S")
    return (start + dt.timedelta(seconds=last.get("seconds", 0))).strftime("%H:%M:%S")


def markdown(args: argparse.Namespace, impls: list[str], runs: list[dict], cmds: dict) -> str:
    keys = ordered_keys(runs)
    meds = medians(runs, impls, keys)
    ok = [r for r in runs if r.get("result")]
    versions = []
    for impl in impls:
        r = next((r["result"] for r in ok if r["impl"] == impl), None)
        if r:
            versions.append(f"{r.get('impl', impl)} {r.get('version', '?')}")
    loads = [r["load_start"][0] for r in runs if r["load_start"]]
    mode = "quick" if args.quick else "full"
    lines = [
        f"Mode `{mode}`, {args.rounds} round(s), {runs[0]['start'][:10] if runs else '?'}, "
        f"{runs[0]['start'] if runs else '?'} – {end_time(runs)} UTC; "
        f"1-minute load average at the start of each run {min(loads, default=float('nan')):.2f}–"
        f"{max(loads, default=float('nan')):.2f}; {', '.join(versions)}.",
        "",
        "Medians over the rounds of each run's medians: wall time, with process CPU time in brackets. "
        "Ratios are of those medians, wall (CPU).",
        "",
    ]
    header = ["workload"] + [TITLES[i] for i in impls]
    ratios = [("python", "toolsmith"), ("rig", "toolsmith")]
    ratios = [(n, d) for n, d in ratios if n in impls and d in impls]
    header += [f"{TITLES[n]} / {TITLES[d]}" for n, d in ratios]
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "---|" * len(header))
    for key in keys:
        row = [f"`{key}`"] + [fmt_cell(key, *meds[i][key]) for i in impls]
        row += [ratio_cell(key, meds, n, d) for n, d in ratios]
        lines.append("| " + " | ".join(row) + " |")
    lines += ["", "| round | implementation | start (UTC) | load at start (1, 5, 15 min) | `loadavg` in the JSON | took |", "|---|---|---|---|---|---|"]
    for r in runs:
        res = r.get("result") or {}
        la = res.get("loadavg")
        json_load = f"{la[0]}, {res.get('loadavg_end', la[-1])}" if la else "–"
        status = f"{r['seconds']:.1f} s" if r.get("result") else f"failed after {r['seconds']:.1f} s"
        start_load = ", ".join(f"{v:.2f}" for v in r["load_start"]) or "–"
        lines.append(f"| {r['round']} | {TITLES[r['impl']]} | {r['start'][11:]} | {start_load} | {json_load} | {status} |")
    lines += ["", "Commands (from the repository root):", "", "```sh"]
    for impl in impls:
        for c in cmds[impl]:
            lines.append(shlex.join(c))
    lines += ["```", ""]
    return "\n".join(lines)


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=2, help="rounds; every implementation runs once per round (default 2)")
    p.add_argument("--quick", action="store_true", help="pass --quick to every run (numbers not comparable)")
    p.add_argument("--skip", action="append", choices=["python", "rig"], default=[], help="leave one side out (repeatable)")
    p.add_argument("--reference", type=Path, default=ROOT.parent / "shared" / "bench" / "reference_pydantic_ai.py",
                   help="reference_pydantic_ai.py (default: ../shared/bench/ beside the repository)")
    p.add_argument("--python", default=str(ROOT / ".venv-reference" / "bin" / "python"),
                   help="the Python with Pydantic AI 2.68.0 (default: .venv-reference/bin/python)")
    p.add_argument("--jobs", type=int, default=None, help="cargo -j for the builds (default: cargo's)")
    p.add_argument("--out", type=Path, help="write the Markdown here instead of stdout")
    p.add_argument("--raw", type=Path, help="also write every run's JSON here, one object a line")
    p.add_argument("--from-raw", type=Path, help="run nothing: write the table of a --raw file again")
    args = p.parse_args(argv)
    if args.rounds < 1:
        p.error("--rounds must be at least 1")
    return args


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    impls = [i for i in IMPLS if i not in args.skip]
    if args.from_raw:
        runs = [json.loads(line) for line in args.from_raw.read_text().splitlines() if line.strip()]
        impls = [i for i in impls if any(r["impl"] == i for r in runs)]
        args.rounds = max((r["round"] for r in runs), default=0)
        text = markdown(args, impls, runs, commands(args))
        if args.out:
            args.out.write_text(text)
        else:
            sys.stdout.write(text)
        return 0
    if "python" in impls:
        args.reference = args.reference.resolve()
        if not args.reference.is_file():
            log(f"no reference script at {args.reference}: the shared bench folder goes beside the checkout "
                "(../shared/bench/), or pass --reference PATH, or --skip python")
            return 2
        if not Path(args.python).is_file():
            log(f"no Python at {args.python}: scripts/reference-venv.sh creates .venv-reference, "
                "or pass --python PATH, or --skip python")
            return 2
        if not EXTRA.is_file():
            log(f"no {EXTRA.relative_to(ROOT)}: the Python column has the reference's workloads only")
    build(args, impls)
    cmds = commands(args)
    runs: list[dict] = []
    failed = False
    for rnd in range(args.rounds):
        order = impls[rnd % len(impls):] + impls[: rnd % len(impls)]
        for impl in order:
            entry = {"round": rnd + 1, "impl": impl, "start": utc_now(), "load_start": loadavg()}
            log(f"round {rnd + 1}/{args.rounds}: {impl} (load {entry['load_start'][:1]})")
            t0 = time.monotonic()
            try:
                entry["result"] = merge([run_one(c) for c in cmds[impl]])
            except (RuntimeError, OSError) as e:
                log(f"{impl} failed: {e}")
                failed = True
            entry["seconds"] = time.monotonic() - t0
            runs.append(entry)
    if args.raw:
        with args.raw.open("w") as f:
            for r in runs:
                f.write(json.dumps(r) + "\n")
    text = markdown(args, impls, runs, cmds)
    if args.out:
        args.out.write_text(text)
        log(f"wrote {args.out}")
    else:
        sys.stdout.write(text)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
