"""The SLURM path: benchmark/slurm.sh refuses bad input in one line and runs a task's line (OFFSET + i) from the
project's folder; on a one-node cluster (Debian's slurm-wlm and munge, as root; skipped without them) an
array of a run list finishes, a cancelled task resumes from its checkpoint, and a list longer than the cluster's
MaxArraySize goes in as README's arrays, every task run once."""
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import pytest
import torch

from tests.helpers import ROOT
from tools import status

SLURM_LIST = os.path.join(ROOT, "benchmark", "fig3_ppo_three_tasks.sh")


def slurm_sh(args, task, cwd=ROOT):
    env = {k: v for k, v in os.environ.items() if k not in ("SLURM_ARRAY_TASK_ID", "SEEDS")}
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    if task is not None:
        env["SLURM_ARRAY_TASK_ID"] = task
    return subprocess.run(["bash", os.path.join(ROOT, "benchmark", "slurm.sh"), *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


# A figure script's runs with tiny budgets: 8 updates of 128 decisions each, written to a tmp folder.
SLURM_BUDGET = "--total-steps 1024 --num-steps 128 --minibatch-size 64"


def tiny_commands(folder):
    """The InvertedPendulum δ_lowest commands of a figure script's --list (SAR-PPO, FiGAR-C-PPO, PPO),
    their budgets made tiny and their runs sent to `folder`."""
    listed = subprocess.run(["bash", SLURM_LIST, "--list"], env={**os.environ, "SEEDS": "1"}, capture_output=True,
                            text=True, check=True).stdout.splitlines()
    return [re.sub(r"--log-dir \S+", f"--log-dir {folder}", re.sub(r"--total-steps \d+", SLURM_BUDGET, line))
            for line in listed if "--env-id InvertedPendulum-v5 --dt lowest " in line]


@pytest.mark.parametrize("args,task,says", [
    ([], "1", "usage: sbatch --array=1-N"),
    (["--list"], "1", "--list is the figure script's flag"),
    ([SLURM_LIST, "--list"], "1", "usage: sbatch --array=1-N"),
    (["no/such/list"], "1", "no command list at no/such/list"),
    ([SLURM_LIST], None, "SLURM_ARRAY_TASK_ID is not set"),
    ([SLURM_LIST], "x", "task id 'x' is not a whole number"),
    ([SLURM_LIST], "1.5", "task id '1.5' is not a whole number"),
    ([SLURM_LIST], "0", "task 0 is out of range"),
    ([SLURM_LIST], "99999999999999999999", "task 99999999999999999999 is out of range"),
    ("commands.txt", "4", "task 4 is out of range: commands.txt has 3 commands, 1 to 3 (sbatch --array=1-3)"),
    ("empty.txt", "1", "empty.txt lists no commands"),
    ("notes.txt", "1", "line 1 of notes.txt is not a command (python ...): # my notes"),
])
def test_slurm_sh_refuses_bad_input_in_one_line_before_any_work(tmp_path, args, task, says):
    (tmp_path / "commands.txt").write_text("\n".join(tiny_commands(tmp_path / "runs")) + "\n\n")
    (tmp_path / "empty.txt").write_text("\n  \n")
    (tmp_path / "notes.txt").write_text("# my notes\n")
    if isinstance(args, str):  # a file of commands, named relative to the project's folder
        args = [os.path.relpath(tmp_path / args, ROOT)]
        says = says.replace(os.path.basename(args[0]), args[0])
    done = slurm_sh(args, task)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [done.stderr.strip()]
    assert done.stderr.startswith("slurm.sh: ") and says in done.stderr
    assert sorted(os.listdir(tmp_path)) == ["commands.txt", "empty.txt", "notes.txt"]  # nothing written


@pytest.mark.parametrize("offset,task,says", [
    (["x"], "1", "offset 'x' is not a whole number from 0 (the line before the array's first)"),
    (["-1"], "1", "offset '-1' is not a whole number"),
    ([""], "1", "offset '' is not a whole number"),
    (["1e3"], "1", "offset '1e3' is not a whole number"),
    (["3"], "1", "offset 3 is too large: {list} has 3 commands (offsets 0 to 2)"),
    (["99999999999"], "1", "offset 99999999999 is too large: {list} has 3 commands (offsets 0 to 2)"),
    (["0000000000003"], "1", "offset 0000000000003 is too large: {list} has 3 commands (offsets 0 to 2)"),
    (["1"], "3", "task 3 with offset 1 is out of range: {list} has 3 commands, so offset 1 takes tasks 1 to 2 "
                 "(sbatch --array=1-2)"),
    (["--offset"], "1", "unknown option --offset; usage"),
    (["1", "2"], "1", "usage: sbatch --array=1-N benchmark/slurm.sh LIST [OFFSET]"),
])
def test_slurm_sh_refuses_a_bad_offset_in_one_line_before_any_work(tmp_path, offset, task, says):
    listing = tmp_path / "commands.txt"
    listing.write_text("true\ntrue\ntrue\n")
    done = slurm_sh([str(listing), *offset], task)
    assert done.returncode == 2 and done.stdout == "" and done.stderr.count("\n") == 1
    assert says.format(list=listing) in done.stderr, done.stderr
    assert os.listdir(tmp_path) == ["commands.txt"]


def test_slurm_sh_runs_line_offset_plus_task_so_that_a_list_can_be_split_into_arrays(tmp_path):
    (tmp_path / "commands.txt").write_text("".join(f"python -c 'print({k})'\n" for k in range(1, 6)))
    for offset, task, line in (([], "2", 2), (["0"], "2", 2), (["3"], "1", 4), (["3"], "2", 5), (["003"], "02", 5),
                              (["00000000003"], "2", 5)):
        done = slurm_sh([str(tmp_path / "commands.txt"), *offset], task)
        assert done.returncode == 0 and done.stdout.splitlines()[-1] == str(line), (offset, task, done.stderr)


def test_slurm_sh_passes_on_the_figure_scripts_own_reason_when_its_list_fails(monkeypatch):
    monkeypatch.setenv("SEEDS", "abc")  # slurm_sh() clears SEEDS, so slurm.sh is called here directly
    done = subprocess.run(["bash", os.path.join(ROOT, "benchmark", "slurm.sh"), SLURM_LIST], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, env={**os.environ, "SLURM_ARRAY_TASK_ID": "1"})
    assert done.returncode == 2 and done.stdout == "" and done.stderr.count("\n") == 1
    assert "--list failed" in done.stderr and "SEEDS: whole numbers" in done.stderr


def test_slurm_sh_runs_the_tasks_line_from_the_projects_folder_with_one_thread(tmp_path):
    show = "python -c 'import os, sys; print(os.getcwd(), os.environ[\"OMP_NUM_THREADS\"], sys.argv[1:])'"
    (tmp_path / "commands.txt").write_text(f"true\n\n{show} 'a b' c\nfalse\n")
    done = slurm_sh([str(tmp_path / "commands.txt")], "02")
    assert done.returncode == 0 and done.stdout.splitlines()[-1] == f"{ROOT} 1 ['a b', 'c']"
    away = slurm_sh([str(tmp_path / "commands.txt")], "2", cwd=tmp_path)
    assert away.returncode == 2 and "submit from the project's folder" in away.stderr


def test_slurm_sh_strips_the_carriage_returns_of_a_crlf_command_list(tmp_path):
    listing = tmp_path / "commands.txt"
    listing.write_bytes(b"python -c \"import sys; print(repr(sys.argv[1]))\" runs\r\n")
    result = slurm_sh([str(listing)], "1")
    assert result.returncode == 0, result.stderr
    assert "'runs'" in result.stdout and "\\r" not in result.stdout


def slurm_program(name):
    return shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin")


def wait_for(condition, what, timeout=300, logs=()):
    """Polls until condition() is true; the timeout only bounds a failure, it assumes no speed."""
    end = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > end:
            tails = "".join(f"\n--- {log}:\n" + "".join(open(log, errors="replace").readlines()[-15:])
                            for log in logs if os.path.exists(log))
            pytest.fail(f"timed out after {timeout} s waiting for {what}{tails}")
        time.sleep(0.2)


def saved_update(folder):
    """The update a run's checkpoint holds (0 before its first; the file is replaced atomically)."""
    path = os.path.join(folder, "checkpoint.pt")
    return torch.load(path, weights_only=True)["counters"]["update"] if os.path.exists(path) else 0


SLURM_PROGRAMS = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "scancel", "scontrol", "sinfo")


def slurm_or_skip():
    """SLURM and munge from Debian's packages, which .ci/run installs. A test never changes the machine it tests:
    where they are missing it skips, saying what to install."""
    missing = [name for name in SLURM_PROGRAMS if not slurm_program(name)]
    if missing:
        pytest.skip(f"SLURM is not installed ({', '.join(missing)} missing): on Debian, as root, "
                    "apt-get install slurm-wlm munge (as .ci/run does) to run this test")
    if os.geteuid() != 0:
        pytest.skip("the one-node SLURM cluster runs its daemons as root (SlurmUser=root); run the test as root")


def free_ports(n):
    sockets = [socket.socket() for _ in range(n)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


MAX_ARRAY_SIZE = 4  # array indices up to 3: SLURM's default 1001 in small, so that a list of 7 needs three arrays


@pytest.fixture
def slurm_cluster(tmp_path):
    """munged, slurmctld and slurmd on this machine, all state in tmp_path; yields the environment of
    the clients (sbatch, squeue, ...) and stops every daemon it started, by pid, whatever happens."""
    slurm_or_skip()
    top = tmp_path / "cluster"
    for sub in ("munge", "state", "log"):
        (top / sub).mkdir(parents=True)
    (top / "munge").chmod(0o755)
    # slurmd's step sockets must fit a Unix socket path (108 bytes), which a deep tmp_path can exceed.
    spool = tempfile.mkdtemp(prefix="slurmd-", dir="/tmp")
    key = top / "munge" / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o400)
    hardware = subprocess.run([slurm_program("slurmd"), "-C"], capture_output=True, text=True).stdout
    cpus, memory = (int(re.search(rf"{name}=(\d+)", hardware)[1]) for name in ("CPUs", "RealMemory"))
    ports = free_ports(2)
    # No cgroups (proctrack/linuxproc, task/none), so it runs in a container too; everything in tmp_path.
    (top / "slurm.conf").write_text(f"""\
ClusterName=sartest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort={ports[0]}
SlurmdPort={ports[1]}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={top}/munge/munge.socket
SlurmUser=root
SlurmdUser=root
StateSaveLocation={top}/state
SlurmdSpoolDir={spool}
SlurmctldPidFile={top}/slurmctld.pid
SlurmdPidFile={top}/slurmd.pid
SlurmctldLogFile={top}/log/slurmctld.log
SlurmdLogFile={top}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MailProg=/bin/true
MaxArraySize={MAX_ARRAY_SIZE}
ReturnToService=2
KillWait=5
MinJobAge=3600
NodeName=localhost NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={memory} State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
""")
    # The clients read this slurm.conf; the tasks inherit PATH, so their `python` is this one (as with a venv active).
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "SBATCH_", "SQUEUE_"))},
           "SLURM_CONF": str(top / "slurm.conf"),  # and no option of a real cluster's environment
           "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")}
    logs = [str(top / "log" / f"{name}.log") for name in ("munged", "slurmctld", "slurmd")]
    daemons, outputs = [], []

    def start(*command):
        outputs.append(open(top / "log" / f"{os.path.basename(command[0])}.out", "w"))
        daemons.append(subprocess.Popen(command, env=env, stdout=outputs[-1], stderr=subprocess.STDOUT))

    def alive():
        dead = [f"{daemon.args[0]} (exit {daemon.returncode})" for daemon in daemons if daemon.poll() is not None]
        return not dead or pytest.fail("a SLURM daemon exited: " + ", ".join(dead))

    try:
        start(slurm_program("munged"), "--foreground", "--force", f"--key-file={key}",
              f"--socket={top}/munge/munge.socket", f"--pid-file={top}/munge/munged.pid",
              f"--log-file={logs[0]}", f"--seed-file={top}/munge/munged.seed")
        wait_for(lambda: alive() and os.path.exists(top / "munge" / "munge.socket"), "munged's socket", 60, logs)
        start(slurm_program("slurmctld"), "-D", "-i", "-f", str(top / "slurm.conf"))
        start(slurm_program("slurmd"), "-D", "-N", "localhost", "-f", str(top / "slurm.conf"))
        wait_for(lambda: alive() and subprocess.run([slurm_program("sinfo"), "-h", "-o", "%t"], env=env,
                                                    capture_output=True, text=True).stdout.strip() == "idle",
                 "the node to be idle", 120, logs)
        yield env
    finally:
        if len(daemons) == 3 and all(daemon.poll() is None for daemon in daemons):  # no task outlives the test
            subprocess.run([slurm_program("scancel"), "--user", str(os.geteuid())], env=env, capture_output=True)
            end = time.monotonic() + 60
            while time.monotonic() < end and subprocess.run(
                    [slurm_program("squeue"), "-h"], env=env, capture_output=True, text=True).stdout.strip():
                time.sleep(0.2)
        for daemon in reversed(daemons):
            daemon.terminate()
            try:
                daemon.wait(timeout=30)
            except subprocess.TimeoutExpired:
                daemon.kill()
                daemon.wait()
        for output in outputs:
            output.close()
        shutil.rmtree(spool, ignore_errors=True)


def slurm(env, *command):
    return subprocess.run([slurm_program(command[0]), *command[1:]], env=env, capture_output=True, text=True,
                          check=True).stdout


def task_states(env, job):
    """{array task: (state, exit code)} of an array job."""
    lines = slurm(env, "scontrol", "show", "job", "-o", job).splitlines()
    return {int(re.search(r"ArrayTaskId=(\d+)", line)[1]): (re.search(r"JobState=(\S+)", line)[1],
                                                            re.search(r"ExitCode=(\S+)", line)[1]) for line in lines}


def submit_array(env, commands_file, n, out):
    """The README's sbatch line, from the project's folder, with the cluster's partition, time and memory."""
    return slurm(env, "sbatch", "--parsable", f"--array=1-{n}", "--partition=debug", "--time=30", "--mem=1G",
                 f"--output={out}/slurm-%A_%a.out", "benchmark/slurm.sh", str(commands_file)).strip()


def whole_rows(folder):
    try:
        with open(os.path.join(folder, "progress.csv")) as f:
            return [line.split(",") for line in f.read().split("\n")[1:-1]]
    except OSError:
        return []


def test_slurm_array_of_a_figure_script_finishes_and_a_cancelled_task_resumes(slurm_cluster, tmp_path):
    env, runs, out = slurm_cluster, tmp_path / "runs", tmp_path / "out"
    out.mkdir()
    commands = tiny_commands(runs)
    assert [line.split()[1] for line in commands] == ["sar_ppo.py", "figar_ppo.py", "sar_ppo.py"]
    (tmp_path / "commands.txt").write_text("\n".join(commands) + "\n")
    folders = [status.status(line)[1] for line in commands]
    n, rows = 128, 1024 // 128
    logs = [str(tmp_path / "cluster" / "log" / f"{name}.log") for name in ("slurmctld", "slurmd")]

    def array_done(job):
        return lambda: not slurm(env, "squeue", "-h", "-j", job).strip()

    def task_output(job, task):
        with open(out / f"slurm-{job}_{task}.out") as f:
            return f.read()

    # First submission: task 1 (SAR-PPO) is stopped mid-run, then cancelled.
    first = submit_array(env, tmp_path / "commands.txt", len(commands), out)
    pid = []

    def started():  # slurm.sh exec's its command: the task's process becomes the run's
        job = slurm(env, "squeue", "-h", "-j", f"{first}_1", "-t", "RUNNING", "-o", "%A").strip()
        listed = subprocess.run([slurm_program("scontrol"), "listpids", job], env=env, capture_output=True, text=True)
        for line in listed.stdout.splitlines()[1:] if job else []:
            try:
                with open(f"/proc/{line.split()[0]}/cmdline", "rb") as f:
                    if b"sar_ppo.py" in f.read():
                        pid.append(int(line.split()[0]))
            except OSError:
                pass
        return pid

    wait_for(started, "task 1's run to start", logs=logs)
    wait_for(lambda: saved_update(folders[0]) >= 1, "task 1's first checkpoint after an update", logs=logs)
    os.kill(pid[0], signal.SIGSTOP)  # holds it at a row, however fast this machine is
    cut = len(whole_rows(folders[0]))
    assert 1 <= cut < rows, f"task 1 had {cut} rows when stopped"
    slurm(env, "scancel", f"{first}_1")
    wait_for(array_done(first), "the first array to end", logs=logs)
    states = task_states(env, first)
    assert states[1][0] == "CANCELLED" and states[2] == states[3] == ("COMPLETED", "0:0")
    before = whole_rows(folders[0])
    kept = len(before)
    assert cut <= kept < rows  # a cancelled run keeps its rows, and is unfinished
    listed = subprocess.run([sys.executable, "tools/status.py"], input="\n".join(commands), cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout.splitlines()
    assert listed[0] == "finished: 2" and listed[1] == "unfinished: 1" and "(checkpoint.pt)" in listed[2]
    saved = saved_update(folders[0])
    assert 1 <= saved <= kept

    # The same array again: task 1 continues from its checkpoint, the finished runs only say so.
    second = submit_array(env, tmp_path / "commands.txt", len(commands), out)
    wait_for(array_done(second), "the second array to end", logs=logs)
    assert task_states(env, second) == {task: ("COMPLETED", "0:0") for task in (1, 2, 3)}
    assert whole_rows(folders[0])[:saved] == before[:saved]  # up to its checkpoint, as it was
    assert all("is finished" in task_output(second, task) for task in (2, 3))
    listed = subprocess.run([sys.executable, "tools/status.py"], input="\n".join(commands), cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout.splitlines()
    assert listed == ["finished: 3", "unfinished: 0", "not started: 0"]
    for folder in folders:  # no row lost or repeated
        assert [int(row[0]) for row in whole_rows(folder)] == [n * k for k in range(1, rows + 1)]

    # plot.py finds the three runs.
    table = subprocess.run([sys.executable, "plot.py", str(runs), "--table"], cwd=ROOT, capture_output=True,
                           text=True, check=True).stdout
    for folder in folders:
        assert re.search(rf"\| {re.escape(os.path.basename(folder))} \| 1,024 \|", table)


def readme_loop():
    """The README's loop that submits a list as arrays of `size` tasks (from `n=` to `done`)."""
    with open(os.path.join(ROOT, "README.md")) as f:
        block = f.read().split("## On a SLURM cluster", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    lines = block.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("n=$(wc -l < commands.txt)"))
    end = next(i for i, line in enumerate(lines) if line.strip() == "done")
    return "\n".join(lines[start:end + 1])


def test_slurm_a_list_longer_than_max_array_size_goes_in_as_readmes_arrays_and_each_task_runs_once(slurm_cluster,
                                                                                                   tmp_path):
    env, out, ran = slurm_cluster, tmp_path / "out", tmp_path / "ran"
    out.mkdir()
    ran.mkdir()
    n = 2 * (MAX_ARRAY_SIZE - 1) + 1  # 7: arrays of 3, 3 and 1 tasks
    commands = tmp_path / "commands.txt"
    # each line makes its own file, and fails if it exists: a line run twice fails its second task
    commands.write_text("".join(f"python -c \"open('{ran}/{k}', 'x').close()\"\n" for k in range(1, n + 1)))
    whole = subprocess.run([slurm_program("sbatch"), f"--array=1-{n}", "--partition=debug", f"--output={out}/%A_%a",
                            "benchmark/slurm.sh", str(commands)], cwd=ROOT, env=env, capture_output=True, text=True)
    assert whole.returncode != 0 and "Invalid job array specification" in whole.stderr  # as a default cluster, 2,688
    loop = readme_loop()
    assert "size=1000" in loop and "<a CPU partition>" in loop
    loop = (loop.replace("size=1000", f"size={MAX_ARRAY_SIZE - 1}").replace("<a CPU partition>", "debug")
            .replace("sbatch ", f"sbatch --parsable --output={out}/slurm-%A_%a.out ")
            .replace("commands.txt", str(commands)))
    jobs = subprocess.run(["bash", "-c", loop], cwd=ROOT, env=env, capture_output=True, text=True,
                          check=True).stdout.split()
    assert len(jobs) == 3
    logs = [str(tmp_path / "cluster" / "log" / f"{name}.log") for name in ("slurmctld", "slurmd")]
    wait_for(lambda: not slurm(env, "squeue", "-h").strip(), "the three arrays to end", logs=logs)
    states = [task_states(env, job) for job in jobs]
    assert [sorted(s) for s in states] == [[1, 2, 3], [1, 2, 3], [1]]
    assert all(state == ("COMPLETED", "0:0") for s in states for state in s.values()), states
    assert sorted(os.listdir(ran), key=int) == [str(k) for k in range(1, n + 1)]  # every line once
