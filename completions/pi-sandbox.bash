# bash completion for pi-sandbox (installed as share/bash-completion/completions/pi-sandbox).
# Subcommands, their options (pi-sandbox(1)) and file arguments.

_pi_sandbox() {
  local cur prev
  cur="${COMP_WORDS[COMP_CWORD]}"
  prev="${COMP_WORDS[COMP_CWORD - 1]}"
  # The command path: the words before the cursor that are not options.
  local path="" i
  for ((i = 1; i < COMP_CWORD; i++)); do
    case "${COMP_WORDS[i]}" in
      --) break ;;
      -*) ;;
      *) case "$path" in
           "" | approvals | config | quarantine) path="${path:+$path }${COMP_WORDS[i]}" ;;
         esac ;;
    esac
  done
  case "$prev" in
    --cwd) COMPREPLY=($(compgen -d -- "$cur")); return ;;
    --config | --reviewer) COMPREPLY=($(compgen -f -- "$cur")); return ;;
    --timeout | -n | --scope | -c) COMPREPLY=(); return ;;
    --surface) COMPREPLY=($(compgen -W "network host-ipc filesystem-read filesystem-write" -- "$cur")); return ;;
    --decision) COMPREPLY=($(compgen -W "allow deny" -- "$cur")); return ;;
    --platform) COMPREPLY=($(compgen -W "linux macos" -- "$cur")); return ;;
  esac
  local words=""
  case "$path" in
    "") words="run serve policy doctor config approvals quarantine proxy-connect --help --version" ;;
    run) words="--cwd --timeout --config --reviewer --no-prompt -c --help" ;;
    serve) words="--config --reviewer --help" ;;
    policy) words="--cwd --config --json --platform --sbpl --help" ;;
    doctor | proxy-connect | quarantine\ restore*) words="--help" ;;
    config) words="check --help" ;;
    config\ check*) COMPREPLY=($(compgen -f -- "$cur")); return ;;
    approvals) words="check tail --help" ;;
    approvals\ check*)
      if [[ "$cur" != -* ]]; then COMPREPLY=($(compgen -f -- "$cur")); return; fi
      words="--reviewer --no-prompt --scope --config --help" ;;
    approvals\ tail*) words="-n --follow --json --surface --decision --help" ;;
    quarantine) words="list restore --help" ;;
    quarantine\ list*) words="--json --help" ;;
  esac
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -o filenames -F _pi_sandbox pi-sandbox
