"""`jitterlab completion bash|zsh`: prints a shell completion script generated from the command
line's own parser (subcommands, their options, option choices; files elsewhere), so it cannot
drift from the commands.

    eval "$(jitterlab completion bash)"                 # in ~/.bashrc
    eval "$(jitterlab completion zsh)"                  # in ~/.zshrc (through zsh's bashcompinit)
"""
from __future__ import annotations

import argparse

from jitterlab.commands import options


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "completion",
        help="print a bash or zsh completion script",
        description="Print a shell completion script for jitterlab, generated from its own options.",
        epilog='examples:\n  eval "$(jitterlab completion bash)"   # add to ~/.bashrc\n'
        '  eval "$(jitterlab completion zsh)"    # add to ~/.zshrc',
        formatter_class=options.ExamplesFormatter,
    )
    p.add_argument("shell", choices=["bash", "zsh"], help="the shell")
    return p


def _subparsers(p: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for a in p._actions:
        if isinstance(a, argparse._SubParsersAction):
            return dict(a.choices)
    return {}


def _words(p: argparse.ArgumentParser) -> tuple[list[str], dict[str, list[str]]]:
    """(option strings and sub-actions, {option: its choices})."""
    words = [o for a in p._actions for o in a.option_strings if o.startswith("--") or o == "-h"]
    words += list(_subparsers(p))
    choices = {o: [str(c) for c in a.choices] for a in p._actions if a.choices and not isinstance(a, argparse._SubParsersAction)
               for o in a.option_strings}
    pos = [str(c) for a in p._actions if not a.option_strings and a.choices and not isinstance(a, argparse._SubParsersAction)
           for c in a.choices]
    return words + pos, choices


def script(shell: str) -> str:
    from jitterlab.cli import build_parser

    top = build_parser()
    cmds = _subparsers(top)
    cases = []
    for name, sp in cmds.items():
        words, choices = _words(sp)
        for sub_name, ssp in _subparsers(sp).items():
            sw, sc = _words(ssp)
            cases.append(f'    "{name} {sub_name}") words="{" ".join(sw)}";;')
            choices.update(sc)
        opt_cases = "".join(f'        {o}) COMPREPLY=($(compgen -W "{" ".join(c)}" -- "$cur")); return;;\n' for o, c in choices.items())
        cases.append(f'    "{name}")\n      case "$prev" in\n{opt_cases}      esac\n      words="{" ".join(words)}";;')
    body = "\n".join(cases)
    nested = [f"{n} {s}" for n, sp in cmds.items() for s in _subparsers(sp)]
    pairs = "\n".join(f'      "{x}") cmd="{x}";;' for x in nested) or '      "") ;;'
    fn = f"""_jitterlab() {{
  local cur prev cmd words
  cur="${{COMP_WORDS[COMP_CWORD]}}"
  prev="${{COMP_WORDS[COMP_CWORD-1]}}"
  cmd="${{COMP_WORDS[1]}}"
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "{" ".join(cmds)} --help --version" -- "$cur")); return
  fi
  if [ "$COMP_CWORD" -ge 3 ]; then
    case "$cmd ${{COMP_WORDS[2]}}" in
{pairs}
    esac
  fi
  case "$cmd" in
{body}
  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
  else
    COMPREPLY=($(compgen -W "$words" -- "$cur") $(compgen -f -- "$cur"))
  fi
}}
complete -o filenames -F _jitterlab jitterlab
"""
    if shell == "zsh":
        return "autoload -U +X bashcompinit && bashcompinit\n" + fn
    return fn


def run(args: argparse.Namespace) -> int:
    print(script(args.shell), end="")
    return 0
