#!/usr/bin/env bash
# Tests scripts/meshplan-completion.bash against the built binary: subcommands, flags of a
# subcommand, allowed values of enumerated flags, files for path flags. Exit 1 on the first miss.
set -u
src="$1"; bin="$2"
dir=$(mktemp -d)
ln -s "$bin" "$dir/meshplan"
PATH="$dir:$PATH"
source "$src/scripts/meshplan-completion.bash"
fail=0
complete_words() {  # words of the command line; the last is the word being completed
  COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=()
  _meshplan
  printf '%s\n' "${COMPREPLY[@]}"
}
expect() {  # expect "<description>" "<wanted word>" words...
  local what="$1" want="$2"; shift 2
  local got; got=$(complete_words "$@")
  if printf '%s\n' "$got" | grep -qx -- "$want"; then echo "ok   $what"
  else echo "FAIL $what: '$want' not in: $(echo $got)"; fail=1; fi
}
refuse() {  # refuse "<description>" "<unwanted word>" words...
  local what="$1" bad="$2"; shift 2
  local got; got=$(complete_words "$@")
  if printf '%s\n' "$got" | grep -qx -- "$bad"; then echo "FAIL $what: '$bad' offered"; fail=1
  else echo "ok   $what"; fi
}
expect "subcommands" "simulate" meshplan si
expect "subcommand list" "calibrate" meshplan ""
expect "flags of plan" "--objective" meshplan plan --obj
expect "flags of run" "--checkpoint-dir" meshplan run --check
refuse "flags are per subcommand" "--objective" meshplan estimate --obj
expect "--recompute values" "selective" meshplan estimate --recompute ""
expect "--schedule values" "zb-h1" meshplan plan --schedule z
expect "--objective values" "tokens-per-s" meshplan plan --objective tok
expect "--export values" "deepspeed" meshplan plan --export d
expect "--format values" "yaml" meshplan simulate --format y
expect "--backend values" "cuda" meshplan run --backend c
touch "$dir/model-x.yaml"
(cd "$dir" && expect "--model completes files" "model-x.yaml" meshplan plan --model mod) || fail=1
rm -rf "$dir"
exit $fail
