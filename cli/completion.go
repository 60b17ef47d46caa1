package cli

import (
	"fmt"

	"github.com/urfave/cli/v2"
)

// Completion scripts ask devplane itself for candidates: the command line
// so far plus --generate-bash-completion (urfave/cli's protocol) prints the
// subcommands or flags that fit, so the scripts never go stale.
const bashCompletion = `# bash completion for devplane. Load it with:
#   source <(devplane completion bash)
_devplane_complete() {
  local cur="${COMP_WORDS[COMP_CWORD]}" candidates
  local args=("${COMP_WORDS[@]:1:COMP_CWORD-1}")
  if [[ "$cur" == -* ]]; then args+=("$cur"); fi
  candidates=$("${COMP_WORDS[0]}" "${args[@]}" --generate-bash-completion 2>/dev/null)
  COMPREPLY=($(compgen -W "$candidates" -- "$cur"))
}
complete -o bashdefault -o default -F _devplane_complete devplane
`

const zshCompletion = `#compdef devplane
# zsh completion for devplane. Load it with:
#   source <(devplane completion zsh)
_devplane() {
  local cur=${words[CURRENT]}
  local -a args candidates
  args=(${words[2,CURRENT-1]})
  if [[ "$cur" == -* ]]; then args+=("$cur"); fi
  candidates=(${(f)"$(${words[1]} ${args[@]} --generate-bash-completion 2>/dev/null)"})
  compadd -- ${candidates[@]}
}
if (( $+functions[compdef] )); then compdef _devplane devplane; fi
`

const powershellCompletion = `# PowerShell completion for devplane. Load it with:
#   devplane completion powershell | Out-String | Invoke-Expression
Register-ArgumentCompleter -Native -CommandName devplane -ScriptBlock {
  param($wordToComplete, $commandAst, $cursorPosition)
  $words = @($commandAst.CommandElements | Select-Object -Skip 1 | ForEach-Object { $_.ToString() })
  if ($wordToComplete -ne '' -and $words.Count -gt 0) { $words = $words[0..($words.Count - 2)] }
  if ($wordToComplete -like '-*') { $words += $wordToComplete }
  & devplane @words --generate-bash-completion 2>$null |
    Where-Object { $_ -like "$wordToComplete*" } |
    ForEach-Object { [System.Management.Automation.CompletionResult]::new($_, $_, 'ParameterValue', $_) }
}
`

func completionCommand() *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print a shell completion script: bash, zsh, fish or powershell",
		ArgsUsage: "bash|zsh|fish|powershell",
		Action: func(c *cli.Context) error {
			switch shell := c.Args().First(); shell {
			case "bash":
				fmt.Fprint(c.App.Writer, bashCompletion)
			case "zsh":
				fmt.Fprint(c.App.Writer, zshCompletion)
			case "powershell":
				fmt.Fprint(c.App.Writer, powershellCompletion)
			case "fish":
				script, err := c.App.ToFishCompletion()
				if err != nil {
					return exitf(1, "error: %v", err)
				}
				fmt.Fprint(c.App.Writer, script)
			default:
				return exitf(1, "error: devplane completion %q: name a shell: bash, zsh, fish or powershell", shell)
			}
			return nil
		},
	}
}
