"""What a QA run writes: ``qa.json`` (every figure, question and answer), ``qa.md`` (the
tables a person reads) and PNG plots (matplotlib, Agg backend):
``agreement.png`` (oracle and compiled active minutes per day), ``tokens.png`` (tokens per
representation per day) and, with an answerer, ``accuracy.png`` (accuracy per representation
with its Wilson 95 % interval)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from benchmark.report import pyplot


def _pct(value: float | None) -> str:
    return "N/A" if value is None else f"{100 * value:.1f} %"


def _ci(ci: list[float] | None) -> str:
    return "" if not ci else f" [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"


def markdown(results: dict[str, Any]) -> str:
    """The run as a readable report."""
    out = [
        f"# QA harness (Activity Frames §6.2): {results['entity']}",
        "",
        f"{len(results['days'])} days ({', '.join(results['days'])}), "
        f"{results['questions']} questions; oracle dwell = gap to the next row, capped at "
        f"{results['oracle_dwell_cap_s']:g} s, all monitors interleaved.",
        "",
        *_skipped(results),
        "## Compiler against the oracle",
        "",
        "| day | rows | oracle min | compiled min | Δ min | oracle apps | compiled apps "
        "| top app (oracle / compiled) | compiled min per monitor |",
        "|---|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for day in results["per_day"]:
        a = day["agreement"]
        out.append(
            f"| {day['day']} | {day['rows']:,} | {a['oracle_active_minutes']:.1f} "
            f"| {a['compiled_active_minutes']:.1f} | {a['delta_minutes']:+.1f} "
            f"| {a['oracle_apps']} | {a['compiled_apps']} "
            f"| {a['oracle_top_app']} / {a['compiled_top_app']} "
            f"| {', '.join(f'{m}: {v:.1f}' for m, v in a['compiled_minutes_by_monitor'].items())} |"
        )
    agree = results["agreement"]
    only = sorted({a for d in results["per_day"] for a in d["agreement"]["apps_only_oracle"]})
    out += [
        "",
        f"|Δ| active minutes: median {agree['minutes_median_abs']}, max "
        f"{agree['minutes_max_abs']}; equal app counts on {agree['apps_equal_days']} of "
        f"{len(results['days'])} days (largest difference {agree['apps_max_abs']}); same top "
        f"app on {agree['top_app_equal_days']} days. Apps only the oracle names: "
        f"{', '.join(only) or 'none'}. The compiler credits each monitor as its "
        "own stream (a person at two monitors earns time on both) and caps a row's dwell at "
        "its own limit; the oracle interleaves every monitor into one stream.",
        "",
        "A perfect reader of the compiled day (the ledger's apps, minutes and order, the "
        "block's domains, the coverage's first activity) answers "
        f"{results['document_answers']['correct']} of {results['questions']} questions within "
        f"the paper's tolerances ({results['document_answers']['strict_correct']} strict): "
        "the most any answerer given the block can score.",
        "",
        "## Tokens (cl100k_base)",
        "",
        "| representation | median | min | max |",
        "|---|---:|---:|---:|",
    ]
    for name, t in results["tokens"].items():
        out.append(f"| {name} | {t['median']:,.0f} | {t['min']:,} | {t['max']:,} |")
    out += ["", f"raw rows / block, median: {results['raw_to_block_ratio_median']}×", ""]
    answerer = results["answerer"]
    if answerer is None:
        out += ["No answerer was asked (pass --answerer llm with LLM_BASE_URL and LLM_MODEL).", ""]
        return "\n".join(out)
    out += [
        f"## Answers: {answerer['model']} ({answerer['context_tokens']:,}-token context, "
        f"{answerer['repeats']} trial{'s' if answerer['repeats'] != 1 else ''})",
        "",
        "| representation | graded | accuracy [95 % CI] | strict (10 %, 15 min) | errors "
        "| infeasible days |",
        "|---|---:|---|---|---:|---:|",
    ]
    for name, r in answerer["representations"].items():
        out.append(
            f"| {name} | {r['graded']} | {_pct(r['accuracy'])}{_ci(r['accuracy_ci95'])} "
            f"| {_pct(r['strict_accuracy'])}{_ci(r['strict_accuracy_ci95'])} | {r['errors']} "
            f"| {r['infeasible_days']} |"
        )
    out += ["", "By category (paper tolerances):", ""]
    categories = list(next(iter(answerer["representations"].values()))["by_category"])
    out += [
        "| representation | " + " | ".join(categories) + " |",
        "|---|" + "---|" * len(categories),
    ]
    for name, r in answerer["representations"].items():
        cells = [
            f"{_pct(c['accuracy'])} ({c['correct']}/{c['graded']})"
            for c in r["by_category"].values()
        ]
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    out.append("")
    return "\n".join(out)


def plots(results: dict[str, Any]) -> dict[str, bytes]:
    """The PNG plots of the run, by file name."""
    plt = pyplot()

    def png(fig: Any) -> bytes:
        buffer = io.BytesIO()
        fig.tight_layout()
        fig.savefig(buffer, format="png", dpi=110)
        plt.close(fig)
        return buffer.getvalue()

    days = [d["day"] for d in results["per_day"]]
    found: dict[str, bytes] = {}
    fig, ax = plt.subplots(figsize=(7, 3.5))
    xs = range(len(days))
    ax.bar([x - 0.2 for x in xs], [d["agreement"]["oracle_active_minutes"]
           for d in results["per_day"]], 0.4, label="oracle (60 s cap)")  # fmt: skip
    ax.bar([x + 0.2 for x in xs], [d["agreement"]["compiled_active_minutes"]
           for d in results["per_day"]], 0.4, label="compiled document")  # fmt: skip
    ax.set_xticks(list(xs), days, rotation=30, ha="right")
    ax.set_ylabel("active minutes")
    tallest = max(
        [1.0]
        + [
            max(d["agreement"]["oracle_active_minutes"], d["agreement"]["compiled_active_minutes"])
            for d in results["per_day"]
        ]
    )
    ax.set_ylim(0, 1.3 * tallest)  # room for the legend above the bars
    ax.set_title("Active minutes: oracle vs compiler")
    ax.legend()
    found["agreement.png"] = png(fig)

    fig, ax = plt.subplots(figsize=(7, 3.5))
    for name in results["tokens"]:
        ax.plot(xs, [d["tokens"].get(name) for d in results["per_day"]], marker="o", label=name)
    ax.set_yscale("log")
    ax.set_ylabel("cl100k tokens")
    ax.set_title("Tokens per representation")
    ax.set_xticks(list(xs), days, rotation=30, ha="right")
    ax.legend()
    found["tokens.png"] = png(fig)

    answerer = results["answerer"]
    if answerer is not None:
        reps = answerer["representations"]
        names = [n for n in reps if reps[n]["accuracy"] is not None]
        fig, ax = plt.subplots(figsize=(5, 3.5))
        values = [reps[n]["accuracy"] for n in names]
        errors = [
            [v - reps[n]["accuracy_ci95"][0] for n, v in zip(names, values, strict=True)],
            [reps[n]["accuracy_ci95"][1] - v for n, v in zip(names, values, strict=True)],
        ]
        ax.bar(names, values, yerr=errors if names else None, capsize=4)
        ax.set_ylim(0, 1)
        ax.set_ylabel("accuracy (paper tolerances)")
        ax.set_title(f"QA accuracy: {answerer['model']}")
        found["accuracy.png"] = png(fig)
    return found


def write(results: dict[str, Any], out: Path) -> list[Path]:
    """Write qa.json, qa.md and the plots into ``out``; the paths written."""
    written = []
    path = out / "qa.json"
    path.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    written.append(path)
    path = out / "qa.md"
    path.write_text(markdown(results))
    written.append(path)
    for name, data in plots(results).items():
        path = out / name
        path.write_bytes(data)
        written.append(path)
    return written


def _skipped(results: dict[str, Any]) -> list[str]:
    """The questions not asked, said once per reason with the days it held on."""
    by_why: dict[str, set[str]] = {}
    kinds: dict[str, set[str]] = {}
    for item in results.get("skipped_questions") or ():
        by_why.setdefault(item["why"], set()).add(item["day"])
        kinds.setdefault(item["why"], set()).add(item["kind"])
    return [
        f"Not asked: {', '.join(sorted(kinds[why]))} on {len(days)} day(s), because {why}.\n"
        for why, days in by_why.items()
    ]


def summary_line(results: dict[str, Any]) -> dict[str, Any]:
    """The one JSON object ``make bench-qa`` ends with (snake_case, units in the names)."""
    tokens = results["tokens"]
    line: dict[str, Any] = {
        "days": len(results["days"]),
        "questions": results["questions"],
        "questions_skipped": len(results.get("skipped_questions") or ()),
        "agreement_minutes_median_abs": results["agreement"]["minutes_median_abs"],
        "agreement_minutes_max_abs": results["agreement"]["minutes_max_abs"],
        "agreement_apps_max_abs": results["agreement"]["apps_max_abs"],
        "raw_tokens_median": tokens["raw"]["median"],
        "block_tokens_median": tokens["block"]["median"],
        "raw_to_block_ratio_median": results["raw_to_block_ratio_median"],
        "document_ceiling_correct": results["document_answers"]["correct"],
    }
    if results["answerer"] is not None:
        for name, r in results["answerer"]["representations"].items():
            line[f"{name}_accuracy"] = r["accuracy"]
    return line
