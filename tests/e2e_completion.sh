#!/usr/bin/env bash
# Shell completion of option values, made from the option tables: every
# value an option's help lists as a|b|c is completed, every completed value
# is accepted by the command and a value not listed is refused (so the
# completion and the parser cannot drift), and the bash completion itself
# completes commands, options and values (where bash-completion is
# installed; the zsh script is checked for syntax where zsh is).
# usage: e2e_completion.sh CALIBRATE SOURCE_DIR WORK_DIR
# covers: calibrator/commands/opt_table.c
CAL=$1 SRC=$2
. "$SRC/tests/e2e_lib.sh"
e2e_setup "$3"
export CALIBRATE_LOCK="$TMP/lock"
LC_ALL=C
export LC_ALL

cmds=$("$CAL" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z-]*\)  .*/\1/p')
[ -n "$cmds" ] && ok || bad "calibrate --help lists no commands"
for cmd in $cmds peak; do
  if ! "$CAL" "$cmd" --complete-values >"$TMP/vals" 2>"$TMP/err"; then
    bad "$cmd --complete-values: exit $?: $(cat "$TMP/err")"
    continue
  fi
  ok
  # every a|b|c the help lists is completed
  "$CAL" "$cmd" --help |
    grep -oE -- '--[a-z0-9-]+ [a-z0-9-]+(\|[a-z0-9-]+)+' >"$TMP/listed"
  while read -r opt alts; do
    line=$(awk -v o="$opt" '$1 == o' "$TMP/vals")
    for v in ${alts//|/ }; do
      case " $line " in
      *" $v "*) ok ;;
      *) bad "$cmd $opt: '$v' is in the help but not completed ($line)" ;;
      esac
    done
  done <"$TMP/listed"
  # every completed value is accepted, a value not listed is refused
  # (--complete-values after the option stops the command once the
  # option was taken)
  while read -r opt vals; do
    for v in $vals; do
      [ "$v" = list ] && continue # --preset list: an action, not a value
      "$CAL" "$cmd" "$opt" "$v" --complete-values </dev/null >/dev/null 2>"$TMP/err" &&
        ok || bad "$cmd $opt $v: completed but refused: $(cat "$TMP/err")"
    done
    "$CAL" "$cmd" "$opt" no-such-value --complete-values </dev/null >/dev/null 2>"$TMP/err"
    [ $? -eq 2 ] && ok || bad "$cmd $opt no-such-value: not refused"
  done <"$TMP/vals"
done
# the options whose values are words of their help's prose are completed
# too (a table row without its values would leave them out)
for want in "plan --format hf" "plan --format env" "run --workload grpo" \
            "run --dtype auto" "run --mode train" "run --sections batch" \
            "run --preset qwen2-0.5b" "run --gemm-engine openblas" \
            "curve --optimize knee" "export --format gab-smaller" \
            "export -f bmf" "plot --format svg" "compare --format html" \
            "attention --preset list" "fleet --workload sft"; do
  set -- $want
  "$CAL" "$1" --complete-values | grep -q -- "^$2 .*\<$3\>" && ok ||
    bad "calibrate $1 --complete-values: $2 does not offer $3"
done

# the bash completion itself
BC=/usr/share/bash-completion/bash_completion
if [ -r "$BC" ]; then
  # comp WORD...: what _calibrate offers for the last word
  comp() {
    bash -c '. "$1" && . "$2" || exit 1
      shift 2
      COMP_WORDS=("$@")
      COMP_CWORD=$(($# - 1))
      COMP_LINE="$*"
      COMP_LINE=${COMP_LINE// = /=} # readline breaks words at "="
      COMP_POINT=${#COMP_LINE}
      _calibrate 2>/dev/null
      printf "%s\n" "${COMPREPLY[@]}"' _ "$BC" "$SRC/completions/calibrate.bash" \
      "$CAL" "$@" >"$TMP/reply" 2>"$TMP/err"
  }
  offers() { # DESC WORD: the reply holds WORD
    grep -qx -- "$2" "$TMP/reply" && ok ||
      bad "$1: '$2' not offered ($(tr '\n' ' ' <"$TMP/reply"))"
  }
  comp plan --format ""
  offers "plan --format" hf
  offers "plan --format" env
  offers "plan --format" table
  comp run --workload ""
  offers "run --workload" dpo
  comp --preset qwen
  offers "--preset (the default run)" qwen2-0.5b
  comp run --mode prefill,
  offers "run --mode prefill," prefill,decode
  comp run --sections g
  offers "run --sections g" gemm
  comp peak --format j
  offers "peak (the former name) --format j" json
  comp export -f g
  offers "export -f g" gab
  comp cu
  offers "the command cu" curve
  comp pe
  offers "the command pe" peak-flops
  grep -qx peak "$TMP/reply" && bad "the former name peak is offered" || ok
  comp plan --format = j
  offers "plan --format=j" json
  comp plan --for
  offers "plan --for" --format
else
  echo "bash-completion is not installed: the bash script is not run"
fi
if command -v zsh >/dev/null 2>&1; then
  zsh -n "$SRC/completions/_calibrate" && ok || bad "_calibrate: zsh syntax"
fi
finish
