# fish completion for pi-sandbox (installed as share/fish/vendor_completions.d/pi-sandbox.fish).
# Subcommands, their options (pi-sandbox(1)) and file arguments.

set -l commands run serve policy doctor config approvals quarantine proxy-connect
complete -c pi-sandbox -f
complete -c pi-sandbox -n "not __fish_seen_subcommand_from $commands" -l version -d 'Print the version and the commit'
complete -c pi-sandbox -s h -l help -d 'Print help'
complete -c pi-sandbox -n "not __fish_seen_subcommand_from $commands" -a run -d 'Run one command inside the sandbox'
complete -c pi-sandbox -n "not __fish_seen_subcommand_from $commands" -a serve -d 'Run commands for a host over JSON lines'
complete -c pi-sandbox -n "not __fish_seen_subcommand_from $commands" -a policy -d 'Show the effective policy'
complete -c pi-sandbox -n "not __fish_seen_subcommand_from $commands" -a doctor -d 'Check what this kernel offers the sandbox'
complete -c pi-sandbox -n "not __fish_seen_subcommand_from $commands" -a config -d 'Trusted configuration'
complete -c pi-sandbox -n "not __fish_seen_subcommand_from $commands" -a approvals -d 'Approval broker: check requests, read audit'
complete -c pi-sandbox -n "not __fish_seen_subcommand_from $commands" -a quarantine -d 'What the guard moved out of workspaces'
complete -c pi-sandbox -n "not __fish_seen_subcommand_from $commands" -a proxy-connect -d 'Inside the sandbox: an SSH ProxyCommand'

complete -c pi-sandbox -n "__fish_seen_subcommand_from run policy" -l cwd -x -a '(__fish_complete_directories)' -d 'Workspace'
complete -c pi-sandbox -n "__fish_seen_subcommand_from run serve policy" -l config -r -F -d 'Trusted configuration file'
complete -c pi-sandbox -n "__fish_seen_subcommand_from run serve" -l reviewer -r -F -d 'Reviewer program (absolute path)'
complete -c pi-sandbox -n "__fish_seen_subcommand_from run" -l timeout -x -d 'Kill the command after SECONDS'
complete -c pi-sandbox -n "__fish_seen_subcommand_from run" -l no-prompt -d 'Never ask on the terminal'
complete -c pi-sandbox -n "__fish_seen_subcommand_from run" -s c -x -d 'Run SHELL COMMAND with /bin/bash -c'
complete -c pi-sandbox -n "__fish_seen_subcommand_from policy" -l json -d 'Print JSON'
complete -c pi-sandbox -n "__fish_seen_subcommand_from policy" -l platform -x -a 'linux macos' -d 'Whose sandbox to show'
complete -c pi-sandbox -n "__fish_seen_subcommand_from policy" -l sbpl -d 'Print the macOS Seatbelt profile alone'

complete -c pi-sandbox -n "__fish_seen_subcommand_from config; and not __fish_seen_subcommand_from check" -a check -d 'Validate FILE and print the effective value'
complete -c pi-sandbox -n "__fish_seen_subcommand_from config; and __fish_seen_subcommand_from check" -F

complete -c pi-sandbox -n "__fish_seen_subcommand_from approvals; and not __fish_seen_subcommand_from check tail" -a check -d 'Decide one boundary request'
complete -c pi-sandbox -n "__fish_seen_subcommand_from approvals; and not __fish_seen_subcommand_from check tail" -a tail -d 'Show the last decisions of the audit log'
complete -c pi-sandbox -n "__fish_seen_subcommand_from approvals; and __fish_seen_subcommand_from check" -F
complete -c pi-sandbox -n "__fish_seen_subcommand_from approvals; and __fish_seen_subcommand_from check" -l reviewer -r -F -d 'Reviewer program (absolute path)'
complete -c pi-sandbox -n "__fish_seen_subcommand_from approvals; and __fish_seen_subcommand_from check" -l no-prompt -d 'Never ask on the terminal'
complete -c pi-sandbox -n "__fish_seen_subcommand_from approvals; and __fish_seen_subcommand_from check" -l scope -x -d 'Circuit-breaker scope key'
complete -c pi-sandbox -n "__fish_seen_subcommand_from approvals; and __fish_seen_subcommand_from check" -l config -r -F -d 'Trusted configuration file'
complete -c pi-sandbox -n "__fish_seen_subcommand_from approvals; and __fish_seen_subcommand_from tail" -s n -x -d 'How many decisions'
complete -c pi-sandbox -n "__fish_seen_subcommand_from approvals; and __fish_seen_subcommand_from tail" -s f -l follow -d 'Keep showing decisions'
complete -c pi-sandbox -n "__fish_seen_subcommand_from approvals; and __fish_seen_subcommand_from tail" -l json -d 'One JSON object per decision'
complete -c pi-sandbox -n "__fish_seen_subcommand_from approvals; and __fish_seen_subcommand_from tail" -l surface -x -a 'network host-ipc filesystem-read filesystem-write'
complete -c pi-sandbox -n "__fish_seen_subcommand_from approvals; and __fish_seen_subcommand_from tail" -l decision -x -a 'allow deny'

complete -c pi-sandbox -n "__fish_seen_subcommand_from quarantine; and not __fish_seen_subcommand_from list restore" -a list -d 'List the quarantined entries'
complete -c pi-sandbox -n "__fish_seen_subcommand_from quarantine; and not __fish_seen_subcommand_from list restore" -a restore -d 'Move an entry back'
complete -c pi-sandbox -n "__fish_seen_subcommand_from quarantine; and __fish_seen_subcommand_from list" -l json -d 'Print a JSON array'
