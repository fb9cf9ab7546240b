"""`python_exec` is contained by its child process, not by its restricted builtins: code that escapes them in four
lines (`().__class__.__base__.__subclasses__()` -> the `os` module's globals) finds no secret in its environment,
cannot allocate past the memory limit, write past the file-size limit or outlive its timeout, and leaves no process
behind. With bubblewrap it also cannot read or write outside scratch, start a process or reach the network. Every
test runs in both modes (`STRANDS_PYTHON_EXEC_ISOLATION=process` forces the one without bubblewrap), so CI, which
installs bubblewrap, runs both."""

from __future__ import annotations

import inspect
import os
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from strands_durable.runner import sandbox
from strands_durable.runner.python_exec import run_python
from tests.conftest import REPO
from tests.tools.support import call, result_text, run_script, scripted_spec, tool_results

# the escape the attacker used: any class whose __init__ was defined in the os module hands over os's globals
ESCAPE = """
osg = None
for c in ().__class__.__base__.__subclasses__():
    try:
        g = c.__init__.__globals__
    except:
        continue
    if "fork" in g and "environ" in g:
        osg = g
        break
imp = osg["__builtins__"]["__import__"]
"""
# forks; what follows runs in the `else:` branch (a process limit makes the fork fail: "no fork" is printed)
FORK = """
try:
    pid = osg["fork"]()
except:
    print("no fork")
else:
"""


def _use_isolation(mode: str, monkeypatch) -> str:
    if mode == "bubblewrap":
        monkeypatch.delenv(sandbox.ISOLATION_ENV, raising=False)
        if not sandbox.bubblewrap_works():
            if os.environ.get("CI"):
                pytest.fail("CI installs bubblewrap (.ci/run); it must start there")
            pytest.skip("bubblewrap is not installed or cannot start on this machine")
    else:
        monkeypatch.setenv(sandbox.ISOLATION_ENV, "process")
    assert sandbox.isolation_in_use() == mode
    return mode


@pytest.fixture(params=["bubblewrap", "process"])
def isolation(request, monkeypatch) -> str:
    """Both modes: what holds with and without bubblewrap."""
    return _use_isolation(request.param, monkeypatch)


@pytest.fixture
def bubblewrap(monkeypatch) -> str:
    """What only bubblewrap gives (README, python_exec: without it the code reaches what the user can)."""
    return _use_isolation("bubblewrap", monkeypatch)


def _forking(body: str) -> str:
    """Code that forks and runs `body` (indented like the lines of a test) in both processes when it can."""
    return FORK + textwrap.indent(textwrap.dedent(body), "    ")


def _run(code: str, scratch: Path, timeout: int = 10) -> str:
    return run_python(ESCAPE + code, timeout_s=timeout, cwd=scratch)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"


def test_the_escaped_code_finds_no_secret_in_its_environment_nor_in_the_journal(tmp_path, isolation, monkeypatch):
    monkeypatch.setenv("PYEXEC_TEST_API_KEY", "sk-should-never-leak-1234")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws-should-never-leak-5678")
    spec = scripted_spec(tmp_path, "[python_exec]")
    code = ESCAPE + "print(sorted(osg['environ'].items()))"
    outcome, store = run_script(spec, tmp_path, [call("python_exec", code=code)], allow_python_exec=True)
    (result,) = tool_results(store, outcome.session_id)
    assert result["status"] == "success", result_text(result)
    printed = dict(eval(result_text(result)))  # our own test's printed list of pairs
    assert set(printed) <= {"PATH", "LANG", "HOME", "TMPDIR", "PWD"}  # bubblewrap sets PWD
    scratch = str(store.workspace(outcome.session_id).scratch_dir.resolve())
    assert printed["HOME"] == printed["TMPDIR"] == scratch
    journal = store.journal_bytes(outcome.session_id)
    assert b"should-never-leak" not in journal


def test_memory_and_file_size_are_limited(tmp_path, isolation):
    with pytest.raises(ValueError, match="MemoryError"):
        _run("x = 'a' * (1600 * 1024 * 1024)\nprint(len(x))", tmp_path)
    code = textwrap.dedent("""
    fd = osg["open"]("big.bin", osg["O_WRONLY"] | osg["O_CREAT"], 0o600)
    for _ in range(100):
        osg["write"](fd, b"x" * (1024 * 1024))
    """)
    with pytest.raises(ValueError, match="File too large"):
        _run(code, tmp_path)
    assert (tmp_path / "big.bin").stat().st_size <= sandbox.FILE_BYTES


def _still_writing(log: Path) -> bool:
    before = log.stat().st_size
    time.sleep(0.5)
    return log.stat().st_size != before


def test_a_daemon_the_code_starts_dies_with_the_call_and_at_the_timeout(tmp_path, bubblewrap):
    code = _forking("""
        if pid == 0:
            osg["setsid"]()  # leaves the process group, as a daemon does
            fd = osg["open"]("alive.log", osg["O_WRONLY"] | osg["O_CREAT"] | osg["O_APPEND"], 0o600)
            while True:
                osg["write"](fd, b"x")
                imp("time").sleep(0.02)
        while not osg["path"].exists("alive.log"):
            pass
        print("forked")
    """)
    if os.geteuid() != 0:  # no new process at all (the kernel exempts only root from RLIMIT_NPROC)
        assert _run(code, tmp_path).strip() == "no fork"
        return
    log = tmp_path / "alive.log"
    assert _run(code, tmp_path).strip() == "forked"  # returned while its daemon ran: the daemon is gone too
    assert not _still_writing(log)
    log.unlink()
    started = time.monotonic()
    with pytest.raises(ValueError, match="timed out after 1 s"):
        _run(code + "while True:\n    pass\n", tmp_path, timeout=1)
    assert time.monotonic() - started < 15
    assert log.exists() and not _still_writing(log)


def test_a_forked_child_in_the_group_dies_with_the_call(tmp_path, isolation):
    code = _forking("""
        if pid == 0:
            while True:
                pass
        print(pid)
    """)
    printed = _run(code, tmp_path).strip()
    if printed == "no fork":
        assert os.geteuid() != 0
        return
    if isolation == "process":  # a pid of this machine: killed with the group when the call returned
        time.sleep(0.2)
        assert not _alive(int(printed))


def test_a_spinning_call_is_stopped_at_its_timeout(tmp_path, isolation):
    started = time.monotonic()
    with pytest.raises(ValueError, match="timed out after 1 s"):
        _run("while True:\n    pass", tmp_path, timeout=1)
    assert time.monotonic() - started < 15


def test_with_bubblewrap_nothing_outside_scratch_is_readable_or_writable(tmp_path, bubblewrap):
    secret_file = tmp_path / "outside" / "credentials"
    secret_file.parent.mkdir()
    secret_file.write_text("aws_secret_access_key = nope")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    code = textwrap.dedent(f"""
    for path in ({str(secret_file)!r}, {str(Path.home() / ".bashrc")!r}):
        print(path, osg["path"].exists(path))
    for path in ({str(tmp_path / "outside" / "dropped")!r}, "/usr/dropped", "/tmp/dropped"):
        try:
            osg["open"](path, osg["O_WRONLY"] | osg["O_CREAT"], 0o600)
            print(path, "written")
        except:
            print(path, "refused")
    osg["close"](osg["open"]("inside.txt", osg["O_WRONLY"] | osg["O_CREAT"], 0o600))
    """)
    lines = _run(code, scratch).splitlines()
    assert lines[:2] == [f"{secret_file} False", f"{Path.home() / '.bashrc'} False"]
    assert all(line.endswith("refused") for line in lines[2:]), lines
    assert not (tmp_path / "outside" / "dropped").exists() and (scratch / "inside.txt").is_file()


def test_with_bubblewrap_there_is_no_network(tmp_path, bubblewrap):
    listener = socket.create_server(("127.0.0.1", 0))
    listener.setblocking(False)  # a connection that arrived waits in the backlog, where accept() below finds it
    port = listener.getsockname()[1]
    code = textwrap.dedent(f"""
    sock = imp("socket").socket()
    try:
        sock.connect(("127.0.0.1", {port}))
        print("connected")
    except:
        print("refused")
    """)
    try:
        assert _run(code, tmp_path).startswith("refused")
        with pytest.raises(BlockingIOError):  # nothing connected
            listener.accept()
    finally:
        listener.close()


def test_a_bubblewrap_that_fails_to_start_counts_as_absent_and_is_said_once(tmp_path):
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "bwrap").write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    (fake / "bwrap").chmod(0o755)
    program = (
        "from pathlib import Path\nfrom strands_durable.runner.python_exec import run_python\n"
        f"print(run_python('print(6 * 7)', cwd=Path({str(tmp_path)!r})).strip())\n"
        f"print(run_python('print(7 * 8)', cwd=Path({str(tmp_path)!r})).strip())\n"
    )
    env = {**os.environ, "PATH": f"{fake}{os.pathsep}{os.environ['PATH']}"}
    env.pop(sandbox.ISOLATION_ENV, None)
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["42", "56"]
    assert done.stderr.strip().splitlines() == [
        "Warning: bubblewrap (bwrap) cannot start here (bwrap: No permissions to create new namespace); "
        "python_exec runs with process limits only"
    ]


def _allow_flag_help() -> str:
    from strands_durable.cli.run import run

    option = inspect.signature(run, eval_str=True).parameters["allow_python_exec"].annotation.__metadata__[0]
    return " ".join(option.help.split())


def test_the_flags_help_and_the_readme_say_what_holds_with_and_without_bubblewrap():
    with_bwrap, without = _allow_flag_help().split("Without bubblewrap")
    always, inside = with_bwrap.split("inside bubblewrap")
    for holds in ("no secrets in its environment", "memory/CPU/file-size/process limits", "killed at the timeout"):
        assert holds in always
    for holds in ("no network", "read-only system", "only scratch writable"):
        assert holds in inside
    assert "read and write what you can and reach the network" in without
    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    options_row = readme.split("| `--allow-python-exec` |")[1].split("|")[0]
    assert "without bubblewrap it can read and write what you can and reach the network" in options_row
    section = readme.split("**`python_exec`** (only with `--allow-python-exec`)")[1].split("**")[0]
    assert "no network, the system read-only" in section
    assert "the code can read and write whatever the user running the workflow can and reach the network" in section
