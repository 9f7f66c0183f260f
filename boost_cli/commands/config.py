"""`boost config get|set|unset|list`: the few user settings (`core/settings`)."""

from __future__ import annotations

import argparse

from boost_cli.commands.render import emit_json, out, table, width
from boost_cli.core import settings
from boost_cli.core.errors import UsageError

ACTIONS = ("get", "set", "unset", "list")


def _text(value: object) -> str:
    """A value as typed: ``true``/``false`` for a flag (git's spelling), else as is."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def cmd_config(args: argparse.Namespace) -> int:
    action, name, value = args.action, args.name, args.value
    if action not in ACTIONS:
        if action not in settings.KNOWN:
            import difflib  # only for a mistyped word

            close = difflib.get_close_matches(action, [*ACTIONS, *settings.KNOWN], n=1)
            raise UsageError(
                f"unknown action or setting {action!r}",
                f"did you mean {close[0]!r}?" if close else f"use one of {', '.join(ACTIONS)}",
            )
        if value is not None:
            raise UsageError(f"'boost config {action}' takes one value", "leave out the rest")
        # git's short form: 'boost config NAME' reads it, 'boost config NAME VALUE' sets it
        action, name, value = ("set" if name is not None else "get"), action, name
    if action == "list":
        if name:
            raise UsageError("'boost config list' takes no name", "leave it out")
        rows = settings.listing()
        if args.json:
            emit_json(rows)
        else:
            out(
                table(
                    [
                        [r["name"], _text(r["value"]), "set" if r["set"] else "default", r["help"]]
                        for r in rows
                    ],
                    ["NAME", "VALUE", "", "WHAT IT DOES"],
                    columns=width(),
                    wrap_cols=(3,),
                )
            )
        return 0
    if not name:
        raise UsageError(f"'boost config {action}' needs a setting", "e.g. boost config get llm")
    if action == "get":
        if value is not None:
            raise UsageError("'boost config get' takes one name", "leave out the value")
        got = settings.get(name)
        emit_json({"name": name, "value": got}) if args.json else out(_text(got))
        return 0
    if action == "unset":
        settings.unset(name)
        return 0
    if value is None:
        raise UsageError(
            f"'boost config set {name}' needs a value",
            f"e.g. boost config set {name} {settings.KNOWN[name][1] if name in settings.KNOWN else 'VALUE'}",
        )
    new = settings.set_value(name, value)
    emit_json({"name": name, "value": new}) if args.json else out(f"{name} = {_text(new)}")
    return 0
