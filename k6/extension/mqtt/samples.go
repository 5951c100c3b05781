package mqtt

import "go.k6.io/k6/js/common"

// checkSamples(names) is called by a script at its end, after closing its
// groups, with its threshold metric names: it returns those of the
// extension's that never had a sample and counts them in
// mqtt_thresholds_without_samples, whose `count==0` threshold then fails
// the run instead of k6 passing a threshold judged on no data.
// The result's without_samples are of the same names.
func (mi *ModuleInstance) checkSamples(names []string) []string {
	mi.root.record.judge(names)
	env, err := mi.loadEnv("checkSamples", nil)
	if err != nil {
		common.Throw(mi.vu.Runtime(), err)
	}
	return mi.root.run.CheckSamples(env, names)
}
