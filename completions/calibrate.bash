# bash completion for calibrate.  The commands, each command's options and
# the values an option takes are read from the program itself (--help and
# the unlisted --complete-values, both made from the option tables), so
# they follow the program.

_calibrate() {
  local cur prev words cword split
  # -s: --opt=value is completed as --opt value
  _init_completion -s || return
  local prog=${words[0]} cmd=run
  local cmds
  cmds=$("$prog" --help 2>/dev/null |
    sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z-]*\)  .*/\1/p')
  if ((cword == 1)) && [[ $cur != -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$cmds" -- "$cur")
    return
  fi
  # the command, listed or a former name (an operand first is one)
  if ((cword > 1)) && [[ ${words[1]} != -* ]]; then
    cmd=${words[1]}
  fi
  case $prev in
    -o | --output | --plots | --templates)
      _filedir
      return
      ;;
  esac
  if [[ $prev == -* ]]; then
    local vals
    vals=$("$prog" "$cmd" --complete-values 2>/dev/null |
      awk -v o="$prev" '$1 == o { $1 = ""; print substr($0, 2) }')
    if [[ -n $vals ]]; then
      # a comma-separated list (--sections, --mode): complete its last item
      local head=
      [[ $cur == *,* ]] && head=${cur%,*},
      mapfile -t COMPREPLY < <(compgen -P "$head" -W "$vals" -- "${cur##*,}")
      [[ -n $head ]] && compopt -o nospace
      return
    fi
  fi
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
