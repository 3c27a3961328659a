"""The promises every command of the project keeps, in one place (the training scripts keep theirs in bookkeeping.py,
whose one-line errors, seed range and whole-or-nothing writes these are):

  bad input          one line `<script>: error: ...` on stderr, exit status 2, before any work, nothing written;
  an I/O failure     (a full disk, an unwritable output) one line, exit status 1, never a traceback;
  every file         written whole or not at all: a temporary file in its folder, then a rename, so that a full
                     disk or Ctrl-C leaves the previous version as it was and no 0-byte or half-written file;
  one writer         at a time in an output folder (an exclusive lock on it);
  results/           a committed result is remade only with the defaults that made it (compared by real path).
"""
import contextlib
import csv
import fcntl
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the project's folder
from bookkeeping import SEED, fail, replacing, within  # noqa: E402,F401 - the training scripts' own: one of each


def brief(error):
    """An exception in a few words, for a one-line message (torch's unpickling errors run to a paragraph)."""
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text[:100]}{'…' if len(text) > 100 else ''}"


def check_writable(flag, path):
    """`path` can be written as a file (its folder made if need be), checked without writing anything."""
    path = os.path.abspath(path)
    if os.path.isdir(path):
        fail(f"{flag}: {path} is a folder, not a file")
    check_folder(flag, os.path.dirname(path))
    if os.path.exists(path) and not os.access(path, os.W_OK):
        fail(f"{flag}: {path} is not writable")


def check_folder(flag, path):
    """`path` is a folder or can be made as one, checked without writing anything."""
    if not path:
        fail(f"{flag}: empty; give a folder")
    folder = os.path.abspath(path)
    while not os.path.exists(folder):  # the folder it will be made in
        folder = os.path.dirname(folder)
    if not os.path.isdir(folder):
        fail(f"{flag}: {folder} is a file, not a folder")
    if not os.access(folder, os.W_OK) or os.statvfs(folder).f_flag & os.ST_RDONLY:
        fail(f"{flag}: {folder} is not writable")
    if (os.path.realpath(folder) + os.sep).startswith(("/proc/", "/sys/")):  # writable by mode, yet holds no files
        fail(f"{flag}: {folder} is not a folder files can be written to")


def same_file(a, b):
    """Whether two paths name the same file, through any symlinked folder or `..`."""
    return os.path.realpath(a) == os.path.realpath(b)


def output_paths(parser, args, committed_csv, measured, columns):
    """(--out, --figure): the committed CSV and figure hold the numbers of the default parameters, so they
    are the default only for those; other values of the `measured` flags need another --out. An --out that
    exists must be a CSV of these `columns`: the script writes over it, and over its figure."""
    normal = lambda value: sorted(value) if isinstance(value, list) else value  # noqa: E731
    changed = [f"--{name.replace('_', '-')}" for name in measured
               if normal(getattr(args, name)) != normal(parser.get_default(name))]
    out = args.out or committed_csv
    figure = args.figure or os.path.splitext(out)[0] + ".png"
    if changed:
        for flag, path in (("--out", out), ("--figure", figure)):
            if any(same_file(path, c) for c in (committed_csv, os.path.splitext(committed_csv)[0] + ".png")):
                fail(f"{flag}: {os.path.relpath(path)} holds the committed numbers of the default parameters; "
                     f"with {', '.join(changed)} name another {flag}")
    for flag, path, end in (("--out", out, ".csv"), ("--figure", figure, ".png")):
        if not path.endswith(end):
            fail(f"{flag}: {path} does not end in {end}")
        check_writable(flag, path)
    if os.path.isfile(out):
        with open(out, errors="replace") as f:
            header = f.readline().strip()
        if header != ",".join(columns):
            fail(f"--out: {out} exists and is not a CSV of {parser.prog} (its header is not {','.join(columns)}); "
                 "name another --out")
    return out, figure


def write_rows(path, columns, rows):
    """A whole CSV at once (the scripts that are cheap enough to rerun whole)."""
    with replacing(path) as f:
        writer = csv.DictWriter(f, columns)
        writer.writeheader()
        writer.writerows(rows)


def savefig(fig, path, **kwargs):
    """matplotlib's savefig, whole or not at all; the figure is closed."""
    import matplotlib.pyplot as plt
    try:
        with replacing(path, binary=True) as f:
            fig.savefig(f, format=os.path.splitext(path)[1][1:] or "png", **kwargs)
    finally:
        plt.close(fig)
    return path


def save_figure(fig, title, path, bottom=0.0):
    """`bottom`: the fraction of the figure's height kept free under the panels (for a legend)."""
    fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(0, bottom, 1, 1))
    savefig(fig, path, dpi=130, metadata={"Software": None})  # no version stamp: a redraw gives the same bytes


@contextlib.contextmanager
def locked(flag, folder):
    """The output folder (made if need be) for this process alone while the block runs: a second command
    writing there is refused in one line instead of mixing its files with ours."""
    os.makedirs(folder, exist_ok=True)
    fd = os.open(folder, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fail(f"{flag}: {folder} is being written by another process; wait for it or name another {flag}")
        yield folder
    finally:
        os.close(fd)  # releases the lock


def run(main, *args):
    """A command's main, with its promises for what input checks cannot foresee: an I/O failure (a full
    disk, a folder gone read-only) is one line and exit status 1, Ctrl-C one line and 130; `replacing`
    has left every file whole."""
    name = os.path.basename(sys.argv[0])
    try:
        sys.exit(main(*args))
    except KeyboardInterrupt:
        print(f"{name}: interrupted", file=sys.stderr)
        sys.exit(130)
    except OSError as e:
        where = f" ({e.filename})" if e.filename else ""
        print(f"{name}: error: {' '.join((e.strerror or str(e)).split())}{where}", file=sys.stderr)
        sys.exit(1)
