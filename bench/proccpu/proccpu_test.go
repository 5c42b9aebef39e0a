package proccpu

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

// Tree counts a child's CPU time, while it runs and after it was waited
// for; Of counts only the process's own.
func TestTree(t *testing.T) {
	self := os.Getpid()
	if Of(self) < 0 || Tree(self) < Of(self) {
		t.Fatalf("Of %v, Tree %v of this process", Of(self), Tree(self))
	}
	before := Tree(self)
	// A child that burns CPU for about 300 ms (well over the 10 ms tick).
	cmd := exec.Command("sh", "-c", `end=$(( $(date +%s%N) + 300000000 )); while [ "$(date +%s%N)" -lt "$end" ]; do :; done`)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(150 * time.Millisecond)
	running := Tree(self)
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	after := Tree(self)
	child := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	if child < 100*time.Millisecond {
		t.Fatalf("the child used only %v of CPU", child)
	}
	if running <= before {
		t.Errorf("Tree while the child runs: %v, not more than %v before", running, before)
	}
	// The child's time, to within a few ticks (this process runs too).
	if got := after - before; got < child-30*time.Millisecond {
		t.Errorf("Tree grew by %v, the child used %v", got, child)
	}
	if Of(-1) != -1 || Tree(-1) != -1 {
		t.Errorf("no process: Of %v, Tree %v; want -1", Of(-1), Tree(-1))
	}
}
