"""README.md, the report (results/README.md, its index, and a page per figure or appendix beside it) and the
folders' READMEs: every link and anchor exists, and every link into the report lands on a heading of its page; every
committed group of runs is printed by a command the report names, and every table a page marks is what the
command above it prints; README's "Results at a glance" is the index's table and stays a glance (a cell at most
20 words, the table 450), each row's numbers in the section it links; each page opens with its claim, its verdict
and its command."""
import argparse
import itertools
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import figar_ppo
import figar_trpo
import plot
import sar_ppo
import sar_trpo
from tests.helpers import ROOT


REPORT = os.path.join(ROOT, "results")  # the report: its index README.md and a page per figure or appendix


def report_pages():
    """Each of the report's files, results/*.md, by name → its text; "README.md" is the index."""
    return {path.name: path.read_text() for path in sorted(Path(REPORT).glob("*.md"))}


def documents():
    """The Markdown files whose links the tests follow: README.md, the folders' READMEs and the report's files."""
    return ["README.md", "benchmark/README.md", "tools/README.md"] + [f"results/{name}" for name in report_pages()]


def slugs(path):
    """The anchors of a Markdown file's headings (a '# comment' in a code block is not a heading)."""
    text = re.sub(r"```.*?```", "", Path(path).read_text(), flags=re.S)
    return {github_anchor(h) for h in re.findall(r"^#+ (.*)$", text, re.M)}


def relative_links(doc):
    """(target, the file it names, its anchor or '') of each relative link or image of a document, code cut out."""
    doc = os.path.join(ROOT, doc)
    text = re.sub(r"```.*?```", "", Path(doc).read_text(), flags=re.S)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if not re.match(r"https?://", target):
            path, _, anchor = target.partition("#")
            yield target, os.path.normpath(os.path.join(os.path.dirname(doc), path)) if path else doc, anchor


def test_every_file_and_heading_the_readmes_link_exists():
    # README.md, every file of the report, benchmark/README.md and tools/README.md: each relative link or image
    # names a file of the clone, and each #anchor a heading of its file (GitHub's slugs: lower case, punctuation
    # dropped, spaces as hyphens)
    broken, checked = [], 0
    for doc in documents():
        for target, full, anchor in relative_links(doc):
            checked += 1
            if not os.path.exists(full) or anchor and anchor not in slugs(full):
                broken.append(f"{doc}: {target}")
    assert checked >= 50 and broken == []


def test_every_link_into_the_report_lands_on_a_heading_of_its_page():
    # a link to a page of the report, from README, the folders' READMEs, the index or another page (the glance
    # tables' links among them), names the heading it means: a page is read from its heading, never from its top
    pages = set(report_pages())
    into_the_report, broken = 0, []
    for doc in documents():
        for target, full, anchor in relative_links(doc):
            if os.path.dirname(full) == REPORT and os.path.basename(full) in pages:
                into_the_report += 1
                if not anchor or anchor not in slugs(full):
                    broken.append(f"{doc}: {target}")
    assert into_the_report >= 2 * 18 + len(pages) - 1 and broken == []  # two glance tables, the index's contents


INDEX_LINES = 150  # the index stays an index: the glance table, how to read the numbers, the contents


def test_the_report_is_a_short_index_and_a_page_per_section_that_opens_with_its_claim_verdict_and_command():
    pages = report_pages()
    index = pages.pop("README.md")
    assert len(index.splitlines()) <= INDEX_LINES
    assert re.findall(r"^## (.*)$", index, re.M) == ["Results at a glance", "How to read the numbers", "Contents"]
    contents = index.split("\n## Contents\n", 1)[1]
    listed = [re.match(r"- \[[^]]+\]\((\w+\.md)#", line) for line in contents.splitlines() if line.startswith("- ")]
    assert all(listed) and sorted(m.group(1) for m in listed) == sorted(pages)  # a line each, every page once
    for name, text in pages.items():
        lines = text.splitlines()
        assert lines[0].startswith("# ") and lines[1] == "", name
        opening = list(itertools.takewhile(lambda line: line.startswith("- **"), lines[2:]))
        labels = [re.match(r"- \*\*(\w+)", line).group(1) for line in opening]
        assert labels == ["Claim", "Verdict", "Command"], name
        # the command is the page's own: it stands in the page's text below the opening
        command = re.search(r"`([^`]+)`", opening[2]).group(1)
        assert command in "\n".join(lines[2 + len(opening):]), (name, command)
        heads = re.findall(r"^(#+) ", re.sub(r"```.*?```", "", text, flags=re.S), re.M)
        assert heads.count("#") == 1, name  # one level-1 heading, the page's own


TABLE_SCRIPTS = ("python plot.py ", "python benchmark/paper_figures.py ")  # the paper's tables: the second
PRINTS_TABLES = re.compile(r" --(table|summary|ratios)\b")


def runnable(command):
    """A report's command as this clone runs it: benchmark/paper_figures.py takes plot.py's arguments and prints
    the same, so before it exists plot.py stands in for it."""
    if command.startswith(TABLE_SCRIPTS[1]) and not os.path.exists(os.path.join(ROOT, "benchmark", "paper_figures.py")):
        return TABLE_SCRIPTS[0] + command.removeprefix(TABLE_SCRIPTS[1])
    return command


def table_commands():
    """(page, command) of every command the report's pages name that prints tables: each `python plot.py` or
    `python benchmark/paper_figures.py` line with --table, --summary or --ratios, and each
    `python benchmark/safe_regions.py <run>`, in a code block or in backquotes (a placeholder such as <folder>
    is no command)."""
    for page, text in report_pages().items():
        blocks = re.findall(r"```bash\n(.*?)```", text, re.S)
        lines = [line.split("  #")[0].strip() for block in blocks for line in block.splitlines()]
        inline = re.findall(r"`(python [^`]+)`", re.sub(r"```.*?```", "", text, flags=re.S))
        lines += [" ".join(span.split()) for span in inline]  # a span broken over lines is one command
        for line in lines:
            if line.startswith(TABLE_SCRIPTS) and PRINTS_TABLES.search(line) and "<" not in line:
                yield page, line
            elif line.startswith("python benchmark/safe_regions.py "):  # Fig. 6's: it prints its one run's numbers
                yield page, line


def table_arguments(command):
    """plot.py's arguments of a command, its braces expanded as bash expands them."""
    words = subprocess.run(["bash", "-c", 'printf "%s\\0" ' + command.split(" ", 2)[2]], capture_output=True,
                           text=True, check=True).stdout.split("\0")[:-1]
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("paths", nargs="+")
    for flag in ("--only", "--kinds"):
        p.add_argument(flag, nargs="+")
    p.add_argument("--window", nargs=2)
    p.add_argument("--max-steps", type=int)
    for flag in ("--learner", "--out", "--x", "--format", "--prefix", "--random-returns", "--smooth"):
        p.add_argument(flag)
    for flag in ("--table", "--summary", "--ratios", "--variants", "--partial"):
        p.add_argument(flag, action="store_true")
    return p.parse_args(words)


def committed_groups():
    """{((env, setting, method, δ), its folder under results/): [its run folders]} of every finished committed group."""
    return {(key, root): [folder for _, _, folder in runs]
            for root in ("runs", "runs_1m") for key, runs in plot.load_groups([os.path.join(REPORT, root)]).items()}


def printed_folders(commands, monkeypatch):
    """The run folders that the tables of these commands print (each read once), and safe_regions.py's run."""
    loaded, load_run = {}, plot.load_run

    def load_once(folder, partial=False, max_steps=None, counts=None):
        if (folder, partial, max_steps) not in loaded:
            loaded[folder, partial, max_steps] = load_run(folder, partial, max_steps, counts)
        return loaded[folder, partial, max_steps]
    monkeypatch.setattr(plot, "load_run", load_once)
    printed = set()
    for command in commands:
        if command.startswith("python benchmark/safe_regions.py "):
            printed.add(os.path.realpath(os.path.join(ROOT, command.split()[2])))
            continue
        args = table_arguments(command)
        found = plot.load_groups([os.path.join(ROOT, path) for path in args.paths], args.partial, args.max_steps,
                                 args.only, args.variants)
        if args.learner:
            found = plot.by_learner(found).get(args.learner, {})
        printed |= {os.path.realpath(folder) for runs in found.values() for _, _, folder in runs}
    return printed


def unprinted(groups, printed):
    return [f"{key} in results/{root}" for (key, root), folders in groups.items()
            if not all(os.path.realpath(folder) in printed for folder in folders)]


def test_the_committed_runs_are_there_and_a_command_of_the_report_prints_every_group_of_them(monkeypatch):
    # a clean clone holds the runs behind every table of the report, and every committed group is in a table that a
    # command the report names prints: a committed group that no page's command prints is a result nobody reads
    groups = committed_groups()
    pendulums_and_hopper = [key for key, root in groups
                            if root == "runs" and key[0] in ("InvertedPendulum-v5", "InvertedDoublePendulum-v5",
                                                             "Hopper-v5")]
    assert len(pendulums_and_hopper) >= 30  # 9 + 9 + 6 δ-cells + 6 noisy
    sar_1m = [len(groups[("Hopper-v5", "deterministic", "SAR-PPO", dt), "runs_1m"]) for dt in (0.0005, 0.008)]
    assert sar_1m == [8, 8]  # SAR-PPO's 8 seeds at the paper's budget
    assert unprinted(groups, printed_folders([command for _, command in table_commands()], monkeypatch)) == []


def test_the_print_check_finds_a_group_no_command_prints(monkeypatch):
    # Fig. 6's two runs are printed by its page's safe_regions.py commands alone: without them, by none
    groups = {(key, root): folders for (key, root), folders in committed_groups().items() if "dims 2,3" in key[2]}
    commands = {page: [command for p, command in table_commands() if p == page] for page in ("fig5.md", "fig6.md")}
    assert len(groups) == 2 and all(commands.values())
    assert unprinted(groups, printed_folders(commands["fig5.md"] + commands["fig6.md"], monkeypatch)) == []
    assert len(unprinted(groups, printed_folders(commands["fig5.md"], monkeypatch))) == 2


def marked_tables():
    """(page, name, command, table) of each table a page of the report marks <!-- name --> … <!-- /name -->: the
    table's text, and the last `python plot.py` or `python benchmark/paper_figures.py` line with --table,
    --summary or --ratios of the last code block above it."""
    for page, text in report_pages().items():
        for match in re.finditer(r"<!-- ([\w-]+) -->\n(.*?)<!-- /\1 -->", text, re.S):
            block = re.findall(r"```bash\n(.*?)```", text[:match.start()], re.S)[-1]
            commands = [line.split("  #")[0].strip() for line in block.splitlines()
                        if line.startswith(TABLE_SCRIPTS) and PRINTS_TABLES.search(line)]
            yield page, match.group(1), commands[-1], match.group(2)


@pytest.mark.parametrize("page, name, command, table", list(marked_tables()), ids=lambda v: str(v)[:24])
def test_every_marked_table_of_the_report_is_what_its_command_prints_from_the_committed_runs(page, name, command,
                                                                                             table):
    # the command as written beside the table (bash expands its braces), its output from the table's first line
    command = runnable(command).replace("python ", shlex.quote(sys.executable) + " ", 1)
    printed = subprocess.run(["bash", "-c", command], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    first = table.splitlines()[0]
    assert first in printed.splitlines(), f"{page}: {name}'s table is not in the output of {command}"
    lines = printed.splitlines()
    assert "\n".join(lines[lines.index(first):]).strip() == table.strip(), f"{page}: {name}: run {command}"

# README's "Results at a glance" and the report's index's table are one table: a row per claim of the paper, each
# with a headline pair of numbers, a verdict of a few words and a link to the section of the page that holds the
# detail. The caps keep it a glance; the links and numbers keep it the sections' summary.
GLANCE_CELL_WORDS, GLANCE_TABLE_WORDS = 20, 450  # words as `wc -w` counts them, the table's pipes included


def github_anchor(heading):
    """GitHub's anchor of a heading: lower case, punctuation but '-' and '_' dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def report_sections(report):
    """Each heading's anchor → its text, from the heading to the next heading of its level or higher."""
    text = re.sub(r"```.*?```", "", report, flags=re.S)  # a '# comment' in a code block is not a heading
    heads = [(m.start(), len(m.group(1)), github_anchor(m.group(2))) for m in re.finditer(r"^(#+) (.*)$", text, re.M)]
    return {anchor: text[start:next((s for s, lv, _ in heads[i + 1:] if lv <= level), len(text))]
            for i, (start, level, anchor) in enumerate(heads)}


def glance_table(text, link_prefix):
    """The table under '## Results at a glance', its links to the report's pages written 'page.md#anchor' as the
    index writes them (README's carry the prefix 'results/')."""
    lines = text.split("\n## Results at a glance\n", 1)[1].split("\n## ", 1)[0].splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("|"))
    table = "\n".join(itertools.takewhile(lambda line: line.startswith("|"), lines[first:]))
    return table.replace("](" + link_prefix, "](")


def glance_problems(readme, pages):
    """What is wrong with the glance tables of README's text and the report's index (pages: the report's files by
    name, as report_pages gives them): [] when nothing is."""
    table = glance_table(pages["README.md"], "")
    problems = [] if glance_table(readme, "results/") == table else ["README's table is not the report's"]
    if len(table.split()) > GLANCE_TABLE_WORDS:
        problems.append(f"the table has {len(table.split())} words")
    sections = {f"{page}#{anchor}": text for page in pages for anchor, text in report_sections(pages[page]).items()}
    for i, line in enumerate(table.splitlines()):
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        problems += [f"{len(c.split())} words in a cell: {c}" for c in cells if len(c.split()) > GLANCE_CELL_WORDS]
        if len(cells) != 4:  # the claim with its figure, the numbers, the verdict, the section
            problems.append(f"{len(cells)} cells: {line}")
        elif i >= 2:  # below the header and its rule
            anchors = re.findall(r"\]\(([^)\s]+)\)", cells[3])  # page.md#anchor, each a section of its page
            if not anchors or any(anchor not in sections for anchor in anchors):
                problems.append(f"no section of the report: {cells[3]}")
                continue
            # every number of the numbers and the verdict is in the linked section, to the number's own precision
            theirs = re.findall(r"\d+(?:\.\d+)?", " ".join(sections[anchor] for anchor in anchors))
            for number in re.findall(r"\d+(?:\.\d+)?", cells[1] + " " + cells[2]):
                places = len(number.partition(".")[2])
                if not any(round(float(n), places) == float(number) for n in theirs):
                    problems.append(f"{number} is not in {', '.join(anchors)}")
    return problems


def test_the_glance_table_is_one_table_in_readme_and_the_report_and_stays_a_glance():
    readme, pages = Path(ROOT, "README.md").read_text(), report_pages()
    assert glance_problems(readme, pages) == []
    assert len(glance_table(pages["README.md"], "").splitlines()) >= 2 + 16  # a row per claim, the learners' in three


def replace_in(old, new, files=("README.md", "results/README.md")):
    def edit(texts):
        assert all(old in texts[f] for f in files), old  # a breakage that breaks nothing would prove nothing
        return {f: text.replace(old, new) if f in files else text for f, text in texts.items()}
    return edit


@pytest.mark.parametrize("edit, problem", [
    (replace_in("7989 → 8761", "7989 → 8760", files=("README.md",)), "README's table is not the report's"),
    (replace_in("**partly**: not per physical second", "**partly**: not per physical second" + " more" * 16),
     "21 words in a cell"),
    (replace_in("small-δ) |", "small-δ) |" + "\n| a | b | c | d |" * 60), "the table has"),  # rows after App. B's
    (replace_in("(appI.md#app-i-ablations)", "(appI.md#app-i-ablation)", files=("results/README.md",)),
     "no section of the report"),
    (replace_in("appI.md#app-i-ablations)", "appH.md#app-i-ablations)"), "no section of the report"),  # another page
    (replace_in("(results/appI.md#app-i-ablations)", "(results/appI.md#app-i-ablation)", files=("README.md",)),
     "README's table is not the report's"),
    (replace_in("d_max 0.2: 7258", "d_max 0.2: 7259"), "7259 is not in appI.md#app-i-ablations"),
    (replace_in("| Ablations |", "| Ablations | App. I |"), "5 cells"),
])
def test_the_glance_check_finds_a_broken_table(edit, problem):
    texts = edit({"README.md": Path(ROOT, "README.md").read_text()}
                 | {f"results/{name}": text for name, text in report_pages().items()})
    pages = {f.removeprefix("results/"): text for f, text in texts.items() if f.startswith("results/")}
    assert any(problem in p for p in glance_problems(texts["README.md"], pages))


def test_tools_readme_lists_animate_with_its_command():
    with open(os.path.join(ROOT, "tools", "README.md")) as f:
        entries = f.read().split("\n- ")
    animate_entry = [e for e in entries if e.startswith("`animate.py`")]
    assert animate_entry and "`python tools/animate.py" in animate_entry[0]


TRAINING_SCRIPTS = {"sar_ppo.py": sar_ppo, "figar_ppo.py": figar_ppo, "sar_trpo.py": sar_trpo,
                    "figar_trpo.py": figar_trpo}


def python_lines(path, section=None):
    """The `python <script>` lines of a Markdown file's code blocks (of one section, if named), comments cut off."""
    with open(os.path.join(ROOT, path)) as f:
        text = f.read()
    if section:
        text = text[text.index(section):].split("\n## ")[0]
    blocks = text.split("```")[1::2]
    return [line.split("  #")[0].strip() for block in blocks for line in block.splitlines()
            if line.startswith("python ") and " -m " not in line]


def folder_of(line, sb3_sar):
    """The folder a README command writes its run to, as its script parses its flags."""
    argv = shlex.split(line)[1:]
    if argv[0] == "examples/sb3_sar.py":
        return os.path.normpath(sb3_sar.parse_args(argv[1:]).out)
    args = TRAINING_SCRIPTS[argv[0]].parse_args(argv[1:])
    return os.path.normpath(os.path.join(args.log_dir, args.run_name))


def test_readme_commands_cover_every_learner_and_the_sb3_example_and_never_share_a_run_folder(sb3_sar):
    lines = python_lines("README.md")
    quickstart = python_lines("README.md", "## Quickstart")
    assert any(line == "python sar_ppo.py" for line in quickstart)
    assert any(line.startswith("python sar_ppo.py") and "--total-steps 100000" in line for line in quickstart)
    assert any(line.startswith("python sar_trpo.py") for line in lines)
    assert any(line.startswith("python sar_ppo.py") and "--a2c" in line for line in lines)
    assert any(line.startswith("python examples/sb3_sar.py") for line in lines)
    training = [line for line in lines if not line.startswith(("python benchmark/", "python tools/", "python plot"))]
    training += ["python sar_trpo.py", "python sar_ppo.py --a2c"]  # each learner's 1M default, typed after the 100k
    folders = [folder_of(line, sb3_sar) for line in training]
    assert len(set(folders)) == len(folders), list(zip(training, folders))  # typed in order, none is refused


def test_readme_says_how_many_lines_each_diff_of_two_scripts_has():
    said = re.findall(r"`diff ([\w.]+ [\w.]+)` [^(]*\((\d+) lines(?:, and (\d+) for\s+`([\w.]+ [\w.]+)`)?",
                      open(os.path.join(ROOT, "README.md")).read())
    counts = {pair: int(n) for pair, n, *_ in said} | {pair: int(n) for *_, n, pair in said if pair}
    assert len(counts) == 4, said
    for pair, n in counts.items():
        lines = subprocess.run(["diff", *pair.split()], cwd=ROOT, capture_output=True, text=True).stdout.splitlines()
        assert sum(line.startswith(("<", ">")) for line in lines) == n, pair


def test_the_reports_sb3_commands_never_share_a_folder_with_each_other_or_the_examples_default_run(sb3_sar):
    report = python_lines("results/sb3.md")
    assert len(report) == 3
    # each row's second seed and SB3 as is (--plain), as the report says to run them, and the example's default run
    lines = [variant for line in report for variant in (line, line.replace("--seed 1", "--seed 2"))]
    lines += [line + " --plain" for line in lines] + ["python examples/sb3_sar.py"]
    folders = [folder_of(line, sb3_sar) for line in lines]
    assert len(set(folders)) == len(folders), list(zip(lines, folders))
