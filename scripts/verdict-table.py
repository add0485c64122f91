#!/usr/bin/env python3
"""The verdicts issue's closing table from results/paper/report.json: every claim with its
paper value, windtunnel's figure per seed (s0 / s1 / s2) and its verdict at an earlier
revision's report → now.

    scripts/verdict-table.py [BASE_REV]      (default 2badf04, the report before the seed campaign)

A claim is matched to the earlier report by suite and claim text; one the earlier report did not
have shows "new". Prints a markdown table on stdout.
"""
import json
import re
import subprocess
import sys

REPORT = "results/paper/report.json"


def verdicts(report):
    """{(suite, claim): verdict} of every row."""
    return {(s["suite"], r["claim"]): r["verdict"] for s in report["suites"] for r in s["rows"]}


def per_seed(over):
    """Each seed's figure (its values, or its own verdict where the claim has no figure)."""
    if not over:
        return "(one seed)"
    fig = lambda v: "–" if not v else ", ".join(f"{x:.3g}" for x in v)
    figures = [fig(v) for v in over.get("values", [])]
    if all(f == "–" for f in figures):
        return " / ".join(word(v) for v in over.get("verdicts", []))
    return " / ".join(figures)


def word(verdict):
    """NotReplicated → not replicated."""
    return re.sub(r"(?<!^)([A-Z])", r" \1", verdict).lower()


def cell(text, width=90):
    text = str(text).replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= width else text[: width - 1] + "…"


def main():
    base = sys.argv[1] if len(sys.argv) > 1 else "2badf04"
    now = json.load(open(REPORT))
    before = verdicts(json.loads(subprocess.check_output(["git", "show", f"{base}:{REPORT}"])))
    seeded = {
        (suite, g["claim"]): g.get("over_seeds")
        for suite, gs in now["seeds"].items()
        if isinstance(gs, list)  # "d-scaling pooled" is the pooled fit, not rows
        for g in gs
    }
    print(f"| suite | claim | paper | windtunnel per seed (s0 / s1 / s2) | verdict {base} → now |")
    print("|---|---|---|---|---|")
    for s in now["suites"]:
        for r in s["rows"]:
            key = (s["suite"], r["claim"])
            was = word(before.get(key, "new"))
            print(
                f"| {s['suite']} | {cell(r['claim'], 70)} | {cell(r.get('paper', ''))} "
                f"| {cell(per_seed(seeded.get(key)))} | {was} → {word(r['verdict'])} |"
            )


if __name__ == "__main__":
    main()
