"""`python -m boost_cli` runs the CLI."""

from boost_cli.cli import main

raise SystemExit(main())
