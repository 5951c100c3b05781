package merge

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"go.k6.io/k6/cmd/state"
	"go.k6.io/k6/errext"
	"go.k6.io/k6/errext/exitcodes"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/result"
)

// Name is the subcommand's name: k6 x mqtt-merge.
const Name = "mqtt-merge"

// defaultDir is where the instances write when RESULTS_DIR is not set,
// relative to the working directory (the project's root, as scripts run).
const defaultDir = "reports/raw"

// NewCommand is the subcommand (subcommand.Constructor). k6's main exits
// with the code an error returned here carries (errext.HasExitCode): 99
// (ThresholdsHaveFailed) for a failed or incomplete run, 104
// (InvalidConfig) for bad input.
func NewCommand(gs *state.GlobalState) *cobra.Command {
	dir := defaultDir
	if gs != nil && gs.Env["RESULTS_DIR"] != "" {
		dir = gs.Env["RESULTS_DIR"]
	}
	cmd := &cobra.Command{
		Use:   Name + " RUN_ID",
		Short: "Merge the result files of a run's k6 instances into one result",
		Long: `Merge the result files of one run's k6 instances (execution segments), written by
their handleSummary as DIR/RUN_ID.seg-<i>-of-<n>.json, into DIR/RUN_ID.json: the
result one process running all of them would have written. Latency histograms
are added bucket for bucket (exact quantiles), delivery is accounted stream by
stream across instances, and the run's thresholds are judged again on the
merged values.

Exit code: 0 passed; 99 failed (a threshold failed, or an instance left no
result); 104 bad input (no file of the run in DIR, files of different runs or
parameters, unreadable files). An earlier merge of the run is replaced; any
other DIR/RUN_ID.json is never overwritten.`,
		Example: "  k6 x mqtt-merge p2p-mosquitto-run1\n  RESULTS_DIR=/data/raw k6 x mqtt-merge p2p-mosquitto-run1\n" +
			"  k6 x mqtt-merge p2p-mosquitto-run1 --dir reports/raw",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return badInput(fmt.Errorf("%s takes one RUN_ID (the RUN_ID the instances ran with), got %d arguments: "+
					"k6 x %s RUN_ID [--dir DIR]", Name, len(args), Name))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return run(cmd, dir, args[0])
		},
	}
	cmd.Flags().StringVar(&dir, "dir", dir, "the directory of the instances' result files, where the merged "+
		"result is written too; $RESULTS_DIR if set, else ./"+defaultDir)
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return badInput(fmt.Errorf("%s: %w (usage: k6 x %s RUN_ID [--dir DIR])", Name, err, Name))
	})
	return cmd
}

func run(cmd *cobra.Command, dir, runID string) error {
	r, err := Run(dir, runID)
	if err != nil {
		return badInput(err)
	}
	path := ResultPath(dir, runID)
	if _, err := fmt.Fprintln(cmd.OutOrStdout(), result.Text(r, path)); err != nil {
		return err
	}
	if r.Passed {
		return nil
	}
	var why []string
	if r.Merge.Incomplete {
		why = append(why, "incomplete: "+strings.Join(r.Merge.MissingInstances, "; "))
	}
	if f := failedThresholds(r.Merge.ThresholdValues); len(f) > 0 {
		why = append(why, "thresholds failed: "+strings.Join(f, "; "))
	}
	return errext.WithExitCodeIfNone(fmt.Errorf("run %s FAILED on its merged result %s: %s",
		runID, path, strings.Join(why, "; ")), exitcodes.ThresholdsHaveFailed)
}
