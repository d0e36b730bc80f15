"""The command line as a Click command, for the documentation's command reference.

`mkdocs-click` documents Click commands; the `gramagents` command is written with typer,
which builds one. Importing this module builds it (with every recipe's subcommands) and is
done only by the documentation build.
"""

from __future__ import annotations

import typer

from .cli import FORMAT_OPTION, SOURCE_LIMIT_OPTION, add_recipe_commands, app
from .cli_judges import add_judge_commands
from .cli_runtime import format_help, limit_help

add_judge_commands(app)
add_recipe_commands()
FORMAT_OPTION.help, SOURCE_LIMIT_OPTION.help = format_help(), limit_help()
command = typer.main.get_command(app)
