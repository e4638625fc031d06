#!/usr/bin/env python3
"""The report of scripts/bench-timing: reads the results directory it wrote
(per phase: the cyclictest output, the daemon's --summary-json, the run's
metadata and placement samples), prints a table and then the headline figures
one per line as `name: value unit`, the target checks last.

Exit status: 0 when every target is met, 1 when one is missed, 2 when the
results are incomplete (a phase without a daemon summary or cyclictest
histogram).

Usage: lib-bench-timing.py DIR [--max-ratio R] [--max-p99-diff US]

Definitions (the same for both programs):
  cycle     one wake-up of the periodic thread (a servo tick, a cyclictest
            loop); deadlines that were skipped after a late cycle are not
            cycles.
  latency   actual wake-up - absolute deadline (cyclictest's "latency").
  miss      a cycle whose work ended after the next deadline. The daemon
            counts these itself (deadline_misses). cyclictest does no work,
            so a miss is a latency >= the interval: exactly the cycles after
            which its loop skips at least one period (`while (now > next)
            next += interval`), counted from its 1 us histogram plus its
            overflows (histogram range > interval).
  miss rate misses / cycles.
  ratio     the daemon's miss rate over cyclictest's, each smoothed as
            (misses + 1) / (cycles + 1), so that it stays finite and
            meaningful when cyclictest misses nothing.
  pXX       the sample of rank ceil(q * cycles). The daemon's figures come
            from a nanosecond histogram at 3 significant digits (practically
            exact); cyclictest truncates latencies to whole us, so its
            values (percentiles, min, max) are read as the middle of their
            1 us bin, b + 0.5 us, the unbiased reading.
Several phases (the crossed placement) are pooled by summing cycles, misses
and skipped deadlines, taking the largest maximum, and averaging each
percentile over the phases weighted by cycles, for both programs alike.
"""

import argparse
import glob
import json
import math
import os
import sys

QUANTILES = [("p50", 0.50), ("p90", 0.90), ("p99", 0.99), ("p999", 0.999)]


def parse_cyclictest(path):
    """The single-thread histogram output of `cyclictest -t1 -h N -q`."""
    hist = {}
    fields = {}
    overflow_cycles = []
    in_overflow_list = False
    with open(path, encoding="utf-8", errors="replace") as f:
        for raw in f:
            line = raw.strip()
            if not line:
                continue
            if line.startswith("#"):
                body = line[1:].strip()
                if body.startswith("Histogram Overflow at cycle number"):
                    in_overflow_list = True
                    continue
                if in_overflow_list and body.startswith("Thread "):
                    rest = body.split(":", 1)[1].split()
                    overflow_cycles += [int(v) for v in rest if v.isdigit()]
                    continue
                in_overflow_list = False
                if ":" in body:
                    key, _, value = body.partition(":")
                    values = value.split()
                    if values and all(v.lstrip("-").isdigit() for v in values):
                        fields[key.strip()] = [int(v) for v in values]
                continue
            parts = line.split()
            if len(parts) >= 2 and parts[0].isdigit() and parts[1].isdigit():
                count = int(parts[1])
                if count:
                    hist[int(parts[0])] = count
    need = ["Total", "Min Latencies", "Max Latencies", "Histogram Overflows"]
    missing = [k for k in need if k not in fields]
    if missing:
        raise ValueError(f"{path}: no '# {missing[0]}:' line (did cyclictest finish?)")
    # "# Total:" is the sum of the histogram's bins; the overflows (latency
    # >= the histogram's range) are counted apart.
    binned = fields["Total"][0]
    result = {
        "hist": hist,
        "cycles": binned + fields["Histogram Overflows"][0],
        "min": fields["Min Latencies"][0],
        "avg": fields.get("Avg Latencies", [None])[0],
        "max": fields["Max Latencies"][0],
        "overflows": fields["Histogram Overflows"][0],
        "overflow_cycles": overflow_cycles,
    }
    if sum(hist.values()) != binned:
        raise ValueError(
            f"{path}: the histogram's bins hold {sum(hist.values())} cycles but '# Total:' says {binned}"
        )
    return result


# cyclictest's latencies are whole us, truncated: a value b stands for
# [b, b + 1) us.
MID_BIN = 0.5


def quantile_from_hist(hist, cycles, maximum, q):
    """The middle of the 1 us bin holding the sample of rank ceil(q * cycles).
    hist maps a bin (truncated latency, us) to its count."""
    if cycles == 0:
        return float("nan")
    rank = max(1, math.ceil(q * cycles))
    seen = 0
    for b in sorted(hist):
        seen += hist[b]
        if seen >= rank:
            return b + MID_BIN
    # In the overflow: only the maximum is known.
    return maximum + MID_BIN


def cyclictest_figures(ct, interval_us, hist_us):
    if hist_us < interval_us:
        raise ValueError(f"histogram range {hist_us} us is below the interval {interval_us} us")
    late = {b: c for b, c in ct["hist"].items() if b >= interval_us}
    misses = sum(late.values()) + ct["overflows"]
    # Periods cyclictest's loop skipped after each late wake-up: for a
    # latency L in [b, b + 1) us, ceil(L / interval) - 1 = b // interval.
    # An overflow's latency is only known to be >= the histogram range
    # (the largest is the maximum): a lower bound.
    skipped = sum(c * (b // interval_us) for b, c in late.items())
    if ct["overflows"]:
        skipped += ct["max"] // interval_us + (ct["overflows"] - 1) * (hist_us // interval_us)
    fig = {
        "cycles": ct["cycles"],
        "misses": misses,
        "skipped": skipped,
        "skipped_exact": ct["overflows"] <= 1,
        "min": ct["min"] + MID_BIN,
        "max": ct["max"] + MID_BIN,
        # cyclictest's average is of the truncated values.
        "mean": ct["avg"] + MID_BIN if ct["avg"] is not None else float("nan"),
    }
    for name, q in QUANTILES:
        fig[name] = quantile_from_hist(ct["hist"], ct["cycles"], ct["max"], q)
    return fig


def daemon_figures(summary):
    lat = summary["wake_latency_us"]
    fig = {
        "cycles": int(summary["ticks"]),
        "misses": int(summary["deadline_misses"]),
        "late_wakeups": int(summary.get("late_wakeups", 0)),
        "skipped": int(summary.get("skipped_deadlines", 0)),
        "skipped_exact": True,
        "min": float(lat["min"]),
        "max": float(lat["max"]),
        "mean": float(lat["mean"]),
        "realtime": bool(summary.get("realtime", False)),
        "elapsed_s": float(summary.get("elapsed_s", float("nan"))),
        "rate_hz": float(summary.get("rate_hz", float("nan"))),
        "tick": summary.get("tick_time_us", {}),
        "telemetry_dropped": summary.get("telemetry_dropped"),
        "budget_cuts": summary.get("budget_cuts", {}),
    }
    for name, _ in QUANTILES:
        fig[name] = float(lat[name])
    return fig


def pool(figs):
    """Several phases of one program as one."""
    n = sum(f["cycles"] for f in figs)
    out = {
        "cycles": n,
        "misses": sum(f["misses"] for f in figs),
        "skipped": sum(f["skipped"] for f in figs),
        "skipped_exact": all(f["skipped_exact"] for f in figs),
        "min": min(f["min"] for f in figs),
        "max": max(f["max"] for f in figs),
    }
    for name in ["mean"] + [k for k, _ in QUANTILES]:
        out[name] = sum(f[name] * f["cycles"] for f in figs) / n if n else float("nan")
    return out


def miss_rate(f):
    return 100.0 * f["misses"] / f["cycles"] if f["cycles"] else float("nan")


def smoothed_ratio(d, c):
    return ((d["misses"] + 1) / (d["cycles"] + 1)) / ((c["misses"] + 1) / (c["cycles"] + 1))


def ratio_interval(d, c, z=1.96):
    """95 % interval of the ratio of the two miss rates, treating misses as
    Poisson counts: given m = m_d + m_c misses in all, m_d is binomial with
    p = n_d r / (n_d r + n_c); a Wilson interval on p maps to one on r."""
    m = d["misses"] + c["misses"]
    if m == 0 or d["cycles"] == 0 or c["cycles"] == 0:
        return None
    p = d["misses"] / m
    denom = 1 + z * z / m
    centre = (p + z * z / (2 * m)) / denom
    half = z * math.sqrt(p * (1 - p) / m + z * z / (4 * m * m)) / denom
    lo, hi = max(0.0, centre - half), min(1.0, centre + half)
    scale = c["cycles"] / d["cycles"]
    to_r = lambda x: float("inf") if x >= 1.0 else x / (1.0 - x) * scale
    return to_r(lo), to_r(hi)


def fmt(x, digits=1):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    return f"{x:.{digits}f}"


def load_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def stream_figures(metas):
    """The stream clients' figures over every phase that had them
    (scripts/lib-stream-load.py's phase-N.stream.json), or None."""
    phases = []
    for meta_path in metas:
        path = meta_path[: -len(".meta.json")] + ".stream.json"
        if os.path.exists(path):
            phases.append(load_json(path))
    if not phases:
        return None
    rates = [
        r["ticks"] / p["seconds"] for p in phases for r in p["reading"] if p["seconds"] > 0
    ]
    stalled = [c for p in phases for c in p["stalled_clients"]]
    rss = [kib for p in phases for _, kib in p["rss_kib"]]
    # Growth over the second half of each phase: a bounded daemon's memory
    # levels off once every client's queue is full.
    growth = 0
    for p in phases:
        samples = p["rss_kib"]
        if len(samples) >= 4:
            half = samples[len(samples) // 2 :]
            growth = max(growth, half[-1][1] - half[0][1])
    return {
        "rate_hz": phases[0]["rate_hz"],
        "readers": max(len(p["reading"]) for p in phases),
        "min_rate_hz": min(rates) if rates else float("nan"),
        "max_rate_hz": max(rates) if rates else float("nan"),
        "reader_dropped": sum(r["dropped"] for p in phases for r in p["reading"]),
        "max_gap_s": max((r["max_gap_s"] for p in phases for r in p["reading"]), default=0.0),
        "stalled": len(stalled),
        "stalled_dropped": sum(c["dropped"] for c in stalled),
        "stalled_connected": sum(c["disconnected_s"] is None for c in stalled),
        "rss_first_kib": phases[0]["rss_kib"][0][1] if phases[0]["rss_kib"] else 0,
        "rss_max_kib": max(rss, default=0),
        "rss_last_kib": phases[-1]["rss_kib"][-1][1] if phases[-1]["rss_kib"] else 0,
        "rss_growth_last_half_kib": growth,
        "errors": sorted({e for p in phases for e in p["reading_errors"]}),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--max-ratio", type=float, default=1.2)
    ap.add_argument("--max-p99-diff", type=float, default=20.0)
    args = ap.parse_args()

    metas = sorted(glob.glob(os.path.join(args.dir, "phase-*.meta.json")))
    if not metas:
        print(f"bench-timing: no phase-*.meta.json in {args.dir}", file=sys.stderr)
        return 2

    rows = []  # (phase label, placement, tool, figures)
    daemon_phases, ct_phases = [], []
    notes = []
    incomplete = False
    for meta_path in metas:
        meta = load_json(meta_path)
        stem = meta_path[: -len(".meta.json")]
        label = str(meta["phase"])
        placement = meta["placement_label"]
        interval = int(meta["interval_us"])
        if meta.get("cyclictest_exit") in (None, ""):
            notes.append(f"phase {label}: cyclictest did not run (hapticd failed to start)")
            incomplete = True
        else:
            try:
                ct = cyclictest_figures(
                    parse_cyclictest(stem + ".cyclictest.txt"), interval, int(meta["hist_us"])
                )
                ct_phases.append(ct)
                rows.append((label, placement, "cyclictest", ct))
            except (OSError, ValueError) as e:
                notes.append(f"phase {label}: cyclictest results unusable: {e}")
                incomplete = True
        summary_path = stem + ".summary.json"
        if os.path.exists(summary_path):
            try:
                d = daemon_figures(load_json(summary_path))
                daemon_phases.append(d)
                rows.append((label, placement, "hapticd", d))
                if not d["realtime"]:
                    notes.append(
                        f"phase {label}: WARNING the servo thread did not get SCHED_FIFO "
                        "(realtime: false): the comparison is not meaningful"
                    )
                if d["rate_hz"] > 0 and abs(1e6 / d["rate_hz"] - interval) > 0.5:
                    notes.append(
                        f"phase {label}: WARNING servo period {1e6 / d['rate_hz']:.1f} us "
                        f"differs from cyclictest's interval {interval} us"
                    )
                secs = float(meta["seconds"])
                if d["elapsed_s"] == d["elapsed_s"] and d["elapsed_s"] < 0.9 * secs:
                    notes.append(
                        f"phase {label}: the servo ran {d['elapsed_s']:.1f} s of the {secs:.0f} s"
                    )
                tick = d["tick"]
                if tick:
                    notes.append(
                        f"phase {label}: hapticd tick time mean {fmt(tick.get('mean'))} us, "
                        f"p99 {fmt(tick.get('p99'))} us, max {fmt(tick.get('max'))} us; "
                        f"telemetry dropped {d['telemetry_dropped']}"
                    )
            except (OSError, ValueError, KeyError, TypeError) as e:
                notes.append(f"phase {label}: daemon summary unusable: {e!r}")
                incomplete = True
        else:
            notes.append(f"phase {label}: no daemon summary ({os.path.basename(summary_path)})")
            incomplete = True
        if meta.get("daemon_exit") not in (None, "", 0, "0"):
            notes.append(f"phase {label}: hapticd exited with status {meta['daemon_exit']}")
        if meta.get("cyclictest_exit") not in (None, "", 0, "0"):
            notes.append(f"phase {label}: cyclictest exited with status {meta['cyclictest_exit']}")
        notes.append(
            f"phase {label}: load average before {meta.get('loadavg_before', '?')}, "
            f"after {meta.get('loadavg_after', '?')}"
        )
        placement_path = stem + ".placement"
        if os.path.exists(placement_path):
            samples = []
            with open(placement_path, encoding="utf-8") as f:
                for line in f:
                    parts = line.split()
                    if len(parts) == 2:
                        samples.append(tuple(parts))
            if samples:
                servo = sorted({s for s, _ in samples})
                cyc = sorted({c for _, c in samples})
                same = sum(1 for s, c in samples if s == c and s != "-")
                notes.append(
                    f"phase {label}: observed CPUs ({len(samples)} samples): servo thread "
                    f"{','.join(servo)}, cyclictest thread {','.join(cyc)}; same CPU in {same}"
                )

    # The table.
    head = (
        f"{'phase':<6}{'placement':<30}{'program':<11}{'cycles':>9}{'misses':>8}"
        f"{'miss %':>10}{'skipped':>9}{'p50':>8}{'p99':>8}{'p99.9':>8}{'max':>9}"
    )
    print("wake-up latency (us) and deadline misses per cycle; cyclictest's whole-us values read as bin middles (+0.5 us)")
    print(head)
    print("-" * len(head))

    def row(label, placement, tool, f):
        skipped = str(f["skipped"]) + ("" if f["skipped_exact"] else "+")
        print(
            f"{label:<6}{placement:<30}{tool:<11}{f['cycles']:>9}{f['misses']:>8}"
            f"{fmt(miss_rate(f), 4):>10}{skipped:>9}{fmt(f['p50']):>8}{fmt(f['p99']):>8}"
            f"{fmt(f['p999']):>8}{fmt(f['max']):>9}"
        )

    for r in rows:
        row(*r)
    pooled_d = pool(daemon_phases) if daemon_phases else None
    pooled_c = pool(ct_phases) if ct_phases else None
    if len(metas) > 1:
        print("-" * len(head))
        if pooled_d:
            row("all", "pooled", "hapticd", pooled_d)
        if pooled_c:
            row("all", "pooled", "cyclictest", pooled_c)
    print()
    for n in notes:
        print(n)
    if pooled_d and pooled_c:
        iv = ratio_interval(pooled_d, pooled_c)
        raw = (
            f"{miss_rate(pooled_d) / miss_rate(pooled_c):.2f}"
            if pooled_c["misses"] and pooled_d["cycles"]
            else "undefined (cyclictest missed nothing)"
        )
        print(
            f"miss counts: hapticd {pooled_d['misses']} in {pooled_d['cycles']} ticks, "
            f"cyclictest {pooled_c['misses']} in {pooled_c['cycles']} cycles; "
            f"unsmoothed ratio {raw}; "
            + (
                f"95 % interval of the ratio {iv[0]:.2f}-{iv[1]:.2f}"
                if iv
                else "no misses: no interval"
            )
        )
    if pooled_d:
        late = sum(f.get("late_wakeups", 0) for f in daemon_phases)
        print(
            f"hapticd misses by cause: {late} woke a period or more late (cyclictest's "
            f"definition of a miss), {pooled_d['misses'] - late} woke in time but finished late"
        )
    print(
        "miss = work ended after the next deadline (cyclictest: latency >= interval); "
        "miss_rate_ratio = ((daemon misses + 1)/(ticks + 1)) / ((cyclictest misses + 1)/(cycles + 1))"
    )
    print()

    # Headline figures, then the target checks.
    def line(name, value, unit):
        print(f"{name}: {value} {unit}".rstrip())

    stream = stream_figures(metas)
    if stream:
        print(
            f"stream: {stream['readers']} reading clients at {stream['rate_hz']:g} Hz received "
            f"{fmt(stream['min_rate_hz'])}-{fmt(stream['max_rate_hz'])} frames/s each, dropped "
            f"{stream['reader_dropped']} in all, longest gap {fmt(stream['max_gap_s'] * 1e3)} ms; "
            f"{stream['stalled']} stalled clients had {stream['stalled_dropped']} frames dropped "
            f"({stream['stalled_connected']} still connected at the end); daemon memory "
            f"{stream['rss_first_kib']} KiB at the start, {stream['rss_max_kib']} KiB at most, "
            f"{stream['rss_last_kib']} KiB at the end; errors: {stream['errors'] or 'none'}"
        )
        print()
        line("stream_reading_clients", stream["readers"], "")
        line("stream_min_client_rate", fmt(stream["min_rate_hz"]), "Hz")
        line("stream_stalled_dropped", stream["stalled_dropped"], "frames")
        line("daemon_rss_max", stream["rss_max_kib"], "KiB")
        line("daemon_rss_growth_last_half", stream["rss_growth_last_half_kib"], "KiB")

    if pooled_d is None or pooled_c is None or incomplete:
        line("daemon_miss_rate", fmt(miss_rate(pooled_d), 4) if pooled_d else "n/a", "%")
        line("cyclictest_miss_rate", fmt(miss_rate(pooled_c), 4) if pooled_c else "n/a", "%")
        line("miss_rate_ratio", "n/a", "x")
        line("daemon_p99_latency", fmt(pooled_d["p99"]) if pooled_d else "n/a", "us")
        line("cyclictest_p99_latency", fmt(pooled_c["p99"]) if pooled_c else "n/a", "us")
        line("p99_difference", "n/a", "us")
        line("target_miss_rate_ratio", "incomplete", "")
        line("target_p99_difference", "incomplete", "")
        return 2

    # The daemon's own compute: tick time quantiles (the worst phase's),
    # misses that woke in time (late through the tick's own work), and what
    # the rendering budget cut to stay inside its time.
    def worst(key):
        values = [float(f["tick"][key]) for f in daemon_phases if key in f["tick"]]
        return fmt(max(values)) if values else "n/a"

    late = sum(f.get("late_wakeups", 0) for f in daemon_phases)
    cuts = [f["budget_cuts"] for f in daemon_phases if f["budget_cuts"]]
    cut_collision = sum(int(c["collision"]) for c in cuts)
    cut_friction = sum(int(c["friction"]) for c in cuts)
    unresolved = sum(float(c["mean_unresolved_points"]) * int(c["collision"]) for c in cuts)
    line("daemon_tick_p99", worst("p99"), "us")
    line("daemon_tick_p999", worst("p999"), "us")
    line("daemon_misses_woken_in_time", pooled_d["misses"] - late, "")
    line("budget_cut_collision_ticks", cut_collision, "")
    line("budget_cut_friction_ticks", cut_friction, "")
    line(
        "budget_cut_mean_unresolved_points",
        fmt(unresolved / cut_collision) if cut_collision else "0",
        "",
    )
    line("budget_cut_max_unresolved_points", max((int(c["max_unresolved_points"]) for c in cuts), default=0), "")

    ratio = smoothed_ratio(pooled_d, pooled_c)
    diff = pooled_d["p99"] - pooled_c["p99"]
    line("daemon_miss_rate", fmt(miss_rate(pooled_d), 4), "%")
    line("cyclictest_miss_rate", fmt(miss_rate(pooled_c), 4), "%")
    line("miss_rate_ratio", fmt(ratio, 2), "x")
    line("daemon_p99_latency", fmt(pooled_d["p99"]), "us")
    line("cyclictest_p99_latency", fmt(pooled_c["p99"]), "us")
    line("p99_difference", fmt(diff), "us")
    ok_ratio = ratio <= args.max_ratio
    ok_p99 = diff <= args.max_p99_diff
    line(
        "target_miss_rate_ratio",
        ("pass" if ok_ratio else "FAIL") + f" ({fmt(ratio, 2)} x {'<=' if ok_ratio else '>'} {args.max_ratio:g} x)",
        "",
    )
    line(
        "target_p99_difference",
        ("pass" if ok_p99 else "FAIL") + f" ({fmt(diff)} us {'<=' if ok_p99 else '>'} {args.max_p99_diff:g} us)",
        "",
    )
    return 0 if ok_ratio and ok_p99 else 1


if __name__ == "__main__":
    sys.exit(main())
