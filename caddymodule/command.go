package caddymodule

import (
	"fmt"
	"os"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"

	"github.com/promptwall/promptwall/promptscan"
)

// `caddy prompt-scan` is package promptscan's command; cmd/prompt-scan is
// the same without Caddy.
func init() {
	caddycmd.RegisterCommand(caddycmd.Command{
		Name:  "prompt-scan",
		Usage: promptscan.Usage,
		Short: promptscan.Short,
		Long:  promptscan.Long,
		CobraFunc: func(cmd *cobra.Command) {
			cmd.Flags().String("rulebook", "", promptscan.RulebookUsage)
			cmd.Flags().Bool("jsonl", false, promptscan.JSONLUsage)
			// A bad flag is an error (3), not a verdict: cobra's own exit
			// status for it, 1, reads as "suspicious".
			cmd.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
				fmt.Fprintf(os.Stderr, "prompt-scan: %v\nusage: caddy prompt-scan %s (--help for more)\n", err, promptscan.Usage)
				os.Exit(promptscan.ExitError)
				return err
			})
			// Caddy's wrapper maps exit status 1 to 0, and the verdict is the
			// exit status here, so the command exits by itself.
			cmd.RunE = func(cmd *cobra.Command, args []string) error {
				rb, _ := cmd.Flags().GetString("rulebook")
				jsonl, _ := cmd.Flags().GetBool("jsonl")
				code, err := promptscan.Run(rb, jsonl, args, os.Stdin, os.Stdout)
				if err != nil {
					fmt.Fprintln(os.Stderr, "prompt-scan:", err)
				}
				os.Exit(code)
				return nil
			}
		},
	})
}
