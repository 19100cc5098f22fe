"""Subcommands of the `jitterlab` CLI (see jitterlab.cli.COMMANDS)."""
