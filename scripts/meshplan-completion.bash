# Bash completion for meshplan: `source scripts/meshplan-completion.bash` (or copy it to
# /etc/bash_completion.d/meshplan). Reads the subcommands, flags and allowed values ({a|b|c} in the
# help text) from `meshplan --help` / `meshplan <command> --help`, so new flags complete without
# editing this file. Values that are files (--model, --plan, --output, ...) complete as paths.

_meshplan_help() {
  # $1 = the meshplan binary as typed, $2 = subcommand or empty
  if [ -n "$2" ]; then "$1" "$2" --help 2>/dev/null; else "$1" --help 2>/dev/null; fi
}

_meshplan() {
  local cur prev bin sub i w
  cur="${COMP_WORDS[COMP_CWORD]}"
  prev="${COMP_WORDS[COMP_CWORD-1]}"
  bin="${COMP_WORDS[0]}"
  COMPREPLY=()
  local subs
  subs=$(_meshplan_help "$bin" "" | awk '/^Subcommands:/ {on=1; next} on && /^  [a-z]/ {print $1}' | tr '\n' ' ')
  sub=""
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="${COMP_WORDS[i]}"
    if [[ " $subs " == *" $w "* ]]; then sub="$w"; break; fi
  done
  if [ -z "$sub" ]; then
    COMPREPLY=($(compgen -W "$subs --help --version" -- "$cur"))
    return 0
  fi
  local help
  help=$(_meshplan_help "$bin" "$sub")
  if [[ "$prev" == --* ]]; then
    local line values
    line=$(printf '%s\n' "$help" | grep -E "^ +(-[a-z],)?${prev}( |$)" | head -n 1)
    if [ -n "$line" ]; then
      if [[ "$line" =~ \{([^}]*)\} ]]; then
        values="${BASH_REMATCH[1]//|/ }"
        COMPREPLY=($(compgen -W "$values" -- "$cur"))
        return 0
      fi
      if [[ "$line" =~ ^\ +(-[a-z],)?${prev}\ +[A-Z] ]]; then  # takes a value: a path or a number
        if [ "$prev" = "--hardware" ]; then
          local dir
          dir="$(dirname "$(command -v "$bin" 2>/dev/null || echo "$bin")")/../../hardware-profiles"
          COMPREPLY=($(compgen -W "$(ls "$dir" 2>/dev/null | sed -n 's/\.yaml$//p')" -- "$cur"))
        fi
        COMPREPLY+=($(compgen -f -- "$cur"))
        return 0
      fi
    fi
  fi
  local flags
  flags=$(printf '%s\n' "$help" | grep -oE "^ +(-[a-z],)?--[a-z0-9-]+" | sed -E 's/^ +(-[a-z],)?//')
  COMPREPLY=($(compgen -W "$flags" -- "$cur"))
  return 0
}

complete -o filenames -F _meshplan meshplan
