"""README.md, the report (results/README.md) and the folders' READMEs: every link and anchor exists, and
every mean ± interval the report gives comes from the committed runs."""
import os
import re
from pathlib import Path

import plot
from tests.helpers import ROOT


def test_every_file_and_heading_the_readmes_link_exists():
    # README.md, the report, benchmark/README.md and tools/README.md: each relative link or image names a file of
    # the clone, and each #anchor a heading of its file (GitHub's slugs: lower case, punctuation dropped, spaces
    # as hyphens)

    def slugs(path):
        text = re.sub(r"```.*?```", "", Path(path).read_text(), flags=re.S)
        return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in re.findall(r"^#+ (.*)$", text, re.M)}
    broken, checked = [], 0
    for doc in ("README.md", "results/README.md", "benchmark/README.md", "tools/README.md"):
        doc = os.path.join(ROOT, doc)
        text = re.sub(r"```.*?```", "", Path(doc).read_text(), flags=re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if not re.match(r"https?://", target):
                path, _, anchor = target.partition("#")
                full = os.path.normpath(os.path.join(os.path.dirname(doc), path)) if path else doc
                checked += 1
                if not os.path.exists(full) or anchor and anchor not in slugs(full):
                    broken.append(f"{os.path.relpath(doc, ROOT)}: {target}")
    assert checked >= 50 and broken == []


def test_readme_final_returns_come_from_the_committed_runs():
    # a clean clone must hold the runs behind every results table of the report, results/README.md
    groups = plot.load_groups([os.path.join(ROOT, "results", "runs")])
    pendulums_and_hopper = [k for k in groups if k[0] in ("InvertedPendulum-v5", "InvertedDoublePendulum-v5", "Hopper-v5")]
    assert len(pendulums_and_hopper) >= 30  # 9 + 9 + 6 δ-cells + 6 noisy
    with open(os.path.join(ROOT, "results", "README.md")) as f:
        readme = f.read()
    groups_1m = plot.load_groups([os.path.join(ROOT, "results", "runs_1m")])
    assert sorted(len(runs) for runs in groups_1m.values()) == [3, 3, 3, 3, 8, 8]  # SAR-PPO's 8 seeds
    for runs in [*groups.values(), *groups_1m.values()]:  # every group of two seeds or more
        mean, ci = plot.mean_ci([plot.final_return(c) for _, c, _ in runs])
        assert len(runs) < 2 or f"{mean:.1f} ± {ci:.1f}" in readme
