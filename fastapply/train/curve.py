"""The learning curve: points (step, examples seen, loss, dev exact) as curve.json and curve.png."""

from __future__ import annotations

import json
import os
from pathlib import Path


def load(out: Path) -> list[dict]:
    p = out / "curve.json"
    return json.loads(p.read_text())["points"] if p.is_file() else []


def write(out: Path, points: list[dict], meta: dict) -> None:
    """curve.json (replaced atomically) and curve.png."""
    tmp = out / "curve.json.tmp"
    tmp.write_text(json.dumps({**meta, "points": points}, indent=1) + "\n")
    os.replace(tmp, out / "curve.json")
    plot(points, out / "curve.png", meta.get("title", "fastapply train"))


def plot(points: list[dict], path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    loss = [(p["examples"], p["loss"]) for p in points if p.get("loss") is not None]
    dev = [(p["examples"], p["dev_exact"] / p["dev_cases"]) for p in points if p.get("dev_cases")]
    if loss:
        ax1.plot(*zip(*loss), marker=".")
    ax1.set(xlabel="training examples seen", ylabel="train loss (per target token)", title="loss")
    if dev:
        ax2.plot(*zip(*dev), marker="o")
    n = max((p["dev_cases"] for p in points if p.get("dev_cases")), default=0)
    ax2.set(xlabel="training examples seen", ylabel=f"exact on dev slice (n={n})", ylim=(-0.02, 1.02),
            title="dev exact (speculative engine, greedy)")
    fig.suptitle(title)
    fig.tight_layout()
    tmp = path.with_name(path.stem + ".tmp.png")
    fig.savefig(tmp, dpi=100)
    plt.close(fig)
    os.replace(tmp, path)


def best_step(points: list[dict]) -> int | None:
    """The evaluated step with the most dev exact (the later one on a tie: more training at no
    measured cost); None when no trained step was evaluated."""
    evaluated = [p for p in points if p.get("dev_cases") and p["step"] > 0]
    return max(evaluated, key=lambda p: (p["dev_exact"], p["step"]))["step"] if evaluated else None
