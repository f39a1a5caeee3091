# bash completion for calibrate.  The commands and each command's options
# are read from the program's own --help, so they follow the program.

_calibrate() {
  local cur prev words cword
  _init_completion || return
  local prog=${words[0]} cmd=run
  local cmds
  cmds=$("$prog" --help 2>/dev/null |
    sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z-]*\)  .*/\1/p')
  if ((cword == 1)) && [[ $cur != -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$cmds" -- "$cur")
    return
  fi
  local c
  for c in $cmds; do
    [[ ${words[1]} == "$c" ]] && cmd=$c
  done
  case $prev in
    -o | --output | --plots | --templates)
      _filedir
      return
      ;;
  esac
  if [[ $cur == -* ]]; then
    local opts
    opts=$("$prog" "$cmd" --help 2>/dev/null |
      grep -o -- '--[a-z][a-z0-9-]*' | sort -u)
    mapfile -t COMPREPLY < <(compgen -W "$opts" -- "$cur")
    return
  fi
  _filedir
}
complete -F _calibrate calibrate
