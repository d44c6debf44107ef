// Prints, as JSON, every feature gate the kubelet of the pinned Kubernetes version registers (the
// same imports as cmd/kubelet), with its versioned specs and its dependencies. Run by
// scripts/generate-kubelet-feature-gates.sh; not part of the agent.
package main

import (
	"encoding/json"
	"os"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	_ "k8s.io/kubernetes/cmd/kubelet/app"
)

type spec struct {
	Version       string `json:"version"`
	Default       bool   `json:"default"`
	PreRelease    string `json:"preRelease"`
	LockToDefault bool   `json:"lockToDefault"`
	MinCompat     string `json:"minCompatibilityVersion,omitempty"`
}

type gate struct {
	Specs     []spec   `json:"specs"`
	DependsOn []string `json:"dependsOn,omitempty"`
}

func main() {
	gates := utilfeature.DefaultMutableFeatureGate
	dependencies := gates.Dependencies()
	out := map[string]gate{}
	for name, specs := range gates.GetAllVersioned() {
		g := gate{}
		for _, s := range specs {
			minCompat := ""
			if s.MinCompatibilityVersion != nil {
				minCompat = s.MinCompatibilityVersion.String()
			}
			g.Specs = append(g.Specs, spec{s.Version.String(), s.Default, string(s.PreRelease), s.LockToDefault, minCompat})
		}
		for _, d := range dependencies[name] {
			g.DependsOn = append(g.DependsOn, string(d))
		}
		out[string(name)] = g
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		panic(err)
	}
}
