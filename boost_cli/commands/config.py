"""`boost config get|set|unset|list`: the few user settings (`core/settings`)."""

from __future__ import annotations

import argparse

from boost_cli.commands.render import emit_json, out, table, width
from boost_cli.core import settings
from boost_cli.core.errors import UsageError


def cmd_config(args: argparse.Namespace) -> int:
    action, name, value = args.action, args.name, args.value
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
                        [r["name"], str(r["value"]), "set" if r["set"] else "default", r["help"]]
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
        emit_json({"name": name, "value": got}) if args.json else out(str(got))
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
    emit_json({"name": name, "value": new}) if args.json else out(f"{name} = {new}")
    return 0
