#!/usr/bin/env python3
"""tmux captures at 80 columns of what a user sees: reindex progress, search, taps, install,
audit.

    python scripts/captures_80col.py --home DIR [--out FILE] [--width 80]

DIR is a BOOST_HOME with the shared corpus tapped (`python scripts/corpus.py --home DIR`);
it is copied first (never changed). Each scene runs in a fresh tmux pane of the given width
(`tmux new-session -x WIDTH`), with `BOOST_HOME` set to the copy, this checkout's `boost`
first on PATH, `NO_COLOR=1`; the pane (history included) is captured when the scene's
commands have finished, blank lines left out. The reindex scene captures the progress line
twice while a forced rebuild runs, then its summary. Writes Markdown (default: stdout).
Needs tmux (`apt-get install tmux`). Not part of CI.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parent.parent
DONE = "__capture_done__"

SCENES: Sequence[Tuple[str, str, Sequence[str]]] = (
    (
        "boost search (an id too long for its rank line gets a line of its own, whole when "
        "it fits; same file vs similar; the origin's copy shown)",
        "search",
        (
            "boost search 'write a good commit message' --no-llm -n 5",
            "boost search 'make my page usable for blind people' --no-llm -n 3",
        ),
    ),
    ("boost taps (a source that does not fit goes whole under its row)", "taps", ("boost taps",)),
    (
        "boost install / installed / uninstall",
        "install",
        (
            "boost install anthropics__skills:pdf --dry-run && boost install anthropics__skills:pdf"
            " && boost install sanjeed5__awesome-cursor-rules-mdc:react && boost installed",
            "echo '# my notes' >> .cursor/rules/react.mdc;"
            " boost uninstall sanjeed5__awesome-cursor-rules-mdc:react;"
            " boost install anthropics__skills:pdf --agent agents --user --dry-run;"
            " boost install github__awesome-copilot:gitmoji --name ../evil",
        ),
    ),
    (
        "boost audit (medium and worse, the rest counted; wrapped at words)",
        "audit",
        ("boost audit j4flmao__agent-skills", "boost audit PramodDutta__qaskills"),
    ),
)


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], check=True, capture_output=True, text=True).stdout


def start(name: str, width: int, env: dict, cwd: Path) -> None:
    exports = " ".join(f"{k}={shlex_quote(v)}" for k, v in env.items())
    tmux(
        "new-session",
        "-d",
        "-s",
        name,
        "-x",
        str(width),
        "-y",
        "60",
        "-c",
        str(cwd),
        f"env {exports} bash --norc --noprofile",
    )
    tmux("send-keys", "-t", name, "PS1='$ '; clear", "Enter")
    time.sleep(0.5)


def shlex_quote(s: str) -> str:
    import shlex

    return shlex.quote(s)


def capture(name: str) -> str:
    return tmux("capture-pane", "-p", "-S", "-", "-t", name)


def wait_for(name: str, marker: str, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = capture(name)
        if marker in text:
            return text
        time.sleep(0.3)
    raise SystemExit(f"scene {name}: no {marker!r} after {timeout:.0f} s")


def clean(text: str) -> str:
    lines = [ln.rstrip() for ln in text.splitlines()]
    out = [
        ln
        for ln in lines
        if ln.strip() and DONE not in ln and DONE[:9] not in ln and ln.strip() != "$"
    ]
    return "\n".join(out)


def idle(name: str, timeout: float) -> str:
    """The pane once its last line is the bare prompt again (the command finished)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        time.sleep(0.3)
        text = capture(name)
        lines = [ln.rstrip() for ln in text.splitlines() if ln.strip()]
        if lines and lines[-1] == "$":
            return text
    raise SystemExit(f"scene {name}: still busy after {timeout:.0f} s")


def run_scene(name: str, commands: Sequence[str], width: int, env: dict, cwd: Path) -> str:
    start(name, width, env, cwd)
    try:
        text = ""
        for cmd in commands:
            tmux("send-keys", "-t", name, cmd, "Enter")
            text = idle(name, 300)
        return clean(text)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)


def reindex_scene(width: int, env: dict, cwd: Path) -> str:
    name = "cap-reindex"
    start(name, width, env, cwd)
    shots: List[str] = ["$ boost reindex --force"]
    try:
        tmux("send-keys", "-t", name, "boost reindex --force", "Enter")
        for delay in (1.5, 3.5):
            time.sleep(delay)
            lines = [ln for ln in capture(name).splitlines() if ln.strip()]
            if lines and lines[-1].strip() != "$":
                shots.append(lines[-1].rstrip())
        tmux("send-keys", "-t", name, f"echo {DONE[:9]}''{DONE[9:]}", "Enter")
        final = clean(wait_for(name, DONE, 900)).splitlines()
        start_at = max(i for i, ln in enumerate(final) if ln.startswith("Indexed"))
        shots.append("$ # … at the end (the summary wraps at words):")
        shots += final[start_at:]
        return "\n".join(shots)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--width", type=int, default=80)
    ap.add_argument("--skip-reindex", action="store_true")
    args = ap.parse_args(argv)
    if shutil.which("tmux") is None:
        print("tmux is not installed: apt-get install tmux", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="boost-captures-"))
    try:
        home = work / "home"
        shutil.copytree(args.home, home, symlinks=True)
        project = work / "demo-app"
        project.mkdir()
        subprocess.run(["git", "init", "-q", str(project)], check=True)
        bindir = Path(sys.executable).parent
        env = {
            "BOOST_HOME": str(home),
            "HOME": str(work / "user"),
            "PATH": f"{bindir}:{os.environ.get('PATH', '')}",
            "NO_COLOR": "1",
            "TERM": "xterm",
            "PYTHONPATH": str(ROOT),
        }
        (work / "user").mkdir()
        parts = [
            f"# tmux captures at {args.width} columns (issue 20)",
            "",
            f"Taken by `scripts/captures_80col.py` ({time.strftime('%Y-%m-%d %H:%M UTC')}): "
            f"`tmux new-session -x {args.width}` and `tmux capture-pane -p` on the shared "
            "corpus (12 registries) tapped into a copied home, with this checkout's boost, "
            "`--no-llm` where the LLM would answer. Blank lines of the pane are left out.",
        ]
        if not args.skip_reindex:
            parts += [
                "",
                "## boost reindex (progress: the time left stays on the line; the label is "
                "what is cut)",
                "",
                "```",
                reindex_scene(args.width, env, project),
                "```",
            ]
        for title, name, commands in SCENES:
            parts += [
                "",
                f"## {title}",
                "",
                "```",
                run_scene(f"cap-{name}", commands, args.width, env, project),
                "```",
            ]
        parts += [
            "",
            "The one-line errors are wrapped by the terminal itself (boost prints an error as "
            "one line, so a script can read it).",
            "",
        ]
        text = "\n".join(parts)
        if args.out:
            args.out.write_text(text)
        else:
            sys.stdout.write(text)
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
