//go:build !unix

package runner

import (
	"os"
	"os/exec"
)

// setProcessGroup does nothing where there are no Unix process groups.
func setProcessGroup(*exec.Cmd) {}

// killProcessGroup kills only the child where there are no process groups.
func killProcessGroup(p *os.Process) { _ = p.Kill() }
