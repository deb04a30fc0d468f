#!/usr/bin/python3
"""Prints the JSON lines of a bench run (vicinity_bench, peers.py,
vtk_peer.py) as Markdown tables, one per data set and k, in run order.
With several runs of one tool, the median time is shown (and the count).

  bench_table.py results.jsonl
"""
import json
import statistics
import sys


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    groups = {}
    with open(sys.argv[1]) as f:
        for line in f:
            line = line.strip()
            if not line.startswith("{"):
                continue
            r = json.loads(line)
            key = (r["dataset"], r["n"], r["d"], r["k"])
            tool = "%s %s" % (r.get("tool", "?"), r["method"]) if r.get("tool") != r["method"] else r["method"]
            if r.get("ef"):
                tool += " (ef %d)" % r["ef"]
            groups.setdefault(key, {}).setdefault(tool, []).append(r)
    for (name, n, d, k), tools in groups.items():
        print("\n#### %s: n = %d, d = %d, k = %d\n" % (name, n, d, k))
        print("| tool / method | threads | seconds (median) | CPU s | runs | stages (s) | recall@k | peak RSS MB |")
        print("|---|---|---|---|---|---|---|---|")
        for tool, runs in tools.items():
            secs = statistics.median(r["seconds"] for r in runs)
            mid = min(runs, key=lambda r: abs(r["seconds"] - secs))
            stages = ", ".join("%s %.3f" % (s, v) for s, v in mid["seconds_stages"].items())
            rec = mid["recall"]
            cpu = mid.get("cpu_seconds")
            print("| %s | %d | %.3f | %s | %d | %s | %s | %.0f |" % (
                tool, mid["threads"], secs, "%.2f" % cpu if cpu is not None else "-", len(runs), stages,
                "%.4f" % rec if rec is not None else "exact (not checked)", mid["peak_rss_mb"]))


if __name__ == "__main__":
    main()
