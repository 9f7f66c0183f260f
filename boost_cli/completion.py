"""Shell completion without a dependency (pip's approach): the script a shell loads calls
``boost`` back with ``BOOST_COMPLETE`` set and the words typed so far in ``COMP_WORDS`` /
``COMP_CWORD``; boost prints the candidates, one per line, read from its own argument
parser (commands, options, choices) and from the config (tap names).
"""

from __future__ import annotations

import argparse
from typing import Dict, List, Mapping, Optional, Sequence

SHELLS = ("bash", "zsh", "fish")

SCRIPTS: Dict[str, str] = {
    "bash": """\
# boost completion for bash: add to ~/.bashrc   eval "$(boost completion bash)"
_boost_complete() {
    local IFS=$'\\n'
    COMPREPLY=( $(COMP_WORDS="${COMP_WORDS[*]}" COMP_CWORD=$COMP_CWORD \\
                  BOOST_COMPLETE=bash "$1" 2>/dev/null) )
}
complete -o default -F _boost_complete boost
""",
    "zsh": """\
#compdef boost
# boost completion for zsh: add to ~/.zshrc (after compinit)   eval "$(boost completion zsh)"
_boost_complete() {
    local -a candidates
    candidates=( ${(f)"$(COMP_WORDS="$words[*]" COMP_CWORD=$((CURRENT-1)) \\
                         BOOST_COMPLETE=zsh $words[1] 2>/dev/null)"} )
    compadd -a candidates
}
if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
    _boost_complete "$@"
else
    compdef _boost_complete boost
fi
""",
    "fish": """\
# boost completion for fish: boost completion fish > ~/.config/fish/completions/boost.fish
function __boost_complete
    set -lx COMP_WORDS (commandline -opc) (commandline -ct)
    set -lx COMP_CWORD (math (count $COMP_WORDS) - 1)
    set -lx BOOST_COMPLETE fish
    set -lx COMP_WORDS (string join ' ' -- $COMP_WORDS)
    boost 2>/dev/null
end
complete -c boost -f -a '(__boost_complete)'
""",
}


def script(shell: str) -> str:
    return SCRIPTS[shell]


ENTRY_COMMANDS = ("show", "install")  # their positional is an entry's id


def candidates(
    parser: argparse.ArgumentParser,
    env: Mapping[str, str],
    taps: Sequence[str] = (),
    entries: Sequence[str] = (),
) -> List[str]:
    """What may come at word ``COMP_CWORD`` of ``COMP_WORDS`` (from ``env``), filtered by
    what is typed there already. ``taps`` are offered where a tap name goes, ``entries``
    (ids as search prints them) where an entry goes."""
    words = env.get("COMP_WORDS", "").split()
    try:
        cword = int(env.get("COMP_CWORD", "0"))
    except ValueError:
        return []
    current = words[cword] if 0 <= cword < len(words) else ""
    before = words[1:cword] if cword <= len(words) else words[1:]
    subs = _subparsers(parser)
    command = next((w for w in before if w in subs), None)
    active = subs[command] if command else parser
    previous = before[-1] if before else ""
    action = _option(active, previous) or _option(parser, previous)
    if action is not None and action.nargs != 0:
        found = _values(action, taps)
    elif current.startswith("-"):
        found = _options(active) + ([] if active is parser else _options(parser))
    elif command is None:
        found = list(subs)
    elif command in ENTRY_COMMANDS:
        found = list(entries)
    else:
        found = _positionals(command, subs, taps)
    return sorted({c for c in found if c.startswith(current)})


def _subparsers(parser: argparse.ArgumentParser) -> Dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _option(parser: argparse.ArgumentParser, word: str) -> Optional[argparse.Action]:
    return parser._option_string_actions.get(word) if word.startswith("-") else None


def _options(parser: argparse.ArgumentParser) -> List[str]:
    return [
        s
        for a in parser._actions
        if a.help != argparse.SUPPRESS
        for s in a.option_strings
        if s.startswith("--")
    ]


def _values(action: argparse.Action, taps: Sequence[str]) -> List[str]:
    if action.choices:
        return [str(c) for c in action.choices]
    if action.dest == "tap":
        return list(taps)
    return []


def _positionals(
    command: str, subs: Mapping[str, argparse.ArgumentParser], taps: Sequence[str]
) -> List[str]:
    if command in ("untap", "update"):
        return list(taps)
    for action in subs[command]._actions:
        if not action.option_strings and action.choices:
            return [str(c) for c in action.choices]
    return []
